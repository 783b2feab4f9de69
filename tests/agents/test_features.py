"""The learner's feature sets (agents/mexican_train/features.py): content, leak-freedom, and wiring."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import agents
import mtrain_env
from agents.mexican_train.chains import ChainSolver
from agents.mexican_train.features import FeatureEncoder, feature_size
from training.single_agent import SingleAgentEnv


def _play_to_normal_phase(env: object, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(12):
        env.step(int(rng.choice(env.legal_actions())))  # type: ignore[attr-defined]


def test_planner_features_are_the_observation_plus_planner_choice_plus_chain() -> None:
    env = mtrain_env.raw_env()
    env.reset(seed=4)
    _play_to_normal_phase(env, 4)
    agent_id = env.agent_selection
    decision = agents.decision_for(env, agent_id)
    x = FeatureEncoder("planner")(decision)
    config = env.config
    base = env.layout.size
    assert x.shape == (feature_size("planner", config, base),)
    np.testing.assert_array_equal(x[:base], env.observe(agent_id)["observation"])
    choice = x[base : base + config.num_actions]
    planner_action = agents.make_agent("planner").act(agents.decision_for(env, agent_id))
    assert np.flatnonzero(choice).tolist() == [planner_action]
    chain = x[base + config.num_actions :]
    view = decision.view
    expected = ChainSolver(config.tiles).longest(view.ends[view.seat], view.hand)
    assert sorted(np.flatnonzero(chain).tolist()) == sorted(expected)
    # the chain is made of the seat's own tiles only
    assert all(view.hand >> int(t) & 1 for t in np.flatnonzero(chain))


def test_planner_features_are_zero_advice_off_turn() -> None:
    env = mtrain_env.raw_env()
    env.reset(seed=1)
    other = next(a for a in env.agents if a != env.agent_selection)
    x = FeatureEncoder("planner")(agents.decision_for(env, other))
    base = env.layout.size
    assert not x[base : base + env.config.num_actions].any()


def test_unknown_feature_set_is_refused() -> None:
    with pytest.raises(ValueError, match="features must be one of"):
        FeatureEncoder("oracle")


def test_single_agent_env_with_planner_features_passes_the_checker() -> None:
    env = SingleAgentEnv(opponents=["random"], features="planner")
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape
    assert env.observation_space.contains(obs)
