"""Scripted-deal tests for normal turns: RULES.md R14-R17 (targets, no voluntary pass,
drawing, markers). Double-6 set, engine 6-6; ``*`` marks a marker in the pictures."""

from __future__ import annotations

from typing import Any

import pytest

import mtrain_env
from tests.scripted import act, boneyard, deal_env, encode, hand, legal, line


def _core(env: mtrain_env.raw_env) -> dict[str, Any]:
    """The core part of ``state_dict`` (without the env's RNG/AEC bookkeeping)."""
    d = env.state_dict()
    d.pop("env")
    return d


# --------------------------------------------------------------------------- R14


def test_r14_targets_own_marked_and_mexican_not_unmarked() -> None:
    """R14: own train, marked trains (own train started) and the Mexican train; never an
    unmarked train of another seat. Seat 0's second turn::

        train 0: [6|6] 6-1          seat 0 holds 1-3 2-4 6-5
        train 1: [6|6] 6-2          (unmarked: 2-4 may not go here)
        train 2: [6|6] *            (seat 2 could not start)
        Mexican: [6|6]
    """
    env = deal_env([["6-1", "1-3", "2-4", "6-5"], ["6-2", "0-0", "6-3"], ["0-3", "5-5"]])
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS", "PASS")
    assert env.state_dict()["markers"] == [False, False, True]
    assert legal(env) == {"1-3 @0", "5-6 @2", "5-6 @mex"}
    # the relative encoding seen by seat 0: 0 own, 2 = seat 2, 3 = Mexican
    assert env.legal_actions() == sorted(
        [env.encode_action((1, 3), 0), env.encode_action((5, 6), 2), env.encode_action((6, 5), 3)]
    )
    act(env, "6-5 @mex")  # any seat may start the Mexican train from its second turn
    assert env.state_dict()["mexican_train"] == line("6-5")
    # seat 1: own end 2 (nothing), the Mexican now ends in 5: 6-3 only fits the marked train 2.
    # There is one Mexican train only: 6-3 cannot start a second one.
    assert legal(env) == {"3-6 @2"}
    # seen from seat 1, seat 2's train is relative train 1
    assert env.legal_actions() == [env.encode_action((3, 6), 1)]


def test_r14_marked_trains_only_once_own_train_has_left_the_station() -> None:
    """R14: a seat whose own train is empty may not play on marked trains.

    train 0: [6|6] 6-1          seat 0 lays 6-4 on train 2, later 4-0 on it too
    train 1: [6|6] *            seat 1 holds 4-3: train 2 is marked, but train 1 is empty
    train 2: [6|6] * 6-4
    """
    env = deal_env(
        [["6-1", "6-4", "4-0"], ["1-2", "4-3"], ["2-3", "5-5"]],
        ["0-3", "1-1"],
    )
    act(env, "6-1 @0", "PASS", "PASS", "PASS")
    assert env.state_dict()["markers"] == [False, True, True]
    assert legal(env) == {"4-6 @1", "4-6 @2", "4-6 @mex"}
    act(env, "6-4 @2")
    d = env.state_dict()
    assert d["trains"][2] == line("6-4")
    assert d["markers"] == [False, True, True]  # R17: another seat's play leaves it
    assert legal(env) == {"DRAW"}  # seat 1: 4-3 may not go on marked train 2
    act(env, "DRAW", "PASS")  # 0-3: unplayable
    # seat 2's own train was started for it, so marked train 1 is open to it (end 6: no tile)
    assert legal(env) == {"DRAW"}
    act(env, "DRAW", "PASS")  # 1-1
    assert legal(env) == {"0-4 @2"}  # seat 0 (own train started) may use marked train 2


# --------------------------------------------------------------------------- R15


def test_r15_no_voluntary_pass_or_draw() -> None:
    """R15: a seat that can play must play: DRAW and PASS are not in its mask and raise."""
    env = deal_env([["6-1", "1-3"], ["6-2", "0-0"]], ["4-4"])
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS")
    assert legal(env) == {"1-3 @0"}
    before = _core(env)
    for action, rule in ((env.PASS, "R15"), (env.DRAW, "R15")):
        with pytest.raises(ValueError, match=rule):
            env.step(action)
    assert _core(env) == before


def test_r15_forced_draw_and_pass_are_the_seats_own_steps() -> None:
    """R15: the env never acts for a seat: a forced draw is a mask of exactly DRAW, the
    state waits for it, and the forced pass after it is another step of the same seat."""
    env = deal_env([["6-1", "0-0"], ["6-2", "3-3"]], ["4-5"])
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS")
    before = _core(env)
    assert legal(env) == {"DRAW"}
    assert _core(env) == before  # reading the mask changes nothing; nothing auto-played
    act(env, "DRAW")
    assert env.agent_selection == "player_0"
    assert legal(env) == {"PASS"}
    act(env, "PASS")
    assert env.agent_selection == "player_1"


def test_r15_forced_pass_on_an_empty_boneyard() -> None:
    """R15/R16: with nothing to play and nothing to draw, the mask is exactly PASS.

    Seat 1 holds every other tile; the boneyard is empty. Seat 0 keeps 0-0::

        train 0: [6|6] 6-1          seat 0: 0-0 fits nothing -> PASS (marker)
        train 1: [6|6] 6-2
    """
    env = deal_env([["6-1", "0-0"], ["6-2"]], rest_to=1)
    assert boneyard(env) == []
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS")
    assert legal(env) == {"PASS"}
    act(env, "PASS")
    d = env.state_dict()
    assert d["markers"] == [True, False]
    assert d["phase"] == "NORMAL"  # not blocked: seat 1 can still play (R23)
    assert d["current_player"] == 1


# --------------------------------------------------------------------------- R16


def test_r16_drawn_tile_must_be_played_anywhere_legal() -> None:
    """R16: after a draw the drawn tile must be played, on any train it fits; the old hand
    stays unplayable and there is no pass.

        train 0: [6|6] 6-1 1-5      seat 0 holds 0-0 3-4, draws 5-6 (fits train 0 and Mexican)
        train 1: [6|6] 6-2
    """
    env = deal_env([["6-1", "1-5", "0-0", "3-4"], ["6-2", "0-3", "4-4"]], ["5-6", "1-1"])
    act(env, "6-1 @0", "1-5 @0", "PASS", "6-2 @1", "PASS")
    assert legal(env) == {"DRAW"}
    act(env, "DRAW")
    assert hand(env, 0) == {"0-0", "3-4", "5-6"}
    assert legal(env) == {"5-6 @0", "5-6 @mex"}
    act(env, "5-6 @mex")
    d = env.state_dict()
    assert d["mexican_train"] == line("6-5")
    assert d["markers"] == [False, False]
    assert d["current_player"] == 1


def test_r16_unplayable_draw_pass_and_marker_stays() -> None:
    """R16: an unplayable drawn tile means PASS and a marker; a second such turn keeps it."""
    env = deal_env([["6-1", "1-5", "0-0"], ["6-2", "0-3"]], ["1-1", "5-5", "4-4"])
    act(env, "6-1 @0", "1-5 @0", "PASS", "6-2 @1", "PASS")
    act(env, "DRAW")  # seat 0 draws 1-1 (train 0 ends in 5)
    assert legal(env) == {"PASS"}
    act(env, "PASS")
    assert env.state_dict()["markers"] == [True, False]
    act(env, "DRAW")  # seat 1 draws 5-5: fits seat 0's marked train 0
    assert legal(env) == {"5-5 @0"}
    act(env, "5-5 @0")  # a double: seat 1 owes a tile, has none, draws 4-4
    assert legal(env) == {"DRAW"}
    act(env, "DRAW", "PASS")
    d = env.state_dict()
    assert d["markers"] == [True, True]
    assert d["pending_doubles"] == [0]
    # seat 0 must cover the 5-5 on its own train; 0-0 cannot: draw (then the marker stays)
    assert legal(env) == {"DRAW"}
    act(env, "DRAW")
    assert legal(env) == {"PASS"}
    act(env, "PASS")
    assert env.state_dict()["markers"] == [True, True]


# --------------------------------------------------------------------------- R17


def _marker_game(**flags: Any) -> tuple[mtrain_env.raw_env, list[bool]]:
    """Seat 1 cannot start (marker). Then: seat 0 starts the Mexican, seat 1 plays on it,
    seat 2 plays on train 1, seat 0 plays on its own train, seat 1 starts its own train.

        first turns:  train 0: 6-1   train 1: * (empty)   train 2: 6-2
        turn 2:       seat 0 6-4 @mex; seat 1 4-5 @mex; seat 2 6-3 @1; seat 0 1-0 @0;
                      seat 1 3-2 @1
    Returns the env and seat 1's marker after each of those plays; the script stops early
    (leaving the env before the move) if a variant makes the next move illegal.
    """
    env = deal_env([["6-1", "6-4", "1-0", "2-2"], ["4-5", "3-2", "1-1"], ["6-2", "6-3", "0-0"]], **flags)
    act(env, "6-1 @0", "PASS", "PASS", "6-2 @2", "PASS")
    assert env.state_dict()["markers"] == [False, True, False]
    marks = []
    for move in ("6-4 @mex", "4-5 @mex", "6-3 @1", "1-0 @0", "3-2 @1"):
        if env.observe(env.agent_selection)["action_mask"][encode(env, move)] == 0:
            break
        act(env, move)
        marks.append(env.state_dict()["markers"][1])
    else:
        assert env.state_dict()["trains"][1] == line("6-3 3-2")
    return env, marks


def test_r17_marker_removed_only_by_owner_playing_on_it() -> None:
    """R17 (default): the owner's play elsewhere and another seat's play on the marked
    train leave the marker; the owner's play on it removes it."""
    _, marks = _marker_game()
    #        6-4 mex  4-5 mex (owner elsewhere)  6-3 @1 (other)  1-0 @0  3-2 @1 (owner on it)
    assert marks == [True, True, True, True, False]
