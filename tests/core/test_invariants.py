"""check_state refuses each broken invariant of RULES.md naming its key and rule.

Every case
builds a valid state by play, checks that it passes, breaks one invariant (derived from
RULES.md) and expects ``state dict 'KEY': RULE: <what is wrong>``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.dealing import parse_deal
from mtrain_env.mexican_train.core.invariants import check_state
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState
from tests.scripted import assert_refused_naming, full_deal, tile


def _game(**flags: Any) -> MexicanTrain:
    """Two seats, double-6 (a fixed deal may use any hand size)."""
    return MexicanTrain(GameConfig.make(num_players=2, max_pips=6, hand_size=3, **flags))


def _deal(game: MexicanTrain, hands: list[list[str]], bone: list[str]) -> GameState:
    """Round 0 on a scripted deal, seat 0 first; ``bone`` is the top of the boneyard."""
    c = game.config
    deal = full_deal(c.max_pips, hands, bone, engine_dealt=c.engine_holder_opens)
    return game.new_game(
        np.random.default_rng(0), deal=parse_deal(c, c.engine_value(0), deal), first_player=0
    )


def _play(game: MexicanTrain, s: GameState, *moves: str) -> GameState:
    """Apply ``"6-1 @0"`` / ``"DRAW"`` / ``"PASS"`` moves (each must be legal)."""
    for text in moves:
        if text in ("DRAW", "PASS"):
            move = game.draw if text == "DRAW" else game.pass_
        else:
            t, where = text.split()
            a, b = tile(t)
            train = game.mexican if where == "@mex" else int(where[1:])
            move = game.tiles.tile_id(min(a, b), max(a, b)) * game.width + train
        game.checked_apply(s, move)
    return s


def _tile_bit(game: MexicanTrain, t: str) -> int:
    a, b = tile(t)
    return 1 << game.tiles.tile_id(min(a, b), max(a, b))


def _after_opening(game: MexicanTrain) -> GameState:
    """Both seats ended their first-turn chains in a double (R13): NORMAL, seat 0 on turn,
    trains 0 and 1 end in the pending doubles 1-1 and 2-2."""
    s = _deal(game, [["6-1", "1-1", "1-3"], ["6-2", "2-2", "2-5"]], ["0-0"])
    return _play(game, s, "6-1 @0", "1-1 @0", "PASS", "6-2 @1", "2-2 @1", "PASS")


def _mid_chain(game: MexicanTrain) -> GameState:
    """Seat 0 laid 6-1 and 1-1 on its first turn and may go on (R9, R13)."""
    s = _deal(game, [["6-1", "1-1", "1-3"], ["6-2", "2-4"]], ["0-0"])
    return _play(game, s, "6-1 @0", "1-1 @0")


def _after_a_draw(game: MexicanTrain) -> GameState:
    """NORMAL: seat 0 (hand 3-4, nothing fits the open ends 1, 2 and the engine 6) drew 0-0,
    which does not fit either: it must pass (R16)."""
    s = _deal(game, [["6-1", "3-4"], ["6-2", "5-5"]], ["0-0"])
    _play(game, s, "6-1 @0", "PASS", "6-2 @1", "PASS", "DRAW")
    assert s.has_drawn and game.legal_moves(s) == [game.pass_]
    return s


def _drew_the_double_blank(game: MexicanTrain) -> GameState:
    """NORMAL: seat 0 (hand 3-4, open ends 0, 2 and the engine 6) drew 0-0 (tile id 0),
    which it can play on its own train: the one candidate of R16."""
    s = _deal(game, [["6-0", "3-4"], ["6-2", "5-5"]], ["0-0"])
    _play(game, s, "6-0 @0", "PASS", "6-2 @1", "PASS", "DRAW")
    assert s.has_drawn and game.tiles.tile_id(0, 0) == 0
    return s


def _seat_0_passed(game: MexicanTrain) -> GameState:
    """OPENING: seat 0 holds no 6, so it could not start its train and passed (R10);
    seat 1 is on turn."""
    s = _deal(game, [["1-2", "3-4"], ["6-2", "2-5"]], ["0-0"])
    return _play(game, s, "PASS")


def _seat_1_starts_the_mexican(game: MexicanTrain) -> Callable[[GameState], object]:
    """Move seat 1's 6-2 from its hand onto the Mexican train (as if laid there)."""

    def corrupt(s: GameState) -> None:
        bit = _tile_bit(game, "6-2")
        s.hands[1] &= ~bit
        s.trains[game.mexican].append(bit.bit_length() - 1)
        s.ends[game.mexican] = 2
        s.table |= bit

    return corrupt


def _engine_in_hand(game: MexicanTrain) -> Callable[[GameState], object]:
    def corrupt(s: GameState) -> None:
        s.hands[1] |= 1 << game.tiles.double_id(s.engine)

    return corrupt


def _seeking(game: MexicanTrain) -> GameState:
    """Nobody was dealt the engine: seats draw for it (R5 ``engine_holder_opens``)."""
    return _deal(game, [["6-1", "1-2"], ["0-3", "3-4"]], [])


def _engine_to_a_hand(game: MexicanTrain) -> Callable[[GameState], object]:
    """Move the engine from the boneyard into seat 0's hand."""

    def corrupt(s: GameState) -> None:
        i = game.tiles.double_id(s.engine)
        s.boneyard.remove(i)
        s.hands[0] |= 1 << i

    return corrupt


def _set(name: str, value: Any) -> Callable[[GameState], object]:
    return lambda s: setattr(s, name, value)


def _set_all(**values: Any) -> Callable[[GameState], object]:
    def corrupt(s: GameState) -> None:
        for name, value in values.items():
            setattr(s, name, value)

    return corrupt


# (id, flags of the game that checks, state builder, corruption, key, rule)
_CASES: list[
    tuple[str, dict[str, Any], Callable[[MexicanTrain], GameState], Callable[[GameState], object], str, str]
] = [
    (
        "r22-a-double-listed-twice",
        {},
        _after_opening,
        _set("pending", [0, 0]),
        "pending_doubles",
        "R22",
    ),
    ("r24-a-score-of-the-wrong-type", {}, _after_opening, _set("scores", [0.0, 0]), "scores[0]", "R24"),
    (
        "r1-the-table-is-not-the-trains",
        {},
        _after_opening,
        lambda s: setattr(s, "table", s.table | 1 << s.boneyard[0]),
        "trains",
        "R1",
    ),
    (
        "r16-two-tiles-with-a-pip-shown-lacking-before-the-draw",
        {},
        _after_a_draw,
        lambda s: s.pre_draw_voids.__setitem__(0, s.pre_draw_voids[0] | 1 << 3 | 1 << 0),
        "pre_draw_voids[0]",
        "R16",
    ),
    (
        "r16-the-drawn-tile-and-a-tile-with-a-pip-shown-lacking",
        {},
        _drew_the_double_blank,
        lambda s: s.pre_draw_voids.__setitem__(0, s.pre_draw_voids[0] | 1 << 4),
        "pre_draw_voids[0]",
        "R16",
    ),
    ("r16-one-void-set-per-seat", {}, _after_opening, lambda s: s.voids.pop(), "voids", "R16"),
    (
        "r20-a-pending-double-on-no-train",
        {},
        _after_opening,
        _set("pending", [0, 1, 7]),
        "pending_doubles",
        "R20",
    ),
    (
        "r13-no-double-binds-in-the-opening",
        {},
        _mid_chain,
        _set("obliged_this_turn", True),
        "turn.obliged",
        "R13",
    ),
    (
        "r18-a-turn-goes-on-only-after-a-double",
        {},
        _after_opening,
        _set("tiles_this_turn", 1),
        "turn.tiles",
        "R18",
    ),
    (
        "r9-no-mexican-train-in-the-opening",
        {},
        _mid_chain,
        _seat_1_starts_the_mexican(_game()),
        "mexican_train",
        "R9",
    ),
    ("r5-the-placed-engine-is-in-no-hand", {}, _after_opening, _engine_in_hand(_game()), "engine", "R5"),
    (
        "r5-while-seats-seek-the-engine-it-is-in-the-boneyard",
        {"engine_holder_opens": True},
        _seeking,
        _engine_to_a_hand(_game()),
        "boneyard",
        "R5",
    ),
    ("r1-one-hand-per-seat", {}, _after_opening, lambda s: s.hands.pop(), "hands", "R1"),
    ("r20-an-unlisted-double", {}, _after_opening, _set("pending", [0]), "pending_doubles", "R20"),
    (
        "r18-every-double-laid-this-turn-is-open",
        {},
        _after_opening,
        _set_all(tiles_this_turn=1, doubles_this_turn=1, owes=True),
        "turn_doubles",
        "R18",
    ),
    (
        "r20-no-double-laid-while-another-is-pending",
        {},
        _after_opening,
        _set_all(pending=[0], turn_doubles=[1], tiles_this_turn=1, doubles_this_turn=1, owes=True),
        "turn.tiles",
        "R20",
    ),
    ("r15-fewer-actions-than-tiles-laid", {}, _after_opening, _set("history_len", 3), "history_len", "R15"),
    (
        "r13-the-opening-double-is-this-turns",
        {},
        _mid_chain,
        _set_all(turn_doubles=[], pending=[0]),
        "turn_doubles",
        "R13",
    ),
    ("r25-a-phase-that-is-no-phase", {}, _after_opening, _set("phase", 2), "phase", "R25"),
    ("r5-the-rounds-engine", {}, _after_opening, _set("engine", 5), "engine", "R5"),
    (
        "r5-the-engine-is-placed-once-found",
        {},
        _after_opening,
        _set("engine_placed", False),
        "engine_placed",
        "R5",
    ),
    ("r6-round-0-opens-with-seat-0", {}, _after_opening, _set("first_player", 1), "first_player", "R6"),
    (
        "r6-no-shifted-rotation-unforced",
        {},
        _after_opening,
        _set_all(first_player_forced=False, seat_offset=1),
        "seat_offset",
        "R6",
    ),
    (
        "r9-the-first-turn-tiles-are-on-the-train",
        {},
        _mid_chain,
        _set("tiles_this_turn", 1),
        "turn.tiles",
        "R9",
    ),
    (
        "r10-no-draw-after-laying-the-first-tiles",
        {},
        _mid_chain,
        _set("has_drawn", True),
        "turn.has_drawn",
        "R10",
    ),
    (
        "r10-a-seat-that-could-not-start-marks-its-train",
        {},
        _seat_0_passed,
        lambda s: s.markers.__setitem__(0, False),
        "markers[0]",
        "R10",
    ),
    (
        "r9-first-turns-go-round-from-the-first-player",
        {},
        _seat_0_passed,
        lambda s: s.first_turn_done.__setitem__(0, False),
        "first_turn_done[0]",
        "R9",
    ),
    ("r25-one-total-per-seat", {}, _after_opening, _set("scores", [0]), "scores", "R25"),
]


@pytest.mark.parametrize(
    ("flags", "build", "corrupt", "key", "rule"), [c[1:] for c in _CASES], ids=[c[0] for c in _CASES]
)
def test_check_state_refuses_naming_key_and_rule(
    flags: dict[str, Any],
    build: Callable[[MexicanTrain], GameState],
    corrupt: Callable[[GameState], object],
    key: str,
    rule: str,
) -> None:
    """A state built by play passes; once it breaks the rule it is refused as
    ``state dict 'KEY': RULE: what is wrong``."""
    s = build(_game(**flags) if flags.get("engine_holder_opens") else _game())
    game = _game(**flags)
    check_state(game, s)
    corrupt(s)
    assert_refused_naming(lambda: check_state(game, s), key, rule)


def test_r9_one_tile_opening_ends_the_first_turn_with_its_tile() -> None:
    """R9 variant ``one_tile_opening``: a first turn that laid a chain is refused."""
    s = _mid_chain(_game())
    game = _game(one_tile_opening=True)
    with pytest.raises(ValueError) as err:
        check_state(game, s)
    msg = str(err.value)
    assert msg.startswith("state dict 'turn.tiles': R9: ") and not msg.endswith("None"), msg


def test_r1_a_missing_tile_is_named() -> None:
    """R1: hands, boneyard, trains and engine are the whole set; the tile missing is named."""
    game = _game()
    s = _after_opening(game)
    i = s.boneyard.pop()
    a, b = game.tiles.tiles[i]
    with pytest.raises(ValueError) as err:
        check_state(game, s)
    msg = str(err.value)
    assert msg.startswith("state dict 'boneyard': R1: ") and msg.endswith(f" [[{a}, {b}]]"), msg
