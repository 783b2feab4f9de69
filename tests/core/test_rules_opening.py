"""Scripted-deal tests for the equipment, the deal and the first turn: RULES.md R1-R13.

Deals use the double-6 set (28 tiles, engine 6-6 in round 0) so a whole table fits in a
docstring. Pictures show trains oriented from the station (the engine ``[6|6]``), markers
as ``*`` and unsatisfied doubles as ``| pending``.
"""

from __future__ import annotations

import gymnasium
import pytest

import mtrain_env
from tests.scripted import (
    act,
    boneyard,
    deal_env,
    encode,
    finish_round,
    full_deal,
    hand,
    legal,
    line,
    norm,
)

# --------------------------------------------------------------------------- R1, R2, R3, R4


@pytest.mark.parametrize("max_pips", [6, 9, 12, 15, 18])
def test_r1_set_sizes(max_pips: int) -> None:
    """R1: a double-N set is every (a, b), 0 <= a <= b <= N: (N+1)(N+2)/2 tiles, each once."""
    n_tiles = (max_pips + 1) * (max_pips + 2) // 2
    env = mtrain_env.raw_env(num_players=2, max_pips=max_pips)
    env.reset(seed=1)
    d = env.state_dict()
    dealt = [norm(t) for h in d["hands"] for t in h] + [norm(t) for t in d["boneyard"]]
    dealt.append(norm(d["engine"]))
    expected = {f"{a}-{b}" for a in range(max_pips + 1) for b in range(a, max_pips + 1)}
    assert len(expected) == n_tiles
    assert len(dealt) == n_tiles and set(dealt) == expected
    # the action space is (tile, train) for every tile of the set, plus DRAW and PASS
    space = env.action_space("player_0")
    assert isinstance(space, gymnasium.spaces.Discrete) and space.n == n_tiles * 3 + 2
    assert env.encode_action((max_pips, max_pips), 2) == n_tiles * 3 - 1
    assert (n_tiles * 3, n_tiles * 3 + 1) == (env.DRAW, env.PASS)


@pytest.mark.parametrize("max_pips", [5, 19])
def test_r1_unsupported_set_sizes_raise(max_pips: int) -> None:
    """R1: sets outside double-6 .. double-18 are a configuration error."""
    with pytest.raises(ValueError, match="R1"):
        mtrain_env.raw_env(num_players=2, max_pips=max_pips)


def test_r1_deal_with_a_tile_outside_the_set_raises() -> None:
    """R1: a (7, 7) does not exist in a double-6 set."""
    deal = full_deal(6, [["0-0"], ["1-1"]])
    deal["hands"][0].append([7, 7])
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=3)
    with pytest.raises(ValueError, match="R1"):
        env.reset(options={"deal": deal})


@pytest.mark.parametrize(
    ("max_pips", "ok", "refused"),
    [(12, [2, 8], [1, 9]), (6, [2, 8], [9]), (15, [14], [15]), (18, [17], [18])],
)
def test_r3_player_counts(max_pips: int, ok: list[int], refused: list[int]) -> None:
    """R3: 2-8 players up to double-12, up to N-1 with the bigger sets; others raise."""
    for n in ok:
        env = mtrain_env.raw_env(num_players=n, max_pips=max_pips)
        env.reset(seed=0)
        assert len(env.state_dict()["hands"]) == n
    for n in refused:
        with pytest.raises(ValueError, match="R3"):
            mtrain_env.raw_env(num_players=n, max_pips=max_pips)


def test_r3_deal_needs_one_hand_per_seat() -> None:
    """R3: a scripted deal for 3 seats cannot start a 2-seat game."""
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=3)
    with pytest.raises(ValueError):
        env.reset(options={"deal": full_deal(6, [["0-0"], ["1-1"], ["2-2"]])})


@pytest.mark.parametrize(
    ("num_players", "size"), [(2, 15), (3, 15), (4, 15), (5, 12), (6, 12), (7, 11), (8, 11)]
)
def test_r4_pagat_hand_sizes(num_players: int, size: int) -> None:
    """R4 (pagat, ``000``): 2-4 players 15 tiles, 5-6 12, 7-8 11; the rest is the boneyard."""
    env = mtrain_env.raw_env(num_players=num_players)
    env.reset(seed=3)
    d = env.state_dict()
    assert [len(h) for h in d["hands"]] == [size] * num_players
    assert len(d["boneyard"]) == 90 - num_players * size  # 91 tiles, the engine set aside
    assert env.config.hand_size == size


def test_r4_fixed_hand_size_overrides_the_table() -> None:
    """R4: an explicit ``hand_size`` wins over the preset's table."""
    env = mtrain_env.raw_env(num_players=4, hand_size=7)
    env.reset(seed=0)
    assert [len(h) for h in env.state_dict()["hands"]] == [7] * 4


@pytest.mark.parametrize(
    ("num_players", "max_pips", "hand_size"),
    [(2, 6, 14), (4, 6, 7), (8, 12, 12), (2, 6, 0)],
)
def test_r4_impossible_deal_raises_before_play(num_players: int, max_pips: int, hand_size: int) -> None:
    """R4: hands that do not fit the set (the engine set aside) are rejected at construction.

    double-6: 27 tiles to deal, so 2 x 14 = 28 and 4 x 7 = 28 do not fit; 8 x 12 = 96 > 90.
    """
    with pytest.raises(ValueError, match="R4"):
        mtrain_env.raw_env(num_players=num_players, max_pips=max_pips, hand_size=hand_size)


def test_r4_largest_deal_that_fits() -> None:
    """R4: 2 x 13 = 26 of the 27 dealable double-6 tiles fit; one tile is left to draw."""
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=13)
    env.reset(seed=0)
    assert len(env.state_dict()["boneyard"]) == 1


def test_r4_r5_scripted_deal_must_be_exactly_the_set() -> None:
    """R1/R4/R5: a scripted deal with a tile twice, a tile missing or the engine dealt raises
    ``ValueError`` at reset, before any play."""
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=3)
    good = full_deal(6, [["6-1"], ["6-2"]])
    twice = {"hands": [[*good["hands"][0], [1, 6]], good["hands"][1]], "boneyard": good["boneyard"]}
    missing = {"hands": good["hands"], "boneyard": good["boneyard"][1:]}
    engine = {"hands": [[*good["hands"][0], [6, 6]], good["hands"][1]], "boneyard": good["boneyard"]}
    for bad, rule in ((twice, "R1"), (missing, "R1"), (engine, "R5")):
        with pytest.raises(ValueError, match=rule):
            env.reset(options={"deal": bad})
    env.reset(options={"deal": good})  # the well-formed deal is accepted
    assert hand(env, 0) == {"1-6"}


# --------------------------------------------------------------------------- R5, R6


def test_r5_engine_set_aside_in_round_0() -> None:
    """R5: round 0 uses (N, N) as the engine; it is in nobody's hand nor in the boneyard."""
    env = mtrain_env.raw_env(num_players=3, max_pips=9)
    env.reset(seed=5)
    d = env.state_dict()
    assert d["engine"] == [9, 9]
    dealt = {norm(t) for h in d["hands"] for t in h} | {norm(t) for t in d["boneyard"]}
    assert "9-9" not in dealt
    assert len(dealt) == 55 - 1


def test_r5_engine_per_round_of_a_session() -> None:
    """R5/R25: round k of a session uses (N-k, N-k); the earlier engines are back in play."""
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=5, rounds=3)
    env.reset(seed=11)
    seen = []
    for k in range(3):
        d = env.state_dict()
        assert d["round"] == k
        seen.append(d["engine"])
        dealt = {norm(t) for h in d["hands"] for t in h} | {norm(t) for t in d["boneyard"]}
        assert len(dealt) == 27
        assert f"{6 - k}-{6 - k}" not in dealt
        assert d["trains"] == [[], []] and d["mexican_train"] == []
        finish_round(env)
    assert seen == [[6, 6], [5, 5], [4, 4]]
    assert all(env.terminations.values())


@pytest.mark.parametrize(("offset", "expected"), [(None, [0, 1, 2, 0]), (2, [2, 0, 1, 2])])
def test_r6_first_player_rotates(offset: int | None, expected: list[int]) -> None:
    """R6: round k opens with seat (offset + k) mod n; ``first_player`` sets the offset."""
    env = mtrain_env.raw_env(num_players=3, max_pips=6, hand_size=4, rounds=4)
    env.reset(seed=2, options=None if offset is None else {"first_player": offset})
    firsts = []
    for _ in range(4):
        d = env.state_dict()
        assert d["phase"] == "OPENING" and d["current_player"] == d["first_player"]
        assert env.agent_selection == f"player_{d['first_player']}"
        firsts.append(d["first_player"])
        finish_round(env)
    assert firsts == expected


def test_r6_play_goes_clockwise() -> None:
    """R6: seat i+1 follows seat i (first player 1 of 3: 1, 2, 0)."""
    env = deal_env([["6-1", "2-2"], ["6-2", "3-3"], ["6-3", "4-4"]], first_player=1)
    order = []
    for _ in range(3):
        seat = env.state_dict()["current_player"]
        order.append(seat)
        (move,) = legal(env)  # the seat's own 6-x on its own train
        act(env, move, "PASS")
    assert order == [1, 2, 0]
    assert env.state_dict()["current_player"] == 1  # the second turns start again with seat 1


# --------------------------------------------------------------------------- R7, R8


def test_r7_tiles_match_the_open_end_and_are_oriented() -> None:
    """R7: a tile must match the train's open end; its other half becomes the new end.

    Seat 0 holds 3-6, 1-3, 2-5::

        train 0: [6|6] 6-3 3-1      (3-6 laid as 6-3, 1-3 laid as 3-1)
    """
    env = deal_env([["3-6", "1-3", "2-5"], ["0-5"]])
    assert legal(env) == {"3-6 @0"}  # 2-5 and 1-3 match no 6
    with pytest.raises(ValueError, match="R7"):
        env.step(env.encode_action((2, 5), 0))
    assert hand(env, 0) == {"3-6", "1-3", "2-5"}  # the illegal step changed nothing
    act(env, "6-3 @0")
    assert env.state_dict()["trains"][0] == line("6-3")
    assert legal(env) == {"1-3 @0", "PASS"}
    act(env, "1-3 @0")  # written either way round
    assert env.state_dict()["trains"][0] == line("6-3 3-1")
    assert legal(env) == {"PASS"}  # 2-5 matches neither 1 nor anything else


def test_r8_draws_take_the_boneyard_top_first() -> None:
    """R8: each draw takes the next tile of the boneyard, top first.

    After the opening::

        train 0: [6|6] 6-1        seat 0 holds 0-0 3-4   (no 1, no 6)
        train 1: [6|6] 6-2        seat 1 holds 0-3 4-5   (no 2, no 6)
        boneyard (top first): 5-5 4-4 6-3 ...
    """
    env = deal_env([["6-1", "0-0", "3-4"], ["6-2", "0-3", "4-5"]], ["5-5", "4-4", "6-3"])
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS")
    assert boneyard(env)[:3] == ["5-5", "4-4", "3-6"]
    assert legal(env) == {"DRAW"}
    act(env, "DRAW")
    assert hand(env, 0) == {"0-0", "3-4", "5-5"}
    assert boneyard(env)[:2] == ["4-4", "3-6"]
    act(env, "PASS")
    assert legal(env) == {"DRAW"}
    act(env, "DRAW")
    assert hand(env, 1) == {"0-3", "4-5", "4-4"}
    act(env, "PASS")
    act(env, "DRAW")
    assert hand(env, 0) == {"0-0", "3-4", "5-5", "3-6"}
    assert "3-6" not in boneyard(env)
    assert legal(env) == {"3-6 @mex"}  # the drawn 6-3 fits only the (empty) Mexican train


# --------------------------------------------------------------------------- R9 .. R13


def test_r9_opening_chain_on_own_train() -> None:
    """R9: the first turn lays a connected chain on the own train, at least one tile,
    stopping with PASS after any tile (a stop places no marker).

        train 0: [6|6] 6-3 3-1 1-1 1-4     (0-5 cannot follow: mask is exactly PASS)
    """
    env = deal_env([["6-3", "3-1", "1-1", "1-4", "0-5"], ["6-2", "2-5"]], ["4-4"])
    assert legal(env) == {"3-6 @0"}  # must play: no PASS before the first tile
    act(env, "6-3 @0")
    assert legal(env) == {"1-3 @0", "PASS"}
    act(env, "3-1 @0")
    assert legal(env) == {"1-1 @0", "1-4 @0", "PASS"}
    act(env, "1-1 @0")  # a double does not end the chain in the opening
    assert env.state_dict()["current_player"] == 0
    assert legal(env) == {"1-4 @0", "PASS"}
    act(env, "1-4 @0")
    assert legal(env) == {"PASS"}
    act(env, "PASS")
    d = env.state_dict()
    assert d["trains"][0] == line("6-3 3-1 1-1 1-4")
    assert d["markers"] == [False, False]
    assert d["current_player"] == 1
    assert hand(env, 0) == {"0-5"}


def test_r9_stop_early() -> None:
    """R9: the player may stop after any tile; the rest stays in hand, no marker."""
    env = deal_env([["6-3", "3-1"], ["6-2"]])
    act(env, "6-3 @0", "PASS")
    d = env.state_dict()
    assert d["trains"][0] == line("6-3") and d["markers"] == [False, False]
    assert hand(env, 0) == {"1-3"}
    assert d["current_player"] == 1


def test_r9_no_other_train_nor_mexican_in_the_opening() -> None:
    """R9/R14: in the opening only the own train is open, even next to a marked empty train.

    train 0: [6|6] *            (seat 0 could not start: marker)
    train 1: [6|6]              seat 1 holds 6-2: only "2-6 @1", not @0, not @mex
    """
    env = deal_env([["1-2"], ["6-2", "2-3"], ["6-4"]])
    act(env, "PASS")
    assert env.state_dict()["markers"][0] is True
    assert legal(env) == {"2-6 @1"}
    for move in ("2-6 @0", "2-6 @mex"):
        with pytest.raises(ValueError, match="R9"):
            env.step(encode(env, move))


def test_r10_cannot_start_pass_and_marker_without_draw() -> None:
    """R10: a seat that cannot start its train passes (no draw) and marks its empty train."""
    env = deal_env([["1-2", "3-4"], ["6-5"]], ["6-1", "6-3"])
    assert legal(env) == {"PASS"}  # the boneyard holds a 6-1, yet no DRAW
    before = boneyard(env)
    act(env, "PASS")
    d = env.state_dict()
    assert d["markers"] == [True, False]
    assert d["trains"][0] == []
    assert hand(env, 0) == {"1-2", "3-4"}
    assert boneyard(env) == before
    assert d["current_player"] == 1


def test_r11_late_start_is_one_tile_and_removes_the_marker() -> None:
    """R11: a seat starting its own train later plays that single tile and lifts its marker.

    Opening: seat 0 cannot start (marker), seat 1 lays 6-5. Seat 0's second turn::

        train 0: [6|6] *         seat 0 holds 1-2 4-1, draws 6-4
        train 1: [6|6] 6-5
    6-4 goes on train 0; 4-1 would follow, but the turn is over.
    """
    env = deal_env([["1-2", "4-1"], ["6-5", "0-0"]], ["6-4"])
    act(env, "PASS", "6-5 @1", "PASS")
    assert legal(env) == {"DRAW"}
    act(env, "DRAW")
    assert legal(env) == {"4-6 @0", "4-6 @mex"}
    act(env, "6-4 @0")
    d = env.state_dict()
    assert d["trains"][0] == line("6-4")
    assert d["markers"] == [False, False]
    assert d["current_player"] == 1


def test_r12_going_out_in_the_opening_waits_for_every_first_turn() -> None:
    """R12: seat 0 empties its hand on its first turn; seats 1 and 2 still play theirs.

    Scores (R24): seat 0 0; seat 1 keeps 3-4 (7); seat 2 keeps 0-5 (5).
    """
    env = deal_env([["6-1"], ["6-2", "3-4"], ["6-3", "0-5"]])
    act(env, "6-1 @0")
    d = env.state_dict()
    assert d["phase"] == "OPENING" and d["current_player"] == 1
    assert not any(env.terminations.values())
    act(env, "6-2 @1", "PASS")
    assert not any(env.terminations.values())
    act(env, "6-3 @2", "PASS")
    assert all(env.terminations.values())
    assert env.state_dict()["scores"] == [0, 7, 5]


def test_r12_empty_hand_is_skipped_in_the_opening() -> None:
    """R12/R15: a seat that went out takes no action; the others' first turns still come."""
    env = deal_env([["6-1", "1-2"], ["6-2", "3-4"], ["0-5"]], first_player=1)
    act(env, "6-2 @1", "PASS")  # seat 1 keeps 3-4
    act(env, "PASS")  # seat 2 cannot start
    act(env, "6-1 @0", "1-2 @0")  # seat 0, the last first turn, goes out
    assert all(env.terminations.values())
    assert env.state_dict()["scores"] == [0, 7, 5]


def test_r13_opening_doubles_satisfied_in_seat_order_from_the_first_player() -> None:
    """R13: chains ending in a double leave it unsatisfied; after the opening they are
    satisfied in seat order from the first player (here seat 1), one per turn.

        first player 1:
        train 1: [6|6] 6-2 2-2 | pending #1
        train 2: [6|6] 6-4 4-4 | pending #2
        train 0: [6|6] 6-1 1-1 | pending #3
    Every seat holds tiles for all three doubles; each must cover the head double.
    """
    env = deal_env(
        [
            ["6-1", "1-1", "1-3", "2-0"],
            ["6-2", "2-2", "2-5", "4-5", "1-5"],
            ["6-4", "4-4", "4-3", "2-3", "1-0"],
        ],
        first_player=1,
    )
    act(env, "6-2 @1", "2-2 @1", "PASS")
    assert env.state_dict()["pending_doubles"] == [1]
    assert legal(env) == {"4-6 @2"}  # not bound yet: seat 2 opens its own train
    act(env, "6-4 @2", "4-4 @2", "PASS")
    act(env, "6-1 @0", "1-1 @0", "PASS")
    d = env.state_dict()
    assert d["phase"] == "NORMAL"
    assert d["pending_doubles"] == [1, 2, 0]
    assert d["current_player"] == 1
    assert legal(env) == {"2-5 @1"}  # not 4-5 @2, not 1-5 @0
    act(env, "2-5 @1")
    assert env.state_dict()["pending_doubles"] == [2, 0]
    assert legal(env) == {"3-4 @2"}  # seat 2: 4-3 on the 4-4, not 2-3 on train 1
    act(env, "4-3 @2")
    assert legal(env) == {"1-3 @0"}  # seat 0: the 1-1, not 2-0 on train 1
    act(env, "1-3 @0")
    d = env.state_dict()
    assert d["pending_doubles"] == []
    assert d["trains"] == [line("6-1 1-1 1-3"), line("6-2 2-2 2-5"), line("6-4 4-4 4-3")]
