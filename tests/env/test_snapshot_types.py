"""Snapshots are type-exact: a ``state_dict`` survives JSON, ``load_state_dict``, pickle and
``deepcopy`` with the same values AND the same types at every depth.

``==`` alone would accept ``0 == 0.0 == False`` and ``[1, 2] == (1, 2)``-free drift such as
scores that are ints before a round ends and floats after a reload. Pip scores are ints
everywhere (R24, B10-B13); only ``positive_scoring`` can split a pot between tied winners,
so its scores are floats, from the start of the episode on. Rewards are floats.
"""

from __future__ import annotations

import copy
import json
import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import mtrain_env
import mtrain_env.block


def type_exact_diff(a: Any, b: Any, path: str = "$") -> str | None:
    """Where ``a`` and ``b`` differ in value or in type (recursively), or None if nowhere."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} {a!r} vs {type(b).__name__} {b!r}"
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)} vs {list(b)}"
        for k in a:
            found = type_exact_diff(a[k], b[k], f"{path}.{k}")
            if found:
                return found
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = type_exact_diff(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def test_type_exact_diff_sees_types_values_and_keys() -> None:
    assert type_exact_diff({"a": [1, 2.0, True]}, {"a": [1, 2.0, True]}) is None
    assert type_exact_diff({"a": [1, 2.0]}, {"a": [1.0, 2.0]}) == "$.a[0]: int 1 vs float 1.0"
    assert type_exact_diff([0], [False]) is not None
    assert type_exact_diff([1, 2], (1, 2)) is not None
    assert type_exact_diff({"a": 1, "b": 2}, {"b": 2, "a": 1}) is not None
    assert type_exact_diff({"x": [[3]]}, {"x": [[4]]}) == "$.x[0][0]: 3 vs 4"


def assert_type_exact(got: Any, expected: Any, what: str) -> None:
    found = type_exact_diff(got, expected)
    assert found is None, f"{what}: {found}"


def check_snapshot(make: Callable[[], Any], env: Any) -> None:
    """Every way of copying ``env``'s snapshot gives it back type-exactly."""
    raw = env.unwrapped
    d = raw.state_dict()
    for key in ("rewards", "cumulative_rewards"):
        assert all(type(r) is float for r in d["env"][key].values()), d["env"]
    assert_type_exact(raw.state_dict(), d, "state_dict twice")
    assert_type_exact(json.loads(json.dumps(d)), d, "JSON round trip")
    fresh = make().unwrapped
    fresh.load_state_dict(json.loads(json.dumps(d)))
    assert_type_exact(fresh.state_dict(), d, "load_state_dict(JSON) then state_dict")
    fresh = make().unwrapped
    fresh.load_state_dict(copy.deepcopy(d))
    assert_type_exact(fresh.state_dict(), d, "load_state_dict then state_dict")
    assert_type_exact(pickle.loads(pickle.dumps(env)).unwrapped.state_dict(), d, "pickle of the env")
    assert_type_exact(copy.deepcopy(env).unwrapped.state_dict(), d, "deepcopy of the env")
    assert_type_exact(pickle.loads(pickle.dumps(d)), d, "pickle of the dict")


def play_and_check(make: Callable[[], Any], seed: int, checks: int = 6) -> int:
    """A random game of ``make()`` (illegal moves included on wrapped envs), snapshots
    checked at random steps and at the end; returns the number of rounds scored."""
    env = make()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    wrapped = env is not env.unwrapped
    raw = env.unwrapped
    check_snapshot(make, env)
    steps = 0
    while env.agents:
        agent = env.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            action = None
        else:
            mask = raw.observe(agent)["action_mask"]
            pool = np.flatnonzero(mask)
            if wrapped and rng.random() < 0.002 and (mask == 0).any():
                pool = np.flatnonzero(mask == 0)  # TerminateIllegalWrapper ends the game
            action = int(rng.choice(pool))
        env.step(action)
        steps += 1
        if rng.random() < checks / 300:
            check_snapshot(make, env)
    check_snapshot(make, env)
    return steps


MEXICAN = [
    {},
    {"rounds": 3},
    {"rounds": 3, "positive_scoring": True},
    {"rounds": 3, "blank_penalty": True},
    {"rounds": 3, "positive_scoring": True, "blank_penalty": True, "reward": "penalty"},
    {"rounds": 2, "reward": "win", "num_players": 3},
    {"rounds": 2, "positive_scoring": True, "reward": "win", "num_players": 2, "max_pips": 6},
    {"rules": "cardinal", "rounds": 2, "num_players": 5},
    {"rules": "wikipedia", "rounds": 2, "positive_scoring": True, "num_players": 6, "max_pips": 9},
]
BLOCK = [{}, {"match": True}, {"match": True, "closed_scoring": "both"}, {"rules": "openspiel"}]


@pytest.mark.parametrize("wrapped", [False, True], ids=["raw_env", "env"])
@pytest.mark.parametrize(
    "kwargs", MEXICAN, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "default"
)
@pytest.mark.parametrize("seed", range(3))
def test_mexican_train_snapshots_are_type_exact(kwargs: dict, seed: int, wrapped: bool) -> None:
    factory = mtrain_env.env if wrapped else mtrain_env.raw_env
    assert play_and_check(lambda: factory(**kwargs), seed) > 0


@pytest.mark.parametrize("wrapped", [False, True], ids=["raw_env", "env"])
@pytest.mark.parametrize(
    "kwargs", BLOCK, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "default"
)
@pytest.mark.parametrize("seed", range(3))
def test_block_snapshots_are_type_exact(kwargs: dict, seed: int, wrapped: bool) -> None:
    factory = mtrain_env.block.env if wrapped else mtrain_env.block.raw_env
    assert play_and_check(lambda: factory(**kwargs), seed) > 0


@pytest.mark.parametrize("positive", [False, True])
def test_score_types_follow_the_scoring_rule_r24(positive: bool) -> None:
    """Pip scores are ints (R24); ``positive_scoring`` shares are floats from the start."""
    env = mtrain_env.raw_env(rounds=3, positive_scoring=positive, num_players=3)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    kind = float if positive else int
    while env.agents and not all(env.terminations.values()):
        s = env.state_obj
        assert all(type(x) is kind for x in s.scores), s.scores
        assert all(type(x) is kind for row in s.round_scores for x in row), s.round_scores
        env.step(int(rng.choice(env.legal_actions())))
    assert len(env.state_obj.round_scores) == 3
    d = env.state_dict()
    assert all(type(x) is kind for x in d["scores"])
    assert all(type(x) is float for x in d["env"]["rewards"].values())
    assert all(type(x) is float for x in d["env"]["cumulative_rewards"].values())


def _finished_round_snapshot(**kwargs: Any) -> dict[str, Any]:
    env = mtrain_env.raw_env(rounds=2, num_players=3, **kwargs)
    env.reset(seed=8)
    rng = np.random.default_rng(8)
    while not env.state_obj.round_scores:
        env.step(int(rng.choice(env.legal_actions())))
    return env.state_dict()


@pytest.mark.parametrize(
    ("positive", "edit"),
    [
        pytest.param(False, lambda x: float(x), id="pip-score-as-float"),
        pytest.param(False, lambda x: x + 0.5, id="pip-score-fraction"),
        pytest.param(False, lambda x: True, id="pip-score-bool"),
        pytest.param(True, lambda x: int(x), id="positive-score-as-int"),
        pytest.param(True, lambda x: math.nan, id="positive-score-nan"),
        pytest.param(True, lambda x: math.inf, id="positive-score-inf"),
        pytest.param(True, lambda x: -1.0, id="positive-score-negative"),
    ],
)
def test_snapshot_scores_must_be_of_the_configs_type(positive: bool, edit: Callable[[Any], Any]) -> None:
    """Scores load only as the config's type, finite and >= 0 (R24): exact, never converted.

    Each edit makes ``scores`` and ``round_scores`` agree with each other, so only the type or
    the value itself can be what is refused.
    """
    d = _finished_round_snapshot(positive_scoring=positive)
    kind = float if positive else int
    assert all(type(x) is kind for x in d["scores"])
    env = mtrain_env.raw_env(rounds=2, num_players=3, positive_scoring=positive)
    env.load_state_dict(json.loads(json.dumps(d)))  # the unedited snapshot loads
    assert_type_exact(env.state_dict(), d, "unedited")
    before = env.state_dict()
    bad = json.loads(json.dumps(d))
    bad["round_scores"][0] = [edit(x) for x in bad["round_scores"][0]]
    bad["scores"] = [edit(x) for x in bad["scores"]]
    with pytest.raises((ValueError, TypeError), match=r"state dict '(round_)?scores\[0\](\[0\])?': R24"):
        env.load_state_dict(bad)
    assert_type_exact(env.state_dict(), before, "untouched on error")


@pytest.mark.parametrize("value", ["1", None, True, 1, math.nan, -math.inf])
def test_snapshot_rewards_must_be_finite_floats(value: Any) -> None:
    d = _finished_round_snapshot()
    d["env"]["rewards"]["player_0"] = value
    env = mtrain_env.raw_env(rounds=2, num_players=3)
    env.reset(seed=1)
    before = env.state_dict()
    with pytest.raises((ValueError, TypeError), match=r"state dict 'env\.rewards\.player_0': AEC"):
        env.load_state_dict(d)
    assert_type_exact(env.state_dict(), before, "untouched on error")
