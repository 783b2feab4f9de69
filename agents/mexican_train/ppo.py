"""``ppo``: a trained MaskablePPO policy playing through the common agent interface.

It reads only :attr:`Decision.observation` and :attr:`Decision.action_mask` (the seat's
own observation, exactly what the training wrapper gave the learner), computes the
policy's action logits and picks the best legal action (``deterministic=True``, the
default) or samples the masked softmax with its own seeded generator.

The policy file (``path``) is a policy file (``*.npz``: ``policy.json`` plus the weights,
as ``mtrain train`` writes ``policy.npz`` and league snapshots) or an SB3 model archive
(``model.zip``, ``final_model.zip``), both read by :func:`agents.policy_net.read_policy`
without unpickling anything; or the archive of any other stable-baselines3 / sb3-contrib
model saved with ``model.save()`` on the Gymnasium env (MaskablePPO, PPO, A2C, DQN with
``MlpPolicy``; :mod:`agents.sb3_model`, also read without unpickling), whose best legal
action by logit or, for DQN, by Q-value it plays; or a self-play policy file (``mtrain selfplay``: format
``mtrain-selfplay-policy``, read and played by :mod:`agents.mexican_train.numpy_nets` in
numpy, without torch or SB3; such a network scores the legal actions of the mask it is
given); a pickle
(SB3's ``policy.save``, ``torch.save``) or any other file is refused with a one-line
``ValueError`` naming it. A training run's output directory means its ``policy.npz``
(else ``final_model.zip``). The default is the repository's reference policy
``agents/policies/reference.npz``, a self-play policy file (4 players, double-12);
``agents/policies/maskable_ppo.npz`` is the earlier, MaskablePPO one. A policy only fits
the observation layout and game configuration it was trained on: its file records the
observation version of its input, and a network of another version than the default
layout's (:data:`~mtrain_env.mexican_train.observation.OBSERVATION_VERSION`, what every
``mtrain`` table writes) is refused on loading, naming both versions; a game whose env
writes another version (an opt-in ``observation_version``) is refused on the first
decision the same way. Then the observation size and action count must match; a mismatch
raises a ``ValueError`` naming both.

Policies are loaded once per process and path (a small cache shared by all ``ppo``
agents), and pickling an agent keeps its path and generator, not the network.

Importing this module registers the agent as ``"ppo"`` (``agents.make_agent("ppo",
path=...)``); the import needs torch and stable-baselines3 (the ``train`` extra) only when
an SB3-shaped policy or archive is loaded, never for a self-play policy file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.mexican_train.base import Agent, Decision, decision_for
from agents.mexican_train.features import FeatureEncoder
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.observation import OBSERVATION_VERSION, ObservationLayout

#: the repository's reference policy (default ``path``): PPO self-play from scratch on the raw
#: observation, the ``graph`` network (the guide's training page, "Self-play on the batched engine")
REFERENCE_POLICY = Path(__file__).resolve().parent.parent / "policies" / "reference.npz"
#: the earlier reference: MaskablePPO (SB3) with planner features and a behaviour-cloning start
MASKABLE_PPO_POLICY = Path(__file__).resolve().parent.parent / "policies" / "maskable_ppo.npz"
#: what a training run's directory holds, in the order a directory ``path`` looks for them
RUN_POLICY_FILES = ("policy.npz", "final_model.zip")

_CACHE: dict[str, Any] = {}


class NumpyActor:
    """The actor path of an MLP policy (flatten -> hidden layers -> action net) in numpy.

    One observation at a time, numpy beats torch's per-call overhead several times over
    (this is what league opponents and tournaments run). Built only for the plain
    ``MlpExtractor`` with ``Tanh`` or ``ReLU`` activations; :func:`numpy_actor` returns
    ``None`` for anything else and the agent falls back to torch.
    """

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str, bound: float) -> None:
        self.layers = layers  #: (weight.T, bias) per linear layer, the last one the action net
        self.activation = np.tanh if activation == "tanh" else (lambda x: np.maximum(x, 0.0))
        self.bound = bound

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        x = obs.astype(np.float32, copy=False)
        for w, b in self.layers[:-1]:
            x = self.activation(x @ w + b)
        w, b = self.layers[-1]
        logits = x @ w + b
        if self.bound > 0:  # the same guard as agents.policy_net.bound_logits
            logits = self.bound * np.tanh(np.nan_to_num(logits, nan=0.0) / self.bound)
        return logits


def numpy_actor(policy: Any) -> NumpyActor | None:
    """A :class:`NumpyActor` equal to ``policy``'s actor, or ``None`` if its shape is not plain."""
    import torch as th
    from stable_baselines3.common.torch_layers import FlattenExtractor

    if not isinstance(policy.pi_features_extractor, FlattenExtractor):
        return None
    layers: list[tuple[np.ndarray, np.ndarray]] = []
    activation = None
    for module in policy.mlp_extractor.policy_net:
        if isinstance(module, th.nn.Linear):
            layers.append((module.weight.detach().numpy().T.copy(), module.bias.detach().numpy().copy()))
        elif isinstance(module, (th.nn.Tanh, th.nn.ReLU)):
            kind = "tanh" if isinstance(module, th.nn.Tanh) else "relu"
            if activation not in (None, kind):
                return None
            activation = kind
        else:
            return None
    net = policy.action_net
    if not isinstance(net, th.nn.Linear):
        return None
    layers.append((net.weight.detach().numpy().T.copy(), net.bias.detach().numpy().copy()))
    return NumpyActor(layers, activation or "tanh", float(getattr(policy, "logit_bound", 0.0)))


def load_policy(path: str | Path) -> Any:
    """The policy stored at ``path`` (see the module docstring; cached per process, CPU, eval
    mode); ``ValueError`` for a file that is not a policy or would need unpickling."""
    return _load(path)[0]


def _load(path: str | Path) -> tuple[Any, NumpyActor | None]:
    key = str(Path(path).resolve())
    entry = _CACHE.get(key)
    if entry is None:
        p = Path(path)
        if p.is_dir():  # a training run's output directory
            p = next((p / f for f in RUN_POLICY_FILES if (p / f).is_file()), p / RUN_POLICY_FILES[0])
        if not p.is_file():
            raise FileNotFoundError(f"no policy file at {p}")
        from agents.mexican_train.numpy_nets import load_selfplay_policy
        from agents.mexican_train.selfplay_file import is_selfplay_policy

        if is_selfplay_policy(p):  # a self-play network (mtrain selfplay): numpy only
            entry = (load_selfplay_policy(p), None)
            _CACHE[key] = entry
            return entry
        from agents.sb3_model import is_sb3_model, read_sb3_model

        if is_sb3_model(p):  # any other SB3 model (PPO, A2C, DQN, MaskablePPO's own policy)
            entry = (read_sb3_model(p, OBSERVATION_VERSION), None)
            _CACHE[key] = entry
            return entry
        from agents.policy_format import FEATURE_SETS
        from agents.policy_net import PolicyFileError, read_policy

        policy = read_policy(p)
        if policy.features not in FEATURE_SETS:
            raise PolicyFileError(
                p, f"feature set {policy.features!r} is not one of {', '.join(FEATURE_SETS)}"
            )
        entry = (policy, numpy_actor(policy))
        _CACHE[key] = entry
    return entry


def _first_decision(config: GameConfig) -> Decision:
    """The first decision of a game of ``config`` (seed 0): what a feature set's size is read from."""
    from mtrain_env.mexican_train import raw_env

    env = raw_env(**config.to_dict())
    env.reset(seed=0)
    return decision_for(env, env.agent_selection)


def clear_cache(keep: set[str] | None = None) -> None:
    """Forget cached policies (all, or all but the resolved paths in ``keep``)."""
    for key in list(_CACHE):
        if keep is None or key not in keep:
            del _CACHE[key]


class PPOAgent(Agent):
    """A saved MaskablePPO policy (see the module docstring).

    Args:
        seed: seed of the generator used when ``deterministic=False``.
        path: policy file (``.npz``) or the ``model.save()`` archive (``.zip``) of an SB3 model
            (MaskablePPO, PPO, A2C, DQN); default the reference policy.
        deterministic: argmax over the legal logits (default) or sample the masked softmax.
        policy: an in-memory policy to use instead of loading ``path`` (training evaluation).
    """

    name = "ppo"

    def __init__(
        self,
        seed: int | None = None,
        path: str | Path | None = None,
        deterministic: bool = True,
        policy: Any = None,
    ) -> None:
        super().__init__(seed)
        self.path = str(path) if path is not None else str(REFERENCE_POLICY)
        self.deterministic = bool(deterministic)
        self._policy = policy
        self._actor: NumpyActor | None = None
        self._encoder: FeatureEncoder | None = None
        self._from_path = policy is None  #: the network can be reloaded from ``path``
        #: the env observation version the policy was last found to read
        self._checked_version: int | None = None
        #: logits and mask of the last decision (its probabilities are computed only when asked)
        self._last: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def policy(self) -> Any:
        """The underlying policy (loaded on first use)."""
        if self._policy is None:
            self._policy, self._actor = _load(self.path)
        return self._policy

    @property
    def features(self) -> FeatureEncoder:
        """The input builder of the policy's feature set (saved with the policy)."""
        if self._encoder is None:
            self._encoder = FeatureEncoder(getattr(self.policy, "features", "env"))
        return self._encoder

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Action logits (before masking) of one observation vector."""
        import torch as th

        from agents.policy_net import policy_logits

        policy = self.policy
        expected = policy.observation_space.shape
        if observation.shape != expected:
            raise ValueError(
                f"policy {self.path} expects observations of shape {expected}, got {observation.shape} "
                "(it was trained on another game configuration)"
            )
        if self._actor is not None:  # policies loaded from a file run in numpy
            return self._actor(observation)
        with th.no_grad():
            obs = th.as_tensor(observation, dtype=th.float32).reshape(1, -1)
            return policy_logits(policy, obs)[0].numpy()

    def check_game(self, config: GameConfig) -> None:
        """``ValueError`` unless the policy file loads and was trained for ``config``'s table
        (its observation size and action count)."""
        try:
            policy = self.policy
        except FileNotFoundError as err:
            raise ValueError(str(err)) from None
        self._check_version(OBSERVATION_VERSION)  # the layout every table of a config writes
        self._check_sampling()
        actions = int(policy.action_space.n)
        inputs = int(np.prod(policy.observation_space.shape))
        if getattr(policy, "features", "env") == "env":  # the raw observation
            size = ObservationLayout(config).size
        else:
            size = int(self.features(_first_decision(config)).size)
        if (inputs, actions) != (size, config.num_actions):
            raise ValueError(
                f"policy {self.path} was trained for another table ({inputs} inputs, {actions} actions); "
                f"this game has {size} and {config.num_actions} ({config.num_players} players, "
                f"double-{config.max_pips})"
            )

    def _check_version(self, env_version: int) -> None:
        """``ValueError`` naming both versions unless the policy reads observation version
        ``env_version`` (checked before any size: the sizes follow from the layout)."""
        found = getattr(self.policy, "observation_version", None)
        if found is None:  # an in-memory policy of no file (training evaluation)
            self._checked_version = env_version
            return
        from agents.policy_format import check_observation_version, input_label, input_version

        features = getattr(self.policy, "features", "env")
        try:
            check_observation_version(found, input_version(features, env_version), input_label(features))
        except ValueError as err:
            raise ValueError(f"policy {self.path}: {err}") from None
        self._checked_version = env_version

    def act(self, decision: Decision) -> int:
        if decision.observation_version != self._checked_version:
            self._check_version(decision.observation_version)
        mask = decision.action_mask
        if mask.shape[0] != int(self.policy.action_space.n):
            raise ValueError(
                f"policy {self.path} has {self.policy.action_space.n} actions, the game has {mask.shape[0]}"
            )
        policy = self.policy
        if hasattr(policy, "masked_logits"):  # a self-play network scores the legal actions only
            logits = policy.masked_logits(decision.observation, mask)
        else:
            logits = self.logits(self.features(decision))
        self._last = (logits, mask.copy())  # the env may reuse its mask buffer after the step
        if self.deterministic:
            return masked_argmax(logits, mask)
        self._check_sampling()
        return masked_sample(logits, mask, self.rng)

    def _check_sampling(self) -> None:
        """``ValueError`` for ``deterministic=False`` with a network of Q-values (a DQN
        model), which defines no distribution to sample."""
        if not self.deterministic and getattr(self.policy, "scores", "logits") == "q_values":
            raise ValueError(
                f"policy {self.path}: deterministic=false samples a policy's distribution; "
                "a DQN model scores actions by Q-values: play it with deterministic=true"
            )

    def params(self) -> dict[str, Any]:
        return {"path": self.path, "deterministic": self.deterministic}

    def last_annotations(self) -> dict[str, Any] | None:
        """The policy's probability of each legal action at the last decision (for replays:
        a function of this seat's own observation only), rounded to 4 decimals."""
        if self._last is None:
            return None
        if getattr(self.policy, "scores", "logits") == "q_values":  # a DQN's action values
            logits, mask = self._last
            return {"values": {str(a): round(float(logits[a]), 4) for a in np.flatnonzero(mask)}}
        probs = masked_probs(*self._last)
        return {"probs": {str(a): round(p, 4) for a, p in probs.items()}} if probs else None

    def __getstate__(self) -> dict[str, Any]:
        d = self.__dict__.copy()
        if self._from_path:
            d["_policy"] = None
            d["_actor"] = None  # reloaded from the path (and the per-process cache) on use
        d["_encoder"] = None  # rebuilt on use
        return d


def masked_argmax(logits: np.ndarray, mask: np.ndarray) -> int:
    """Index of the largest logit among the legal actions (first one on ties)."""
    legal = np.flatnonzero(mask)
    if legal.size == 0:
        raise ValueError("no legal action in the mask")
    return int(legal[int(np.argmax(logits[legal]))])


def _softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Probabilities of the ``legal`` actions under the masked softmax."""
    z = np.nan_to_num(logits[legal].astype(np.float64), nan=0.0)
    p = np.exp(z - z.max())
    return p / p.sum()


def masked_probs(logits: np.ndarray, mask: np.ndarray) -> dict[int, float]:
    """The masked softmax as ``{legal action: probability}``."""
    legal = np.flatnonzero(mask)
    return {int(a): float(x) for a, x in zip(legal, _softmax(logits, legal), strict=True)}


def masked_sample(logits: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """A legal action drawn from the masked softmax with ``rng``."""
    legal = np.flatnonzero(mask)
    if legal.size == 0:
        raise ValueError("no legal action in the mask")
    return int(legal[int(rng.choice(legal.size, p=_softmax(logits, legal)))])
