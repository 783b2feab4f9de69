"""The policy network the ``ppo`` agent plays and the trainer trains, and its file format.

:class:`GuardedMaskablePolicy` is sb3-contrib's ``MaskableActorCriticPolicy`` with its
action logits passed through :func:`bound_logits` (finite and bounded, so the masked
softmax never overflows; see :mod:`training.policy` for the failure it guards against);
:func:`policy_logits` reads the actor's logits of any maskable policy. It lives in the
agents layer because playing a saved policy needs it and training builds on it.

**Policy files** hold data, never code. :func:`save_policy` writes a zip archive
(``.npz``, so ``numpy.load`` reads it too; the container of :mod:`agents.policy_format`,
members stored uncompressed) of ``policy.json``, the architecture
(:class:`PolicySpec`: format name and version, observation size, action count,
``net_arch``, activation, feature set and the version of its input
(``observation_version``), logit bound, orthogonal init, every parameter's shape), and one
``<parameter>.npy`` per tensor of the network's ``state_dict`` (little-endian float32).
:func:`read_policy` reads it without any unpickler: the JSON is checked field by field,
each array's header is checked against the shape the architecture implies before its
bytes are read (``allow_pickle`` never comes into it), and anything else is refused with a
one-line :class:`PolicyFileError` naming the file.

**Observation versions.** A network reads the positions of the layout it was trained on,
so a file records ``observation_version``
(:func:`agents.policy_format.input_version` of its feature set: the env's layout
version for ``"env"``, the planner feature version for ``"planner"``) and
:func:`read_policy` refuses one of another version than the env it is read for writes,
naming both, before any size is compared. Files of format version 1 predate the field:
they are read as observation version 1 (the only layout there was; rule in
:func:`agents.policy_format.observation_version_of`). That rule, rather than rewriting
the headers of the files people have, keeps every existing policy file loading as it is;
an SB3 archive whose ``policy_kwargs`` lack ``observation_version`` is read by it too.

:func:`read_policy` also reads the policy of a model archive written by SB3
(``model.zip``, ``final_model.zip``) through its data-only parts: the ``data`` JSON (its
pickled entries are never decoded) and ``policy.pth`` with
``torch.load(weights_only=True)``. A file written by SB3's ``policy.save`` or by
``torch.save`` of a whole object is a pickle, which would run any code it holds when
loaded: :func:`read_policy` refuses it; :func:`upgrade_trusted_policy` (``python -m
agents.policy_net SRC DST``) converts one through :func:`read_pickled_policy`, torch's
``weights_only`` loader with an allowlist of what SB3's ``policy.save`` writes (spaces,
activation, extractor and optimizer classes, arrays): nothing in the file runs.

Importing this module imports torch and sb3-contrib (the ``train`` extra).
"""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import sys
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import MaskableDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import FlattenExtractor

from agents.policy_format import (
    HEADER_MEMBER,
    MAX_HEADER_BYTES,
    PRE_FIELD_OBSERVATION_VERSION,
    check_format,
    check_member_names,
    check_observation_version,
    observation_version_of,
    read_json_member,
    read_member,
    read_npy_members,
    weights_only_refusal,
    write_npy_zip,
)
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.files import os_error_text

__all__ = [
    "GuardedMaskablePolicy",
    "PolicyFileError",
    "PolicySpec",
    "bound_logits",
    "build_policy",
    "policy_logits",
    "policy_spec",
    "read_pickled_policy",
    "read_policy",
    "read_sb3_archive",
    "save_policy",
    "upgrade_trusted_policy",
]


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
        observation_version: the version of that input; default the one the feature set has in
            an env of the default observation layout (what the trainers build).
        *args: the positional arguments of :class:`MaskableActorCriticPolicy`.
        **kwargs: its other keyword arguments.
    """

    def __init__(
        self,
        *args: Any,
        logit_bound: float = 20.0,
        features: str = "env",
        observation_version: int | None = None,
        **kwargs: Any,
    ) -> None:
        self.logit_bound = float(logit_bound)
        self.features = str(features)
        self.observation_version = _input_version(self.features, observation_version)
        super().__init__(*args, **kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["logit_bound"] = self.logit_bound
        data["features"] = self.features
        data["observation_version"] = self.observation_version
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


# ----------------------------------------------------------------- policy files
#: ``format`` of ``policy.json``, the version this code writes, and those it reads (version
#: 1 has no ``observation_version``: read as observation version 1, see the module docstring)
POLICY_FORMAT = "mtrain-policy"
POLICY_VERSION = 2
POLICY_VERSIONS_READ = (1, 2)
#: the architecture member of a policy file
SPEC_MEMBER = HEADER_MEMBER
#: hidden-layer activations a policy file may name
ACTIVATIONS: dict[str, type[th.nn.Module]] = {"tanh": th.nn.Tanh, "relu": th.nn.ReLU}
#: the largest network a file may describe (refused before anything is allocated)
MAX_PARAMETERS = 100_000_000
#: the largest JSON member of an SB3 archive read (its ``data``; ``policy.json``: ``MAX_HEADER_BYTES``)
MAX_JSON_BYTES = 64 << 20
#: modules that define ``GuardedMaskablePolicy`` (an SB3 archive names one as its policy class)
SB3_POLICY_MODULES = ("agents.policy_net", "training.policy")
_SPEC_KEYS = (
    "format",
    "version",
    "observation_size",
    "action_count",
    "net_arch",
    "activation",
    "features",
    "observation_version",
    "logit_bound",
    "ortho_init",
    "parameters",
)
#: the keys of a format-version-1 ``policy.json`` (no ``observation_version``)
_SPEC_KEYS_V1 = tuple(k for k in _SPEC_KEYS if k != "observation_version")
_REFUSED = (
    "loading it would run code stored in the file, so it is refused "
    "(convert it with: python -m agents.policy_net SRC DST, which reads it without running it)"
)


class PolicyFileError(ValueError):
    """A file that is not a readable policy: ``<path>: <what is wrong>`` on one line."""

    def __init__(self, path: str | os.PathLike[str], message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = str(path)
        self.message = message


def _input_version(features: str, given: int | None) -> int:
    """``given``, else the current version of feature set ``features``'s input (what a network
    built now is trained on); ``ValueError`` for an unknown set without a version."""
    if given is not None:
        if type(given) is not int or given < 1:
            raise ValueError(f"observation_version must be an int >= 1, got {given!r}")
        return given
    from agents.policy_format import FEATURE_SETS, input_version

    if features not in FEATURE_SETS:
        raise ValueError(f"feature set {features!r} has no observation version: give observation_version")
    return input_version(features)


def _add_mlp_shapes(
    shapes: dict[str, tuple[int, ...]], prefix: str, width: int, sizes: Sequence[int], out: int | None = None
) -> int:
    """Add to ``shapes`` the tensors of SB3's MLP ``prefix`` on ``width`` inputs (Linear layers
    at 0, 2, 4 ..., activations between; a last Linear of ``out`` outputs if given); its output width."""
    for i, size in enumerate(sizes):
        shapes[f"{prefix}.{2 * i}.weight"] = (size, width)
        shapes[f"{prefix}.{2 * i}.bias"] = (size,)
        width = size
    if out is not None:
        shapes[f"{prefix}.{2 * len(sizes)}.weight"] = (out, width)
        shapes[f"{prefix}.{2 * len(sizes)}.bias"] = (out,)
    return width


def _actor_critic_shapes(
    observation_size: int, action_count: int, pi: Sequence[int], vf: Sequence[int]
) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every tensor of the ``state_dict`` of SB3's MLP actor-critic policy
    (hidden sizes ``pi`` and ``vf``), in its order."""
    shapes: dict[str, tuple[int, ...]] = {}
    last_pi = _add_mlp_shapes(shapes, "mlp_extractor.policy_net", observation_size, pi)
    last_vf = _add_mlp_shapes(shapes, "mlp_extractor.value_net", observation_size, vf)
    shapes["action_net.weight"] = (action_count, last_pi)
    shapes["action_net.bias"] = (action_count,)
    shapes["value_net.weight"] = (1, last_vf)
    shapes["value_net.bias"] = (1,)
    return shapes


def _constant_zero(_progress: float) -> float:
    return 0.0


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True)
class PolicySpec:
    """The architecture of a :class:`GuardedMaskablePolicy` with a flat (MLP) input.

    Everything needed to rebuild the network before its weights are loaded; the
    constructor checks every field (``ValueError`` saying which).
    """

    observation_size: int
    action_count: int
    pi: tuple[int, ...]  #: hidden sizes of the actor
    vf: tuple[int, ...]  #: hidden sizes of the critic
    activation: str = "tanh"
    features: str = "env"  #: the input's feature set (``agents.mexican_train.features``)
    logit_bound: float = 20.0
    ortho_init: bool = True
    #: the version of that input (module docstring); ``None``: its current version
    observation_version: int | None = None

    def __post_init__(self) -> None:
        for name in ("observation_size", "action_count"):
            value = getattr(self, name)
            if not _is_int(value) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        for name in ("pi", "vf"):
            sizes = getattr(self, name)
            if not isinstance(sizes, tuple) or not all(_is_int(x) and x >= 1 for x in sizes):
                raise ValueError(f"net_arch.{name} must be a list of hidden sizes >= 1, got {sizes!r}")
        if not isinstance(self.activation, str) or self.activation not in ACTIVATIONS:  # not [] (unhashable)
            raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {self.activation!r}")
        if not isinstance(self.features, str) or not self.features.isidentifier():
            raise ValueError(f"features must name a feature set, got {self.features!r}")
        object.__setattr__(
            self, "observation_version", _input_version(self.features, self.observation_version)
        )
        bound = self.logit_bound
        if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not math.isfinite(bound):
            raise ValueError(f"logit_bound must be a finite number, got {bound!r}")
        if not isinstance(self.ortho_init, bool):
            raise ValueError(f"ortho_init must be true or false, got {self.ortho_init!r}")
        count = sum(math.prod(shape) for shape in self.parameter_shapes().values())
        if count > MAX_PARAMETERS:
            raise ValueError(f"the network would have {count} parameters (at most {MAX_PARAMETERS})")

    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """Name -> shape of every tensor of the network's ``state_dict``, in its order."""
        return _actor_critic_shapes(self.observation_size, self.action_count, self.pi, self.vf)

    def to_json(self) -> dict[str, Any]:
        """The ``policy.json`` of a policy file."""
        return {
            "format": POLICY_FORMAT,
            "version": POLICY_VERSION,
            "observation_size": self.observation_size,
            "action_count": self.action_count,
            "net_arch": {"pi": list(self.pi), "vf": list(self.vf)},
            "activation": self.activation,
            "features": self.features,
            "observation_version": self.observation_version,
            "logit_bound": float(self.logit_bound),
            "ortho_init": self.ortho_init,
            "parameters": {k: list(v) for k, v in self.parameter_shapes().items()},
        }

    @classmethod
    def from_json(cls, data: Any, env_version: int | None = None) -> PolicySpec:
        """Inverse of :meth:`to_json` (and reader of format version 1, read as observation
        version 1); ``ValueError`` saying what is wrong (key, value). With ``env_version``
        (the observation version of the env it is read for), a network of a known feature
        set whose input has another version is refused first, naming both versions."""
        check_format(data, POLICY_FORMAT, POLICY_VERSIONS_READ)
        keys = _SPEC_KEYS if data["version"] >= 2 else _SPEC_KEYS_V1
        missing = [k for k in keys if k not in data]
        unknown = sorted(set(data) - set(keys))
        if missing or unknown:
            raise ValueError(f"missing keys {missing}" if missing else f"unknown keys {unknown}")
        version = observation_version_of(data)
        if env_version is not None:
            _check_input_version(data["features"], version, env_version)
        arch = data["net_arch"]
        if not isinstance(arch, dict) or set(arch) != {"pi", "vf"}:
            raise ValueError(f'net_arch must be {{"pi": [...], "vf": [...]}}, got {arch!r}')
        pi, vf = (tuple(arch[k]) if isinstance(arch[k], list) else arch[k] for k in ("pi", "vf"))
        spec = cls(
            observation_size=data["observation_size"],
            action_count=data["action_count"],
            pi=pi,
            vf=vf,
            activation=data["activation"],
            features=data["features"],
            logit_bound=data["logit_bound"],
            ortho_init=data["ortho_init"],
            observation_version=version,
        )
        if data["parameters"] != spec.to_json()["parameters"]:
            raise ValueError("parameters: the shapes listed are not those of the architecture")
        return spec


def _check_input_version(features: Any, found: int, env_version: int) -> None:
    """``ValueError`` naming both versions unless a network of feature set ``features`` whose
    input has version ``found`` reads what an env of ``env_version`` gives it (an unknown set
    is left to the caller, which refuses the set itself)."""
    from agents.policy_format import FEATURE_SETS, input_label, input_version

    if features in FEATURE_SETS:
        check_observation_version(found, input_version(features, env_version), input_label(features))


def policy_spec(policy: GuardedMaskablePolicy) -> PolicySpec:
    """The :class:`PolicySpec` of a live policy (``ValueError`` if it has none: other
    spaces, feature extractor or activation than a policy file describes)."""
    if not isinstance(policy, GuardedMaskablePolicy):
        raise ValueError(f"policy files hold GuardedMaskablePolicy networks, got {type(policy).__name__}")
    obs, act = policy.observation_space, policy.action_space
    if not isinstance(obs, spaces.Box) or len(obs.shape) != 1 or not isinstance(act, spaces.Discrete):
        raise ValueError(f"policy files need a flat Box input and Discrete actions, got {obs} and {act}")
    if not isinstance(policy.pi_features_extractor, FlattenExtractor):
        raise ValueError("policy files need the flatten feature extractor")
    arch: Any = policy.net_arch
    pi, vf = (arch.get("pi", []), arch.get("vf", [])) if isinstance(arch, dict) else (arch, arch)
    names = [k for k, cls in ACTIVATIONS.items() if policy.activation_fn is cls]
    if not names:
        raise ValueError(f"activation {policy.activation_fn.__name__} has no name in policy files")
    return PolicySpec(
        observation_size=int(obs.shape[0]),
        action_count=int(act.n),
        pi=tuple(int(x) for x in pi),
        vf=tuple(int(x) for x in vf),
        activation=names[0],
        features=policy.features,
        logit_bound=float(policy.logit_bound),
        ortho_init=bool(policy.ortho_init),
        observation_version=policy.observation_version,
    )


def build_policy(spec: PolicySpec) -> GuardedMaskablePolicy:
    """A fresh network of ``spec`` on the CPU, in eval mode, without gradients.

    Its initial weights are drawn with torch's global generator forked, so building one
    (loading an opponent, say) never changes the generator a training run draws from.
    """
    obs = spaces.Box(low=-np.inf, high=np.inf, shape=(spec.observation_size,), dtype=np.float32)
    with th.random.fork_rng(devices=[]):
        policy = GuardedMaskablePolicy(
            obs,
            spaces.Discrete(spec.action_count),
            _constant_zero,
            net_arch={"pi": list(spec.pi), "vf": list(spec.vf)},
            activation_fn=ACTIVATIONS[spec.activation],
            ortho_init=spec.ortho_init,
            logit_bound=spec.logit_bound,
            features=spec.features,
            observation_version=spec.observation_version,
        )
    policy.set_training_mode(False)
    for param in policy.parameters():
        param.requires_grad_(False)
    return policy


def _spec_text(spec: PolicySpec) -> str:
    """``policy.json``: one key per line, each value compact."""
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in spec.to_json().items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def save_policy(policy: GuardedMaskablePolicy, path: str | os.PathLike[str]) -> PolicySpec:
    """Write ``policy`` as a policy file (module docstring) at ``path``, atomically; its spec."""
    spec = policy_spec(policy)
    state = policy.state_dict()
    shapes = spec.parameter_shapes()
    if {k: tuple(v.shape) for k, v in state.items()} != shapes:
        raise ValueError(f"the network's parameters are not those of its architecture {spec}")
    arrays = {name: state[name].detach().cpu().numpy() for name in shapes}
    write_npy_zip(path, _spec_text(spec), arrays, zipfile.ZIP_STORED)
    return spec


def _open_zip(path: Path, what: str = "a policy file") -> zipfile.ZipFile:
    """``path`` as a zip archive; a pickle or anything else is refused (``what`` it should be),
    and so is a file that cannot be read (permissions, an I/O error; a missing file stays a
    ``FileNotFoundError``) and an archive of odd member names (:func:`check_member_names`)."""
    try:
        try:
            zf = zipfile.ZipFile(path)
        except zipfile.BadZipFile:  # a pickle or anything else, told apart by its first bytes
            with open(path, "rb") as f:  # an I/O error may surface only here
                head = f.read(2)
        else:
            try:
                check_member_names(zf)
            except ValueError as err:
                zf.close()
                raise PolicyFileError(path, str(err)) from None
            return zf
    except FileNotFoundError:
        raise
    except OSError as err:
        raise PolicyFileError(path, f"cannot read it ({os_error_text(err)})") from None
    if head[:1] == b"\x80":  # a pickle's PROTO opcode (torch.save's legacy format, pickle.dump)
        raise PolicyFileError(path, f"a pickle, not {what}: {_REFUSED}") from None
    raise PolicyFileError(path, f"not {what} (not a zip archive)") from None


def _member(zf: zipfile.ZipFile, path: Path, name: str, limit: int) -> bytes:
    """The bytes of member ``name`` (at most ``limit``; :func:`read_member`)."""
    try:
        return read_member(zf, name, limit)
    except ValueError as err:
        raise PolicyFileError(path, str(err)) from None


def _json_member(zf: zipfile.ZipFile, path: Path, name: str, limit: int = MAX_JSON_BYTES) -> Any:
    """The JSON of member ``name`` (:func:`read_json_member`)."""
    try:
        return read_json_member(zf, name, limit)
    except ValueError as err:
        raise PolicyFileError(path, str(err)) from None


def _shape_difference(found: Mapping[str, tuple[int, ...]], expected: Mapping[str, tuple[int, ...]]) -> str:
    """The first parameter whose presence or shape differs from the architecture's, as text."""
    for name in [*expected, *found]:
        if found.get(name) != expected.get(name):
            return f"parameter {name} has shape {found.get(name)}, the architecture says {expected.get(name)}"
    return "the parameters are those of the architecture"


def _assemble(spec: PolicySpec, weights: Mapping[str, np.ndarray], path: Path) -> GuardedMaskablePolicy:
    policy = build_policy(spec)
    built, shapes = {k: tuple(v.shape) for k, v in policy.state_dict().items()}, spec.parameter_shapes()
    if built != shapes:  # only if SB3 changed its network layout
        difference = _shape_difference(built, shapes)
        raise PolicyFileError(path, f"this version builds another network: {difference}")
    policy.load_state_dict({k: th.from_numpy(np.asarray(w)) for k, w in weights.items()}, strict=True)
    return policy


def _read_policy_file(zf: zipfile.ZipFile, path: Path, env_version: int) -> GuardedMaskablePolicy:
    data = _json_member(zf, path, SPEC_MEMBER, MAX_HEADER_BYTES)
    try:
        spec = PolicySpec.from_json(data, env_version)
    except ValueError as err:
        raise PolicyFileError(path, f"{SPEC_MEMBER}: {err}") from None
    try:
        weights = read_npy_members(zf, spec.parameter_shapes())
    except ValueError as err:
        raise PolicyFileError(path, str(err)) from None
    return _assemble(spec, weights, path)


def _sb3_space(data: Mapping[str, Any], key: str, kind: str) -> Mapping[str, Any]:
    space = data.get(key)
    if not isinstance(space, dict) or space.get(":type:") != f"<class 'gymnasium.spaces.{kind}'>":
        raise ValueError(f"{key} is not a gymnasium {kind.rsplit('.', 1)[-1]}")
    return space


def _sb3_spec(data: Any) -> tuple[PolicySpec, int]:
    """The spec and ``num_timesteps`` of an SB3 archive's ``data`` JSON, from its plain
    entries only (``ValueError`` saying what is missing or would need unpickling)."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    policy_class = data.get("policy_class")
    module = policy_class.get("__module__") if isinstance(policy_class, dict) else None
    if module not in SB3_POLICY_MODULES:
        raise ValueError(
            f"policy_class from {module!r}: only GuardedMaskablePolicy models are read here "
            "(any other SB3 model plays as ppo[path=MODEL.zip]: agents.sb3_model)"
        )
    kwargs = data.get("policy_kwargs", {})
    if not isinstance(kwargs, dict) or ":serialized:" in kwargs:
        raise ValueError(f"policy_kwargs would need unpickling: {_REFUSED}")
    unknown = sorted(
        set(kwargs) - {"net_arch", "logit_bound", "features", "observation_version", "ortho_init"}
    )
    if unknown:
        raise ValueError(f"policy_kwargs {unknown} are not read without unpickling: {_REFUSED}")
    arch = kwargs.get("net_arch", {"pi": [64, 64], "vf": [64, 64]})  # SB3's default
    pi: Any = arch.get("pi") if isinstance(arch, dict) else arch
    vf: Any = arch.get("vf") if isinstance(arch, dict) else arch
    obs = _sb3_space(data, "observation_space", "box.Box")
    shape = obs.get("_shape")
    if obs.get("dtype") != "float32" or not isinstance(shape, list) or len(shape) != 1:
        raise ValueError(f"observation_space must be a flat float32 Box, got shape {shape!r}")
    act = _sb3_space(data, "action_space", "discrete.Discrete")
    n, start = str(act.get("n")), str(act.get("start", "0"))
    if not n.isdigit() or start != "0":
        raise ValueError(f"action_space must be Discrete(n) from 0, got n={n!r} start={start!r}")
    steps: Any = data.get("num_timesteps")
    if not _is_int(steps) or steps < 0:
        raise ValueError(f"num_timesteps must be an int >= 0, got {steps!r}")
    spec = PolicySpec(
        observation_size=shape[0],
        action_count=int(n),
        pi=tuple(pi) if isinstance(pi, list) else pi,
        vf=tuple(vf) if isinstance(vf, list) else vf,
        features=kwargs.get("features", "env"),
        logit_bound=kwargs.get("logit_bound", 20.0),
        ortho_init=kwargs.get("ortho_init", True),
        # an archive written before policies recorded it read observation version 1, the
        # only layout there was (the rule of format-version-1 policy files)
        observation_version=kwargs.get("observation_version", PRE_FIELD_OBSERVATION_VERSION),
    )
    return spec, steps


def _weights_only(raw: bytes, path: Path, shapes: Mapping[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """``policy.pth`` through torch's weights-only unpickler, checked against the parameter
    ``shapes``: the same names, shapes, finite float32."""
    try:
        state = th.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise PolicyFileError(path, f"policy.pth: not a weights-only state dict ({first})") from None
    if not isinstance(state, dict) or not all(isinstance(v, th.Tensor) for v in state.values()):
        raise PolicyFileError(path, "policy.pth: not a state dict of tensors")
    found = {k: tuple(v.shape) for k, v in state.items()}
    if found != shapes:
        raise PolicyFileError(path, f"policy.pth: {_shape_difference(found, shapes)}")
    weights = {}
    for name, tensor in state.items():
        if tensor.dtype != th.float32 or not bool(th.isfinite(tensor).all()):
            raise PolicyFileError(path, f"policy.pth: {name} is not finite float32")
        weights[name] = tensor.numpy()
    return weights


_Parsed = TypeVar("_Parsed")  #: what a caller of _read_sb3_zip makes of an archive's data


def _read_sb3_zip(
    path: str | os.PathLike[str],
    parse: Callable[[Any], tuple[_Parsed, str, int, Mapping[str, tuple[int, ...]]]],
    env_version: int | None,
) -> tuple[_Parsed, dict[str, np.ndarray]]:
    """``parse(data)``'s plan and the ``policy.pth`` weights of an SB3 model archive, read
    without unpickling; ``parse`` also gives the input's feature set and version (checked
    against ``env_version``) and the parameter shapes; :class:`PolicyFileError` otherwise."""
    p = Path(path)
    with _open_zip(p, "an SB3 model archive") as zf:
        missing = [m for m in ("data", "policy.pth") if m not in zf.NameToInfo]
        if missing:
            raise PolicyFileError(p, f"not an SB3 model archive (no {' and '.join(missing)})")
        data = _json_member(zf, p, "data")
        try:
            plan, features, version, shapes = parse(data)
        except ValueError as err:
            raise PolicyFileError(p, f"data: {err}") from None
        if env_version is not None:
            try:
                _check_input_version(features, version, env_version)
            except ValueError as err:
                raise PolicyFileError(p, str(err)) from None
        limit = 4 * sum(math.prod(s) for s in shapes.values()) + (1 << 20)
        weights = _weights_only(_member(zf, p, "policy.pth", limit), p, shapes)
    return plan, weights


def read_sb3_archive(
    path: str | os.PathLike[str], env_version: int | None = None
) -> tuple[PolicySpec, int, dict[str, np.ndarray]]:
    """The policy spec, ``num_timesteps`` and policy weights of an SB3 model archive of a
    ``GuardedMaskablePolicy`` (``model.zip``), read without unpickling anything
    (:func:`_read_sb3_zip`); with ``env_version``, refused first if its input has another
    version (:func:`read_policy`)."""

    def parse(data: Any) -> tuple[tuple[PolicySpec, int], str, int, dict[str, tuple[int, ...]]]:
        spec, steps = _sb3_spec(data)
        assert spec.observation_version is not None  # resolved by PolicySpec
        return (spec, steps), spec.features, spec.observation_version, spec.parameter_shapes()

    (spec, steps), weights = _read_sb3_zip(path, parse, env_version)
    return spec, steps, weights


def read_policy(path: str | os.PathLike[str], env_version: int | None = None) -> GuardedMaskablePolicy:
    """The policy stored at ``path``: a policy file, or the policy of an SB3 model archive.

    ``env_version`` is the observation version of the env it will read (default the default
    layout's, :data:`~mtrain_env.mexican_train.observation.OBSERVATION_VERSION`): a network
    trained on another is refused, naming both versions, before its sizes are checked.
    Nothing is unpickled: a pickle (SB3's ``policy.save``, ``torch.save`` of an object) and
    every malformed file are refused with a :class:`PolicyFileError` (a ``ValueError``)
    ``<path>: <what is wrong>``. The network is on the CPU, in eval mode, without gradients.
    """
    from mtrain_env.mexican_train.observation import OBSERVATION_VERSION

    env = OBSERVATION_VERSION if env_version is None else env_version
    p = Path(path)
    with _open_zip(p) as zf:
        names = set(zf.namelist())
        if SPEC_MEMBER in names:
            return _read_policy_file(zf, p, env)
        if any(n == "data.pkl" or n.endswith("/data.pkl") for n in names):
            raise PolicyFileError(p, f"a pickled torch file (SB3's policy.save or torch.save): {_REFUSED}")
        if not {"data", "policy.pth"} <= names:
            raise PolicyFileError(p, f"not a policy file (a zip archive without {SPEC_MEMBER})")
    spec, _steps, weights = read_sb3_archive(p, env)
    return _assemble(spec, weights, p)


#: SB3's constructor arguments a pickled policy may hold, by kind (anything else is refused)
_PICKLED_POLICY_KEYS = frozenset(
    {
        "observation_space", "action_space", "normalize_images", "net_arch", "activation_fn", "lr_schedule",
        "ortho_init", "optimizer_class", "optimizer_kwargs", "features_extractor_class",
        "features_extractor_kwargs", "logit_bound", "features", "observation_version", "use_sde",
        "log_std_init", "full_std", "use_expln", "squash_output", "share_features_extractor",
    }
)  # fmt: skip


def _schedule_only(obj: Any, name: str) -> Any:
    """``getattr`` as a pickled policy may use it: SB3 pickles its placeholder learning-rate
    schedule as ``getattr(BasePolicy, "_dummy_schedule")``; nothing else is looked up."""
    from stable_baselines3.common.policies import BasePolicy

    if obj is BasePolicy and name == "_dummy_schedule":
        return BasePolicy._dummy_schedule
    raise pickle.UnpicklingError(f"the file looks up {name!r} on {obj!r}, which a policy never does")


def _numpy_reconstructors() -> list[Any]:
    """numpy's array and scalar reconstructors (``numpy._core`` in numpy 2, ``numpy.core`` before)."""
    import importlib

    name = "numpy._core.multiarray" if np.__version__ >= "2" else "numpy.core.multiarray"
    core = importlib.import_module(name)
    return [core._reconstruct, core.scalar]


def _pickled_policy_globals() -> list[Any]:
    """What ``torch.load(weights_only=True)`` may build from a policy SB3's ``policy.save``
    wrote: its spaces, activation, extractor and optimizer classes, numpy arrays and dtypes."""
    from stable_baselines3.common.policies import BasePolicy

    numpy_dtypes = [getattr(np.dtypes, n) for n in dir(np.dtypes) if n.endswith("DType")]
    return [
        (_schedule_only, "builtins.getattr"),
        (_constant_zero, "agents.policy_net._constant_zero"),
        (_constant_zero, "training.policy._constant_zero"),
        BasePolicy,
        spaces.Box,
        spaces.Discrete,
        FlattenExtractor,
        th.optim.Adam,
        *ACTIVATIONS.values(),
        np.dtype,
        np.ndarray,
        *_numpy_reconstructors(),
        *numpy_dtypes,
    ]


def read_pickled_policy(path: str | os.PathLike[str]) -> GuardedMaskablePolicy:
    """A policy written by SB3's ``policy.save`` (a torch pickle, as policies were saved
    before policy files), read by ``torch.load(weights_only=True)`` with only the globals of
    :func:`_pickled_policy_globals` allowed: nothing in the file is run, and a file naming
    anything else (a function to call, another class) is a :class:`PolicyFileError`."""
    p = Path(path)
    try:
        with th.serialization.safe_globals(_pickled_policy_globals()):
            saved = th.load(p, map_location="cpu", weights_only=True)
    except OSError as err:
        raise PolicyFileError(p, f"cannot read it ({os_error_text(err)})") from None
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as err:
        reason = weights_only_refusal(err)
        raise PolicyFileError(p, f"not a policy pickled by SB3's policy.save ({reason})") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("data"), dict) or "state_dict" not in saved:
        raise PolicyFileError(p, "not a policy pickled by SB3's policy.save (no data and state_dict)")
    data, state = saved["data"], saved["state_dict"]
    unknown = sorted(set(data) - _PICKLED_POLICY_KEYS)
    if unknown:
        raise PolicyFileError(p, f"constructor arguments {unknown} that a policy never holds")
    if data.get("activation_fn") not in ACTIVATIONS.values():
        raise PolicyFileError(
            p, f"activation {data.get('activation_fn')!r} is not one of {', '.join(ACTIVATIONS)}"
        )
    with th.random.fork_rng(devices=[]):
        try:
            policy = GuardedMaskablePolicy(**data)
            policy.load_state_dict(state)
        except (TypeError, ValueError, RuntimeError, KeyError, AttributeError) as err:
            raise PolicyFileError(p, f"does not build a policy ({type(err).__name__}: {err})") from None
    return policy.eval()


def upgrade_trusted_policy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> PolicySpec:
    """Convert a policy pickled by SB3's ``policy.save`` into a policy file; its spec.

    ``src`` is read by :func:`read_pickled_policy` (torch's ``weights_only`` loader with an
    allowlist: nothing in the file runs), so a file naming anything a policy never holds is
    refused with a :class:`PolicyFileError`.
    """
    return save_policy(read_pickled_policy(src), dst)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agents.policy_net SRC DST``: :func:`upgrade_trusted_policy`."""
    parser = OneLineErrorParser(
        prog="python -m agents.policy_net",
        description="Convert a policy pickled by SB3's policy.save into a policy file (policy.json + "
        "weights, read without unpickling); the pickle is read by torch's weights_only loader with an "
        "allowlist of what policy.save writes, so nothing in it runs.",
    )
    parser.add_argument("src", help="the pickled policy (policy.save / torch.save)")
    parser.add_argument("dst", help="the policy file to write (.npz)")
    args = parser.parse_args(argv)
    from mtrain_env.cli import output_problem

    problem = output_problem(args.dst)
    if problem is not None:
        print(f"{parser.prog}: DST: {problem}", file=sys.stderr)
        return 2
    try:
        spec = upgrade_trusted_policy(args.src, args.dst)
    except PolicyFileError as err:  # "<SRC>: <what is wrong>"
        print(f"{parser.prog}: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"{parser.prog}: {err.filename or args.dst}: {os_error_text(err)}", file=sys.stderr)
        return 2
    print(f"wrote {args.dst}: {json.dumps(spec.to_json(), separators=(',', ':'))[:200]}...")
    return 0


if __name__ == "__main__":
    # the classes must be those of ``agents.policy_net`` (which pickles name), not ``__main__``'s
    from agents import policy_net

    sys.exit(policy_net.main())
