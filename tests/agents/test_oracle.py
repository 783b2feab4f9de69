"""``oracle`` (cheats: perfect information) and the search agents in the tournament harness.

* only agents that declare ``cheats`` get a decision carrying the hidden state;
* the oracle's values are the rollouts of the TRUE state (compiled and pure agree); with
  the boneyard hidden it never reads the draw order;
* search agents on a ``sims``/``rollouts`` budget write the same tournament CSV on 1 and 2
  workers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mtrain_env
from agents.mexican_train.base import Decision, decision_for
from agents.mexican_train.oracle import CheatDecision, OracleAgent
from agents.mexican_train.rollout_policies import ChainPolicy, round_result
from agents.registry import agent_class, agent_names, make_agent
from agents.tournament import AgentSpec, TournamentConfig, run_tournament
from mtrain_env.mexican_train import GameConfig


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


def test_hidden_boneyard_oracle_never_reads_the_draw_order() -> None:
    """``boneyard=hidden``: reversing the true boneyard changes nothing it computes (the same
    seed, the same values), where the full oracle's values follow the draws."""
    pytest.importorskip("numba")
    env, decision = _decision_with_choices(7)
    truth = env.unwrapped.state_obj
    assert len(truth.boneyard) > 1

    def values(**params: object) -> dict[int, float]:
        oracle = OracleAgent(seed=5, **params)  # type: ignore[arg-type]
        oracle.act(decision)
        return dict(oracle.last_values)

    hidden, seen = values(boneyard="hidden", worlds=8), values()
    truth.boneyard.reverse()
    assert values(boneyard="hidden", worlds=8) == hidden
    assert values() != seen, "this position's values should depend on the draws"


def test_hidden_boneyard_oracle_engines_agree() -> None:
    """The same shuffles (one seed) on the compiled and the pure rollouts: the same means."""
    pytest.importorskip("numba")
    _env, decision = _decision_with_choices(8)
    means = []
    for engine in ("compiled", "python"):
        oracle = OracleAgent(seed=3, engine=engine, boneyard="hidden", worlds=4)
        oracle.act(decision)
        means.append(oracle.last_values)
    assert means[0].keys() == means[1].keys()
    for a in means[0]:
        assert means[0][a] == pytest.approx(means[1][a])


@pytest.mark.parametrize(
    "params, message",
    [
        ({"engine": "numba"}, "engine must be one of"),
        ({"boneyard": "peek"}, "boneyard must be one of"),
        ({"boneyard": "hidden", "worlds": 0}, "worlds must be"),
        ({"worlds": 8}, "it needs boneyard=hidden"),
    ],
)
def test_oracle_refuses_bad_params(params: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        OracleAgent(**params)  # type: ignore[arg-type]


@pytest.mark.parametrize("knob", ["rollout=policy", "rollout=search", "levels=2", "path=x.npz"])
def test_the_oracle_keeps_two_bounds(knob: str) -> None:
    """``oracle`` and ``oracle[boneyard=hidden]`` are the bounds; the higher-continuation
    bounds are not its knobs (refused by name before play)."""
    with pytest.raises(ValueError, match=knob.split("=")[0]):
        make_agent(f"oracle[{knob}]")


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
    agents = [
        AgentSpec("mc", {"sims": 24}),
        AgentSpec("oracle"),
        AgentSpec("oracle", {"boneyard": "hidden", "worlds": 4}),
        AgentSpec("planner"),
    ]

    def run(out: Path, workers: int) -> bytes:
        config = TournamentConfig(
            agents=agents,
            deals=2,
            seed=11,
            workers=workers,
            out_dir=out,
            plots=False,
            progress=False,
            lineup=["mc[sims=24]", "oracle", "oracle[boneyard=hidden,worlds=4]", "planner", "planner"],
            game=GameConfig.make(num_players=5),
        )
        run_tournament(config)
        return (out / "results.csv").read_bytes()

    assert run(tmp_path / "w1", 1) == run(tmp_path / "w2", 2)
    assert np.any(np.frombuffer(run(tmp_path / "w1", 1), np.uint8))  # not empty


def test_compiled_mc_on_a_time_budget() -> None:
    pytest.importorskip("numba")
    from agents.mexican_train.mc import MCAgent

    _env, decision = _decision_with_choices(6)
    agent = MCAgent(seed=0, ms=30, engine="compiled")
    action = agent.act(decision)
    assert decision.action_mask[action] == 1
    assert agent.last_samples >= 1 and agent.last_rollouts >= len(agent.last_values)


@pytest.mark.parametrize(
    "name, params",
    [
        ("mc", {"sims": 16}),
        ("oracle", {}),
        ("oracle", {"boneyard": "hidden", "worlds": 4}),
    ],
)
def test_search_agents_pickle_and_play_the_same(name: str, params: dict[str, object]) -> None:
    """Training checkpoints pickle their opponents: the compiled module is not pickled, and
    the copy plays as the original."""
    import pickle

    pytest.importorskip("numba")

    agent = make_agent(name, seed=3, **params)
    _env, decision = _decision_with_choices(7)
    agent.act(decision)  # caches filled
    copy = pickle.loads(pickle.dumps(agent))
    agent.reset(5)
    copy.reset(5)
    assert copy.act(decision) == agent.act(decision)
    assert copy.last_values == agent.last_values
