"""Agents from Python objects: any policy a user holds plays in the harness and the evaluation.

:func:`from_policy` makes an agent of

* a callable ``policy(observation, mask) -> action`` (the seat's float32 observation vector
  and its int8 legal-action mask, exactly what the Gymnasium env's learner sees);
* an in-memory stable-baselines3 / sb3-contrib model (MaskablePPO, PPO, A2C, DQN, ...): its
  network's action scores (logits, or Q-values for DQN) with the illegal actions masked, the
  highest kept: MaskablePPO's ``predict(obs, deterministic=True, action_masks=mask)``;
* a torch module mapping a batch of observations to action logits.

The agent sees what the seat may know and nothing else: it is called with the observation
and the mask only. Ties between equal scores go to the lowest action id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from agents.base import BaseAgent, SeatDecision

__all__ = ["PolicyAgent", "from_policy"]

#: what :func:`from_policy` calls: ``(observation, mask) -> action``
Policy = Callable[[np.ndarray, np.ndarray], Any]


class PolicyAgent(BaseAgent[SeatDecision]):
    """An agent of a function of the seat's observation and mask (see :func:`from_policy`).

    Args:
        policy: ``policy(observation, mask) -> action``.
        name: the agent's name in tables and files.
        seed: unused by the policy (the harness seeds every agent alike).
    """

    def __init__(self, policy: Policy, name: str = "policy", seed: int | None = None) -> None:
        super().__init__(seed)
        if not callable(policy):
            raise ValueError(f"a policy must be callable as policy(observation, mask), got {policy!r}")
        if not isinstance(name, str) or not name.strip() or any(c in name for c in "[],"):
            raise ValueError(f"an agent's name must be a word without brackets or commas, got {name!r}")
        self.policy = policy
        self.name = name

    def act(self, decision: SeatDecision) -> int:
        action = self.policy(decision.observation, decision.action_mask)
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            action = action.reshape(())[()]
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"{self.name}: the policy must return an action id (an int), got {action!r}")
        return int(action)

    def params(self) -> dict[str, Any]:
        return {"policy": _describe(self.policy)}


def from_policy(policy: Any, name: str | None = None) -> BaseAgent[Any]:
    """An agent of ``policy``: a callable ``(observation, mask) -> action``, an SB3 model, a
    torch module returning logits, or an agent (returned as it is); labelled ``name``
    (default: the callable's or the model class's name)."""
    if isinstance(policy, BaseAgent):
        return policy
    if _is_sb3_model(policy):
        return PolicyAgent(_sb3_policy(policy), name or type(policy).__name__.lower())
    if _is_torch_module(policy):
        return PolicyAgent(_module_policy(policy), name or type(policy).__name__.lower())
    if callable(policy):
        return PolicyAgent(policy, name or str(getattr(policy, "__name__", type(policy).__name__)))
    raise ValueError(
        "from_policy takes a callable (observation, mask) -> action, a stable-baselines3 model, "
        f"a torch module returning logits or an agent; got {type(policy).__name__}"
    )


def masked_argmax(scores: np.ndarray, mask: np.ndarray) -> int:
    """The legal action with the highest score (the lowest id among equals)."""
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    if scores.shape != mask.shape:
        raise ValueError(f"the policy scored {scores.size} actions; the action space has {mask.size}")
    return int(np.where(mask.astype(bool), scores, -np.inf).argmax())


class _ScoresPolicy:
    """``(observation, mask) -> action`` of a function giving the action scores of one
    observation (picklable when that function's owner is)."""

    def __init__(self, owner: Any, kind: str) -> None:
        self.owner = owner
        self.kind = kind

    def __call__(self, observation: np.ndarray, mask: np.ndarray) -> int:
        import torch as th

        with th.no_grad():
            if self.kind == "module":
                scores = self.owner(th.as_tensor(observation, dtype=th.float32)[None])
            else:
                policy = self.owner.policy
                batch, _ = policy.obs_to_tensor(observation)
                if hasattr(policy, "q_net"):  # DQN and its kin: Q-values
                    scores = policy.q_net(batch)
                else:  # actor-critic policies: the action distribution's logits
                    scores = policy.get_distribution(batch).distribution.logits
        return masked_argmax(scores.detach().cpu().numpy(), mask)


def _sb3_policy(model: Any) -> Policy:
    return _ScoresPolicy(model, "sb3")


def _module_policy(module: Any) -> Policy:
    return _ScoresPolicy(module, "module")


def _is_sb3_model(x: Any) -> bool:
    return any(c.__module__.startswith("stable_baselines3.") for c in type(x).__mro__) and hasattr(
        x, "policy"
    )


def _is_torch_module(x: Any) -> bool:
    return any(
        f"{c.__module__}.{c.__qualname__}" == "torch.nn.modules.module.Module" for c in type(x).__mro__
    )


def _describe(policy: Any) -> str:
    """A JSON name of a policy for the run's record: its kind and class or function."""
    if isinstance(policy, _ScoresPolicy):
        return f"{policy.kind}:{type(policy.owner).__module__}.{type(policy.owner).__qualname__}"
    target = policy if hasattr(policy, "__qualname__") else type(policy)
    return f"{getattr(target, '__module__', '?')}.{target.__qualname__}"
