"""``oracle`` (cheats: perfect information) and the search agents in the tournament harness.

* only agents that declare ``cheats`` get a decision carrying the hidden state;
* the oracle's values are the rollouts of the TRUE state (compiled and pure agree); with
  the boneyard hidden it never reads the draw order;
* search agents on a ``sims``/``rollouts`` budget write the same tournament CSV on 1 and 2
  workers.
"""

from __future__ import annotations

import json
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


def test_bench_search_prints_each_agent_against_the_first(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("numba")
    from agents.tournament import bench_search

    assert (
        bench_search.main(["--games", "1", "--agents", "mc[sims=8,engine=python]", "mc[sims=8]", "oracle"])
        == 0
    )
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith(("mc", "oracle"))]
    assert [r[0] for r in rows] == ["mc[engine=python,sims=8]", "mc[sims=8]", "oracle"]
    assert rows[0][-1] == "1.0x" and all(float(r[1]) > 0 for r in rows)


def test_bench_search_counts_the_rollouts_a_budget_spends(capsys: pytest.CaptureFixture[str]) -> None:
    """``--rollouts``: the mean ``last_rollouts`` a decision, one more column; ``extend=``
    spends at least the plain search's, and an agent without rollouts shows 0."""
    pytest.importorskip("numba")
    from agents.tournament import bench_search

    agents = ["mc[sims=16]", "mc[extend=64,sims=16]", "planner"]
    assert bench_search.main(["--games", "2", "--seed", "3", "--rollouts", "--agents", *agents]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[2:]}
    assert set(rows) == set(agents) and all(len(r) == 5 for r in rows.values())
    plain, extended = float(rows["mc[sims=16]"][-1]), float(rows["mc[extend=64,sims=16]"][-1])
    assert 2 <= plain <= 16 and extended > plain  # some of these decisions are close
    assert float(rows["planner"][-1]) == 0.0


def test_curves_writes_the_figures_and_the_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("numba")
    from agents.tournament import curves

    assert curves.main(["--out", str(tmp_path), "--deals", "1", "--points", "mc[sims=4]", "oracle"]) == 0
    lines = (tmp_path / "curves.csv").read_text().splitlines()
    assert lines[0].split(",") == list(curves.FIELDS)
    assert [line.split(",")[0] for line in lines[1:]] == ["mc[sims=4]", "oracle"]
    assert lines[2].split(",")[-1] == "True"  # the oracle is marked as a cheat
    assert (tmp_path / "curves.png").stat().st_size > 1000
    with pytest.raises(SystemExit) as err:
        curves.main(["--out", str(tmp_path), "--points", "nosuchagent"])
    assert err.value.code == 2
    assert "--points" in capsys.readouterr().err


def test_curves_replay_a_point_whose_summary_is_damaged(tmp_path: Path) -> None:
    """A point's own ``summary.json`` that is not JSON is not read as the point: the point is
    played again into its directory (resuming its results), and gives the same row."""
    pytest.importorskip("numba")
    from agents.tournament import curves

    argv = ["--out", str(tmp_path), "--deals", "2", "--seed", "5", "--points", "mc[sims=4]"]
    assert curves.main(argv) == 0
    row = (tmp_path / "curves.csv").read_text().splitlines()[1]
    summary = tmp_path / "mc[sims=4]" / "summary.json"
    gain = curves.FIELDS.index("gain")
    for damaged in (b'{"config": ', b"\xff{}", b"[" * 100_000, b"[1, 2]"):
        summary.write_bytes(damaged)
        assert curves.main(argv) == 0
        assert json.loads(summary.read_text())["config"]["seed"] == 5
        again = (tmp_path / "curves.csv").read_text().splitlines()[1]
        assert again.split(",")[gain:] == row.split(",")[gain:]


def test_curves_read_a_point_from_a_tournament_played_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--run LABEL=DIR``: the point is that run's, nothing is played into ``--out``; a run
    of other deals, or one that does not seat the label, exits 2."""
    pytest.importorskip("numba")
    from agents.tournament import curves

    played = tmp_path / "played"
    assert curves.main(["--out", str(played), "--deals", "2", "--seed", "5", "--points", "mc[sims=4]"]) == 0
    elsewhere = played / "mc[sims=4]"
    out = tmp_path / "out"
    argv = ["--out", str(out), "--deals", "2", "--seed", "5", "--points", "mc[sims=4]"]
    assert curves.main([*argv, "--run", f"mc[sims=4]={elsewhere}"]) == 0
    assert not (out / "mc[sims=4]").exists()  # read, not played
    first, second = ((d / "curves.csv").read_text().splitlines()[1].split(",") for d in (played, out))
    gain = curves.FIELDS.index("gain")
    assert first[gain] == second[gain] and first[gain + 1 :] == second[gain + 1 :]
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "summary.json").write_bytes(b"\xff{}")
    capsys.readouterr()
    for bad, message in [
        (["--seed", "6"], "played with seed 5"),
        (
            ["--points", "mc[sims=8]", "--run", f"mc[sims=8]={elsewhere}"],
            "a point is mc[sims=8] + 3 x planner",
        ),
        (["--run", f"mc[sims=2]={elsewhere}"], "is not one of the points"),
        (["--run", f"mc[sims=4]={tmp_path}"], "no summary.json"),
        (["--run", f"mc[sims=4]={damaged}"], "summary.json is not a readable JSON object (not UTF-8 text"),
    ]:
        extra = [] if "--run" in bad else ["--run", f"mc[sims=4]={elsewhere}"]
        with pytest.raises(SystemExit) as err:
            curves.main([*argv, *extra, *bad])
        assert err.value.code == 2 and message in capsys.readouterr().err


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
