"""What earlier versions saved still loads after the layout change: policies and run state."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import mtrain_env
from agents import decision_for, make_agent
from agents.mexican_train.ppo import REFERENCE_POLICY, PPOAgent
from training import pickles


def _as_old_layout(data: bytes) -> bytes:
    """A protocol-0 pickle rewritten to name the module paths of the earlier layout."""
    text = data.decode("latin-1")
    for old, new in sorted(pickles.RENAMED_MODULES.items(), key=lambda kv: -len(kv[1])):
        text = text.replace(f"c{new}\n", f"c{old}\n")
    return text.encode("latin-1")


def test_run_state_pickled_with_the_old_module_paths_loads() -> None:
    """Checkpointed opponents (agents, configs) named by their old module paths are read
    back by :mod:`training.pickles`; plain pickle cannot, which shows the paths are old."""
    env = mtrain_env.raw_env(num_players=3)
    opponents = {1: make_agent("planner", seed=4), 2: make_agent("mc", seed=5, rollouts=8)}
    old = _as_old_layout(pickle.dumps((opponents, env.config), protocol=0))
    assert b"cagents.planner\n" in old and b"cmtrain_env.core.config\n" in old
    with pytest.raises(ModuleNotFoundError):
        pickle.loads(old)
    loaded, config = pickles.loads(old)
    assert config == env.config
    env.reset(seed=2)
    for seat, agent in loaded.items():
        fresh = opponents[seat]
        agent.reset(9)
        fresh.reset(9)
        d = decision_for(env, env.agent_selection)
        assert agent.act(d) == fresh.act(d)


def test_the_shipped_reference_policy_loads_and_plays_legally() -> None:
    """The reference policy (saved before the layout change) loads through the ppo agent."""
    assert REFERENCE_POLICY.is_file()
    agent = PPOAgent(path=REFERENCE_POLICY)
    env = mtrain_env.raw_env(num_players=4, max_pips=12)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        if all(env.terminations.values()):
            break
        d = decision_for(env, env.agent_selection)
        action = agent.act(d) if env.agent_selection == "player_0" else int(rng.choice(d.legal_actions))
        assert d.action_mask[action] == 1
        env.step(action)
    assert getattr(agent.policy, "features", None) == "planner"


def test_models_naming_the_old_policy_class_path_still_resolve() -> None:
    """Model archives pickle their policy class as ``training.policy.GuardedMaskablePolicy``:
    the class moved to ``agents.policy_net`` and that path still names it."""
    from agents.policy_net import GuardedMaskablePolicy
    from training.policy import GuardedMaskablePolicy as OldPathPolicy

    assert OldPathPolicy is GuardedMaskablePolicy
