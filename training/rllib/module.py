"""The action-masking RLModule RLlib trains, shaped so that it exports to a policy file.

:class:`MaskedActorCriticModule` is a ``TorchRLModule`` with RLlib's ``ValueFunctionAPI``
(what PPO's learner needs) that reads the ``Dict`` observation of
:class:`~training.rllib.env.MexicanTrainMultiAgentEnv`: ``"observations"`` feed the
networks, ``"action_mask"`` masks the logits (``log(mask)`` clamped to RLlib's
``FLOAT_MIN``, added to the logits: the pattern of RLlib's ``ActionMaskingRLModule``).

Its layers are those of the SB3 trainer's ``GuardedMaskablePolicy`` under the same names
(``mlp_extractor.policy_net`` / ``value_net`` hidden MLPs, ``action_net``, ``value_net``),
with the same orthogonal initialisation and the same soft clamp on the logits
(:func:`agents.policy_net.bound_logits`). :func:`export_policy` therefore writes the
module as a policy file the ``ppo`` agent plays (:mod:`agents.mexican_train.ppo`): the
RLlib policy is evaluated by the project's own tournament harness, and plays in
``mtrain bench`` like any SB3-trained policy.

``model_config`` keys: ``pi`` and ``vf`` (hidden sizes, default ``[256, 256]``),
``activation`` (``tanh`` or ``relu``), ``logit_bound`` (default 20), ``features`` (the
observation's feature set, recorded in the policy file).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch as th
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

from agents.policy_net import ACTIVATIONS, PolicySpec, bound_logits, build_policy, save_policy
from training.rllib.env import MASK_KEY, OBS_KEY

#: ``model_config`` defaults
DEFAULT_MODEL_CONFIG: dict[str, Any] = {
    "pi": [256, 256],
    "vf": [256, 256],
    "activation": "tanh",
    "logit_bound": 20.0,
    "features": "env",
}


def _mlp(sizes: list[int], width: int, activation: type[th.nn.Module]) -> th.nn.Sequential:
    layers: list[th.nn.Module] = []
    for size in sizes:
        layers += [th.nn.Linear(width, size), activation()]
        width = size
    return th.nn.Sequential(*layers)


def _ortho(module: th.nn.Module, gain: float) -> None:
    """SB3's initialisation: orthogonal weights with ``gain``, zero biases."""
    for layer in module.modules():
        if isinstance(layer, th.nn.Linear):
            th.nn.init.orthogonal_(layer.weight, gain=gain)
            layer.bias.data.fill_(0.0)


class _Extractor(th.nn.Module):
    """The hidden layers of both branches, named as SB3's ``MlpExtractor`` names them."""

    def __init__(self, policy_net: th.nn.Sequential, value_net: th.nn.Sequential) -> None:
        super().__init__()
        self.policy_net = policy_net
        self.value_net = value_net


class MaskedActorCriticModule(TorchRLModule, ValueFunctionAPI):
    """Actor-critic MLP with action masking (see the module docstring)."""

    def setup(self) -> None:
        """Build the networks from ``model_config`` and the ``Dict`` observation space."""
        cfg: dict[str, Any] = {**DEFAULT_MODEL_CONFIG, **dict(self.model_config or {})}  # type: ignore[arg-type]
        self.spec = module_spec(cfg, self.observation_space, self.action_space)
        act = ACTIVATIONS[self.spec.activation]
        size = self.spec.observation_size
        self.mlp_extractor = _Extractor(
            _mlp(list(self.spec.pi), size, act), _mlp(list(self.spec.vf), size, act)
        )
        self.action_net = th.nn.Linear(self.spec.pi[-1] if self.spec.pi else size, self.spec.action_count)
        self.value_net = th.nn.Linear(self.spec.vf[-1] if self.spec.vf else size, 1)
        _ortho(self.mlp_extractor, math.sqrt(2))
        _ortho(self.action_net, 0.01)
        _ortho(self.value_net, 1.0)

    def logits(self, obs: th.Tensor) -> th.Tensor:
        """Guarded action logits before masking (the ``ppo`` agent's ``action_logits``)."""
        return bound_logits(self.action_net(self.mlp_extractor.policy_net(obs)), self.spec.logit_bound)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.logits(obs[OBS_KEY])
        masked = logits + th.clamp(th.log(obs[MASK_KEY]), min=FLOAT_MIN)
        return {Columns.ACTION_DIST_INPUTS: masked}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> th.Tensor:
        """State values of the batch's observations (PPO's critic)."""
        obs = batch[Columns.OBS][OBS_KEY]
        return self.value_net(self.mlp_extractor.value_net(obs)).squeeze(-1)


def module_spec(cfg: dict[str, Any], observation_space: Any, action_space: Any) -> PolicySpec:
    """The policy-file architecture of a module of ``cfg`` on these spaces (``ValueError`` if bad)."""
    return PolicySpec(
        observation_size=int(observation_space[OBS_KEY].shape[0]),
        action_count=int(action_space.n),
        pi=tuple(int(x) for x in cfg["pi"]),
        vf=tuple(int(x) for x in cfg["vf"]),
        activation=str(cfg["activation"]),
        features=str(cfg["features"]),
        logit_bound=float(cfg["logit_bound"]),
        ortho_init=True,
    )


def export_policy(module: MaskedActorCriticModule, path: str | Path) -> PolicySpec:
    """Write ``module`` as a policy file at ``path`` (the ``ppo`` agent plays it); its spec."""
    return export_state({k: v.detach().cpu() for k, v in module.state_dict().items()}, module.spec, path)


def export_state(state: dict[str, Any], spec: PolicySpec, path: str | Path) -> PolicySpec:
    """Write a module's weights (``RLModule.get_state()``: name -> array) as a policy file."""
    policy = build_policy(spec)
    policy.load_state_dict({k: th.as_tensor(v) for k, v in state.items()}, strict=True)
    return save_policy(policy, path)
