"""Behaviours of the pure core (mtrain_env/mexican_train/core/) that mutation testing found unpinned.

Each test pins a rule of RULES.md (cited by id) or a documented contract of the core (refusals
name their rule, snapshots name the key and rule they break, determinizations agree with the
public view) that a surviving mutant changed without any other fast test noticing. Expected
values come from the rule or the contract, not from the code's output.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from mtrain_env.mexican_train.core.config import VARIANT_FLAGS, GameConfig
from mtrain_env.mexican_train.core.dealing import Deal, parse_deal
from mtrain_env.mexican_train.core.invariants import check_state
from mtrain_env.mexican_train.core.public import (
    PublicView,
    _exact_deal,
    banned_tiles,
    public_view,
    sample_state,
)
from mtrain_env.mexican_train.core.rules import IllegalMoveError, MexicanTrain
from mtrain_env.mexican_train.core.scoring import positive_scores, session_winners
from mtrain_env.mexican_train.core.serialize import state_from_dict, state_to_dict
from mtrain_env.mexican_train.core.state import GameState, Phase
from tests.scripted import assert_refused_naming, full_deal, line, tile


# ------------------------------------------------------------------------ R24, R25 scoring
def test_r24_positive_scoring_only_the_seat_out_takes_the_pot() -> None:
    """R24 ``positive_scoring``: the player who went out takes the others' pips, even when
    another hand is worth 0 pips too (it holds only the double blank): that seat did not go
    out, so it shares nothing."""
    assert positive_scores([0, 0, 9], [True, False, False]) == [9.0, 0.0, 0.0]
    assert positive_scores([5, 0, 0], [False, False, True]) == [0.0, 0.0, 5.0]


def test_r25_positive_tie_break_counts_every_round_won() -> None:
    """R25 mirrored under ``positive_scoring``: on equal totals, most rounds won (scored
    above 0) wins, however small the pot of a won round (here 1 pip)."""
    table = [[1.0, 0.0], [1.0, 0.0], [0.0, 2.0]]  # totals 2 / 2; rounds won 2 / 1
    assert session_winners(table, 2, positive=True) == [0]


def test_r25_positive_tie_break_prefers_the_highest_single_round() -> None:
    """R25 mirrored under ``positive_scoring``: equal totals and rounds won, then the
    highest single round wins."""
    table = [[3.0, 2.0], [1.0, 2.0]]  # totals 4 / 4; 2 wins each; best 3 vs 2
    assert session_winners(table, 2, positive=True) == [0]
    assert session_winners([[2.0, 3.0], [2.0, 1.0]], 2, positive=True) == [1]


def test_r25_before_any_round_every_seat_is_tied() -> None:
    """R25: with no round scored every total is 0, so every seat ties, in both scorings."""
    assert session_winners([], 3, positive=False) == [0, 1, 2]
    assert session_winners([], 3, positive=True) == [0, 1, 2]


# ------------------------------------------------------------------ scripted core games
def _game(num_players: int = 2, max_pips: int = 6, **flags: Any) -> MexicanTrain:
    """A game of the pure core, double-6 by default (any hand size is valid for a fixed deal)."""
    return MexicanTrain(GameConfig.make(num_players=num_players, max_pips=max_pips, hand_size=3, **flags))


def _deal(game: MexicanTrain, hands: list[list[str]], bone: list[str] | None = None, **kw: Any) -> GameState:
    """Round 0 on a scripted deal (tests.scripted.full_deal: unnamed tiles go to the boneyard
    bottom, or to hand ``rest_to``), seat 0 first."""
    c = game.config
    deal = full_deal(c.max_pips, hands, bone or [], engine_dealt=c.engine_holder_opens, **kw)
    return game.new_game(
        np.random.default_rng(0), deal=parse_deal(c, c.engine_value(0), deal), first_player=0
    )


def _move(game: MexicanTrain, text: str) -> int:
    """``"6-1 @0"`` / ``"6-1 @mex"`` / ``"DRAW"`` / ``"PASS"`` -> the core's absolute move id."""
    if text == "DRAW":
        return game.draw
    if text == "PASS":
        return game.pass_
    t, where = text.split()
    a, b = tile(t)
    train = game.mexican if where == "@mex" else int(where[1:])
    return game.tiles.tile_id(min(a, b), max(a, b)) * game.width + train


def _play(game: MexicanTrain, s: GameState, *moves: str) -> None:
    for text in moves:
        game.checked_apply(s, _move(game, text))


def _refusal(game: MexicanTrain, s: GameState, text: str) -> str:
    """The message of the refusal of an illegal move; the state must be left unchanged."""
    before = s.copy()
    with pytest.raises(IllegalMoveError) as err:
        game.checked_apply(s, _move(game, text))
    assert [getattr(s, k) for k in GameState.__slots__] == [getattr(before, k) for k in GameState.__slots__]
    return str(err.value)


# --------------------------------------------------------- refusals name the rule (R5-R20)
def test_refusals_on_the_first_turn_name_the_rule() -> None:
    """R7, R9, R10, R14, R15 on seat 0's first turn (double-6, engine 6-6 in the station;
    seat 0 holds 6-1 1-1 0-2, seat 1 holds 6-2 2-4, the boneyard starts 0-0 0-3)."""
    game = _game()
    s = _deal(game, [["6-1", "1-1", "0-2"], ["6-2", "2-4"]], ["0-0", "0-3"])
    assert "R10" in _refusal(game, s, "DRAW")  # pagat: no draw on the first turn
    assert "R15" in _refusal(game, s, "PASS")  # 6-1 can start the train
    assert "R7" in _refusal(game, s, "0-2 @0")  # 0-2 does not match the engine
    msg = _refusal(game, s, "6-2 @0")  # seat 1's tile
    assert "R14" in msg and "not in" in msg
    assert "R9" in _refusal(game, s, "6-1 @mex")  # first turn: own train only
    assert "R9" in _refusal(game, s, "6-1 @1")
    s = _deal(game, [["6-0"], ["6-2"]])
    assert "R9" in _refusal(game, s, "6-0 @mex")  # 6-0 matches (its other end is 0): R9, not R7


def test_refusal_while_seats_seek_the_engine_names_r5() -> None:
    """R5 ``engine_holder_opens``: nobody holds 6-6, so seats only draw until it appears."""
    game = _game(engine_holder_opens=True)
    s = _deal(game, [["1-2"], ["0-3"]])  # 6-6 is in the boneyard
    assert s.phase == Phase.SEEK_ENGINE and game.legal_moves(s) == [game.draw]
    assert "R5" in _refusal(game, s, "1-2 @0")


def test_refusals_in_normal_turns_name_the_rule_and_the_legal_moves() -> None:
    """R14, R15, R16, R20 after the opening; the refusal also lists what is legal, trains
    named by owner ("its own train", "player_1's train", "the Mexican train")::

        train 0: [6|6] 6-1        seat 0: 1-1 0-2 6-5
        train 1: [6|6] 6-2        seat 1: 2-4
    """
    game = _game()
    s = _deal(game, [["6-1", "1-1", "0-2", "6-5", "2-2"], ["6-2", "2-4"]], ["0-0", "0-3"])
    _play(game, s, "6-1 @0", "PASS", "6-2 @1", "PASS")
    msg = _refusal(game, s, "DRAW")  # seat 0 holds 1-1 (own train) and 6-5 (Mexican)
    assert "R15" in msg
    assert "on its own train" in msg and "on the Mexican train" in msg
    msg = _refusal(game, s, "0-2 @1")  # matches seat 1's open end, but it has no marker
    rule = msg.split(": ", 1)[1]  # past "illegal move ... on player_1's train"
    assert "R14" in rule and "player_1's train" in rule and "marker" in rule
    assert "its own train (player_1" not in msg
    assert "DRAW" not in msg and "PASS" not in msg.split("Legal")[-1]
    _play(game, s, "1-1 @0")  # a double: a tile is owed (R18), on any train it may use
    for move in ("0-2 @1", "2-2 @1"):  # still no marker on train 1: R14, whatever is owed
        msg = _refusal(game, s, move)
        assert "R14" in msg and "marker" in msg
    _play(game, s, "6-5 @mex")  # the owed tile: 1-1 is left open (R20)
    assert s.pending == [0] and s.current == 1
    msg = _refusal(game, s, "2-4 @1")  # its own train, but the open 1-1 comes first
    assert "R20" in msg
    assert "R15" in _refusal(game, s, "PASS") and "Legal: [DRAW]" in _refusal(game, s, "PASS")
    _play(game, s, "DRAW")  # 0-0: it does not satisfy 1-1 either
    msg = _refusal(game, s, "DRAW")  # one draw per owed tile
    assert "R16" in msg and "Legal: [PASS]" in msg


def test_refusal_of_a_second_double_names_one_double_per_turn() -> None:
    """Variant ``one_double_per_turn``: after 1-1, 4-4 (which matches the Mexican train's 4)
    is refused for that variant; 0-3 on unmarked train 1 (open end 3) is still refused by R14."""
    game = _game(one_double_per_turn=True)
    s = _deal(game, [["6-1", "6-4", "1-1", "4-4", "0-3"], ["6-2", "2-3", "5-3"]], ["5-5"])
    _play(game, s, "6-1 @0", "PASS", "6-2 @1", "PASS", "6-4 @mex", "2-3 @1", "1-1 @0")
    state_from_dict(game, state_to_dict(game, s))  # one double this turn is allowed
    assert "one_double_per_turn" in _refusal(game, s, "4-4 @mex")
    msg = _refusal(game, s, "0-3 @1")
    assert "R14" in msg and "one_double_per_turn" not in msg


def test_r16_shown_voids_under_one_double_per_turn() -> None:
    """R16 voids with ``one_double_per_turn``: after 1-1, seat 0 draws (it holds 4-4, 0-3;
    its own train ends in 1, the Mexican in 4, train 1 has no marker). It has shown it lacks
    the 1s (1-1 is on the table, any other 1 would have been legal) but not the 4s: 4-4 was
    no legal tile then, and seat 0 does hold it. The same after it passes."""
    game = _game(one_double_per_turn=True)
    s = _deal(game, [["6-1", "6-4", "1-1", "4-4", "0-3"], ["6-2", "2-3", "5-3"]], ["5-5"])
    _play(game, s, "6-1 @0", "PASS", "6-2 @1", "PASS", "6-4 @mex", "2-3 @1", "1-1 @0", "DRAW")
    assert s.pre_draw_voids[0] == 1 << 1
    assert public_view(s, game.config, 1).voids[0] == 0  # the drawn tile is unseen
    _play(game, s, "PASS")  # the drawn 5-5 is a second double: not legal either
    assert public_view(s, game.config, 1).voids[0] == 1 << 1


def test_refusal_with_many_legal_moves_still_names_them() -> None:
    """A refusal lists the legal moves even when there are many, with their number. Here 34
    (R14): every 1-x on seat 0's own train, every 12-x on the Mexican train and on seat 1's
    empty train, which carries a marker since seat 1 could not open (R10)."""
    game = _game(max_pips=12)
    ones = [f"1-{x}" for x in range(12)]
    twelves = [f"12-{x}" for x in range(12) if x != 1]
    s = _deal(game, [["12-1", *ones, *twelves], ["2-2"]], ["3-3"])
    _play(game, s, "12-1 @0", "PASS", "PASS")  # seat 1 cannot open: it passes (R10)
    legal = game.legal_moves(s)
    assert len(legal) == len(ones) + 2 * len(twelves) == 34
    msg = _refusal(game, s, "DRAW")
    assert "R15" in msg and "34" in msg
    assert game.describe_move(s, legal[0]) in msg


def test_refusal_of_a_marked_train_before_ones_own_train_left_the_station() -> None:
    """R14: a marked train is open to others only once their own train has left the station.
    Neither seat can start its train at the opening (R10: both pass and mark); seat 0 then
    draws 6-3 and may lay it on its own train or the Mexican one, not on seat 1's."""
    game = _game()
    s = _deal(game, [["1-2", "0-3"], ["2-4", "0-5"]], ["6-3"])
    _play(game, s, "PASS", "PASS", "DRAW")
    assert s.markers == [True, True]
    state_from_dict(game, state_to_dict(game, s))  # R16: the drawn tile is the one playable
    assert sorted(game.legal_moves(s)) == sorted([_move(game, "6-3 @0"), _move(game, "6-3 @mex")])
    msg = _refusal(game, s, "6-3 @1")
    assert "R14" in msg and "left the station" in msg


def test_refusal_of_a_draw_from_an_empty_boneyard_names_r16() -> None:
    """R16: nothing to draw. Every tile is dealt (seat 1 holds the rest of the set)."""
    game = _game()
    s = _deal(game, [["1-2", "0-3"], ["6-2"]], rest_to=1)
    assert s.boneyard == []
    msg = _refusal(game, s, "DRAW")
    assert "R16" in msg and "boneyard" in msg


@pytest.mark.parametrize("rounds", [1, 2])
def test_refusal_after_the_round_ends_says_the_round_is_over(rounds: int) -> None:
    """R12/R24: seat 0 goes out on its first turn; the round ends after seat 1's first turn.
    Then no move is legal, whether the session goes on (ROUND_OVER) or not (GAME_OVER)."""
    game = _game(rounds=rounds)
    s = _deal(game, [["6-1"], ["6-2", "2-4"]], ["0-0"])
    _play(game, s, "6-1 @0", "6-2 @1", "PASS")
    assert s.phase == (Phase.ROUND_OVER if rounds > 1 else Phase.GAME_OVER)
    assert s.blocked is False and s.round_scores == [[0, 6]]  # R24: 2-4 left in seat 1's hand
    assert state_to_dict(game, state_from_dict(game, state_to_dict(game, s))) == state_to_dict(game, s)
    assert game.legal_moves(s) == []
    for move in ("DRAW", "PASS", "2-4 @1"):
        assert "the round is over" in _refusal(game, s, move)


# ------------------------------------------------------------------------- R23 blocked
def _position(
    game: MexicanTrain, hands: list[str], trains: list[str], mexican: str, phase: Phase
) -> dict[str, Any]:
    """A snapshot with an empty boneyard, no double pending, every first turn taken: NORMAL
    with seat 0 on turn, or a round ended blocked (GAME_OVER, scored by the hands left, R24).
    Trains are written from the station: ``"6-4 4-1"``."""
    n = game.n
    d = state_to_dict(game, game.new_game(np.random.default_rng(0)))
    d["hands"] = [[list(tile(t)) for t in h.split()] for h in hands]
    d["boneyard"] = []
    d["trains"] = [line(t) if t else [] for t in trains]
    d["mexican_train"] = line(mexican) if mexican else []
    d["markers"] = [False] * n
    d["first_turn_done"] = [True] * n
    d["current_player"] = 0
    d["history_len"] = 100
    d["phase"] = phase.name
    if phase == Phase.GAME_OVER:
        pips = [sum(a + b for a, b in h) for h in d["hands"]]
        d["blocked"], d["round_scores"], d["scores"] = True, [pips], pips
    else:
        d["phase"] = "NORMAL"
    return d


@pytest.mark.parametrize(
    ("hands", "trains", "mexican", "blocked"),
    [
        pytest.param(  # seat 0's train has left the station: it could lay 1-5 on seat 1's 5
            ["1-5", "1-1 0-0 2-6 2-2 1-2"],
            ["6-4", "6-0 0-4 4-4 4-2 2-0 0-3 3-6 6-5 5-0 0-1 1-3 3-3 3-5"],
            "6-1 1-4 4-3 3-2 2-5 5-5 5-4",
            False,
            id="started-seat-reaches-every-train",
        ),
        pytest.param(  # seat 1 has no train: it reaches only its own (6) and the Mexican (6)
            ["0-0", "5-5", "2-2"],
            [
                "6-4 4-4 4-5 5-0 0-4 4-3 3-3 3-0 0-2 2-6 6-0 0-1 1-4 4-2 2-5",
                "",
                "6-3 3-2 2-1 1-1 1-3 3-5 5-6 6-1 1-5",
            ],
            "",
            True,
            id="unstarted-seat-reaches-own-and-mexican-only",
        ),
        pytest.param(  # seat 1 has no train, but 3-5 fits the Mexican train's 3
            ["2-5 2-2 0-0", "3-5 2-4 4-4"],
            ["6-3 3-1 1-1 1-4", ""],
            "6-4 4-3 3-3 3-0 0-4 4-5 5-5 5-0 0-1 1-6 6-5 5-1 1-2 2-6 6-0 0-2 2-3",
            False,
            id="unstarted-seat-reaches-the-mexican",
        ),
    ],
)
def test_r23_blocked_means_nobody_could_play_even_on_marked_trains(
    hands: list[str], trains: list[str], mexican: str, blocked: bool
) -> None:
    """R23 (with R14): a round with an empty boneyard is blocked when no seat would have a
    legal tile even if every train carried a marker. A seat whose train has left the station
    would reach every train then; a seat without its own train reaches only its own (empty)
    train and the Mexican train. So a snapshot of the round going on loads exactly when the
    round is not blocked, and one of the round ended blocked exactly when it is."""
    game = _game(num_players=len(hands))
    going_on = _position(game, hands, trains, mexican, Phase.NORMAL)
    ended = _position(game, hands, trains, mexican, Phase.GAME_OVER)
    loads, refused = (ended, going_on) if blocked else (going_on, ended)
    state_from_dict(game, loads)
    with pytest.raises(ValueError, match="R23"):
        state_from_dict(game, refused)


# ------------------------------------------------------------------------ R5, R6, R25 rounds
def test_r25_next_round_is_refused_before_the_round_ends() -> None:
    """R25: the next round of a session is dealt only after the current one ended."""
    game = _game(rounds=2)
    s = _deal(game, [["6-1"], ["6-2", "2-4"]], ["0-0"])
    with pytest.raises(ValueError, match="R25"):
        game.next_round(s, np.random.default_rng(0))


def test_r25_next_round_plays_the_fixed_deal_with_the_next_engine() -> None:
    """R25/R5/R6: after round 0 of a double-6 session, round 1 uses the engine 5-5, set
    aside before the deal, and seat 1 opens; a fixed deal for it is dealt as given."""
    game = _game(rounds=2)
    s = _deal(game, [["6-1"], ["6-2", "2-4"]], ["0-0"])
    _play(game, s, "6-1 @0", "6-2 @1", "PASS")  # seat 0 went out: round 0 is over
    assert s.phase == Phase.ROUND_OVER
    hands = [["5-1", "1-2"], ["5-3", "6-6"]]
    named = {tuple(sorted(tile(t))) for h in hands for t in h}
    rest = [[a, b] for a in range(7) for b in range(a, 7) if (a, b) not in named and (a, b) != (5, 5)]
    deal = {"hands": [[list(tile(t)) for t in h] for h in hands], "boneyard": rest}
    game.next_round(s, np.random.default_rng(0), parse_deal(game.config, 5, deal))
    assert (s.round_index, s.engine, s.phase, s.current) == (1, 5, Phase.OPENING, 1)
    tiles = game.tiles
    assert s.hands == [tiles.mask_of(tiles.tile_id(*sorted(tile(t))) for t in h) for h in hands]
    assert s.boneyard[-1] == tiles.tile_id(0, 0)  # the top of the boneyard is drawn first


def test_r5_r15_a_seat_dealt_only_the_engine_has_had_its_first_turn() -> None:
    """R5 ``engine_holder_opens`` with R15/R12: seat 1 is dealt only 6-6. It places the
    engine and so opens, but its hand is then empty: it takes no action, its first turn is
    over, and seat 2 plays next. The round ends once seats 2 and 0 had their first turns."""
    game = _game(num_players=3, engine_holder_opens=True)
    tiles = game.tiles
    ids = {t: tiles.tile_id(*sorted(tile(t))) for t in ("6-6", "6-1", "6-2", "0-0")}
    rest = [i for i in range(tiles.num_tiles) if i not in ids.values()]
    deal = Deal([1 << ids["6-1"], 1 << ids["6-6"], 1 << ids["6-2"]], [*rest, ids["0-0"]])
    s = game.new_game(np.random.default_rng(0), deal=deal)
    assert (s.phase, s.first_player, s.current) == (Phase.OPENING, 1, 2)
    assert s.first_turn_done == [False, True, False]
    _play(game, s, "6-2 @2", "6-1 @0")
    assert s.phase == Phase.GAME_OVER and s.round_scores == [[0, 0, 0]]


@pytest.mark.parametrize(("reverse", "first"), [(False, 0), (True, 1)])
def test_r13_r21_the_double_to_satisfy(reverse: bool, first: int) -> None:
    """R13: first-turn chains ending in a double leave it open, binding nobody until the
    opening is over; then R21: the doubles are satisfied in the order played (train 0's 1-1
    first), or the last first under ``satisfy_in_reverse_order``."""
    game = _game(satisfy_in_reverse_order=reverse)
    s = _deal(game, [["6-1", "1-1", "1-3"], ["6-2", "2-2", "2-5"]], ["0-0"])
    _play(game, s, "6-1 @0", "1-1 @0", "PASS")
    assert s.phase == Phase.OPENING and game.double_to_satisfy(s) == -1
    _play(game, s, "6-2 @1", "2-2 @1", "PASS")
    assert s.phase == Phase.NORMAL and game.double_to_satisfy(s) == first
    satisfy = "1-3 @0" if first == 0 else "DRAW"  # seat 0 holds no 2
    assert game.legal_moves(s) == [_move(game, satisfy)]


# ------------------------------------------------------------------------- R9, R14 moves
def test_r9_opening_draw_a_started_chain_that_cannot_go_on_stops() -> None:
    """R9 with ``opening_draw``: the draw is for a seat that cannot START its train; seat 0
    started it with 6-1 and holds no 1, so its chain ends: it passes, it does not draw.
    Seat 1 cannot start its train: it draws once."""
    game = _game(opening_draw=True)
    s = _deal(game, [["6-1", "2-3"], ["0-2", "2-4"]], ["0-0"])
    _play(game, s, "6-1 @0")
    assert game.legal_moves(s) == [game.pass_]
    _play(game, s, "PASS")
    assert game.legal_moves(s) == [game.draw]


def test_legal_moves_come_in_increasing_order() -> None:
    """Legal moves are listed in increasing move order, whichever train they go on: here 6-0
    on the Mexican train (0-6 is a low tile) before 1-5 on seat 0's own train (R14)."""
    game = _game()
    s = _deal(game, [["6-1", "1-5", "6-0"], ["6-2", "2-4"]], ["0-0"])
    _play(game, s, "6-1 @0", "PASS", "6-2 @1", "PASS")
    legal = game.legal_moves(s)
    assert set(legal) == {_move(game, "6-0 @mex"), _move(game, "1-5 @0")}
    assert legal == sorted(legal)


# ----------------------------------------------------------------------------- GameState
def test_a_copied_state_plays_on_without_touching_the_original() -> None:
    """``GameState.copy`` (and ``copy.deepcopy``, which OpenSpiel uses) is deep: laying a tile
    on a copy (R7: it joins a train) leaves the original's trains, pending doubles and hands
    as they were."""
    game = _game()
    s = _deal(game, [["6-1", "1-1", "1-3"], ["6-2", "2-4"]], ["0-0"])
    before = state_to_dict(game, s)
    for twin in (s.copy(), copy.deepcopy(s)):
        _play(game, twin, "6-1 @0", "1-1 @0", "PASS", "6-2 @1", "PASS")
        assert twin.trains[0] and twin.pending == [0]
        assert state_to_dict(game, s) == before


# --------------------------------------------------------------------- R1, R3-R5 fixed deals
def _deal_dict(hands: list[list[str]], bone: list[str] | None = None, **kw: Any) -> dict[str, Any]:
    return full_deal(6, hands, bone or [], **kw)


def test_r4_a_fixed_deal_gives_every_seat_a_tile_it_keeps() -> None:
    """R4 (with R5, R15): a hand that is empty, or (``engine_holder_opens``) that holds only
    the engine, which goes to the station, is refused, saying which; any other hand is fine,
    even one of the double blank alone."""
    config = _game().config
    parse_deal(config, 6, _deal_dict([["0-0"], ["1-2"]]))  # 0-0 alone is a hand
    with pytest.raises(ValueError, match="R4") as err:
        parse_deal(config, 6, _deal_dict([[], ["1-2"]]))
    assert "hands'][0]" in str(err.value) and "empty" in str(err.value)
    holder = _game(engine_holder_opens=True).config
    parse_deal(holder, 6, _deal_dict([["6-6", "0-1"], ["1-2"]], engine_dealt=True))
    with pytest.raises(ValueError, match="R4") as err:
        parse_deal(holder, 6, _deal_dict([["1-2"], ["6-6"]], engine_dealt=True))
    msg = str(err.value)
    assert "hands'][1]" in msg and "engine" in msg and "empty" not in msg


def test_r1_r3_a_fixed_deal_that_is_not_the_set_is_refused_naming_the_fault() -> None:
    """R1: each tile once (both places named), every tile dealt (the missing ones named);
    R3: one hand per seat; a boneyard that is not a list of tiles is a ``TypeError``."""
    config = _game().config
    deal = _deal_dict([["1-2"], ["3-4"]])
    deal["boneyard"].append([2, 1])  # 1-2 again
    with pytest.raises(ValueError, match="R1") as err:
        parse_deal(config, 6, deal)
    assert "hand 0" in str(err.value) and "boneyard" in str(err.value)
    deal = _deal_dict([["1-2"], ["3-4"]])
    deal["hands"][1].append([2, 1])  # and in hand 1
    with pytest.raises(ValueError, match="R1") as err:
        parse_deal(config, 6, deal)
    assert "hand 0" in str(err.value) and "hand 1" in str(err.value)
    deal = _deal_dict([["1-2"], ["3-4"]])
    deal["boneyard"].remove([5, 6])
    with pytest.raises(ValueError, match="R1") as err:
        parse_deal(config, 6, deal)
    assert "(5, 6)" in str(err.value) and "(0, 0)" not in str(err.value)
    with pytest.raises(ValueError, match="R3"):
        parse_deal(config, 6, _deal_dict([["1-2"], ["3-4"], ["5-5"]]))
    for bad in (5, "0-0"):
        with pytest.raises(TypeError, match="boneyard"):
            parse_deal(config, 6, {"hands": [[[1, 2]], [[3, 4]]], "boneyard": bad})
    with pytest.raises(TypeError, match="boneyard"):
        parse_deal(config, 6, {"hands": [[[1, 2]], [[3, 4]]], "boneyard": [[0, 0], "x"]})


# ---------------------------------------------------------------------- presets and flags
def test_preset_flags_and_explicit_overrides() -> None:
    """The ``cardinal`` preset (``003``/``004``, RULES.md R4-R5 variants) switches on
    ``one_tile_opening``, ``engine_holder_opens`` and ``draw_until_engine_match``, nothing
    else; an explicit flag overrides its preset value."""
    cardinal = {"one_tile_opening", "engine_holder_opens", "draw_until_engine_match"}
    flags = GameConfig.make(rules="cardinal").flags()
    assert set(flags) == set(VARIANT_FLAGS)
    assert {k for k, on in flags.items() if on} == cardinal
    flags = GameConfig.make(rules="cardinal", engine_holder_opens=False, blank_penalty=True).flags()
    assert {k for k, on in flags.items() if on} == cardinal - {"engine_holder_opens"} | {"blank_penalty"}
    assert not any(GameConfig.make().flags().values())  # pagat: R1-R25 as written


@pytest.mark.parametrize(
    ("rules", "max_pips", "players", "hand"),
    [
        ("pagat", 12, 4, 15),  # R4, pagat's table
        ("pagat", 13, 4, 17),  # 15 * 104 // 90: a double-13 set has 105 tiles, 104 to deal
        ("pagat", 15, 9, 12),  # past the table h12 = 80 // 9 = 8; 8 * 135 // 90
        ("pagat", 18, 16, 10),  # 80 // 16 = 5; 5 * 189 // 90
        ("wikipedia", 6, 2, 4),  # 16 * 27 // 90: a double-6 set has 28 tiles, 27 to deal
    ],
)
def test_r4_default_hand_size_scales_the_double_12_figure(
    rules: str, max_pips: int, players: int, hand: int
) -> None:
    """R4 for other sets: the preset's double-12 figure h12(n) (``80 // n`` past its table)
    scaled by the tiles there are to deal, ``floor(h12(n) * (tiles - 1) / 90)``."""
    assert GameConfig.make(num_players=players, max_pips=max_pips, rules=rules).hand_size == hand


# ------------------------------------------------------------------- snapshots (R20, R24)
def _two_pending(game: MexicanTrain) -> dict[str, Any]:
    """A snapshot after an opening where both seats ended their chains in a double (R13)."""
    s = _deal(game, [["6-1", "1-1", "1-3"], ["6-2", "2-2", "2-5"]], ["0-0"])
    _play(game, s, "6-1 @0", "1-1 @0", "PASS", "6-2 @1", "2-2 @1", "PASS")
    d = state_to_dict(game, s)
    assert d["pending_doubles"] == [0, 1]
    return d


@pytest.mark.parametrize(
    ("refs", "error", "key", "shown"),
    [
        (["west", 1], TypeError, "pending_doubles[0]", "'west'"),  # not 'mexican'
        ([0, 7], ValueError, "pending_doubles[1]", "7"),  # no seat 7
        ([2, 1], ValueError, "pending_doubles[0]", "2"),  # 2 seats: 0 and 1 (the Mexican is 'mexican')
    ],
)
def test_r20_a_snapshot_names_trains_by_seat_or_mexican(
    refs: list[Any], error: type[Exception], key: str, shown: str
) -> None:
    """R20: a pending double is on a seat's train (its index) or on the Mexican train
    (``"mexican"``); anything else is refused as ``state dict 'KEY': R20: ...``, naming it."""
    game = _game()
    d = _two_pending(game)
    state_from_dict(game, d)
    d["pending_doubles"] = refs
    with pytest.raises(error, match=re.escape(f"state dict {key!r}: R20: ")) as err:
        state_from_dict(game, d)
    assert shown in str(err.value).split(": R20: ")[1]


def test_r24_a_snapshot_holds_one_score_per_seat() -> None:
    """R24/R25: the session scores hold one score per seat; anything else is refused as
    ``state dict 'scores': R24: ...``."""
    game = _game()
    d = _two_pending(game)
    d["scores"] = [0]
    with pytest.raises(ValueError, match=re.escape("state dict 'scores': R24: ")):
        state_from_dict(game, d)


def test_r7_a_snapshot_train_is_a_list_of_tiles() -> None:
    """R7: a train is a line of tiles from the station; a train written any other way is a
    ``TypeError`` naming it, ``state dict 'trains[1]': R7: ...``."""
    game = _game()
    d = _two_pending(game)
    d["trains"][1] = "6-2 2-2"
    with pytest.raises(TypeError, match=re.escape("state dict 'trains[1]': R7: ")):
        state_from_dict(game, d)


@pytest.mark.parametrize(
    ("path", "value", "error", "key", "rule"),
    [
        (("config",), "pagat", TypeError, "config", "R1-R4"),
        (("config", "num_players"), 3, ValueError, "config", "R1-R4"),
        (("phase",), "LUNCH", ValueError, "phase", "R25"),
        (("first_player",), 5, ValueError, "first_player", "R6"),
        (("seat_offset",), 2, ValueError, "seat_offset", "R6"),
        (("current_player",), 9, ValueError, "current_player", "R15"),
        (("hands",), "all of them", TypeError, "hands", "R4"),
        (("hands",), [[]], ValueError, "hands", "R4"),
        (("hands", 0), "1-3", TypeError, "hands[0]", "R4"),
        (("trains", 1), [[3, 4]], ValueError, "trains[1][0]", "R7"),
        (("trains",), [[]], ValueError, "trains", "R7"),
        (("boneyard",), "empty", TypeError, "boneyard", "R8"),
        (("turn",), "over", TypeError, "turn", "R18"),
        (("turn", "bogus"), 1, ValueError, "turn.bogus", "R18"),
        (("turn", "tiles"), -1, ValueError, "turn.tiles", "R18"),
        (("turn", "doubles"), 5, ValueError, "turn.doubles", "R18"),
        (("turn", "owes"), 1, TypeError, "turn.owes", "R18"),
        (("turn", "has_drawn"), "no", TypeError, "turn.has_drawn", "R16"),
        (("voids",), [[]], ValueError, "voids", "R16"),
        (("blocked",), 0, TypeError, "blocked", "R23"),
        (("history_len",), -1, ValueError, "history_len", "R15"),
    ],
)
def test_a_corrupt_snapshot_is_refused_naming_key_and_rule(
    path: tuple[str | int, ...], value: Any, error: type[Exception], key: str, rule: str
) -> None:
    """Every corrupt value of a snapshot is refused as ``state dict 'KEY': RULE: what is
    wrong``: the key, the rule it breaks (R1-R25), and a sentence saying what is wrong."""
    game = _game()
    d = _two_pending(game)
    where: Any = d
    for step in path[:-1]:
        where = where[step]
    where[path[-1]] = value
    assert_refused_naming(lambda: state_from_dict(game, d), key, rule, error)


# ----------------------------------------------------------- determinization (R5, R16)
def _views(game: MexicanTrain, s: GameState, steps: int) -> list[PublicView]:
    """The view of the seat on turn after each of ``steps`` lowest legal moves."""
    views = []
    for _ in range(steps):
        if s.phase >= Phase.ROUND_OVER:
            break
        views.append(public_view(s, game.config, s.current))
        game.apply(s, game.legal_moves(s)[0])
    return views


def _check_sample(game: MexicanTrain, view: PublicView, sample: GameState) -> None:
    """A determinization agrees with everything the seat knows: its own hand, every count,
    the table, and the voids the others have shown (R16); hands, boneyard and table are the
    set, each tile once (R1), the engine in the boneyard while seats seek it (R5)."""
    assert public_view(sample, game.config, view.seat) == view
    tiles = game.tiles
    parts = [*sample.hands, tiles.mask_of(sample.boneyard), sample.table]
    assert sum(p.bit_count() for p in parts) == tiles.num_tiles
    assert tiles.mask_of(sample.boneyard) | sample.table | sum(sample.hands) == tiles.full
    for q in range(game.n):
        if q != view.seat:
            assert not sample.hands[q] & banned_tiles(view, q)
    if not view.engine_placed:
        assert tiles.double_id(view.engine) in sample.boneyard


@pytest.mark.parametrize("holder_opens", [False, True])
def test_r16_determinizations_agree_with_the_public_view(holder_opens: bool) -> None:
    """``sample_state`` and its exact fallback deal the unseen tiles so that the sample shows
    the seat exactly what it saw: counts, table and shown voids (R16), and, while seats seek
    the engine (R5 ``engine_holder_opens``), nobody holds it."""
    game = _game(num_players=3, engine_holder_opens=holder_opens)
    s = game.new_game(np.random.default_rng(7))
    views = _views(game, s, 40)
    assert any(any(v.voids) for v in views)  # some seat has shown a void
    if holder_opens:
        assert any(not v.engine_placed for v in views)
    for k, view in enumerate(views):
        rng = np.random.default_rng(k)
        _check_sample(game, view, sample_state(game, view, rng))
        _check_sample(game, view, _exact_deal(game, view, rng))


def test_r16_a_view_whose_voids_admit_no_deal_is_refused() -> None:
    """A view in which a seat holding tiles has shown a void in every pip admits no deal:
    ``sample_state`` raises ``ValueError``."""
    game = _game(num_players=3)
    view = _views(game, game.new_game(np.random.default_rng(7)), 3)[-1]
    other = (view.seat + 1) % 3
    voids = tuple((1 << 7) - 1 if q == other else v for q, v in enumerate(view.voids))
    with pytest.raises(ValueError):
        sample_state(game, dataclasses.replace(view, voids=voids), np.random.default_rng(0))


# ------------------------------------------------------------ invariants of a snapshot
def _refused(game: MexicanTrain, d: dict[str, Any], key: str, rule: str) -> None:
    """The snapshot ``d`` is refused as ``state dict 'KEY': RULE: <what is wrong>``."""
    assert_refused_naming(lambda: state_from_dict(game, d), key, rule)


def _move_tile(d: dict[str, Any], seat: int, pips: list[int], train: int) -> None:
    """Take the tile ``pips`` from hand ``seat`` and lay it on train ``train`` (as written)."""
    d["hands"][seat] = [t for t in d["hands"][seat] if sorted(t) != sorted(pips)]
    d["trains"][train].append(pips)


def test_r5_a_snapshot_of_seats_seeking_the_engine_shows_no_play() -> None:
    """R5 ``engine_holder_opens``: while seats seek the engine nothing is played, nobody has
    had a first turn, and seats only draw."""
    game = _game(engine_holder_opens=True)
    s = _deal(game, [["6-1", "1-2"], ["0-3", "3-4"]])
    assert s.phase == Phase.SEEK_ENGINE
    base = state_to_dict(game, s)
    state_from_dict(game, base)
    d = copy.deepcopy(base)
    d["first_turn_done"][0] = True
    _refused(game, d, "first_turn_done", "R5")
    d = copy.deepcopy(base)
    d["turn"]["tiles"] = 1
    _refused(game, d, "turn", "R5")
    d = copy.deepcopy(base)
    _move_tile(d, 0, [6, 1], 0)
    _refused(game, d, "trains", "R5")


def test_r9_r10_r18_a_snapshot_of_the_opening() -> None:
    """R9-R13 mid-chain: seat 0 laid 6-1 and the double 1-1 on its first turn (the double is
    this turn's, R13; nothing is owed, R18). Seat 1 has had no turn: its train is not started
    and carries no marker."""
    game = _game()
    s = _deal(game, [["6-1", "1-1", "1-3"], ["6-2", "2-4"]], ["0-0"])
    _play(game, s, "6-1 @0", "1-1 @0")
    base = state_to_dict(game, s)
    assert base["turn_doubles"] == [0]
    state_from_dict(game, base)
    d = copy.deepcopy(base)
    d["turn"]["owes"] = True
    _refused(game, d, "turn.owes", "R18")
    bad = s.copy()
    bad.doubles_this_turn = 3  # more doubles than tiles laid: the soak's check_state says so
    with pytest.raises(ValueError, match=re.escape("state dict 'turn.doubles': R18: ")):
        check_state(game, bad)
    d = copy.deepcopy(base)
    d["markers"][1] = True
    _refused(game, d, "markers[1]", "R10")
    d = copy.deepcopy(base)
    _move_tile(d, 1, [6, 2], 1)
    _refused(game, d, "trains[1]", "R9")


def test_r12_r19_r23_a_snapshot_of_a_finished_round() -> None:
    """A finished round: every seat had its first turn (R12); a round not blocked ended with
    a seat out (R19); a blocked one has an empty boneyard (R23)."""
    game = _game()
    hands = ["1-5", "1-1 0-0 2-6 2-2 1-2"]
    trains = ["6-4", "6-0 0-4 4-4 4-2 2-0 0-3 3-6 6-5 5-0 0-1 1-3 3-3 3-5"]
    base = _position(game, hands, trains, "6-1 1-4 4-3 3-2 2-5 5-5 5-4", Phase.GAME_OVER)
    d = copy.deepcopy(base)
    d["blocked"] = False
    _refused(game, d, "blocked", "R19")
    d = copy.deepcopy(base)
    d["first_turn_done"][1] = False
    _refused(game, d, "first_turn_done", "R12")
    d = copy.deepcopy(base)
    d["boneyard"] = [d["hands"][1].pop()]
    pips = [sum(a + b for a, b in h) for h in d["hands"]]  # R24: still the hands left
    d["scores"], d["round_scores"] = pips, [pips]
    _refused(game, d, "blocked", "R23")


def test_r20_a_snapshot_pends_only_doubles_that_bind() -> None:
    """R20: a pending double is the open end of its train; under ``no_double_satisfaction``
    no double is ever pending (R13's chains end in doubles that bind nobody)."""
    game = _game()
    d = _two_pending(game)
    d["pending_doubles"] = [0, "mexican"]  # the Mexican train is not even started
    _refused(game, d, "pending_doubles", "R20")
    game = _game(no_double_satisfaction=True)
    s = _deal(game, [["6-1", "1-1", "1-3"], ["6-2", "2-2", "2-5"]], ["0-0"])
    _play(game, s, "6-1 @0", "1-1 @0", "PASS", "6-2 @1", "2-2 @1", "PASS")
    d = state_to_dict(game, s)
    assert d["pending_doubles"] == []
    d["pending_doubles"] = [0]
    _refused(game, d, "pending_doubles", "R20")


def _after_opening(game: MexicanTrain) -> GameState:
    """Both seats ended their first-turn chains in a double (R13): NORMAL, seat 0 on turn."""
    s = _deal(game, [["6-1", "1-1", "1-3"], ["6-2", "2-2", "2-5"]], ["0-0"])
    _play(game, s, "6-1 @0", "1-1 @0", "PASS", "6-2 @1", "2-2 @1", "PASS")
    return s


def _mid_chain(game: MexicanTrain) -> GameState:
    """Seat 0 laid 6-1 and 1-1 on its first turn and may go on (R9)."""
    s = _deal(game, [["6-1", "1-1", "1-3"], ["6-2", "2-4"]], ["0-0"])
    _play(game, s, "6-1 @0", "1-1 @0")
    return s


def _seeking(game: MexicanTrain) -> GameState:
    """Nobody was dealt the engine: seats draw for it (R5 ``engine_holder_opens``)."""
    return _deal(game, [["6-1", "1-2"], ["0-3", "3-4"]])


def _two_doubles_laid(s: GameState) -> None:
    s.tiles_this_turn = s.doubles_this_turn = 2


def _set(name: str, value: Any) -> Callable[[GameState], object]:
    return lambda s: setattr(s, name, value)


_CORRUPT: list[
    tuple[str, dict[str, Any], Callable[[MexicanTrain], GameState], Callable[[GameState], object], str, str]
] = [
    ("round-past-the-session", {}, _after_opening, _set("round_index", 5), "round", "R25"),
    ("round-over-in-the-last-round", {}, _after_opening, _set("phase", Phase.ROUND_OVER), "phase", "R25"),
    (
        "game-over-before-the-last-round",
        {"rounds": 2},
        _after_opening,
        _set("phase", Phase.GAME_OVER),
        "phase",
        "R25",
    ),
    ("a-short-score-row", {}, _after_opening, _set("round_scores", [[0]]), "round_scores[0]", "R24"),
    ("scores-that-are-not-the-sum", {}, _after_opening, _set("scores", [1, 0]), "scores[0]", "R25"),
    ("a-seat-that-is-not-there", {}, _after_opening, _set("current", 5), "current_player", "R6"),
    (
        "a-boneyard-tile-twice",
        {},
        _after_opening,
        lambda s: s.boneyard.append(s.boneyard[0]),
        "boneyard[0]",
        "R1",
    ),
    (
        "a-tile-outside-the-set",
        {},
        _after_opening,
        lambda s: s.hands.__setitem__(0, s.hands[0] | 1 << 28),
        "hands[0]",
        "R1",
    ),
    ("a-boneyard-id-outside-the-set", {}, _after_opening, lambda s: s.boneyard.append(99), "boneyard", "R1"),
    ("a-train-id-outside-the-set", {}, _after_opening, lambda s: s.trains[0].append(99), "trains[0]", "R1"),
    ("the-engine-on-a-train", {}, _after_opening, lambda s: s.trains[1].append(27), "trains[1]", "R1"),
    ("a-train-missing", {}, _after_opening, lambda s: s.trains.pop(), "trains", "R7"),
    ("a-tile-missing", {}, _after_opening, lambda s: s.boneyard.pop(0), "boneyard", "R1"),
    ("a-marker-missing", {}, _after_opening, _set("markers", [False]), "markers", "R17"),
    (
        "a-void-that-is-no-pip",
        {},
        _after_opening,
        lambda s: s.voids.__setitem__(0, 1 << 7),
        "voids[0]",
        "R16",
    ),
    (
        "a-void-before-the-engine-is-found",
        {"engine_holder_opens": True},
        _seeking,
        lambda s: s.voids.__setitem__(0, 1),
        "voids[0]",
        "R16",
    ),
    (
        "two-doubles-under-cover-own",
        {"cover_own_double_on_it": True},
        _after_opening,
        _two_doubles_laid,
        "turn.doubles",
        "R18",
    ),
    ("more-open-doubles-than-laid", {}, _mid_chain, _set("doubles_this_turn", 0), "turn_doubles", "R18"),
]


@pytest.mark.parametrize(
    ("flags", "build", "corrupt", "key", "rule"), [c[1:] for c in _CORRUPT], ids=[c[0] for c in _CORRUPT]
)
def test_check_state_names_the_key_and_rule_of_a_broken_invariant(
    flags: dict[str, Any],
    build: Callable[[MexicanTrain], GameState],
    corrupt: Callable[[GameState], object],
    key: str,
    rule: str,
) -> None:
    """``check_state`` (what the soak runs after every step) refuses a state that breaks an
    invariant of RULES.md as ``state dict 'KEY': RULE: what is wrong``."""
    game = _game(**flags)
    s = build(game)
    check_state(game, s)
    corrupt(s)
    assert_refused_naming(lambda: check_state(game, s), key, rule)


def test_check_state_names_the_tile_dealt_twice() -> None:
    """R1: a tile in two hands is named, as a hand would list it."""
    game = _game()
    s = _after_opening(game)
    s.hands[1] |= 1 << game.tiles.tile_id(1, 3)  # seat 0's 1-3
    with pytest.raises(
        ValueError, match=re.escape("state dict 'hands[1]': R1: [1, 3] is also in another hand")
    ):
        check_state(game, s)


def test_a_wrongly_typed_config_names_the_field() -> None:
    """A config is validated before play: a value of the wrong type is a ``TypeError``
    naming its field, an unknown preset a ``ValueError`` naming the presets there are."""
    with pytest.raises(TypeError, match=r"^rounds "):
        GameConfig.make(rounds="2")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^blank_penalty "):
        GameConfig.make(blank_penalty="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bogus") as err:
        GameConfig(rules="bogus")
    assert all(name in str(err.value) for name in ("pagat", "wikipedia", "cardinal"))


def test_r1_r3_r4_r25_config_defaults_and_limits() -> None:
    """``GameConfig.make()`` is the default game: double-12 (R1), 4 seats, 15 tiles each
    (R4), one round (R25). R3: up to 8 seats to double-12, ``N - 1`` past it (12 seats with
    double-13). R4: hands of at least one tile that fit the tiles there are to deal (27 in a
    double-6 set, the engine set aside)."""
    assert GameConfig.make().to_dict() == GameConfig().to_dict()
    assert (GameConfig().max_pips, GameConfig().num_players, GameConfig().rounds) == (12, 4, 1)
    assert GameConfig.make(num_players=12, max_pips=13, hand_size=1).num_players == 12
    with pytest.raises(ValueError, match="R3"):
        GameConfig.make(num_players=13, max_pips=13, hand_size=1)
    assert GameConfig.make(num_players=3, max_pips=6, hand_size=9).hand_size == 9  # 27 tiles
    with pytest.raises(ValueError, match="R4"):
        GameConfig.make(num_players=3, max_pips=6, hand_size=10)
    assert GameConfig.make(num_players=2, max_pips=6, hand_size=1).hand_size == 1
    with pytest.raises(ValueError, match="R4"):
        GameConfig.make(num_players=2, max_pips=6, hand_size=0)
    with pytest.raises(TypeError, match="rules"):
        GameConfig.make(rules=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chicken_foot"):  # RULES.md: beyond the default
        GameConfig.make(rules="chicken_foot")


def test_contradictory_flags_are_refused_naming_both_and_the_fix() -> None:
    """Contradictory flags (README's table) are refused naming both; when one comes from the
    preset (``cardinal`` brings ``draw_until_engine_match``) the message says so and how to
    switch it off; under ``pagat``, which brings no flag, it does not blame the preset."""
    with pytest.raises(ValueError) as err:
        GameConfig.make(opening_draw=True, draw_until_engine_match=True)
    msg = str(err.value)
    assert "opening_draw" in msg and "draw_until_engine_match" in msg
    assert "preset" not in msg and not msg.endswith("None")
    with pytest.raises(ValueError) as err:
        GameConfig.make(rules="cardinal", opening_draw=True)
    assert "cardinal" in str(err.value) and "draw_until_engine_match=False" in str(err.value)
