"""Agents from Python objects (agents/custom.py): callables, SB3 models, torch modules and
``module:factory`` plugins play in the harness, labelled by their names."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import mtrain_env  # noqa: F401  (registers the Gymnasium env)
from agents.custom import PolicyAgent, from_policy, masked_argmax
from agents.tournament import TournamentConfig, run_tournament
from tests import REPO
from training.app import main

ROOT = REPO
SMALL = {"num_players": 2, "max_pips": 6}


def lowest_legal(observation: np.ndarray, mask: np.ndarray) -> int:
    """A policy: the legal action with the lowest id."""
    return int(np.flatnonzero(mask)[0])


def make_lowest(seed: int | None = None) -> PolicyAgent:
    """A ``module:factory`` plugin."""
    return PolicyAgent(lowest_legal, name="lowest")


def make_nothing() -> object:
    return object()


def _config(agent: object, **kwargs: object) -> TournamentConfig:
    options = {"deals": 3, "progress": False, "plots": False, "game": _game(), **kwargs}
    return TournamentConfig(agents=[agent, "planner"], **options)  # type: ignore[arg-type]


def test_a_callable_plays_under_its_name_and_the_same_on_workers() -> None:
    agent = from_policy(lowest_legal, name="lowest")
    alone = run_tournament(_config(agent))
    assert alone.plan.labels == ("lowest", "planner")
    assert "lowest" in alone.table
    on_workers = run_tournament(_config(agent, workers=2))
    assert on_workers.rows == alone.rows


def test_the_callable_is_what_plays() -> None:
    seen: list[int] = []

    def spy(observation: np.ndarray, mask: np.ndarray) -> int:
        action = lowest_legal(observation, mask)
        seen.append(action)
        return action

    result = run_tournament(_config(from_policy(spy, name="spy")))
    spy_row = next(a for a in result.agents if a["agent"] == "spy")
    assert len(seen) == spy_row["decisions_timed"] > 0


def test_a_function_of_an_interactive_main_is_refused_for_workers_before_the_first_deal() -> None:
    script = (
        "import numpy as np\n"
        "from agents.custom import from_policy\n"
        "from agents.tournament import TournamentConfig, run_tournament\n"
        "def f(obs, mask): return int(np.flatnonzero(mask)[0])\n"
        "try:\n"
        "    run_tournament(TournamentConfig(agents=[from_policy(f, 'f'), 'planner'], deals=2, workers=2,"
        " progress=False, plots=False))\n"
        "except ValueError as err: print(err)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "'f' is defined in an interactive __main__" in proc.stdout and "workers=1" in proc.stdout


def test_bad_policies_and_actions_are_refused_in_words() -> None:
    with pytest.raises(ValueError, match="from_policy takes a callable"):
        from_policy(42)
    with pytest.raises(ValueError, match="name must be a word"):
        from_policy(lowest_legal, name="a[b]")
    agent = from_policy(lambda obs, mask: True, name="yes")
    decision = type("D", (), {"observation": np.zeros(3), "action_mask": np.ones(3, dtype=np.int8)})()
    with pytest.raises(ValueError, match="must return an action id"):
        agent.act(decision)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="an agent must be a spec string, an AgentSpec or an agent"):
        TournamentConfig(agents=[lowest_legal, "planner"])  # type: ignore[list-item]
    assert masked_argmax(np.array([5.0, 9.0, 9.0]), np.array([1, 0, 1], dtype=np.int8)) == 2


def test_a_torch_module_of_logits_plays_its_masked_argmax() -> None:
    th = pytest.importorskip("torch")
    env = gymnasium.make("mtrain_env/MexicanTrain-v0", opponents=["planner"], **SMALL)
    obs, _ = env.reset(seed=0)
    net = th.nn.Linear(obs.shape[0], env.action_space.n)
    agent = from_policy(net)
    assert agent.name == "linear"
    for _ in range(50):
        mask = env.unwrapped.action_masks()
        with th.no_grad():
            logits = net(th.as_tensor(obs)[None])[0].numpy()
        expected = int(np.flatnonzero(mask)[np.argmax(logits[mask.astype(bool)])])
        assert agent.policy(obs, mask) == expected
        obs, _, done, trunc, _ = env.step(expected)
        if done or trunc:
            obs, _ = env.reset()


def test_an_in_memory_sb3_model_plays_its_own_predict() -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = gymnasium.make("mtrain_env/MexicanTrain-v0", opponents=["planner"], **SMALL)
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu"
    )
    model.learn(128)
    agent = from_policy(model, name="my_ppo")
    obs, _ = env.reset(seed=1)
    for _ in range(1000):
        mask = env.unwrapped.action_masks()
        expected, _ = model.predict(obs, deterministic=True, action_masks=mask)
        assert agent.policy(obs, mask) == int(expected)
        obs, _, done, trunc, _ = env.step(int(expected))
        if done or trunc:
            obs, _ = env.reset()
    result = run_tournament(
        TournamentConfig(agents=[agent, "planner"], game=_game(), deals=2, progress=False, plots=False)
    )
    assert result.plan.labels[0] == "my_ppo"


def _game() -> object:
    from mtrain_env.mexican_train import GameConfig

    return GameConfig.make(**SMALL)


def test_a_module_factory_plugin_plays_on_the_command_line(tmp_path: Path) -> None:
    argv = [
        "bench",
        "--agents",
        "tests.agents.test_custom:make_lowest",
        "planner",
        "--players",
        "2",
        "--deals",
        "2",
    ]
    assert main([*argv, "--out", str(tmp_path / "a"), "--no-progress", "--workers", "1"]) == 0
    assert "make_lowest" in (tmp_path / "a" / "table.txt").read_text()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(
            [
                "bench",
                "--agents",
                "tests.agents.test_custom:make_nothing",
                "planner",
                "--out",
                str(tmp_path / "b"),
            ]
        )
    assert code == 2 and "returned object, not an agent" in err.getvalue()
    assert not (tmp_path / "b").exists()


def test_an_object_is_copied_only_where_it_holds_several_seats_of_a_game() -> None:
    agent = from_policy(lowest_legal, name="lowest")
    result = run_tournament(_config(agent))  # two agents, two seats: the object itself plays
    assert result.rows
    uncopyable = from_policy(_Uncopyable(), name="odd")
    one_seat = run_tournament(_config(uncopyable, lineup=["odd", "planner"]))
    same = [(r.penalty, r.actions) for r in one_seat.rows] == [(r.penalty, r.actions) for r in result.rows]
    assert same  # the same moves (the lowest legal id)
    with pytest.raises(ValueError, match="odd: an agent object holding 2 seats of a game is copied"):
        run_tournament(
            TournamentConfig(agents=[uncopyable], game=_game(), deals=1, progress=False, plots=False)
        )


class _Uncopyable:
    """A policy that refuses to be copied (as some models do)."""

    def __call__(self, observation: np.ndarray, mask: np.ndarray) -> int:
        return lowest_legal(observation, mask)

    def __deepcopy__(self, memo: dict[int, object]) -> object:
        raise TypeError("cannot copy this policy")
