"""The policy network the ``ppo`` agent plays and the trainer trains.

:class:`GuardedMaskablePolicy` is sb3-contrib's ``MaskableActorCriticPolicy`` with its
action logits passed through :func:`bound_logits` (finite and bounded, so the masked
softmax never overflows; see :mod:`training.policy` for the failure it guards against);
:func:`policy_logits` reads the actor's logits of any maskable policy. It lives in the
agents layer because playing a saved policy needs it and training builds on it.

Importing this module imports torch and sb3-contrib (the ``train`` extra).
"""

from __future__ import annotations

from typing import Any

import torch as th
from sb3_contrib.common.maskable.distributions import MaskableDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

__all__ = ["GuardedMaskablePolicy", "bound_logits", "policy_logits"]


def bound_logits(logits: th.Tensor, bound: float) -> th.Tensor:
    """Finite logits within ``(-bound, bound)``: ``nan_to_num`` then ``bound * tanh(x / bound)``."""
    if bound <= 0:
        return th.nan_to_num(logits, nan=0.0, posinf=0.0, neginf=0.0)
    logits = th.nan_to_num(logits, nan=0.0, posinf=bound, neginf=-bound)
    return bound * th.tanh(logits / bound)


class GuardedMaskablePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` whose action logits pass through :func:`bound_logits`.

    Args:
        logit_bound: the soft clamp ``b`` on action logits (``<= 0``: only ``nan_to_num``).
        features: the feature set its input is built with (:mod:`agents.mexican_train.features`); saved
            with the policy so that the ``ppo`` agent feeds it the same input.
        *args, **kwargs: those of :class:`MaskableActorCriticPolicy`.
    """

    def __init__(self, *args: Any, logit_bound: float = 20.0, features: str = "env", **kwargs: Any) -> None:
        self.logit_bound = float(logit_bound)
        self.features = str(features)
        super().__init__(*args, **kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["logit_bound"] = self.logit_bound
        data["features"] = self.features
        return data

    def _get_action_dist_from_latent(self, latent_pi: th.Tensor) -> MaskableDistribution:
        logits = bound_logits(self.action_net(latent_pi), self.logit_bound)
        return self.action_dist.proba_distribution(action_logits=logits)

    def action_logits(self, obs: th.Tensor) -> th.Tensor:
        """Guarded action logits (before masking) of a batch of observations (actor only)."""
        features = self.extract_features(obs, self.pi_features_extractor)
        if isinstance(features, tuple):  # unshared extractors return (pi, vf)
            features = features[0]
        latent_pi = self.mlp_extractor.forward_actor(features)
        return bound_logits(self.action_net(latent_pi), self.logit_bound)


def policy_logits(policy: MaskableActorCriticPolicy, obs: th.Tensor) -> th.Tensor:
    """Action logits of any maskable actor-critic policy (guarded when it is a guarded one)."""
    if isinstance(policy, GuardedMaskablePolicy):
        return policy.action_logits(obs)
    features = MaskableActorCriticPolicy.extract_features(policy, obs)
    if isinstance(features, tuple):
        features = features[0]
    return policy.action_net(policy.mlp_extractor.forward_actor(features))
