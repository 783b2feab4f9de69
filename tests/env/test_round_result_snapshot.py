"""A snapshot taken between two rounds carries the finished round's result (in every
agent's info for that one step); ``load_state_dict`` checks it against what the state still
determines: the round it names, its scores (R24 / B10-B12), the hands it shows leaving
those pips, how it opened (R6) and that no move of the new round was made."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

import mtrain_env
import mtrain_env.block
from tests.env.test_state_dict_validation import assert_refused, edited, find

Edit = Callable[[dict[str, Any]], None]


def between_rounds(env: Any) -> bool:
    """The step that ended a round of a session that goes on (its result is in the infos)."""
    return bool(env.agents) and not any(env.terminations.values()) and "round_result" in env.infos["player_0"]


def _mexican(backend: str) -> Callable[[], Any]:
    return lambda: mtrain_env.raw_env(num_players=3, max_pips=9, rounds=3, backend=backend)


def _block() -> Any:
    return mtrain_env.block.raw_env(match=True, target=100)


def _result(d: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = d["env"]["round_result"]
    return result


def _fullest(d: dict[str, Any]) -> list[list[int]]:
    """The longest hand the result shows (the round was not a deal of empty hands)."""
    hand: list[list[int]] = max(_result(d)["hands"], key=len)
    assert len(hand) >= 2
    return hand


def _swap_tile(d: dict[str, Any]) -> None:
    """The fullest hand's last tile swapped for a tile shown nowhere, of other pips."""
    hand = _fullest(d)
    shown = [t for h in _result(d)["hands"] for t in h]
    gone = hand.pop()
    top = max(max(t) for t in shown)
    fresh = next([a, b] for a in range(top + 1) for b in range(a, top + 1)
                 if [a, b] not in shown and a + b != sum(gone))  # fmt: skip
    hand[:] = sorted([*hand, fresh])


def _show_twice(d: dict[str, Any]) -> None:
    """A tile of the fullest hand shown in another hand as well."""
    hands = _result(d)["hands"]
    src = hands.index(_fullest(d))
    hands[(src + 1) % len(hands)] = sorted([*hands[(src + 1) % len(hands)], hands[src][0]])


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_a_mexican_snapshot_between_rounds_loads_and_a_forged_result_is_refused(backend: str) -> None:
    env = find(_mexican(backend), between_rounds)
    d = env.state_dict()
    restored = _mexican(backend)()
    restored.load_state_dict(copy.deepcopy(d))
    assert restored.infos["player_1"]["round_result"] == _result(d)
    n = 3
    cases: list[tuple[Edit, str]] = [
        (lambda d: _result(d).__setitem__("round", _result(d)["round"] + 1), "round: not the last round's"),
        (lambda d: _result(d)["scores"].__setitem__(0, _result(d)["scores"][0] + 1), "scores: not the last"),
        (lambda d: _result(d).__setitem__("first_player", (_result(d)["first_player"] + 1) % n), "R5, R6"),
        (lambda d: _result(d).__setitem__("blocked", not _result(d)["blocked"]), "R23) or with a seat out"),
        (lambda d: _result(d).__setitem__("pips", [0] * n), "pips: not the last round's"),
        (lambda d: _result(d).__setitem__("colour", "red"), "must be a round result with the keys"),
        (_show_twice, "hands: 3 lists of distinct"),
        (lambda d: _fullest(d).reverse(), "each as [a, b] in tile order"),
        (_swap_tile, "pips: not the last round's"),
    ]
    for edit, says in cases:
        message = assert_refused(env, edited(env, edit), "env.round_result", "AEC")
        assert says in message, (says, message)


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_a_round_result_is_refused_once_the_next_round_has_begun(backend: str) -> None:
    env = find(_mexican(backend), between_rounds)
    result = _result(env.state_dict())
    env.step(env.legal_actions()[0])
    assert "round_result" not in env.infos["player_0"]
    bad = edited(env, lambda d: d["env"].__setitem__("round_result", result))
    message = assert_refused(env, bad, "env.round_result", "AEC")
    assert "a move of this round was made" in message
    first = _mexican(backend)()
    first.reset(seed=0)
    bad = edited(first, lambda d: d["env"].__setitem__("round_result", result))
    assert "the session's first round is being played" in assert_refused(first, bad, "env.round_result")


def test_a_block_snapshot_between_hands_loads_and_a_forged_result_is_refused() -> None:
    env = find(_block, between_rounds)
    d = env.state_dict()
    restored = _block()
    restored.load_state_dict(copy.deepcopy(d))
    assert restored.infos["player_2"]["round_result"] == _result(d)
    cases: list[tuple[Edit, str]] = [
        (lambda d: _result(d).__setitem__("round", 5), "round: not the last hand's"),
        (lambda d: _result(d).__setitem__("match_scores", [0, 0]), "match_scores: not the last hand's"),
        (lambda d: _result(d).__setitem__("winner", 1 - _result(d)["winner"]), "winner: not the last hand's"),
        (lambda d: _result(d).pop("kind"), "must be a hand's result with the keys"),
        (lambda d: _fullest(d).reverse(), "each as [a, b] in tile order"),
        (_swap_tile, "B10-B12"),
    ]
    for edit, says in cases:
        message = assert_refused(env, edited(env, edit), "env.round_result", "AEC")
        assert says in message, (says, message)
    result = _result(d)
    env.step(env.legal_actions()[0])
    bad = edited(env, lambda d: d["env"].__setitem__("round_result", result))
    assert "a move of this hand was made" in assert_refused(env, bad, "env.round_result", "AEC")
