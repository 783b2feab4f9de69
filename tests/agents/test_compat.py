"""What earlier versions saved still loads (run state after the layout change) or plays the same
(the MaskablePPO reference policy, converted from a pickle to a policy file)."""

from __future__ import annotations

import hashlib
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

import mtrain_env
from agents import decision_for, make_agent
from agents.mexican_train import pickles
from agents.mexican_train.ppo import MASKABLE_PPO_POLICY, REFERENCE_POLICY, PPOAgent
from agents.mexican_train.selfplay_file import read_selfplay_file


def _as_old_layout(data: bytes) -> bytes:
    """A protocol-0 pickle rewritten to name the module paths of the earlier layout."""
    text = data.decode("latin-1")
    for old, new in sorted(pickles.RENAMED_MODULES.items(), key=lambda kv: -len(kv[1])):
        text = text.replace(f"c{new}\n", f"c{old}\n")
    return text.encode("latin-1")


def test_run_state_pickled_with_the_old_module_paths_loads() -> None:
    """Checkpointed opponents (agents, configs) named by their old module paths are read
    back by :mod:`agents.mexican_train.pickles`; plain pickle cannot, which shows the paths are old."""
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


def test_an_mc_pickled_when_its_rollout_policies_lived_in_mc_loads() -> None:
    """``ChainPolicy`` moved from :mod:`agents.mexican_train.mc` to
    :mod:`agents.mexican_train.rollout_policies`; an ``mc`` checkpointed before (its policy
    memo filled by a decision) names the old path and still loads and plays the same."""
    env = mtrain_env.raw_env(num_players=3)
    env.reset(seed=2)
    agent = make_agent("mc", seed=5, rollouts=8, engine="python")
    agent.act(decision_for(env, env.agent_selection))
    new = b"cagents.mexican_train.rollout_policies\nChainPolicy\n"
    data = pickle.dumps(agent, protocol=0)
    assert new in data
    old = data.replace(new, b"cagents.mexican_train.mc\nChainPolicy\n")
    loaded = pickles.loads(old)
    assert type(next(iter(loaded._policies.values()))).__module__ == "agents.mexican_train.rollout_policies"
    loaded.reset(9)
    agent.reset(9)
    d = decision_for(env, env.agent_selection)
    assert loaded.act(d) == agent.act(d)


def test_the_shipped_reference_policy_is_a_selfplay_graph_network() -> None:
    """The reference policy comes from self-play on the raw observation (no planner features)."""
    spec, _arrays = read_selfplay_file(REFERENCE_POLICY)
    assert spec.net == "graph"
    game = dict(spec.game)
    assert (game["num_players"], game["max_pips"]) == (4, 12)
    assert REFERENCE_POLICY.stat().st_size < 3_000_000


@pytest.mark.parametrize("path", [REFERENCE_POLICY, MASKABLE_PPO_POLICY])
def test_the_shipped_policies_load_and_play_legally(path: Path) -> None:
    """Both shipped policies are policy files (no pickle) and load through the ppo agent."""
    assert path.is_file() and path.suffix == ".npz"
    assert path.stat().st_size < 3_000_000
    with zipfile.ZipFile(path) as zf:
        assert not any(name.endswith((".pkl", ".pth")) for name in zf.namelist())
    agent = PPOAgent(path=path)
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
    if path == MASKABLE_PPO_POLICY:
        assert getattr(agent.policy, "features", None) == "planner"


#: the pickled MaskablePPO reference policy (``reference.pt``, before it became a policy file) chose these
#: actions in the games of the test below: the sha256 of their comma-joined ids
PICKLED_REFERENCE_CHOICES = (293, "b3aaaad7c58eb43a1d3703918f3c76f74371246ffba0bb450221f308e9ef9591")


def test_the_converted_maskable_ppo_policy_chooses_as_the_pickled_one_did() -> None:
    """Every seat's decision in four seeded games (the policy and planner alternating seats)."""
    agent = PPOAgent(path=MASKABLE_PPO_POLICY)
    actions = []
    for seed in range(4):
        env = mtrain_env.raw_env(num_players=4, max_pips=12)
        env.reset(seed=seed)
        planner = make_agent("planner", seed=seed)
        while not all(env.terminations.values()):
            d = decision_for(env, env.agent_selection)
            action = agent.act(d)
            actions.append(action)
            env.step(action if d.seat % 2 == 0 else planner.act(d))
    digest = hashlib.sha256(",".join(map(str, actions)).encode()).hexdigest()
    assert (len(actions), digest) == PICKLED_REFERENCE_CHOICES


def test_models_naming_the_old_policy_class_path_still_resolve() -> None:
    """Model archives pickle their policy class as ``training.policy.GuardedMaskablePolicy``:
    the class moved to ``agents.policy_net`` and that path still names it."""
    from agents.policy_net import GuardedMaskablePolicy
    from training.policy import GuardedMaskablePolicy as OldPathPolicy

    assert OldPathPolicy is GuardedMaskablePolicy
