"""Partnership block dominoes (B1-B13 of :mod:`mtrain_env.block.core.rules`): the behaviours
mutation testing of ``mtrain_env/block/core/`` found unpinned.

Each test drives the pure core (``BlockDominoes``, ``check_state``) on a scripted deal and
asserts what the rule says: the refusals of ``explain_illegal`` naming their rule (B5, B6,
B8, B9), B9's voids accumulating over several passes, B5's forced opening tile when it is
tile 0 (the double blank) and when the heaviest tile is not the last tile id, ``next_hand``'s
deal and opener arguments (B6, B13), and ``check_state`` refusing each broken invariant
naming its key and rule.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import pytest

from mtrain_env.block.core.config import GameConfig
from mtrain_env.block.core.dealing import Deal, parse_deal, random_deal, too_many_doubles
from mtrain_env.block.core.invariants import check_state
from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.block.core.scoring import score_hand, settle_match
from mtrain_env.block.core.state import CIERRE, GameState, Phase
from mtrain_env.tilegame.actions import IllegalMoveError
from tests.scripted import assert_refused_naming, tile

#: A 4-player deal: seat 2 holds the double six (B5).
DEAL_A = [
    "0-0 0-1 0-2 0-3 0-4 0-5 0-6",
    "1-1 1-2 1-3 1-4 1-5 1-6 2-2",
    "6-6 2-3 2-4 2-5 2-6 3-3 3-4",
    "3-5 3-6 4-4 4-5 4-6 5-5 5-6",
]


# ----------------------------------------------------------------------------- helpers
def _game(**flags: Any) -> BlockDominoes:
    """A block game; no redeal (B4) unless asked, so uneven scripted hands are accepted."""
    flags.setdefault("redeal_doubles", None)
    return BlockDominoes(GameConfig.make(**flags))


def _deal(game: BlockDominoes, hands: list[str], opener: int | None = None) -> GameState:
    """The first hand on a scripted deal (``"6-6 2-3"`` per seat); unnamed tiles sleep (2 players)."""
    deal = parse_deal(game.config, {"hands": [[list(tile(t)) for t in h.split()] for h in hands]})
    return game.new_game(np.random.default_rng(0), deal, opener)


def _move(game: BlockDominoes, text: str) -> int:
    """``"5-6 L"`` -> ``tile_id * 2 + end`` (L = end 0, R = end 1); ``"PASS"``."""
    if text == "PASS":
        return game.PASS
    t, end = text.split()
    a, b = sorted(tile(t))
    return game.tiles.tile_id(a, b) * 2 + "LR".index(end)


def _play(game: BlockDominoes, s: GameState, *moves: str) -> GameState:
    for text in moves:
        game.checked_apply(s, _move(game, text))
    return s


def _void_pips(mask: int) -> list[int]:
    return [p for p in range(7) if mask >> p & 1]


# ------------------------------------------------------------------- B2, B5, B6
def test_b2_pairs_and_partners() -> None:
    """B2: seats 0&2 form pair 0 and 1&3 pair 1, partners sit opposite; alone with 2 players."""
    game = _game()
    assert [game.pair(p) for p in range(4)] == [0, 1, 0, 1]
    assert [game.partner(p) for p in range(4)] == [2, 3, 0, 1]
    assert [_game(num_players=2).partner(p) for p in range(2)] == [0, 1]


def test_b5_forced_opening_with_the_double_blank() -> None:
    """B5 (2 players): the only double dealt, 0-0 (tile id 0), is the forced opening tile:
    the opener's only legal move, and any other tile is refused naming B5."""
    game = _game(num_players=2)
    s = _deal(game, ["1-2 3-4", "0-0 5-6"])
    assert s.opener == s.current == 1 and s.forced_opening == 0
    assert game.legal_moves(s) == [_move(game, "0-0 L")]
    why = game.explain_illegal(s, _move(game, "5-6 L"))
    assert why.startswith("B5: ") and "(0, 0)" in why
    with pytest.raises(IllegalMoveError, match=r"^B5: this hand opens with \(0, 0\)"):
        game.checked_apply(s, _move(game, "5-6 L"))


def test_b5_heaviest_tile_opens_when_no_double_is_dealt() -> None:
    """B5 (2 players, no double dealt): the heaviest tile opens, not the last tile id:
    0-6 (6 pips, id 6) beats 1-2 (3 pips, id 8)."""
    game = _game(num_players=2)
    s = _deal(game, ["0-6", "1-2"])
    assert s.opener == s.current == 0
    assert game.legal_moves(s) == [_move(game, "0-6 L")]


def test_a_seat_told_to_open_has_no_forced_tile_and_the_state_checks() -> None:
    """B5/B6: ``new_game(opener=...)`` opens with any tile, ``forced_opening`` -1 (none)."""
    game = _game()
    s = game.new_game(np.random.default_rng(3), opener=1)
    assert s.opener == s.current == 1 and s.forced_opening == -1
    assert game.legal_moves(s) == sorted(i * 2 for i in range(28) if s.hands[1] >> i & 1)
    check_state(game, s)


def _after_a_domino(game: BlockDominoes) -> GameState:
    """Match mode: seat 0 holds only 6-6 and goes out at once (B5, B10): HAND_OVER."""
    s = _deal(game, ["6-6", "0-0 0-1", _rest("6-6 0-0 0-1 0-2 1-1"), "0-2 1-1"])
    _play(game, s, "6-6 L")
    assert s.phase == Phase.HAND_OVER and s.results[0].lead == 0
    return s


def _rest(named: str) -> str:
    """Every tile of the set not in ``named``."""
    return " ".join(f"{a}-{b}" for a in range(7) for b in range(a, 7) if f"{a}-{b}" not in named.split())


def test_next_hand_takes_the_given_deal_and_opener() -> None:
    """B6/B13: ``next_hand`` deals the given deal (not a random one) and lets the given seat
    open with any tile; without them it follows B6 (the winner, seat 0, opens)."""
    game = _game(match=True)
    s = _after_a_domino(game)
    deal = parse_deal(game.config, {"hands": [[list(tile(t)) for t in h.split()] for h in DEAL_A]})
    game.next_hand(s, np.random.default_rng(0), deal=deal, opener=3)
    assert s.hand_index == 1 and s.phase == Phase.PLAYING
    assert s.hands == deal.hands and s.opener == s.current == 3 and s.forced_opening == -1
    assert game.legal_moves(s) == sorted(i * 2 for i in range(28) if deal.hands[3] >> i & 1)
    s = _after_a_domino(game)
    game.next_hand(s, np.random.default_rng(0), deal=deal)
    assert s.hands == deal.hands and s.opener == s.current == 0  # B6: the winner


def test_next_hand_is_refused_while_a_hand_is_under_way() -> None:
    """B13: the next hand starts only after a hand ended; the refusal names the rule and phase."""
    game = _game(match=True)
    s = _deal(game, DEAL_A)
    with pytest.raises(ValueError, match=r"^B13: .*PLAYING"):
        game.next_hand(s, np.random.default_rng(0))


# ------------------------------------------------------------------------- B9
def test_b9_voids_accumulate_over_passes_and_show_both_ends() -> None:
    """B9: each pass adds BOTH open pips to the seat's voids, and earlier voids stay."""
    game = _game(num_players=2)
    s = _deal(game, ["3-4 4-5 2-5", "0-0 1-1"], opener=0)
    _play(game, s, "3-4 L", "PASS")
    assert _void_pips(s.voids[1]) == [3, 4]
    _play(game, s, "4-5 R", "PASS")  # ends 3 | 5
    assert _void_pips(s.voids[1]) == [3, 4, 5] and s.voids[0] == 0
    check_state(game, s)


# ------------------------------------------------------------ explain_illegal
def test_refusals_name_the_tile_and_the_end() -> None:
    """B8: a tile not held, and a held tile that fits no end, are refused naming the tile,
    the end and the pip it shows (``legal`` optional)."""
    game = _game()
    s = _play(game, _deal(game, DEAL_A), "6-6 L", "5-6 L", "0-6 R")  # ends 5 | 0, seat 1 on turn
    assert s.current == 1 and s.ends == [5, 0]
    why = game.explain_illegal(s, _move(game, "2-3 L"))  # held by seat 2
    assert why == "B8: player_1 does not hold (2, 3)"
    assert game.explain_illegal(s, _move(game, "0-0 L")).startswith("B8: player_1 does not hold (0, 0)")
    assert game.explain_illegal(s, _move(game, "1-1 R")) == "B8: (1, 1) does not match end 1, which shows 0"
    assert game.explain_illegal(s, _move(game, "1-2 L")) == "B8: (1, 2) does not match end 0, which shows 5"
    legal = game.legal_moves(s)
    assert game.explain_illegal(s, _move(game, "1-1 R"), legal) == game.explain_illegal(
        s, _move(game, "1-1 R")
    )
    assert game.explain_illegal(s, -1).startswith("move -1 is outside 0..56")
    assert game.explain_illegal(s, 57).startswith("move 57 is outside")


def test_refusal_on_an_end_showing_the_blank() -> None:
    """B8: an end showing 0 is an end like any other (not the empty line of an opening)."""
    game = _game()
    s = _play(game, _deal(game, DEAL_A), "6-6 L", "5-6 L", "0-6 R", "1-5 L")  # ends 1 | 0
    _play(game, s, "PASS", "PASS")  # seats 2 and 3 hold neither 1 nor 0
    assert s.current == 0 and s.ends == [1, 0]
    _play(game, s, "0-1 L")  # ends 0 | 0: seat 1 holds no 0
    assert s.ends == [0, 0] and s.current == 1
    why = game.explain_illegal(s, _move(game, "1-2 L"))
    assert why == "B8: (1, 2) does not match end 0, which shows 0"


def test_mirror_placement_refusal() -> None:
    """B8: when both ends show the same pip only end 0 is offered; end 1 is refused as the mirror."""
    game = _game()
    s = _play(game, _deal(game, DEAL_A), "6-6 L")  # ends 6 | 6, seat 3 on turn
    assert s.current == 3 and _move(game, "5-6 L") in game.legal_moves(s)
    assert _move(game, "5-6 R") not in game.legal_moves(s)
    assert (
        game.explain_illegal(s, _move(game, "5-6 R")) == "B8: both ends show 6; the mirror placement is end 0"
    )
    # a tile that fits no end, asked at end 1 on a line whose ends differ, names end 1
    _play(game, s, "5-6 L")  # ends 5 | 6, seat 0
    assert game.explain_illegal(s, _move(game, "0-1 R")) == "B8: (0, 1) does not match end 1, which shows 6"
    assert game.explain_illegal(s, _move(game, "0-1 L")) == "B8: (0, 1) does not match end 0, which shows 5"


def test_opening_refusals_name_their_rule() -> None:
    """B8: the opening tile is action end 0; B6 (double_opening): a double when the opener holds one."""
    game = _game(double_opening=True)
    s = _deal(game, DEAL_A, opener=0)
    assert game.legal_moves(s) == [_move(game, "0-0 L")]
    assert game.explain_illegal(s, _move(game, "0-0 R")) == "B8: the opening tile is action end 0"
    why = game.explain_illegal(s, _move(game, "0-1 L"))
    assert why == "B6: the opening tile must be a double (double_opening)"
    with pytest.raises(IllegalMoveError, match=r"^B6: "):
        game.checked_apply(s, _move(game, "0-1 L"))


# ------------------------------------------------------------------ check_state
# Every case builds a valid state by play, checks that it passes, breaks ONE invariant of
# B1-B13 (the module docstring of ``invariants.py``) and expects
# ``state dict 'KEY': RULE: <what is wrong>``.


def _bit(game: BlockDominoes, t: str) -> int:
    a, b = sorted(tile(t))
    return 1 << game.tiles.tile_id(a, b)


def _mid_hand_4() -> tuple[BlockDominoes, GameState]:
    """4 players, one hand: line 1-5 5-6 6-6 6-0 (ends 1 | 0), seat 2 passed (voids 0, 1), seat 3 on turn."""
    game = _game()
    s = _play(game, _deal(game, DEAL_A), "6-6 L", "5-6 L", "0-6 R", "1-5 L", "PASS")
    assert s.current == 3 and _void_pips(s.voids[2]) == [0, 1]
    return game, s


def _mid_hand_2() -> tuple[BlockDominoes, GameState]:
    """2 players (tiles not dealt sleep): seat 0 opened 3-4, seat 1 on turn."""
    game = _game(num_players=2)
    return game, _play(game, _deal(game, ["3-4 4-5 2-5", "0-0 1-1 1-3"], opener=0), "3-4 L")


def _cierre_2() -> tuple[BlockDominoes, GameState]:
    """2 players: 3-4, then 4-5; nobody holds a 3 or a 5 (B11): seat 1 closed, seat 0 holds only 0-0."""
    game = _game(num_players=2)
    s = _play(game, _deal(game, ["3-4 0-0", "4-5 1-1"], opener=0), "3-4 L", "4-5 R")
    assert s.phase == Phase.GAME_OVER and s.results[0].kind == "cierre" and s.results[0].seat == 1
    return game, s


def _domino_2() -> tuple[BlockDominoes, GameState]:
    """2 players: seat 0 lays its only tile and goes out (B10); seat 1 holds 0-0 1-1."""
    game = _game(num_players=2)
    s = _play(game, _deal(game, ["3-4", "0-0 1-1"], opener=0), "3-4 L")
    assert s.phase == Phase.GAME_OVER and s.results[0].kind == "domino"
    return game, s


def _second_hand(target: int = 500) -> tuple[BlockDominoes, GameState]:
    """Match: seat 0 went out with 6-6 (pair 1 scores 5); hand 1 dealt DEAL_A, the winner (seat 0) opens."""
    game = _game(match=True, target=target)
    s = _after_a_domino(game)
    deal = parse_deal(game.config, {"hands": [[list(tile(t)) for t in h.split()] for h in DEAL_A]})
    game.next_hand(s, np.random.default_rng(0), deal=deal)
    return game, s


def _move_tiles(s: GameState, src: int, dst: int, bits: int) -> None:
    s.hands[src] &= ~bits
    s.hands[dst] |= bits


def _to_sleep(game: BlockDominoes, s: GameState, tiles: dict[int, str]) -> None:
    """Move tiles from hands to the sleeping tiles (B3)."""
    for seat, text in tiles.items():
        s.hands[seat] &= ~_bit(game, text)
        s.sleeping |= _bit(game, text)


def _broken(make: Any, edit: Any) -> tuple[BlockDominoes, GameState]:
    """``make()``'s valid state, copied and broken by ``edit(game, state)``."""
    game, s = make()
    check_state(game, s)  # the state as played is valid
    s = s.copy()
    edit(game, s)
    return game, s


def _set(**values: Any) -> Any:
    def edit(game: BlockDominoes, s: GameState) -> None:
        for name, value in values.items():
            setattr(s, name, value)

    return edit


_CASES: list[tuple[str, Any, Any, str, str]] = [
    # B13: the phase
    ("phase not a Phase", _mid_hand_4, _set(phase=0), "phase", "B13"),
    # B1, B3, B4: the set and the deal
    ("three hands of four", _mid_hand_4, lambda g, s: s.hands.pop(), "hands", "B3"),
    (
        "a tile outside the set",
        _mid_hand_4,
        lambda g, s: s.hands.__setitem__(1, s.hands[1] | 1 << 28),
        "hands[1]",
        "B1",
    ),
    ("a negative hand", _mid_hand_4, lambda g, s: s.hands.__setitem__(0, -1), "hands[0]", "B1"),
    (
        "a tile in two hands",
        _mid_hand_4,
        lambda g, s: s.hands.__setitem__(3, s.hands[3] | _bit(g, "0-2")),
        "hands[3]",
        "B1",
    ),
    (
        "a sleeping tile also held",
        _mid_hand_2,
        lambda g, s: setattr(s, "sleeping", s.sleeping | _bit(g, "2-5")),
        "sleeping",
        "B1",
    ),
    ("a negative sleeping mask", _mid_hand_2, _set(sleeping=-1), "sleeping", "B1"),
    (
        "a sleeping tile outside the set",
        _mid_hand_2,
        lambda g, s: setattr(s, "sleeping", s.sleeping | 1 << 28),
        "sleeping",
        "B1",
    ),
    (
        "a tile sleeps with 4 players",
        _mid_hand_4,
        lambda g, s: _to_sleep(g, s, {3: "5-5"}),
        "sleeping",
        "B3",
    ),
    (
        "a tile missing",
        _mid_hand_4,
        lambda g, s: s.hands.__setitem__(3, s.hands[3] & ~_bit(g, "5-5")),
        "hands",
        "B1",
    ),
    (
        "a line tile also held",
        _mid_hand_4,
        lambda g, s: s.hands.__setitem__(3, s.hands[3] | _bit(g, "6-6")),
        "hands",
        "B1",
    ),
    ("a redeal without the rule", _mid_hand_4, _set(redeals=1), "redeals", "B4"),
    ("negative redeals", _mid_hand_4, _set(redeals=-1), "redeals", "B4"),
    # B8: the line, who laid it, the counters
    ("a line tile twice", _mid_hand_4, lambda g, s: s.line.append((0, 6)), "line[4]", "B1"),
    ("a line tile turned over", _mid_hand_4, lambda g, s: s.line.__setitem__(1, (6, 5)), "line[1]", "B8"),
    ("the line lost its last tile", _mid_hand_4, lambda g, s: s.line.pop(), "line", "B8"),
    ("the ends swapped", _mid_hand_4, _set(ends=[0, 1]), "line", "B8"),
    (
        "a tile laid by two seats",
        _mid_hand_4,
        lambda g, s: s.played_by.__setitem__(0, s.played_by[0] | s.played_by[3]),
        "played_by[3]",
        "B8",
    ),
    ("a laid tile unrecorded", _mid_hand_4, lambda g, s: s.played_by.__setitem__(3, 0), "played_by", "B8"),
    ("one played_by too many", _mid_hand_4, lambda g, s: s.played_by.append(0), "played_by", "B8"),
    ("no last player with a line", _mid_hand_4, _set(last_player=-1), "last_player", "B8"),
    ("last player not a seat", _mid_hand_4, _set(last_player=4), "last_player", "B8"),
    (
        "a last player before any tile",
        lambda: (_game(), _deal(_game(), DEAL_A)),
        _set(last_player=0),
        "last_player",
        "B8",
    ),
    ("current seat 4", _mid_hand_4, _set(current=4), "current_player", "B7"),
    ("current seat -1", _mid_hand_4, _set(current=-1), "current_player", "B7"),
    ("opener seat 4", _mid_hand_4, _set(opener=4), "opener", "B5"),
    ("opener seat -1", _mid_hand_4, _set(opener=-1), "opener", "B5"),
    ("fewer actions than tiles", _mid_hand_4, _set(moves=3), "moves", "B9"),
    ("more actions than n per tile", _mid_hand_4, _set(moves=17), "moves", "B9"),
    (
        "a forced tile with a line",
        _mid_hand_4,
        lambda g, s: setattr(s, "forced_opening", g.tiles.tile_id(3, 3)),
        "forced_opening",
        "B5",
    ),
    (
        "a forced tile not in the opener's hand",
        lambda: (_game(), _deal(_game(), DEAL_A)),
        lambda g, s: setattr(s, "forced_opening", g.tiles.tile_id(0, 0)),
        "forced_opening",
        "B5",
    ),
    ("forced_opening -2", _mid_hand_4, _set(forced_opening=-2), "forced_opening", "B5"),
    # B9: voids
    ("voids for three seats", _mid_hand_4, lambda g, s: s.voids.pop(), "voids", "B9"),
    ("a void that is not a pip", _mid_hand_4, lambda g, s: s.voids.__setitem__(3, 1 << 7), "voids[3]", "B9"),
    ("a negative void", _mid_hand_4, lambda g, s: s.voids.__setitem__(3, -1), "voids[3]", "B9"),
    (
        "a void before the first tile",
        lambda: (_game(), _deal(_game(), DEAL_A)),
        lambda g, s: s.voids.__setitem__(3, 1),
        "voids[3]",
        "B9",
    ),
    ("a void in a pip held", _mid_hand_4, lambda g, s: s.voids.__setitem__(3, 1 << 3), "voids[3]", "B9"),
    # B13, B10-B12: results and the match
    ("a negative hand index", _mid_hand_4, _set(hand_index=-1), "hand_index", "B13"),
    ("a second hand without a match", _mid_hand_4, _set(hand_index=1), "results", "B13"),
    ("two results without a match", _domino_2, lambda g, s: s.results.append(s.results[0]), "results", "B13"),
    ("scores not the results'", _second_hand, _set(scores=[0, 6]), "scores", "B13"),
    ("a loser without a match", _domino_2, _set(match_loser=0), "match_loser", "B13"),
    ("a tie-break nobody earned", _second_hand, _set(tiebreak=True), "tiebreak", "B13"),
    ("a result's seat not a seat", _domino_2, lambda g, s: _edit_result(s, seat=2), "results[0]", "B10"),
    ("a result's opener not a seat", _domino_2, lambda g, s: _edit_result(s, opener=-1), "results[0]", "B10"),
    (
        "a result's pips for 3 seats",
        _domino_2,
        lambda g, s: _edit_result(s, pips=(0, 2, 0)),
        "results[0]",
        "B10",
    ),
    ("negative pips", _domino_2, lambda g, s: _edit_result(s, pips=(0, -2)), "results[0].pips", "B10"),
    ("out with pips left", _domino_2, lambda g, s: _edit_result(s, pips=(1, 2)), "results[0].pips", "B10"),
    (
        "a result scored wrong",
        _domino_2,
        lambda g, s: _edit_result(s, points=(0, 3)),
        "results[0]",
        "B10-B12",
    ),
    ("a hand after the match ended", lambda: _decided_then_played_on(), None, "results[1]", "B13"),
    # B4-B6, B10, B11: a hand under way
    ("a hand under way missing a result", _second_hand, _set(hand_index=2), "results", "B13"),
    ("a hand under way after the match was decided", lambda: _decided_yet_playing(), None, "phase", "B13"),
    (
        "an empty hand under way",
        _mid_hand_4,
        lambda g, s: _move_tiles(s, 1, 3, s.hands[1]),
        "hands[1]",
        "B10",
    ),
    (
        "nobody can play, the hand goes on",
        _mid_hand_2,
        lambda g, s: _to_sleep(g, s, {0: "4-5", 1: "1-3"}),  # the only tiles matching 3 or 4
        "line",
        "B11",
    ),
    (
        "someone else first",
        lambda: (_game(), _deal(_game(), DEAL_A)),
        _set(current=0),
        "current_player",
        "B5",
    ),
    ("a later hand opened by the loser", _second_hand, _set(opener=1, current=1), "opener", "B6"),
    (
        "a later hand with a forced tile",
        _second_hand,
        lambda g, s: setattr(s, "forced_opening", g.tiles.tile_id(0, 0)),
        "forced_opening",
        "B6",
    ),
    # B10-B13: a hand that ended
    ("a result missing", _mid_hand_4, _set(phase=Phase.HAND_OVER), "results", "B13"),
    ("HAND_OVER of a single hand", _domino_2, _set(phase=Phase.HAND_OVER), "phase", "B13"),
    (
        "GAME_OVER of an undecided match",
        lambda: (lambda g: (g, _after_a_domino(g)))(_game(match=True)),
        _set(phase=Phase.GAME_OVER),
        "phase",
        "B13",
    ),
    (
        "the result's pips are not the hands'",
        _domino_2,
        lambda g, s: _move_tiles(s, 1, 0, _bit(g, "1-1")),
        "results[0].pips",
        "B10",
    ),
    ("another last player", _cierre_2, _set(last_player=0), "results[0]", "B10"),
    ("another opener", _cierre_2, _set(opener=1), "results[0]", "B10"),
    (
        "out, and another seat holds tiles only worth 0",
        _domino_2,
        lambda g, s: _move_tiles(s, 1, 0, _bit(g, "0-0")),
        "hands",
        "B10",
    ),
    (
        "a closed hand with an empty hand",
        _cierre_2,
        lambda g, s: _move_tiles(s, 0, 1, _bit(g, "0-0")),
        "hands",
        "B11",
    ),
]


def _edit_result(s: GameState, **changes: Any) -> None:
    s.results[0] = dataclasses.replace(s.results[0], **changes)


def _decided_then_played_on() -> tuple[BlockDominoes, GameState]:
    """Target 5: seat 0's domino makes pair 1 score 5 and lose the match (B13); a second
    result is then appended as if a hand had followed."""
    game = _game(match=True, target=5)
    s = _play(game, _deal(game, ["6-6", "0-0 0-1", _rest("6-6 0-0 0-1 0-2 1-1"), "0-2 1-1"]), "6-6 L")
    assert s.phase == Phase.GAME_OVER and s.match_loser == 1
    check_state(game, s)
    s.results.append(s.results[0])
    s.hand_index = 1
    return game, s


def _decided_yet_playing() -> tuple[BlockDominoes, GameState]:
    """The second hand of a match to 500, read under a target of 5 that the first hand's
    5 points already reached (B13): a decided match has no hand under way."""
    _, s = _second_hand()
    game = _game(match=True, target=5)
    s.match_loser = 1
    return game, s


@pytest.mark.parametrize(("what", "make", "edit", "key", "rule"), _CASES, ids=[c[0] for c in _CASES])
def test_check_state_refuses_naming_key_and_rule(
    what: str, make: Any, edit: Any, key: str, rule: str
) -> None:
    """check_state: each broken invariant is refused naming its key and rule (B1-B13)."""
    game, s = make() if edit is None else _broken(make, edit)  # None: make() builds it broken
    assert_refused_naming(lambda: check_state(game, s), key, rule)


def test_check_state_refusals_name_what_is_wrong() -> None:
    """The refusals name the tile dealt twice, the tile a line tile fails to match, the
    seat range, the action range of B9 and what the hand's end scores (B1, B5, B7, B8, B9, B10-B12)."""
    game, s = _broken(_mid_hand_4, lambda g, s: s.hands.__setitem__(3, s.hands[3] | _bit(g, "0-2")))
    with pytest.raises(ValueError, match=re.escape("[0, 2] appears twice")):
        check_state(game, s)
    game, s = _broken(_mid_hand_4, lambda g, s: s.line.__setitem__(1, (6, 5)))  # after 1-5
    with pytest.raises(ValueError, match=re.escape("[6, 5] does not match [1, 5]")):
        check_state(game, s)
    for name, key, rule in (("current", "current_player", "B7"), ("opener", "opener", "B5")):
        game, s = _broken(_mid_hand_4, _set(**{name: 4}))
        with pytest.raises(ValueError, match=re.escape(f"state dict '{key}': {rule}: must be a seat 0..3")):
            check_state(game, s)
    game, s = _broken(_mid_hand_4, _set(moves=3))
    with pytest.raises(ValueError, match=re.escape("4 tiles take 4..16 actions, not 3")):
        check_state(game, s)
    game, s = _broken(_domino_2, lambda g, s: _edit_result(s, points=(0, 3)))
    with pytest.raises(
        ValueError, match=re.escape("winner 0, lead 0, pair pips [0, 2], points [0, 2], tie False")
    ):
        check_state(game, s)


def test_check_state_refuses_a_last_player_below_minus_one() -> None:
    """B8: the last player is a seat, or -1 before the first tile; -2 is neither."""
    game, s = _broken(lambda: (_game(), _deal(_game(), DEAL_A)), _set(last_player=-2))
    assert_refused_naming(lambda: check_state(game, s), "last_player", "B8")


def test_check_state_refuses_an_unopened_hand_the_redeal_rule_throws_back() -> None:
    """B4: a hand not yet opened holding ``redeal_doubles`` or more doubles (here seat 0's
    five) would have been redealt."""
    five = ["0-0 1-1 2-2 3-3 4-4 0-1 0-2", "5-5 0-3 0-4 0-5 0-6 1-2 1-3", "6-6 1-4 1-5 1-6 2-3 2-4 2-5", ""]
    _, s = _broken(lambda: (_game(), _deal(_game(), [*five[:3], _rest(" ".join(five))])), _set())
    assert too_many_doubles(GameConfig.make(redeal_doubles=5), s.hands) == 0
    assert_refused_naming(lambda: check_state(_game(redeal_doubles=5), s), "hands", "B4")
    check_state(_game(redeal_doubles=6), s)


def _second_hand_after_seat_1_won() -> tuple[BlockDominoes, GameState]:
    """2 players, a match to 500: seat 1 went out (B10), pair 0 scored 7; hand 1 dealt, seat 1 opens (B6)."""
    game = _game(num_players=2, match=True, target=500)
    s = _play(game, _deal(game, ["5-5 1-6", "5-6"]), "5-5 L", "5-6 L")
    assert s.phase == Phase.HAND_OVER and s.scores == [7, 0]
    deal = parse_deal(game.config, {"hands": _hands_of(["0-0 1-2", "3-4"])})
    game.next_hand(s, np.random.default_rng(0), deal=deal)
    assert s.opener == s.current == 1
    return game, s


def test_check_state_refuses_a_hand_under_way_once_pair_0_lost() -> None:
    """B13: pair 0 reaching the target (7 points under a target of 5) decides the match: no hand goes on."""
    game, s = _second_hand_after_seat_1_won()
    check_state(game, s)
    s.match_loser = 0
    assert_refused_naming(lambda: check_state(_game(num_players=2, match=True, target=5), s), "phase", "B13")


def test_check_state_accepts_a_later_hand_opened_by_the_partner() -> None:
    """B6 ``opener="partner"``: the partner of the last hand's winner opens; check_state agrees."""
    game = _game(match=True, opener="partner")
    s = _after_a_domino(game)
    deal = parse_deal(game.config, {"hands": [[list(tile(t)) for t in h.split()] for h in DEAL_A]})
    game.next_hand(s, np.random.default_rng(0), deal=deal)
    assert s.opener == s.current == 2
    check_state(game, s)
    s.opener = s.current = 0  # the winner himself
    assert_refused_naming(lambda: check_state(game, s), "opener", "B6")


# --------------------------------------------------------------- scoring, dealing
def test_b13_settle_match() -> None:
    """B13: the pair at or over the target loses; both at once -> a tie-break hand (no loser
    yet, -1); the tie-break hand's loser loses and no further tie-break follows."""
    config = GameConfig.make(match=True, target=50, closed_scoring="both")
    result = score_hand(config, CIERRE, 1, 0, [20, 40, 33, 30], [1, 2, 3, 0])
    assert result.winner == 0 and result.points == (53, 70)
    assert settle_match(config, [53, 70], result, False) == (-1, True)
    assert settle_match(config, [40, 70], result, False) == (1, False)
    assert settle_match(config, [10, 20], result, False) == (-1, False)
    assert settle_match(config, [10, 20], result, True) == (1, False)


def test_b4_deal_helpers() -> None:
    """B3/B4: a Deal without sleeping tiles or redeals by default; ``too_many_doubles`` is -1
    when no seat reaches the threshold or there is no redeal rule; a seed whose deal is
    thrown back twice counts 2 redeals (001: reshuffle until no hand shows too many)."""
    deal = Deal([1, 2])
    assert deal.sleeping == 0 and deal.redeals == 0
    four = GameConfig.make(redeal_doubles=4)
    hands = parse_deal(GameConfig.make(redeal_doubles=None), {"hands": _hands_of(DEAL_A)}).hands
    assert too_many_doubles(four, hands) == -1  # seats 0, 1, 2, 3 hold 1, 2, 2, 2 doubles
    assert too_many_doubles(GameConfig.make(redeal_doubles=None), [0x7F] * 4) == -1
    doubles = {i for i, (a, b) in enumerate(four.tiles.tiles) if a == b}

    def replayed_redeals(seed: int) -> int:
        rng = np.random.default_rng(seed)
        for count in range(100):
            perm = rng.permutation(28).tolist()
            if all(len(doubles & set(perm[7 * p : 7 * p + 7])) < 4 for p in range(4)):
                return count
        raise AssertionError("no deal kept")

    seed = next(k for k in range(1000) if replayed_redeals(k) >= 2)
    assert random_deal(four, np.random.default_rng(seed)).redeals == replayed_redeals(seed)


def _hands_of(texts: list[str]) -> list[list[list[int]]]:
    return [[list(tile(t)) for t in h.split()] for h in texts]


def test_parse_deal_refusals_name_hands_and_tiles() -> None:
    """B1: a tile dealt twice names both hands; B3: a 4-player deal missing tiles names them."""
    config = GameConfig.make(redeal_doubles=None)
    twice = [DEAL_A[0], DEAL_A[1] + " 0-1", DEAL_A[2], DEAL_A[3]]
    with pytest.raises(ValueError, match=re.escape("B1: tile (0, 1) is dealt twice (hands 0 and 1)")):
        parse_deal(config, {"hands": _hands_of(twice)})
    short = [DEAL_A[0], DEAL_A[1], DEAL_A[2], "3-5 3-6 4-4 4-5 4-6"]
    with pytest.raises(ValueError, match=re.escape("missing [(5, 5), (5, 6)]")):
        parse_deal(config, {"hands": _hands_of(short)})
