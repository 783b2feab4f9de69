"""``oracle`` (cheats: perfect information) and the search agents in the tournament harness.

* only agents that declare ``cheats`` get a decision carrying the hidden state;
* the oracle's values are the rollouts of the TRUE state (compiled and pure agree);
  ``rollout=policy`` (the champion's rollouts) reads the true hands too, and with the
  boneyard hidden never the draw order; ``rollout=search`` is the spelled-out search
  over those rollouts at each later choice and never values a move below them;
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
from agents.registry import agent_class, agent_names
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


@pytest.mark.parametrize("rollout", ["chain", "policy", "search"])
def test_hidden_boneyard_oracle_never_reads_the_draw_order(rollout: str) -> None:
    """``boneyard=hidden``: reversing the true boneyard changes nothing it computes (the same
    seed, the same values), where the full oracle's values follow the draws."""
    pytest.importorskip("numba")
    env, decision = _decision_with_choices(7)
    truth = env.unwrapped.state_obj
    assert len(truth.boneyard) > 1

    def values(**params: object) -> dict[int, float]:
        oracle = OracleAgent(seed=5, rollout=rollout, **params)  # type: ignore[arg-type]
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


def test_policy_rollouts_read_the_true_hands() -> None:
    """``rollout=policy`` plays each move out on the true state: its values are the network
    rollouts of that state (one per move, deterministic), and swapping a tile between two
    opponents' hands (the seat's view unchanged) changes them."""
    pytest.importorskip("numba")
    from agents.mexican_train.champion import table_policy
    from agents.mexican_train.value_leaf import ValueLeaves, load_value_net
    from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain
    from mtrain_env.mexican_train.compiled.rollout import scratch

    env, decision = _decision_with_choices(9)
    oracle = OracleAgent(rollout="policy")
    assert oracle.params() == {"engine": "compiled", "rollout": "policy", "path": None}
    oracle.act(decision)
    before = dict(oracle.last_values)
    raw = env.unwrapped
    truth = raw.state_obj
    config = decision.game.config
    moves = [decision.to_move(a) for a in before]
    game = CompiledMexicanTrain(config)
    leaves = ValueLeaves(load_value_net(table_policy(config)), config, depth=None)
    expected = leaves.results_on(
        game.to_compiled(truth)[None, :], game.tables, decision.seat, moves, scratch()
    )
    assert list(before.values()) == pytest.approx(list(expected[0]))
    # swap one tile between two opponents' hands (the seat's view stays the same)
    live = raw._state  # the python backend's live state: what true_state() copies
    seat = decision.seat
    a, b = [q for q in range(config.num_players) if q != seat][:2]
    swaps = [
        (x, y)
        for x in range(live.hands[a].bit_length())
        for y in range(live.hands[b].bit_length())
        if live.hands[a] >> x & 1 and live.hands[b] >> y & 1
    ]
    differs = False
    for x, y in swaps[:20]:
        hands = list(live.hands)
        live.hands[a] = hands[a] ^ (1 << x) ^ (1 << y)
        live.hands[b] = hands[b] ^ (1 << x) ^ (1 << y)
        oracle.act(decision)
        differs = differs or oracle.last_values != before
        live.hands = hands
    assert differs, "the true hands should matter to some swap"
    oracle.act(decision)
    assert oracle.last_values == before  # deterministic, and the swaps were undone


def test_searched_rollouts_improve_on_the_network_and_match_the_spelled_out_search() -> None:
    """``rollout=search``: each move's value is its playout with the seat's later choices
    each the best move by network rollouts, as spelled out here one choice at a time with
    ``results_on``; on the true state (the draws and the others' chain policy known, so a
    deterministic problem) that improved continuation can never do worse than the network
    itself (the policy improvement theorem), so no move's value falls below its
    ``rollout=policy`` value, and some rise."""
    pytest.importorskip("numba")
    from agents.mexican_train.champion import table_policy
    from agents.mexican_train.value_leaf import ValueLeaves, load_value_net
    from mtrain_env.mexican_train.compiled import engine, rollout
    from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain

    risen = 0
    for seed in (9, 12, 21):
        _env, decision = _decision_with_choices(seed)
        searched, network = OracleAgent(rollout="search"), OracleAgent(rollout="policy")
        assert searched.params() == {"engine": "compiled", "rollout": "search", "path": None}
        searched.act(decision)
        network.act(decision)
        assert searched.last_values.keys() == network.last_values.keys()
        for a, value in searched.last_values.items():
            assert value >= network.last_values[a] - 1e-9
            risen += value > network.last_values[a] + 1e-9
        config = decision.game.config
        game = CompiledMexicanTrain(config)
        tb, seat, sc = game.tables, decision.seat, rollout.scratch()
        leaves = ValueLeaves(load_value_net(table_policy(config)), config, depth=None)
        legal = np.empty(engine.MAX_MOVES, np.int64)
        for a, value in searched.last_values.items():
            s = game.to_compiled(decision.true_state())
            engine.apply(s, tb, decision.to_move(a))
            rollout.advance_to_choice(s, tb, seat, leaves.danger, sc)
            while s[engine.S_PHASE] < engine.ROUND_OVER:
                moves = legal[: engine.legal_moves_into(s, tb, legal)].copy()
                best = moves[int(np.argmax(leaves.results_on(s[None, :], tb, seat, list(moves), sc)[0]))]
                engine.apply(s, tb, best)
                rollout.advance_to_choice(s, tb, seat, leaves.danger, sc)
            assert value == pytest.approx(rollout.round_result(s, tb, seat))
    assert risen > 0, "a better continuation should raise some move's value"


def _late_decision(seed: int, tiles: int) -> CheatDecision:
    """The first decision with a choice of a seat holding at most ``tiles`` tiles (the
    table played by ``planner``)."""
    from agents.mexican_train.planner import PlannerAgent

    env = mtrain_env.env(num_players=4)
    env.reset(seed=seed)
    planner = PlannerAgent()
    while True:
        decision = CheatDecision(env, env.agent_selection)
        held = env.unwrapped.state_obj.hands[decision.seat].bit_count()
        if held <= tiles and len(decision.legal_actions) >= 2:
            return decision
        env.step(planner.act(decision))


def _solved_by_hand(decision: CheatDecision, sc: object) -> dict[int, tuple[float, int]]:
    """Every legal action's best result for the seat over every sequence of its later
    moves (no table of positions, no budget), and the most choices of the seat on a line;
    the other seats play ``sc``'s policy, forced moves as they come."""
    from mtrain_env.mexican_train.compiled import engine, rollout
    from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain

    game = CompiledMexicanTrain(decision.game.config)
    tb, seat = game.tables, decision.seat
    legal = np.empty(engine.MAX_MOVES, np.int64)
    nodes = 0

    def played(s: np.ndarray, move: int) -> np.ndarray:
        child = s.copy()
        engine.apply(child, tb, move)
        rollout.advance_to_choice(child, tb, seat, 2, sc)
        return child

    def exact(s: np.ndarray) -> tuple[float, int]:
        nonlocal nodes
        nodes += 1
        assert nodes < 20_000, "the position should be small enough to solve"
        if s[engine.S_PHASE] >= engine.ROUND_OVER:
            return float(rollout.round_result(s, tb, seat)), 0
        moves = legal[: engine.legal_moves_into(s, tb, legal)].copy()
        solved = [exact(played(s, m)) for m in moves]
        return max(v for v, _ in solved), 1 + max(d for _, d in solved)

    root = game.to_compiled(decision.true_state())
    return {a: exact(played(root, decision.to_move(a))) for a in decision.legal_actions}


LATE_SEEDS = (9, 12, 21, 33)


def test_search_levels_rise_to_the_exact_optimum() -> None:
    """``rollout=search,levels=k``: no level values a move below the level under it (each
    is greedy on the one below's values, on a problem with nothing hidden or random left),
    and once ``k`` covers the seat's choices left in the round every move's value is the
    exact optimum, found here by trying every sequence of the seat's moves (the others by
    the chain policy, forced moves as they come). A mutation that stops the nesting (every
    level greedy on the network alone) fails it."""
    pytest.importorskip("numba")
    from mtrain_env.mexican_train.compiled import rollout

    risen = 0
    for seed in LATE_SEEDS:
        decision = _late_decision(seed, tiles=4)
        solved = _solved_by_hand(decision, rollout.scratch())
        deepest = max(d for _, d in solved.values())
        assert deepest >= 3, "a position with several choices left tests the nesting"
        below: dict[int, float] | None = None
        for levels in range(1, deepest + 1):
            oracle = OracleAgent(rollout="search", levels=levels)
            oracle.act(decision)
            if levels > 1:
                assert oracle.params()["levels"] == levels
            for a, value in oracle.last_values.items():
                assert value <= solved[a][0] + 1e-9  # nothing beats the optimum
                if below is not None:
                    assert value >= below[a] - 1e-9
                    risen += value > below[a] + 1e-9
            below = dict(oracle.last_values)
        assert below is not None
        for a, value in below.items():
            assert value == pytest.approx(solved[a][0]), f"seed {seed}, action {a}"
    assert risen > 0, "a deeper search should raise some move's value"


@pytest.mark.parametrize("planner", [False, True])
def test_exact_solver_is_every_sequence_tried(planner: bool) -> None:
    """``exact_results_on`` (a table of positions met twice, a node budget) gives each move
    the best result over every sequence of the seat's later moves, as tried by hand, the
    others playing the chain policy or the planner's own moves; past its budget, None."""
    pytest.importorskip("numba")
    from agents.mexican_train.exact import exact_results_on
    from mtrain_env.mexican_train.compiled import rollout
    from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain

    for seed in LATE_SEEDS:
        decision = _late_decision(seed, tiles=5)
        sc = rollout.scratch(planner=planner)
        solved = _solved_by_hand(decision, sc)
        game = CompiledMexicanTrain(decision.game.config)
        root = game.to_compiled(decision.true_state())
        moves = [decision.to_move(a) for a in decision.legal_actions]
        values = exact_results_on(root, game.tables, decision.seat, moves, sc)
        assert values == pytest.approx([solved[a][0] for a in decision.legal_actions])
        assert exact_results_on(root, game.tables, decision.seat, moves, sc, max_nodes=2) is None
    with pytest.raises(ValueError, match="max_nodes must be an int >= 1"):
        exact_results_on(root, game.tables, decision.seat, moves, sc, max_nodes=0)


def test_exact_gap_writes_each_levels_shortfall(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``agents.tournament.exact_gap``: a row a position with the exact optimum and every
    level's result (never above it; the top level closer than level 0 on the whole), the
    table printed, the plot written; bad input exits 2."""
    pytest.importorskip("numba")
    import csv

    from agents.tournament import exact_gap

    out = tmp_path / "gap"
    assert (
        exact_gap.main(
            ["--games", "1", "--seed", "5", "--tiles", "5", "--levels", "0", "2", "--out", str(out)]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "T=5:" in printed and "oracle[rollout=search]" in printed
    with open(out / "exact_gap.csv") as f:
        rows = list(csv.DictReader(f))
    solved = [r for r in rows if r["solved"] == "True"]
    assert solved, "small positions should be solved"
    for r in solved:
        assert float(r["level0"]) <= float(r["exact"]) + 1e-6
        assert float(r["level2"]) <= float(r["exact"]) + 1e-6
    assert sum(float(r["level2"]) for r in solved) >= sum(float(r["level0"]) for r in solved)
    assert (out / "exact_gap.png").stat().st_size > 0
    for bad in (["--tiles", "0"], ["--levels", "-1"], ["--others", "random"]):
        with pytest.raises(SystemExit) as raised:
            exact_gap.main([*bad, "--out", str(out)])
        assert raised.value.code == 2


@pytest.mark.parametrize(
    "params, message",
    [
        ({"rollout": "greedy"}, "rollout must be one of"),
        ({"levels": 2}, "levels= counts the levels of rollout=search"),
        ({"rollout": "policy", "levels": 2}, "levels= counts the levels of rollout=search"),
        ({"rollout": "search", "levels": 0}, "levels must be an int >= 1"),
        ({"rollout": "search", "levels": True}, "levels must be an int >= 1"),
        ({"path": "x.npz"}, "path= is the network of rollout=policy or rollout=search"),
        ({"rollout": "policy", "engine": "python"}, "runs on the compiled engine"),
        ({"rollout": "search", "engine": "python"}, "runs on the compiled engine"),
        ({"boneyard": "peek"}, "boneyard must be one of"),
        ({"boneyard": "hidden", "worlds": 0}, "worlds must be"),
        ({"worlds": 8}, "it needs boneyard=hidden"),
    ],
)
def test_oracle_refuses_bad_params(params: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        OracleAgent(**params)  # type: ignore[arg-type]


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
        AgentSpec("oracle", {"rollout": "policy"}),
        AgentSpec("oracle", {"rollout": "search"}),
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
            lineup=["mc[sims=24]", "oracle", "oracle[rollout=policy]", "oracle[rollout=search]", "planner"],
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
        ("oracle", {"rollout": "search", "levels": 2}),
    ],
)
def test_search_agents_pickle_and_play_the_same(name: str, params: dict[str, object]) -> None:
    """Training checkpoints pickle their opponents: the compiled module is not pickled, and
    the copy plays as the original."""
    import pickle

    pytest.importorskip("numba")
    from agents.registry import make_agent

    agent = make_agent(name, seed=3, **params)
    _env, decision = _decision_with_choices(7)
    agent.act(decision)  # caches filled
    copy = pickle.loads(pickle.dumps(agent))
    agent.reset(5)
    copy.reset(5)
    assert copy.act(decision) == agent.act(decision)
    assert copy.last_values == agent.last_values
