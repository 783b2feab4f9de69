"""``openspiel_ismcts``: OpenSpiel's ISMCTS bot behind the agents' Decision interface.

It is registered, plays legal moves through the harness's play loop, sees no hidden
information (the leak check of tests/agents/test_agents.py), is deterministic per seed, refuses
bad parameters, and its search beats random play.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("pyspiel")

import mtrain_env
from agents import make_agent
from agents.mexican_train.base import decision_for
from agents.play import play_game
from agents.registry import agent_names
from tests.agents.test_agents import _leak_check

FAST = {"iterations": 20}


def test_registered_with_its_budget_knob() -> None:
    assert "openspiel_ismcts" in agent_names()
    agent = make_agent("openspiel_ismcts", seed=0, iterations=7, rollout="random")
    assert agent.params() == {"iterations": 7, "uct_c": 0.3, "rollout": "random"}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"iterations": 0}, "iterations must be an int >= 1"),
        ({"iterations": 2.5}, "iterations must be an int, got 2.5"),  # the spec check, before the constructor
        ({"uct_c": 0}, "uct_c must be > 0"),
        ({"rollout": "smart"}, "rollout must be one of"),
    ],
)
def test_bad_parameters_raise(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_agent("openspiel_ismcts", **params)


@pytest.mark.parametrize("rollout", ["greedy", "random", "openspiel"])
def test_plays_whole_games_legally(rollout: str) -> None:
    env = mtrain_env.raw_env(num_players=3, max_pips=6, hand_size=5)
    agents = [make_agent("openspiel_ismcts", seed=1, iterations=10, rollout=rollout)]
    agents += [make_agent("random", seed=2), make_agent("greedy")]
    record = play_game(env, agents, seed=4)  # the raw env raises on an illegal action
    assert record.episode_over
    assert sum(record.returns) == pytest.approx(0.0)


def test_sees_no_hidden_information() -> None:
    compared, differing = _leak_check(lambda: make_agent("openspiel_ismcts", seed=3, **FAST))
    assert compared >= 3
    assert differing == 0


def test_same_seed_same_actions() -> None:
    runs = []
    for _ in range(2):
        env = mtrain_env.raw_env(num_players=2, max_pips=6)
        env.reset(seed=11)
        agents = [make_agent("openspiel_ismcts", seed=21 + p, **FAST) for p in range(2)]
        actions = []
        while not all(env.terminations.values()):
            seat = env.unwrapped.agent_name_mapping[env.agent_selection]
            actions.append(agents[seat].act(decision_for(env, env.agent_selection)))
            env.step(actions[-1])
        runs.append(actions)
    assert runs[0] == runs[1]


@pytest.mark.slow
def test_search_beats_random_play() -> None:
    """Seat-swapped pairs of 2-player double-6 games: ISMCTS (40 iterations) against random."""
    totals = []
    for deal in range(12):
        for seat in (0, 1):
            env = mtrain_env.raw_env(num_players=2, max_pips=6)
            agents: list[Any] = [make_agent("random", seed=deal)] * 2
            agents[seat] = make_agent("openspiel_ismcts", seed=deal, iterations=40)
            totals.append(play_game(env, agents, seed=100 + deal).returns[seat])
    mean = float(np.mean(totals))
    se = float(np.std(totals, ddof=1)) / np.sqrt(len(totals))
    assert mean - 2 * se > 0, (mean, se)
