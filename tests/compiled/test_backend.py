"""``raw_env(backend="compiled")`` against the default ``backend="python"``, step by step.

The same seed and the same random legal actions through both backends give identical
``last()`` (observation, mask, reward, termination, truncation, infos with the round
results), ``state_dict()``, renders and public views, over every preset, every variant flag,
2-8 players, every set size, sessions and every reward mode. Snapshots and pickles cross
between the backends; the keyword is validated.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import mtrain_env
from mtrain_env.mexican_train.core.config import VARIANT_FLAGS, GameConfig
from mtrain_env.mexican_train.rewards import REWARD_MODES
from mtrain_env.tilegame.tiles import SUPPORTED_MAX_PIPS

pytest.importorskip("numba")


def _configs() -> list[Any]:
    out: list[Any] = [pytest.param({"num_players": n}, id=f"players{n}") for n in range(2, 9)]
    out += [pytest.param({"max_pips": p, "num_players": 3}, id=f"pips{p}") for p in SUPPORTED_MAX_PIPS]
    for rules in ("pagat", "wikipedia", "cardinal"):
        out.append(pytest.param({"rules": rules, "rounds": 2}, id=f"preset-{rules}-session2"))
    out += [pytest.param({flag: True, "num_players": 3}, id=f"flag-{flag}") for flag in VARIANT_FLAGS]
    for mode in REWARD_MODES:
        out.append(pytest.param({"reward": mode, "rounds": 3, "max_pips": 9}, id=f"reward-{mode}-session3"))
    out.append(
        pytest.param(
            {"reward": "win", "rounds": 7, "max_pips": 6, "num_players": 2, "positive_scoring": True},
            id="session-full-pips6-positive",
        )
    )
    return out


def _random_flags(seed: int) -> dict[str, Any]:
    """A random consistent config (flags that contradict each other are drawn again)."""
    rng = np.random.default_rng(seed)
    while True:
        kwargs: dict[str, Any] = {f: bool(rng.random() < 0.4) for f in VARIANT_FLAGS}
        kwargs["num_players"] = int(rng.integers(2, 9))
        kwargs["rules"] = str(rng.choice(["pagat", "wikipedia", "cardinal"]))
        kwargs["rounds"] = int(rng.integers(1, 4))
        try:
            GameConfig.make(**kwargs)
        except ValueError:
            continue
        kwargs["reward"] = str(rng.choice(list(REWARD_MODES)))
        return kwargs


def _step_record(e: Any) -> tuple[Any, ...]:
    """Everything ``last()`` and the snapshot say, as comparable values."""
    obs, reward, term, trunc, info = e.last()
    info = {k: (v.tobytes() if isinstance(v, np.ndarray) else v) for k, v in info.items()}
    return (
        e.agent_selection,
        obs["observation"].dtype,
        obs["observation"].tobytes(),
        obs["action_mask"].dtype,
        obs["action_mask"].tobytes(),
        reward,
        term,
        trunc,
        info,
        json.dumps(e.unwrapped.state_dict(), sort_keys=True),
    )


def lockstep(kwargs: dict[str, Any], seed: int, render: bool = False) -> int:
    """Play both backends with the same random legal actions; assert every step equal."""
    mode = {"render_mode": "ansi"} if render else {}
    py = mtrain_env.env(backend="python", **mode, **kwargs)
    cc = mtrain_env.env(backend="compiled", **mode, **kwargs)
    py.reset(seed=seed)
    cc.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    for agent in py.agent_iter(max_iter=100_000):
        a, b = _step_record(py), _step_record(cc)
        assert a == b, f"{kwargs} seed {seed} step {steps}"
        assert cc.agent_selection == agent
        if render:
            assert py.render() == cc.render()
            seat = steps % py.unwrapped.config.num_players
            assert py.unwrapped.public_view(f"player_{seat}") == cc.unwrapped.public_view(f"player_{seat}")
        _, _, term, trunc, _ = py.last()
        action = None if term or trunc else int(rng.choice(np.flatnonzero(py.last()[0]["action_mask"])))
        py.step(action)
        cc.step(action)
        steps += 1
    assert not cc.agents and not py.agents
    assert cc.unwrapped.state_dict() == py.unwrapped.state_dict()
    return steps


@pytest.mark.parametrize("kwargs", _configs())
def test_lockstep_configs(kwargs: dict[str, Any]) -> None:
    """Every ``last()`` and ``state_dict()`` equal, to the end of each episode, 3 seeds."""
    assert sum(lockstep(kwargs, seed) for seed in range(3)) > 30


@pytest.mark.parametrize("seed", range(12))
def test_lockstep_random_flag_combinations(seed: int) -> None:
    """Random combinations of flags, presets, seats, sessions and reward modes."""
    lockstep(_random_flags(seed), seed)


def test_lockstep_renders_and_public_views() -> None:
    """ANSI renders and public views agree at every step of a session."""
    lockstep({"rounds": 2, "num_players": 3, "max_pips": 9}, 5, render=True)


def test_rgb_render_equal() -> None:
    py = mtrain_env.raw_env(render_mode="rgb_array")
    cc = mtrain_env.raw_env(render_mode="rgb_array", backend="compiled")
    for e in (py, cc):
        e.reset(seed=1)
        for _ in range(10):
            e.step(e.legal_actions()[0])
    np.testing.assert_array_equal(py.render(), cc.render())


@pytest.mark.parametrize("direction", ["python->compiled", "compiled->python"])
@pytest.mark.parametrize("cut", [0, 13, 60])
def test_snapshots_cross_backends(direction: str, cut: int) -> None:
    """A snapshot of one backend loads into the other and both go on identically."""
    src_backend, dst_backend = direction.split("->")
    kwargs = {"rounds": 3, "num_players": 3, "max_pips": 9}
    src = mtrain_env.raw_env(backend=src_backend, **kwargs)
    src.reset(seed=8)
    rng = np.random.default_rng(8)
    for _ in range(cut):
        src.step(int(rng.choice(src.legal_actions())))
    dst = mtrain_env.raw_env(backend=dst_backend, **kwargs)
    dst.load_state_dict(json.loads(json.dumps(src.state_dict())))
    assert dst.state_dict() == src.state_dict()
    while src.agents and not all(src.terminations.values()):
        a = int(rng.choice(src.legal_actions()))
        assert dst.legal_actions() == src.legal_actions()
        src.step(a)
        dst.step(a)
        for agent in src.possible_agents:
            np.testing.assert_array_equal(
                src.observe(agent)["observation"], dst.observe(agent)["observation"]
            )
        assert dst.rewards == src.rewards
        assert dst.infos.keys() == src.infos.keys()
    assert dst.state_dict() == src.state_dict()


def test_pickle_compiled_env() -> None:
    e = mtrain_env.env(backend="compiled", rounds=2)
    e.reset(seed=3)
    for _ in range(20):
        e.step(e.unwrapped.legal_actions()[0])
    clone = pickle.loads(pickle.dumps(e))
    assert clone.unwrapped.backend == "compiled"
    assert clone.unwrapped.state_dict() == e.unwrapped.state_dict()


def test_illegal_action_errors_match() -> None:
    """The bare env's refusal of an illegal action reads the same on both backends."""
    errors = []
    for backend in ("python", "compiled"):
        e = mtrain_env.raw_env(backend=backend)
        e.reset(seed=0)
        illegal = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"] == 0)[0])
        with pytest.raises(ValueError) as err:
            e.step(illegal)
        errors.append(str(err.value))
    assert errors[0] == errors[1]
    assert "legal actions" in errors[0]


def test_state_obj_is_the_pure_state() -> None:
    py = mtrain_env.raw_env(rounds=2)
    cc = mtrain_env.raw_env(rounds=2, backend="compiled")
    for e in (py, cc):
        e.reset(seed=4)
    assert type(cc.state_obj) is type(py.state_obj)
    slots = type(py.state_obj).__slots__
    assert [getattr(cc.state_obj, k) for k in slots] == [getattr(py.state_obj, k) for k in slots]
    assert cc.current_seat == py.current_seat


def test_backend_is_validated() -> None:
    with pytest.raises(ValueError, match="backend must be one of \\('python', 'compiled'\\)"):
        mtrain_env.raw_env(backend="numba")
    with pytest.raises(ValueError, match="backend"):
        mtrain_env.env(backend=None)


def test_missing_numba_says_to_install_the_fast_extra() -> None:
    """Without numba, ``backend="compiled"`` raises an ImportError naming the extra."""
    code = (
        "import sys; sys.modules['numba'] = None\n"
        "import mtrain_env\n"
        "try:\n"
        "    mtrain_env.env(backend='compiled')\n"
        "except ImportError as err:\n"
        "    print(err)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "fast" in out and "numba" in out


def test_only_a_compiled_env_imports_numba() -> None:
    code = (
        "import sys, mtrain_env\n"
        "mtrain_env.env()\n"
        "print('numba' in sys.modules)\n"
        "mtrain_env.env(backend='compiled')\n"
        "print('numba' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]
