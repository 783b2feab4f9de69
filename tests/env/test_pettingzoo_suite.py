"""PettingZoo's own test suite (``api_test``, ``seed_test``, ``render_test``) over many configs.

Every player count (R3), every supported set size (R1), every preset, every RULES.md variant
flag on its own, sessions (R25) and every reward mode, each on the wrapped ``env()`` and on
the bare ``raw_env()``, on both backends (``backend="python"`` and ``"compiled"``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
from pettingzoo.test import api_test, render_test, seed_test

import mtrain_env
from mtrain_env.mexican_train.core.config import VARIANT_FLAGS, max_players
from mtrain_env.mexican_train.rewards import REWARD_MODES
from mtrain_env.tilegame.tiles import SUPPORTED_MAX_PIPS
from tests.backends import BACKENDS, NEEDS_NUMBA

NUM_CYCLES = 300


def _configs() -> list[Any]:
    """``pytest.param(kwargs, id=...)`` for every config family the suite must cover."""
    out: list[Any] = []
    for n in range(2, 9):  # R3
        out.append(pytest.param({"num_players": n}, id=f"players{n}"))
    for pips in SUPPORTED_MAX_PIPS:  # R1
        out.append(pytest.param({"max_pips": pips}, id=f"pips{pips}"))
        out.append(
            pytest.param({"max_pips": pips, "num_players": max_players(pips)}, id=f"pips{pips}-maxplayers")
        )
        out.append(pytest.param({"max_pips": pips, "num_players": 2}, id=f"pips{pips}-players2"))
    for rules in ("pagat", "wikipedia", "cardinal"):
        out.append(pytest.param({"rules": rules}, id=f"preset-{rules}"))
        out.append(pytest.param({"rules": rules, "num_players": 8}, id=f"preset-{rules}-players8"))
    for flag in VARIANT_FLAGS:
        out.append(pytest.param({flag: True}, id=f"flag-{flag}"))
    out.append(pytest.param({"rounds": 3}, id="session3"))
    out.append(pytest.param({"rounds": 3, "rules": "cardinal"}, id="session3-cardinal"))
    out.append(pytest.param({"rounds": 7, "max_pips": 6, "num_players": 3}, id="session-full-pips6"))
    for mode in REWARD_MODES:
        out.append(pytest.param({"reward": mode}, id=f"reward-{mode}"))
        out.append(pytest.param({"reward": mode, "rounds": 3}, id=f"reward-{mode}-session3"))
    out.append(
        pytest.param(
            {"reward": "win", "rounds": 3, "positive_scoring": True, "blank_penalty": True},
            id="reward-win-positive-blank",
        )
    )
    return out


CONFIGS = _configs()
CONSTRUCTORS = [
    pytest.param(mtrain_env.env, id="env"),
    pytest.param(mtrain_env.raw_env, id="raw_env"),
    pytest.param(functools.partial(mtrain_env.env, backend="compiled"), id="env-compiled", marks=NEEDS_NUMBA),
    pytest.param(
        functools.partial(mtrain_env.raw_env, backend="compiled"), id="raw_env-compiled", marks=NEEDS_NUMBA
    ),
]

# api_test resets with options={"options": ...}; the env warns that it ignores the key
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _factory(make: Callable[..., Any], kwargs: dict[str, Any]) -> Callable[..., Any]:
    """An ``env_fn(**extra)`` building ``make(**kwargs, **extra)`` (render_test passes render_mode)."""

    def env_fn(**extra: Any) -> Any:
        return make(**{**kwargs, **extra})

    return env_fn


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize("kwargs", CONFIGS)
def test_api(make: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    """pettingzoo.test.api_test passes (AEC contract, spaces, masks, dead steps)."""
    api_test(make(**kwargs), num_cycles=NUM_CYCLES)


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize("kwargs", CONFIGS)
def test_seed(make: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    """pettingzoo.test.seed_test: the same seed replays the same game (randomness only via reset)."""
    seed_test(_factory(make, kwargs), num_cycles=NUM_CYCLES)


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize("kwargs", CONFIGS)
def test_render(make: Callable[..., Any], kwargs: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """pettingzoo.test.render_test over every render mode (ansi text, human print, rgb_array)."""
    render_test(_factory(make, kwargs))
    # "human" prints the table: something must have been printed, naming the engine (R5)
    assert "engine" in capsys.readouterr().out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kwargs", CONFIGS)
def test_full_episode_reaches_termination(kwargs: dict[str, Any], backend: str) -> None:
    """A masked random game through ``env()`` ends with every agent terminated (R23-R25).

    api_test stops after ``num_cycles``; this plays the whole episode (every round of a
    session) and checks that the AEC loop drains cleanly.
    """
    e = mtrain_env.env(backend=backend, **kwargs)
    e.reset(seed=3)
    for i, a in enumerate(e.possible_agents):
        e.action_space(a).seed(100 + i)
    steps = 0
    for agent in e.agent_iter(max_iter=100_000):
        obs, _, term, trunc, _ = e.last()
        action = None if term or trunc else e.action_space(agent).sample(obs["action_mask"])
        e.step(action)
        steps += 1
    assert not e.agents, "agent_iter stopped before every agent was done"
    assert steps < 100_000
    assert len(e.unwrapped.state_obj.round_scores) == kwargs.get("rounds", 1)
