"""Scripted-deal tests for doubles: RULES.md R2 (what a double is), R18-R22.

Double-6 set, engine 6-6. ``| pending`` in a picture marks an unsatisfied double.
"""

from __future__ import annotations

from typing import Any

import pytest

import mtrain_env
from tests.scripted import act, deal_env, hand, legal, line


def _opened(hands: list[list[str]], bone: list[str] | None = None, **kw: Any) -> mtrain_env.raw_env:
    """2 seats: seat 0 opens with its first tile, seat 1 with its first tile, both stop."""
    env = deal_env(hands, bone or [], **kw)
    act(env, f"{hands[0][0]} @0", "PASS", f"{hands[1][0]} @1", "PASS")
    return env


def test_r2_a_double_keeps_the_turn_a_non_double_ends_it() -> None:
    """R2/R18: 1-1 (a == b) is a double and the same seat plays on; 1-3 is not."""
    env = _opened([["6-1", "1-1", "1-3", "0-0"], ["6-2", "2-4", "2-5"]])
    act(env, "1-1 @0")
    assert env.state_dict()["current_player"] == 0
    act(env, "1-3 @0")
    assert env.state_dict()["current_player"] == 1


def test_r18_extra_tile_after_a_double_may_go_anywhere() -> None:
    """R18: after a double the seat plays one more tile, on any train it may use — here
    the Mexican train, leaving its own double unsatisfied (R20).

        train 0: [6|6] 6-1 1-1 | pending     seat 0 then plays 6-4 on the Mexican
        train 1: [6|6] 6-2
        Mexican: [6|6] 6-4
    """
    env = _opened([["6-1", "1-1", "1-3", "6-4", "0-0"], ["6-2", "2-5"]])
    assert legal(env) == {"1-1 @0", "1-3 @0", "4-6 @mex"}
    act(env, "1-1 @0")
    assert legal(env) == {"1-3 @0", "4-6 @mex"}  # no PASS, no DRAW: a tile is owed
    act(env, "6-4 @mex")
    d = env.state_dict()
    assert d["trains"][0] == line("6-1 1-1")
    assert d["mexican_train"] == line("6-4")
    assert d["pending_doubles"] == [0]
    assert d["current_player"] == 1


def test_r18_one_draw_per_owed_tile() -> None:
    """R18/R16: each owed tile allows one draw; a drawn double that fits is played and
    owes another tile, which allows another draw.

        train 0: [6|6] 6-1 1-3 3-3 | pending   seat 0 owes; draws 4-4 (fits the Mexican)
        Mexican: [6|6] 6-4 4-4 | pending       owes again; draws 0-1: no fit -> PASS, marker
    """
    env = _opened([["6-1", "1-3", "3-3", "0-5"], ["6-2", "6-4", "2-0"]], ["4-4", "0-1"])
    act(env, "1-3 @0", "6-4 @mex")
    act(env, "3-3 @0")
    assert legal(env) == {"DRAW"}
    act(env, "DRAW")
    assert legal(env) == {"4-4 @mex"}
    act(env, "4-4 @mex")
    assert env.state_dict()["turn"]["owes"] is True
    assert legal(env) == {"DRAW"}  # a second draw, for the second owed tile
    act(env, "DRAW")
    assert legal(env) == {"PASS"}
    act(env, "PASS")
    d = env.state_dict()
    assert d["markers"] == [True, False]
    assert d["pending_doubles"] == [0, "mexican"]  # both unsatisfied, in play order (R21)
    assert hand(env, 0) == {"0-5", "0-1"}
    assert d["current_player"] == 1


def test_r18_chain_of_doubles_ends_with_a_non_double() -> None:
    """R18: 3-3 then 4-4 (a double as the owed tile) then 4-5 on the 4-4.

    train 0: [6|6] 6-1 1-3 3-3 | pending
    Mexican: [6|6] 6-4 4-4 4-5
    """
    env = _opened([["6-1", "1-3", "3-3", "4-4", "4-5", "0-0"], ["6-2", "6-4", "2-0"]])
    act(env, "1-3 @0", "6-4 @mex")
    act(env, "3-3 @0")
    assert legal(env) == {"4-4 @mex", "4-5 @mex"}
    act(env, "4-4 @mex")
    assert env.state_dict()["current_player"] == 0
    assert legal(env) == {"4-5 @mex"}
    act(env, "4-5 @mex")
    d = env.state_dict()
    assert d["mexican_train"] == line("6-4 4-4 4-5")
    assert d["pending_doubles"] == [0]  # the 4-4 was covered within the turn
    assert d["current_player"] == 1


def test_r19_going_out_on_a_double_ends_the_round_at_once() -> None:
    """R19: the last tile is a double: no tile is owed, the round ends; seat 1 keeps 2-5."""
    env = _opened([["6-1", "1-1"], ["6-2", "2-5"]], reward="penalty")
    act(env, "1-1 @0")
    assert all(env.terminations.values())
    d = env.state_dict()
    assert d["phase"] == "GAME_OVER"
    assert d["scores"] == [0, 7]
    assert env.rewards["player_0"] == 0
    assert env.rewards["player_1"] < 0


@pytest.mark.parametrize(("drawn", "fits"), [("0-2", False), ("1-4", True)])
def test_r20_obligation_on_a_private_train_passes_on(drawn: str, fits: bool) -> None:
    """R20: seat 0 leaves 1-1 unsatisfied on its own (unmarked) train. The next tile by
    anyone must go on it. Seat 1 has no 1: it draws; a fitting drawn tile goes on the
    double, otherwise (0-2, which would fit its own train) it passes with a marker and
    the duty moves on to seat 2.

        train 0: [6|6] 6-1 1-1 | pending    (private: no marker)
        train 1: [6|6] 6-2                  seat 1 holds 2-4 5-0 (2-4 fits its own train!)
        train 2: [6|6] 6-3                  seat 2 holds 1-5 3-4
        Mexican: [6|6] 6-5
    """
    env = deal_env(
        [["6-1", "1-1", "6-5", "0-0"], ["6-2", "2-4", "5-0"], ["6-3", "1-5", "3-4"]],
        [drawn],
    )
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS", "6-3 @2", "PASS")
    act(env, "1-1 @0", "6-5 @mex")
    assert env.state_dict()["pending_doubles"] == [0]
    assert legal(env) == {"DRAW"}  # 2-4 on its own train and 5-0 on the Mexican are barred
    act(env, "DRAW")
    if fits:
        assert legal(env) == {"1-4 @0"}
        act(env, "1-4 @0")
        d = env.state_dict()
        assert d["trains"][0] == line("6-1 1-1 1-4")
        assert d["pending_doubles"] == []
        assert d["markers"] == [False, False, False]
        assert legal(env) == {"3-4 @2", "1-5 @mex"}  # seat 2 is free again (train 0 unmarked)
        return
    assert legal(env) == {"PASS"}
    act(env, "PASS")
    d = env.state_dict()
    assert d["markers"] == [False, True, False]
    assert d["pending_doubles"] == [0]
    assert d["current_player"] == 2
    assert legal(env) == {"1-5 @0"}  # not 3-4 on its own train
    act(env, "1-5 @0")
    d = env.state_dict()
    assert d["trains"][0] == line("6-1 1-1 1-5")
    assert d["pending_doubles"] == [] and d["current_player"] == 0


def _two_doubles_game(**flags: Any) -> mtrain_env.raw_env:
    """Seat 0 leaves two doubles in one turn: 1-1 on its train, then 0-0 on the Mexican.

    first player 1.  Opening: seat 1 6-2; seat 2 cannot start (*); seat 0 6-1.
    seat 1 6-5 @mex, seat 2 5-0 @mex, then seat 0:
    train 0: [6|6] 6-1 1-1 | pending #1
    train 2: [6|6] * 6-4                (the owed tile, on the marked train)
    Mexican: [6|6] 6-5 5-0 0-0 | pending #2
    seat 1 now holds 1-4 and 0-2 (one tile for each double).
    """
    env = deal_env(
        [["6-1", "1-1", "0-0", "6-4", "2-5"], ["6-2", "6-5", "1-4", "0-2"], ["5-0", "0-3", "2-3"]],
        first_player=1,
        **flags,
    )
    act(env, "6-2 @1", "PASS", "PASS", "6-1 @0", "PASS")
    act(env, "6-5 @mex", "5-0 @mex")
    assert legal(env) == {"1-1 @0", "0-0 @mex", "4-6 @2"}
    act(env, "1-1 @0", "0-0 @mex", "6-4 @2")
    return env


def test_r21_several_doubles_satisfied_in_play_order() -> None:
    """R21: the 1-1 (played first) is satisfied before the 0-0, one per turn."""
    env = _two_doubles_game()
    assert env.state_dict()["pending_doubles"] == [0, "mexican"]
    assert legal(env) == {"1-4 @0"}  # not 0-2 on the Mexican's 0-0, nor on its own train
    act(env, "1-4 @0")
    assert env.state_dict()["pending_doubles"] == ["mexican"]
    assert legal(env) == {"0-3 @mex"}  # seat 2: the 0-0 is next
    act(env, "0-3 @mex")
    d = env.state_dict()
    assert d["pending_doubles"] == []
    assert d["mexican_train"] == line("6-5 5-0 0-0 0-3")


def test_r22_no_branch_on_a_covered_double() -> None:
    """R22: a double with a tile on each side takes nothing more (trains are lines).

    train 0: [6|6] 6-1 1-1 1-3     seat 0 still holds 1-5: it fits nowhere
    train 1: [6|6] *
    """
    env = deal_env([["6-1", "1-1", "1-3", "1-5", "3-4"], ["0-2"]])
    act(env, "6-1 @0", "1-1 @0", "1-3 @0", "PASS", "PASS")
    d = env.state_dict()
    assert d["trains"][0] == line("6-1 1-1 1-3")
    assert d["pending_doubles"] == []  # covered within the chain
    assert legal(env) == {"3-4 @0"}
