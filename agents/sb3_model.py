"""Any stable-baselines3 / sb3-contrib model saved with ``model.save()``, played without unpickling.

A user trains on the Gymnasium env (``gymnasium.make("mtrain_env/MexicanTrain-v0", ...)``,
whose observation is a flat float32 ``Box`` and whose actions are ``Discrete``) with
MaskablePPO, PPO, A2C or DQN and ``MlpPolicy``, and plays the archive as
``ppo[path=model.zip]``. :func:`read_sb3_model` rebuilds the network the policy acts with
from the archive's data-only parts:

* the ``data`` JSON, its plain fields only (SB3 stores objects there as base64 cloudpickle
  under ``":serialized:"``; those strings are never decoded). The policy class is known by
  its ``__module__`` and the class its ``__init__`` belongs to (both plain text beside the
  pickle); the spaces by their ``:type:``, ``_shape``, ``dtype``, ``n`` and ``start``; the
  architecture by ``policy_kwargs``' ``net_arch`` (a plain list or ``{"pi", "vf"}``) and
  ``activation_fn`` (the class's name as text, one of :data:`ACTIVATIONS`). SB3's defaults
  fill what is absent (``[64, 64]``; ``Tanh`` for actor-critic policies, ``ReLU`` for DQN).
* ``policy.pth`` through ``torch.load(weights_only=True)`` (tensors only, no code), its
  names and shapes equal to those the architecture implies, finite float32.

The actor path (actor-critic: ``mlp_extractor.policy_net`` then ``action_net``; DQN:
``q_net``) becomes a ``torch.nn.Sequential`` of the same layers, so its outputs are those
SB3 computes: the agent plays the legal action of largest logit (MaskablePPO, PPO, A2C:
what ``predict(deterministic=True)`` gives with the mask applied) or of largest Q-value
(DQN). Anything else (another policy class, extractor, space, activation or a
``policy_kwargs`` entry that changes the network, an archive with odd member names, a
member larger than its limit) is refused with a one-line
:class:`~agents.policy_net.PolicyFileError` ``<path>: <what is wrong>`` before any weight
is read. Such an archive records no observation version, so it is read as observation
version 1 (the rule of :func:`agents.policy_format.observation_version_of`).

Importing this module imports torch (and :mod:`agents.policy_net`, which imports sb3-contrib).
"""

from __future__ import annotations

import math
import os
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch as th

from agents.policy_format import PRE_FIELD_OBSERVATION_VERSION
from agents.policy_net import (
    MAX_PARAMETERS,
    SB3_POLICY_MODULES,
    SPEC_MEMBER,
    PolicyFileError,
    _actor_critic_shapes,
    _add_mlp_shapes,
    _json_member,
    _read_sb3_zip,
)

__all__ = ["ACTIVATIONS", "POLICY_CLASSES", "SB3Model", "is_sb3_model", "read_sb3_model"]

#: torch activations without parameters or arguments (SB3 builds ``activation_fn()``), by class name
ACTIVATIONS: dict[str, type[th.nn.Module]] = {
    name: getattr(th.nn, name)
    for name in (
        "Tanh", "ReLU", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid",
        "Softplus", "Softsign", "Hardtanh", "ReLU6", "Hardswish", "Hardsigmoid", "LogSigmoid", "Tanhshrink",
    )
}  # fmt: skip
#: (module, class) of the policies read -> (kind, default activation); kind ``"actor_critic"``
#: scores actions by logits, ``"q_network"`` by Q-values
POLICY_CLASSES: dict[tuple[str, str], tuple[str, str]] = {
    ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"): ("actor_critic", "Tanh"),
    ("stable_baselines3.common.policies", "ActorCriticPolicy"): ("actor_critic", "Tanh"),
    ("stable_baselines3.dqn.policies", "DQNPolicy"): ("q_network", "ReLU"),
}
#: the policies of ``MultiInputPolicy`` (Dict observations, which this env never gives)
_MULTI_INPUT = {"MaskableMultiInputActorCriticPolicy", "MultiInputActorCriticPolicy", "MultiInputPolicy"}
#: SB3's hidden layers when ``net_arch`` is not given (an MLP on a flat input)
DEFAULT_NET_ARCH = (64, 64)
#: ``policy_kwargs`` entries that never change what the trained network computes
_INERT_KWARGS = frozenset(
    {"ortho_init", "optimizer_class", "optimizer_kwargs", "normalize_images", "share_features_extractor"}
)
_FLATTEN = "<class 'stable_baselines3.common.torch_layers.FlattenExtractor'>"
_DATA_MEMBER = "data"


@dataclass(frozen=True)
class SB3Model:
    """The actor of an SB3 model archive as the ``ppo`` agent plays it.

    It has the attributes the agent checks of every policy (``observation_space.shape``,
    ``action_space.n``, ``features``, ``observation_version``); :meth:`masked_logits`
    scores every action (logits, or Q-values when :attr:`kind` is ``"q_network"``).
    """

    path: str
    policy_class: str  #: ``module.Class`` of the policy the archive names
    kind: str  #: ``"actor_critic"`` (logits) or ``"q_network"`` (Q-values)
    net_arch: tuple[int, ...]  #: hidden sizes of the actor path
    activation: str  #: the activation's class name (:data:`ACTIVATIONS`)
    net: th.nn.Sequential
    observation_size: int
    action_count: int
    observation_version: int = PRE_FIELD_OBSERVATION_VERSION
    features: str = "env"

    @property
    def observation_space(self) -> SimpleNamespace:
        """What the agent reads the input size from (``.shape``)."""
        return SimpleNamespace(shape=(self.observation_size,))

    @property
    def action_space(self) -> SimpleNamespace:
        """What the agent reads the action count from (``.n``)."""
        return SimpleNamespace(n=self.action_count)

    @property
    def scores(self) -> str:
        """What :meth:`masked_logits` returns: ``"logits"`` or ``"q_values"``."""
        return "q_values" if self.kind == "q_network" else "logits"

    def masked_logits(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The score of every action for one observation (the caller picks among the legal
        ones of ``mask``; the network scores all actions, as SB3's does)."""
        if observation.shape != (self.observation_size,):
            raise ValueError(
                f"policy {self.path} expects observations of shape ({self.observation_size},), "
                f"got {observation.shape} (it was trained on another game configuration)"
            )
        with th.inference_mode():
            x = th.as_tensor(observation, dtype=th.float32).reshape(1, -1)
            return self.net(x)[0].numpy()


def _class_of(data: Mapping[str, Any], key: str) -> tuple[str, str]:
    """``(module, class)`` of the class stored at ``data[key]``, from its plain fields: its
    ``__module__`` and the owner of the ``__init__`` it defines (``<function Cls.__init__ at ...>``)."""
    entry = data.get(key)
    if not isinstance(entry, dict):
        raise ValueError(f"{key} is not an SB3 class entry")
    module, init = entry.get("__module__"), entry.get("__init__")
    found = (
        re.fullmatch(r"<function (\w+)\.__init__ at 0x[0-9a-fA-F]+>", init) if isinstance(init, str) else None
    )
    if not isinstance(module, str) or found is None:
        raise ValueError(f"{key} names no class in its plain fields (__module__, __init__)")
    return module, found.group(1)


def _space(data: Mapping[str, Any], key: str, kind: str) -> Mapping[str, Any]:
    """The plain fields of the gymnasium space ``data[key]``, which must be a ``kind``."""
    space = data.get(key)
    found = space.get(":type:") if isinstance(space, dict) else None
    m = re.fullmatch(r"<class '([\w.]+)'>", found) if isinstance(found, str) else None
    if m is None:
        raise ValueError(f"{key} is not a gymnasium space")
    if m.group(1) != f"gymnasium.spaces.{kind}":
        want = kind.rsplit(".", 1)[-1]
        raise ValueError(f"{key} is a {m.group(1).rsplit('.', 1)[-1]}; this env's is a {want}")
    assert isinstance(space, dict)
    return space


def _hidden_sizes(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(type(x) is int and x >= 1 for x in value):
        raise ValueError(f"{what} must be a list of hidden sizes >= 1, got {value!r}")
    return tuple(value)


def _architecture(
    kwargs: Mapping[str, Any], kind: str, default_activation: str
) -> tuple[tuple[int, ...], tuple[int, ...], str]:
    """``(actor sizes, critic sizes, activation)`` from the plain fields of ``policy_kwargs``
    (``ValueError`` for an entry that would change the network in a way not rebuilt here)."""
    known = {"net_arch", "activation_fn", "features_extractor_class", "features_extractor_kwargs"}
    unknown = sorted(set(kwargs) - known - _INERT_KWARGS - {":type:", ":serialized:"})
    if unknown:
        raise ValueError(f"policy_kwargs {unknown} change the network in a way this reader does not rebuild")
    extractor = kwargs.get("features_extractor_class", _FLATTEN)
    if extractor != _FLATTEN:
        raise ValueError(
            f"features_extractor_class {extractor!r}: only the FlattenExtractor (MlpPolicy) is read"
        )
    if kwargs.get("features_extractor_kwargs", {}) != {}:
        raise ValueError("features_extractor_kwargs: the FlattenExtractor takes none")
    arch = kwargs.get("net_arch", list(DEFAULT_NET_ARCH))
    if isinstance(arch, dict) and kind == "actor_critic":
        extra = sorted(set(arch) - {"pi", "vf"})
        if extra:
            raise ValueError(f"net_arch keys {extra}: only pi and vf")
        pi = _hidden_sizes(arch.get("pi", []), "net_arch.pi")
        vf = _hidden_sizes(arch.get("vf", []), "net_arch.vf")
    else:
        pi = vf = _hidden_sizes(arch, "net_arch")
    activation = kwargs.get("activation_fn", f"<class 'torch.nn.modules.activation.{default_activation}'>")
    m = (
        re.fullmatch(r"<class 'torch\.nn\.modules\.activation\.(\w+)'>", activation)
        if isinstance(activation, str)
        else None
    )
    if m is None or m.group(1) not in ACTIVATIONS:
        raise ValueError(f"activation_fn {activation!r} is not one of torch.nn's {', '.join(ACTIVATIONS)}")
    return pi, vf, m.group(1)


def _parameter_shapes(
    kind: str, obs: int, actions: int, pi: tuple[int, ...], vf: tuple[int, ...]
) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every tensor SB3's ``policy.state_dict()`` holds for this architecture."""
    if kind != "q_network":
        return _actor_critic_shapes(obs, actions, pi, vf)
    shapes: dict[str, tuple[int, ...]] = {}
    for prefix in ("q_net.q_net", "q_net_target.q_net"):
        _add_mlp_shapes(shapes, prefix, obs, pi, actions)
    return shapes


@dataclass(frozen=True)
class _Plan:
    """What the ``data`` JSON says the network is."""

    policy_class: str
    kind: str
    pi: tuple[int, ...]
    activation: str
    observation_size: int
    action_count: int
    shapes: dict[str, tuple[int, ...]]


def _plan(data: Any) -> _Plan:
    """The network an SB3 ``data`` JSON describes, from its plain fields only."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    module, name = _class_of(data, "policy_class")
    if (module, name) not in POLICY_CLASSES:
        if name in _MULTI_INPUT:
            raise ValueError(
                f"policy_class {name} (MultiInputPolicy) is for Dict observations; "
                "mtrain_env/MexicanTrain-v0 observes a Box: train with MlpPolicy"
            )
        known = ", ".join(f"{m}.{c}" for m, c in POLICY_CLASSES)
        raise ValueError(f"policy_class {module}.{name} is not one of {known}")
    kind, default_activation = POLICY_CLASSES[(module, name)]
    kwargs = data.get("policy_kwargs", {})
    if not isinstance(kwargs, dict):
        raise ValueError("policy_kwargs is not a JSON object")
    pi, vf, activation = _architecture(kwargs, kind, default_activation)
    obs = _space(data, "observation_space", "box.Box")
    shape, dtype = obs.get("_shape"), obs.get("dtype")
    if dtype != "float32" or not isinstance(shape, list) or len(shape) != 1 or type(shape[0]) is not int:
        raise ValueError(f"observation_space must be a flat float32 Box, got shape {shape!r} dtype {dtype!r}")
    act = _space(data, "action_space", "discrete.Discrete")
    n, start = str(act.get("n")), str(act.get("start", "0"))
    if not n.isdigit() or int(n) < 1 or start != "0":
        raise ValueError(f"action_space must be Discrete(n) from 0, got n={n!r} start={start!r}")
    if shape[0] < 1:
        raise ValueError(f"observation_space has shape {shape!r}")
    shapes = _parameter_shapes(kind, shape[0], int(n), pi, vf)
    count = sum(math.prod(s) for s in shapes.values())
    if count > MAX_PARAMETERS:
        raise ValueError(f"the network would have {count} parameters (at most {MAX_PARAMETERS})")
    return _Plan(f"{module}.{name}", kind, pi, activation, shape[0], int(n), shapes)


def _actor(plan: _Plan, weights: Mapping[str, np.ndarray]) -> th.nn.Sequential:
    """The actor path (hidden layers, then the action or Q-value layer) with ``weights``."""
    prefix = "q_net.q_net" if plan.kind == "q_network" else "mlp_extractor.policy_net"
    names = [f"{prefix}.{2 * i}" for i in range(len(plan.pi))]
    names.append(f"{prefix}.{2 * len(plan.pi)}" if plan.kind == "q_network" else "action_net")
    layers: list[th.nn.Module] = []
    for i, name in enumerate(names):
        w, b = weights[f"{name}.weight"], weights[f"{name}.bias"]
        linear = th.nn.Linear(w.shape[1], w.shape[0])
        with th.no_grad():
            linear.weight.copy_(th.from_numpy(w))
            linear.bias.copy_(th.from_numpy(b))
        layers.append(linear)
        if i < len(names) - 1:
            layers.append(ACTIVATIONS[plan.activation]())
    net = th.nn.Sequential(*layers).eval()
    for param in net.parameters():
        param.requires_grad_(False)
    return net


def is_sb3_model(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is read by :func:`read_sb3_model`: a zip archive with SB3's ``data``
    (no policy file's ``policy.json``) that does not name the ``GuardedMaskablePolicy`` which
    :func:`agents.policy_net.read_policy` reads. Looks at the zip directory and ``data``
    only; a ``data`` that cannot be read counts as SB3's, so that :func:`read_sb3_model` says why."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            if SPEC_MEMBER in names or _DATA_MEMBER not in names:
                return False
            try:
                data = _json_member(zf, Path(path), _DATA_MEMBER)
            except PolicyFileError:
                return True
    except (OSError, zipfile.BadZipFile):
        return False
    entry = data.get("policy_class") if isinstance(data, dict) else None
    return not (isinstance(entry, dict) and entry.get("__module__") in SB3_POLICY_MODULES)


def read_sb3_model(path: str | os.PathLike[str], env_version: int | None = None) -> SB3Model:
    """The actor of the SB3 model archive at ``path`` (module docstring), read without
    unpickling anything (:func:`agents.policy_net._read_sb3_zip`); a
    :class:`~agents.policy_net.PolicyFileError` ``<path>: <what is wrong>`` otherwise. With
    ``env_version`` (the observation version of the env it will read), an archive of another
    version (every one is version 1) is refused first."""

    def parse(data: Any) -> tuple[_Plan, str, int, dict[str, tuple[int, ...]]]:
        plan = _plan(data)
        return plan, "env", PRE_FIELD_OBSERVATION_VERSION, plan.shapes

    plan, weights = _read_sb3_zip(path, parse, env_version)
    return SB3Model(
        path=str(Path(path)),
        policy_class=plan.policy_class,
        kind=plan.kind,
        net_arch=plan.pi,
        activation=plan.activation,
        net=_actor(plan, weights),
        observation_size=plan.observation_size,
        action_count=plan.action_count,
    )
