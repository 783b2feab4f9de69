"""``ismcts`` and ``ismcts_puct``: the compiled tree search, its PUCT root, expert iteration.

* the tree: every iteration reaches the root, the root's children are our legal moves,
  visits follow the budget, same seed and ``sims`` -> same tree;
* the search finds a round-winning line (R18, R19) and a strong prior steers the PUCT root;
* bad knobs are refused with a one-line error naming the parameter;
* the agents write the same tournament CSV on 1 and 2 workers;
* expert iteration labels positions with visit distributions, fits the policy to them and
  resumes; the distilled ``ismcts_puct_policy`` plays from the file it writes.
(Leaks, determinism and legality over random games: ``tests/test_agents.py``.)
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mtrain_env
from agents.mexican_train.base import decision_for
from agents.mexican_train.tilenet import NetSpec, build_net, save_selfplay_policy
from agents.registry import make_agent
from agents.tournament import AgentSpec
from mtrain_env.mexican_train import GameConfig
from tests.cli_support import imported_by_refusals
from tests.csv_workers import same_csv_on_one_and_two_workers
from tests.scripted import act, deal_env
from tests.test_agents import FILLER, play

pytest.importorskip("numba")

from agents.mexican_train.ismcts import ISMCTSAgent
from agents.mexican_train.puct import PUCTAgent, PUCTPolicyAgent, softmax_priors


def _busy_decision(seed: int = 5, players: int = 4) -> tuple[mtrain_env.raw_env, object]:
    env = mtrain_env.raw_env(num_players=players)
    env.reset(seed=seed)
    while len(env.legal_actions()) < 4:
        env.step(env.legal_actions()[0])
    return env, decision_for(env, env.agent_selection)


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained 4-player network as a policy file (the ismcts_puct's prior in these tests)."""
    net = build_net(NetSpec.make("tile", GameConfig.make(num_players=4), hidden=16, pair_hidden=8), seed=0)
    return save_selfplay_policy(net, tmp_path_factory.mktemp("policy") / "net.npz")


def test_tree_visits_add_up_and_cover_every_root_move() -> None:
    _env, decision = _busy_decision()
    agent = ISMCTSAgent(seed=0, sims=120)
    stats = agent.search(decision)
    assert sorted(stats) == sorted(int(a) for a in decision.legal_actions)
    assert agent.last_iterations == 120
    assert sum(v for v, _q in stats.values()) == 120  # each iteration goes through one root move
    assert all(v >= 1 for v, _q in stats.values())  # untried root moves are expanded first


def test_same_seed_and_sims_same_tree() -> None:
    _env, decision = _busy_decision(seed=9)
    runs = [ISMCTSAgent(seed=4, sims=80).search(decision) for _ in range(2)]
    assert runs[0] == runs[1]
    other = ISMCTSAgent(seed=5, sims=80).search(decision)
    assert other != runs[0]  # another seed, other worlds


def test_ismcts_goes_out_when_it_can_r18_r19() -> None:
    """Own end 2, hand 2-2 and 2-5: 2-2 then 2-5 goes out this turn (R18), the best result
    there is (R19); the tree finds it and gives it the most visits."""
    env = deal_env([["6-1", "1-2", "2-2", "2-5"], ["6-3", "3-4", *FILLER]], reward="penalty")
    act(env, "1-6 @0", "1-2 @0", "PASS", "3-6 @1", "PASS")
    agent = ISMCTSAgent(seed=0, sims=60)
    assert play(env, agent) == "2-2 @0"
    best = max(agent.last_visits.values())
    assert best[1] > 0  # going out beats the table's mean
    assert play(env, agent) == "2-5 @0"
    assert all(env.terminations.values())
    assert env.state_obj.round_scores[-1][0] == 0


def test_puct_root_follows_a_strong_prior(policy_file: Path) -> None:
    """With a huge prior weight the visits go where the prior points."""
    _env, decision = _busy_decision(seed=7)
    legal = [int(a) for a in decision.legal_actions]

    class Pointed(PUCTAgent):
        def root_priors(self, decision: object) -> np.ndarray:
            p = np.full(len(legal), 0.01)
            p[-1] = 1.0
            return p / p.sum()

    agent = Pointed(seed=0, sims=100, c_puct=1e6, path=policy_file)
    stats = agent.search(decision)
    assert stats[legal[-1]][0] >= 90
    assert agent.act(decision) == legal[-1]


def test_puct_priors_are_the_networks_policy(policy_file: Path) -> None:
    _env, decision = _busy_decision(seed=3)
    agent = PUCTAgent(seed=0, sims=20, path=policy_file)
    priors = agent.root_priors(decision)
    assert priors.shape == (len(decision.legal_actions),) and abs(priors.sum() - 1) < 1e-9
    logits = agent._net.policy.masked_logits(decision.observation, decision.action_mask)
    assert np.allclose(priors, softmax_priors(logits[np.asarray(decision.legal_actions)], 1.0))
    flat = PUCTAgent(seed=0, sims=20, path=policy_file, temperature=1e6).root_priors(decision)
    assert np.allclose(flat, 1.0 / len(flat), atol=1e-4)  # a high temperature flattens it


def test_time_budget_runs_at_least_one_chunk() -> None:
    _env, decision = _busy_decision()
    agent = ISMCTSAgent(seed=0, ms=5)
    action = agent.act(decision)
    assert decision.action_mask[action] == 1
    assert agent.last_iterations >= 1


@pytest.mark.parametrize(
    ("name", "params", "match"),
    [
        ("ismcts", {"sims": 0}, "sims"),
        ("ismcts", {"ms": 0}, "ms"),
        ("ismcts", {"sims": 10, "ms": 10}, "sims or ms"),
        ("ismcts", {"c": -1}, "c must"),
        ("ismcts_puct", {"c_puct": 0}, "c_puct"),
        ("ismcts_puct", {"temperature": 0}, "temperature"),
        ("ismcts", {"leaf": "value"}, "leaf must be one of"),
        ("ismcts", {"leaf": "policy"}, 'needs opponents="chain"'),
        ("ismcts", {"path": "net.npz"}, 'path= is the network of leaf="policy"'),
        ("ismcts", {"opponents": "chain", "leaf": "policy", "batch": 0}, "batch must be"),
        ("ismcts", {"opponents": "chain", "leaf": "policy", "batch": 5000}, "batch must be"),
    ],
)
def test_bad_knobs_are_refused(name: str, params: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make_agent(name, seed=0, **params)


def test_search_agents_same_csv_on_one_and_two_workers(tmp_path: Path, policy_file: Path) -> None:
    puct = AgentSpec("ismcts_puct", {"sims": 12, "path": str(policy_file)})
    agents = [AgentSpec("ismcts", {"sims": 12}), puct, AgentSpec("planner")]
    label = puct.default_label()

    one = same_csv_on_one_and_two_workers(tmp_path, agents, ["ismcts[sims=12]", label, "planner", "planner"])
    assert b"ismcts" in one and b"ismcts_puct" in one


def test_expert_iteration_labels_trains_and_resumes(tmp_path: Path) -> None:
    from training import expert_iteration

    argv = ["--out", str(tmp_path), "--iterations", "2", "--games", "2", "--sims", "8", "--epochs", "3"]
    argv += ["--hidden", "16"]
    assert expert_iteration.main(argv) == 0
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [0, 1]
    assert [r["searcher"] for r in rows] == ["ismcts", "ismcts_puct"]
    with np.load(tmp_path / "labels_0.npz") as f:
        target, mask = f["target"], f["mask"]
    assert np.allclose(target.sum(1), 1.0) and not np.any(target[~mask])  # visits of legal moves only
    assert expert_iteration.main(argv) == 0  # resumed: nothing relabelled
    assert len((tmp_path / "metrics.jsonl").read_text().splitlines()) == 2
    _env, decision = _busy_decision()
    fast = PUCTPolicyAgent(path=tmp_path / "iter_1.npz")
    assert decision.action_mask[fast.act(decision)] == 1


def test_expert_iteration_refuses_bad_options_before_torch_is_imported(tmp_path: Path) -> None:
    """A typo costs a fraction of a second: options, the table and the output directory are
    checked before torch loads, and nothing is written."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    out = str(tmp_path / "run")
    cases = [["--out", out, "--players", "9"], ["--out", out, "--sims", "0"], ["--out", f"{blocker}/x"]]
    cases += [["--out", out, "--opponents", "nobody"], ["--out", out, "--c", "-1"]]
    module = "training.expert_iteration"
    assert imported_by_refusals(None, cases, ["torch", "numba"], tmp_path, module=module) is None
    assert sorted(tmp_path.iterdir()) == [blocker]


def test_policy_training_fits_the_labels() -> None:
    """The cross-entropy to a fixed set of visit distributions falls with training."""
    from training.expert_iteration import label_games
    from training.policy_fit import train_policy

    data = label_games(ISMCTSAgent(seed=0, sims=8), games=3, seed=40, players=4, progress=False)
    net = build_net(NetSpec.make("tile", GameConfig.make(num_players=4), hidden=32, pair_hidden=16), seed=1)
    before = train_policy(net, data, epochs=1, lr=1e-9, batch=64, seed=0)
    after = train_policy(net, data, epochs=30, lr=3e-3, batch=64, seed=0)
    floor = before["label_entropy"]
    assert after["label_entropy"] == floor
    assert after["train_xent"] - floor < 0.7 * (before["train_xent"] - floor)  # the KL shrinks


def test_puct_sees_no_hidden_information(tmp_path: Path) -> None:
    """The leak check of ``tests/test_agents.py`` (two deals differing only in what seat 0
    cannot see: same views, same actions) on ismcts_puct, its network fitted to that table."""
    from tests.test_agents import _leak_check

    config = GameConfig.make(num_players=3, max_pips=6)
    net = build_net(NetSpec.make("tile", config, hidden=16, pair_hidden=8), seed=2)
    path = save_selfplay_policy(net, tmp_path / "net3.npz")
    compared, differing = _leak_check(lambda: PUCTAgent(seed=3, sims=12, path=path))
    assert compared >= 3
    assert differing == 0


def test_curves_draw_one_line_per_agent_and_non_budget_knobs() -> None:
    from agents.tournament.curves import family

    assert family("mc[sims=200]") == ("mc", "sims=200")
    assert family("mc[ms=100]") == ("mc", "ms=100")
    assert family("ismcts[c=30,opponents=chain,sims=200]") == ("ismcts[c=30,opponents=chain]", "sims=200")
    assert family("oracle") == ("oracle", "")


@pytest.mark.parametrize(
    ("module", "argv", "says"),
    [
        (
            "curves",
            ["--out", "{tmp}/c", "--points", "mc[sims=abc]"],
            "--points: mc: sims must be an int or None",
        ),
        (  # the baseline against itself: its tournament had two agents under one label
            "curves",
            ["--out", "{tmp}/c", "--points", "mc[sims=8]", "planner"],
            "--points: planner is the baseline every point is measured against",
        ),
        (
            "curves",
            ["--out", "{tmp}/c", "--points", "ppo[path=nowhere.npz]"],
            "no policy file at nowhere.npz",
        ),
        ("bench_search", ["--agents", "mc[nosuch=1]"], "--agents: mc has no parameter 'nosuch'"),
        ("bench_search", ["--agents", "ismcts_puct", "--players", "3"], "trained for another table"),
    ],
)
def test_the_search_benchmarks_refuse_a_bad_agent_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], module: str, argv: list[str], says: str
) -> None:
    """``curves`` and ``bench_search`` check their agents as ``mtrain bench`` does
    (``harness.checked_agent``): usage error, exit 2, nothing written."""
    import importlib

    main = importlib.import_module(f"agents.tournament.{module}").main
    with pytest.raises(SystemExit) as exit_info:
        main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []


def _leaf_tree(decision: object, sims: int, leaf_values: object, batch: int) -> object:
    from mtrain_env.mexican_train.compiled import ismcts, rollout
    from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain

    cgame = CompiledMexicanTrain(decision.game.config)
    det = rollout.Determinizer(cgame, decision.view, np.random.default_rng([11, 0, 2]))
    moves = sorted(decision.to_move(a) for a in decision.legal_actions)
    tree = ismcts.Tree(det, 11, sims, moves, branch_opponents=False, leaf_values=leaf_values, batch=batch)
    tree.grow(sims)
    return tree


@pytest.mark.parametrize("batch", [1, 7, 64])
def test_leaf_batches_leave_no_virtual_visit_behind(batch: int) -> None:
    """The leaves' values are what the tree records, whatever the batch: with every leaf worth
    5 pips each node's mean is exactly 5 (a virtual visit's value not taken back would move
    it), and with a value per leaf the root moves' totals add up to the values handed back."""
    _env, decision = _busy_decision(seed=6)
    tree = _leaf_tree(decision, 100, lambda states: np.full(len(states), 5.0), batch)
    stats = tree.root_stats()
    assert tree.iterations == 100
    assert sum(v for v, _q in stats.values()) == 100
    assert len(stats) == len(decision.legal_actions)  # untried root moves are expanded first
    used = int(tree.stats[0])  # nodes
    assert np.allclose(tree.tree_f[1:used, 2], 5.0 * tree.tree_f[1:used, 0])
    handed: list[float] = []

    def counted(states: np.ndarray) -> np.ndarray:
        assert states.ndim == 2 and len(states) <= batch
        values = (states.sum(axis=1) % 17).astype(np.float64)  # a value per world and leaf
        handed.extend(values)
        return values

    stats = _leaf_tree(decision, 100, counted, batch).root_stats()
    assert len(handed) == 100
    assert sum(v * q for v, q in stats.values()) == pytest.approx(sum(handed))


def test_policy_leaves_are_deterministic_legal_and_follow_sims(policy_file: Path) -> None:
    """``leaf="policy"``: the network plays the seat's later choices under the tree; the same
    seed and sims give the same visits, another batch size another (legal) search."""
    _env, decision = _busy_decision(seed=9)
    make = lambda batch=8: ISMCTSAgent(  # noqa: E731
        seed=4, sims=40, c=30, opponents="chain", leaf="policy", path=str(policy_file), batch=batch
    )
    runs = [make().search(decision) for _ in range(2)]
    assert runs[0] == runs[1]
    assert sum(v for v, _q in runs[0].values()) == 40
    agent = make(batch=3)
    assert decision.action_mask[agent.act(decision)] == 1
    assert agent.last_iterations == 40
    assert make().params()["leaf"] == "policy"


def test_policy_leaves_see_no_hidden_information(tmp_path: Path) -> None:
    """The leak check of ``tests/test_agents.py`` on ``ismcts[leaf=policy]`` with a network
    of that test's table (3 players, double-6)."""
    from tests.test_agents import _leak_check

    config = GameConfig.make(num_players=3, max_pips=6)
    net = build_net(NetSpec.make("graph", config, hidden=16, pair_hidden=8), seed=2)
    path = save_selfplay_policy(net, tmp_path / "net3.npz")
    agent = lambda: ISMCTSAgent(seed=3, sims=12, opponents="chain", leaf="policy", path=str(path))  # noqa: E731
    compared, differing = _leak_check(agent)
    assert compared >= 3
    assert differing == 0


def test_policy_leaves_same_csv_on_one_and_two_workers(tmp_path: Path, policy_file: Path) -> None:
    spec = AgentSpec("ismcts", {"sims": 12, "opponents": "chain", "leaf": "policy", "path": str(policy_file)})
    label = spec.default_label()
    one = same_csv_on_one_and_two_workers(tmp_path, [spec, AgentSpec("planner")], [label, *["planner"] * 3])
    assert b"leaf=policy" in one


def test_policy_leaves_refuse_a_table_without_its_network_up_front(policy_file: Path) -> None:
    """``check_game`` (asked by the harness before the first deal) refuses a table the
    champion ships no network for, and a network trained for another table."""
    small = GameConfig.make(num_players=4, max_pips=6)
    with pytest.raises(ValueError, match="champion's networks"):
        ISMCTSAgent(seed=0, opponents="chain", leaf="policy").check_game(small)
    with pytest.raises(ValueError, match="trained for another table"):
        ISMCTSAgent(seed=0, opponents="chain", leaf="policy", path=str(policy_file)).check_game(small)
    ISMCTSAgent(seed=0, opponents="chain", leaf="policy").check_game(GameConfig.make(num_players=4))
