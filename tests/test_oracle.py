"""``oracle`` (cheats: perfect information) and the search agents in the tournament harness.

* only agents that declare ``cheats`` get a decision carrying the hidden state;
* the oracle's values are the rollouts of the TRUE state (compiled and pure agree);
* search agents on a ``sims``/``rollouts`` budget write the same tournament CSV on 1 and 2
  workers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mtrain_env
from agents.mexican_train.base import Decision, decision_for
from agents.mexican_train.mc import ChainPolicy, round_result
from agents.mexican_train.oracle import CheatDecision, OracleAgent
from agents.registry import agent_class, agent_names
from agents.tournament import AgentSpec, TournamentConfig, run_tournament


def test_only_declared_cheats_get_the_hidden_state() -> None:
    for name in agent_names():
        cls = agent_class(name)
        cheats = getattr(cls, "cheats", False)
        grants = issubclass(cls.decision_class, CheatDecision)
        assert grants == cheats, f"{name}: a hidden-state decision must go with cheats=True"
        if cheats:
            assert "oracle" in name  # the name says what it is
    assert agent_class("oracle").cheats
    assert agent_class("mc").decision_class is Decision


def _decision_with_choices(seed: int) -> tuple[object, CheatDecision]:
    env = mtrain_env.env(num_players=4)
    env.reset(seed=seed)
    while True:
        decision = CheatDecision(env, env.agent_selection)
        if len(decision.legal_actions) >= 3:
            return env, decision
        env.step(decision.legal_actions[0])


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_oracle_values_are_the_true_states_rollouts(engine: str) -> None:
    pytest.importorskip("numba")
    env, decision = _decision_with_choices(3)
    oracle = OracleAgent(engine=engine)
    action = oracle.act(decision)
    game = decision.game
    truth = env.unwrapped.state_obj
    policy = ChainPolicy(game)
    for a, value in oracle.last_values.items():
        s = truth.copy()
        game.apply(s, decision.to_move(a))
        policy.rollout(s)
        assert value == pytest.approx(round_result(game.config, s, decision.seat))
    assert oracle.last_values[action] == max(oracle.last_values.values())


def test_oracle_refuses_a_fair_decision() -> None:
    env, _ = _decision_with_choices(4)
    with pytest.raises(TypeError, match="CheatDecision"):
        OracleAgent().act(decision_for(env, env.agent_selection))


def test_true_state_is_a_copy() -> None:
    env, decision = _decision_with_choices(5)
    s = decision.true_state()
    s.hands[0] = 0
    assert env.unwrapped.state_obj.hands[0] != 0


def test_search_agents_same_csv_on_one_and_two_workers(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    agents = [AgentSpec("mc", {"sims": 24}), AgentSpec("oracle"), AgentSpec("planner")]

    def run(out: Path, workers: int) -> bytes:
        config = TournamentConfig(
            agents=agents,
            deals=2,
            seed=11,
            workers=workers,
            out_dir=out,
            plots=False,
            progress=False,
            lineup=["mc[sims=24]", "oracle", "planner", "planner"],
        )
        run_tournament(config)
        return (out / "results.csv").read_bytes()

    assert run(tmp_path / "w1", 1) == run(tmp_path / "w2", 2)
    assert np.any(np.frombuffer(run(tmp_path / "w1", 1), np.uint8))  # not empty
