"""``ismcts``: the compiled tree search (chain opponents, ``c=30`` by default).

* the tree: every iteration reaches the root, the root's children are our legal moves,
  visits follow the budget, same seed and ``sims`` -> same tree;
* the search finds a round-winning line (R18, R19);
* bad knobs are refused with a one-line error naming the parameter;
* the agent writes the same tournament CSV on 1 and 2 workers.
(Leaks, determinism and legality over random games: ``tests/agents/test_agents.py``.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

import mtrain_env
from agents.mexican_train.base import decision_for
from agents.registry import make_agent
from agents.tournament import AgentSpec
from tests.agents.test_agents import FILLER, play
from tests.csv_workers import same_csv_on_one_and_two_workers
from tests.scripted import act, deal_env

pytest.importorskip("numba")

from agents.mexican_train.ismcts import DEFAULT_C, ISMCTSAgent


def _busy_decision(seed: int = 5, players: int = 4) -> tuple[mtrain_env.raw_env, object]:
    env = mtrain_env.raw_env(num_players=players)
    env.reset(seed=seed)
    while len(env.legal_actions()) < 4:
        env.step(env.legal_actions()[0])
    return env, decision_for(env, env.agent_selection)


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
        ("ismcts", {"opponents": "tree"}, "opponents"),
        ("ismcts", {"leaf": "policy"}, "leaf"),
        ("ismcts", {"batch": 8}, "batch"),
        ("ismcts", {"path": "net.npz"}, "path"),
    ],
)
def test_bad_knobs_are_refused(name: str, params: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make_agent(name, seed=0, **params)


def test_the_default_is_the_strongest_measured_setting() -> None:
    """Chain opponents in the tree and ``c=30`` are the defaults; the knobs of the variants
    measured weaker (branching opponents, network leaves) are not the agent's."""
    assert DEFAULT_C == 30.0
    assert ISMCTSAgent().params() == {"sims": 200, "ms": None, "c": 30.0}
    with pytest.raises(ValueError, match="opponents"):
        make_agent("ismcts[opponents=chain]")


def test_search_agents_same_csv_on_one_and_two_workers(tmp_path: Path) -> None:
    agents = [
        AgentSpec("ismcts", {"sims": 12}),
        AgentSpec("ismcts", {"sims": 12, "c": 10.0}),
        AgentSpec("planner"),
    ]
    labels = ["ismcts[sims=12]", agents[1].default_label(), "planner", "planner"]
    one = same_csv_on_one_and_two_workers(tmp_path, agents, labels)
    assert b"ismcts" in one and b"c=10" in one
