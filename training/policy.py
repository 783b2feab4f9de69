"""MaskablePPO made robust to the masked-logits numerical failure.

The failure (sb3-contrib issues #81, #221, #322; PR #302): training stops with
``ValueError: Expected parameter probs ... to satisfy the constraint Simplex()`` (or
``logits ... found invalid values``) from ``torch.distributions``. Two causes are known:

1. **non-finite logits**: once a bad update makes a weight ``inf``/``nan`` (large action
   spaces, big advantages, large learning rates), the logits and every later update are
   NaN (#81, #221);
2. **stale cached probs** (#322, torch >= 2.9): with hundreds of actions the float32
   softmax sums drift by more than the 1e-6 tolerance of ``Simplex``; fixed in the
   installed sb3-contrib 2.9 (``MaskableCategorical.apply_masking`` drops the cached
   ``probs`` before re-validating), so nothing is needed here for it.

What this module does against cause 1, in layers:

* **small, bounded logits by construction**: orthogonal init with gain 0.01 on the
  action net (SB3's ``ortho_init``; initial logits ~0, a near-uniform legal policy), tanh
  hidden layers (the latent is bounded, so the logits are bounded by the weights), and
  gradient-norm clipping (``max_grad_norm``) — all SB3 defaults kept on purpose;
* **a guard on the logits** (:func:`bound_logits`): ``nan_to_num`` then a soft clamp
  ``b * tanh(x / b)`` (``b = logit_bound``, default 20): identity for ``|x| << b``,
  smooth (gradients never vanish abruptly as with a hard clamp), and it keeps every
  legal logit within ``(-b, b)``, so the masked softmax never overflows and the largest
  odds ratio between two legal actions stays at ``e^(2b)`` (ample for a confident
  policy). The mask's ``-1e8`` is applied after the guard, as sb3-contrib does;
* **a rollback guard on each update** (:meth:`RobustMaskablePPO.train`): the policy
  and optimizer state are copied before an update; if any parameter or loss comes out
  non-finite, both are restored, the learning rate is multiplied by ``nan_lr_factor``
  (kept in ``lr_scale``, saved with the model) and the event is counted and logged
  (``robust/nan_events``). A poisoned update is thrown away instead of killing the run
  or silently training a NaN network.
"""

from __future__ import annotations

import copy
import math
import warnings
from typing import Any

import torch as th
from sb3_contrib import MaskablePPO

# the network lives with the agent that plays it; re-exported here, so models saved with
# the class path ``training.policy.GuardedMaskablePolicy`` keep loading
from agents.policy_net import GuardedMaskablePolicy, bound_logits, policy_logits

__all__ = ["GuardedMaskablePolicy", "RobustMaskablePPO", "bound_logits", "policy_logits"]


class RobustMaskablePPO(MaskablePPO):
    """``MaskablePPO`` with a scalable learning rate and a rollback guard on updates.

    ``lr_scale`` multiplies the learning-rate schedule; it drops by ``nan_lr_factor`` on
    every rolled-back (non-finite) update. Both, and ``nan_events``, are saved with the
    model, so a resumed run keeps the lowered rate.
    """

    def __init__(self, *args: Any, nan_lr_factor: float = 0.5, **kwargs: Any) -> None:
        self.lr_scale = 1.0
        self.nan_events = 0
        self.nan_lr_factor = float(nan_lr_factor)
        super().__init__(*args, **kwargs)

    def _update_learning_rate(self, optimizers: Any) -> None:
        lr = self.lr_schedule(self._current_progress_remaining) * self.lr_scale
        self.logger.record("train/learning_rate", lr)
        if not isinstance(optimizers, list):
            optimizers = [optimizers]
        for optimizer in optimizers:
            for group in optimizer.param_groups:
                group["lr"] = lr

    def train(self) -> None:
        policy_state = copy.deepcopy(self.policy.state_dict())
        optim_state = copy.deepcopy(self.policy.optimizer.state_dict())
        n_updates = self._n_updates
        super().train()
        if self._update_is_finite():
            return
        self.policy.load_state_dict(policy_state)
        self.policy.optimizer.load_state_dict(optim_state)
        self._n_updates = n_updates
        self.nan_events += 1
        self.lr_scale *= self.nan_lr_factor
        self.logger.record("robust/nan_events", self.nan_events)
        self.logger.record("robust/lr_scale", self.lr_scale)
        warnings.warn(
            f"non-finite PPO update at step {self.num_timesteps} rolled back; "
            f"learning rate scaled to {self.lr_scale:g} of its schedule (event {self.nan_events})",
            RuntimeWarning,
            stacklevel=2,
        )

    def _update_is_finite(self) -> bool:
        for p in self.policy.parameters():
            if not bool(th.isfinite(p).all()):
                return False
        values = self.logger.name_to_value
        for key in ("train/loss", "train/value_loss", "train/policy_gradient_loss", "train/entropy_loss"):
            v = values.get(key)
            if v is not None and not math.isfinite(float(v)):
                return False
        return True
