"""The self-play networks' forward pass in numpy: how the ``ppo`` agent plays a policy file.

:mod:`agents.mexican_train.tilenet` defines the networks (``tile``, ``graph``, ``mlp``) in
torch for training; one decision at a time, torch's per-call overhead dominates the cost
of these small networks. This module computes the same masked logits and value from the policy file's
float32 arrays with numpy only (no torch import: ``ppo[path=...]`` on a self-play file
needs the base install), in float64, with everything that depends on the weights alone
precomputed once: the tile tokens and their projections into the trunk (sums of tokens
commute with the linear pooling layers). ``tests/agents/test_numpy_nets.py`` checks that the
logits equal torch's within 1e-5 on the legal actions of real positions (within 1e-9 of
torch in float64), and that the moves chosen are the same.

The forward pass is batched (``(N, D)`` observations); the agent calls it with ``N = 1``.
Search leaves (:mod:`agents.mexican_train.value_leaf`) run big batches in float32
(:func:`numpy_net` ``dtype=``), about twice as fast, within float32 rounding of float64.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from agents.mexican_train.selfplay_file import GRAPH_ROUNDS, MASKED, NetSpec, read_selfplay_file
from mtrain_env.mexican_train.observation import OBSERVATION_VERSION

__all__ = ["NumpyMlpNet", "NumpyTileNet", "SelfPlayPolicy", "load_selfplay_policy", "numpy_net"]

Arrays = dict[str, np.ndarray]


def _relu(x: np.ndarray) -> np.ndarray:
    """``max(x, 0)`` IN PLACE (every caller passes a temporary), returned."""
    return np.maximum(x, 0.0, out=x)


def _cast(net: object, dtype: type) -> None:
    """Every float array of ``net`` (and of its layers) converted to ``dtype``, in place."""
    for name, value in vars(net).items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            setattr(net, name, value.astype(dtype))
        elif isinstance(value, _Linear):
            _cast(value, dtype)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, _Linear):
                    _cast(item, dtype)


class _Linear:
    """``x @ weight.T + bias`` with the weight stored transposed, in float64."""

    def __init__(self, arrays: Arrays, name: str, bias: bool = True) -> None:
        self.wt = np.ascontiguousarray(arrays[f"{name}.weight"].T, dtype=np.float64)
        self.b = arrays[f"{name}.bias"].astype(np.float64) if bias else None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        y = x @ self.wt
        if self.b is not None:
            y += self.b
        return y


class NumpyTileNet:
    """:class:`~agents.mexican_train.tilenet.TileNet` (and ``GraphNet``) in numpy."""

    dtype: type = np.float64  #: what the forward pass computes in (:func:`numpy_net`)

    def __init__(self, spec: NetSpec, arrays: Arrays) -> None:
        self.spec = spec
        cfg = spec.config
        layout = spec.layout  # the layout of the network's observation version
        self.size, self.num_actions = layout.size, cfg.num_actions
        self.w, self.t, self.p = cfg.num_trains, cfg.num_tiles, cfg.max_pips + 1
        self.slices = {name: (view.slice, view.shape) for name, view in layout.views.items()}
        self.rest_idx = np.concatenate(
            [
                np.arange(layout.size)[v.slice]
                for name, v in layout.views.items()
                if name not in ("hand", "table")
            ]
        )
        t, p = self.t, self.p
        tiles = cfg.tiles.tiles
        self.lo = np.array([a for a, _ in tiles], np.int64)
        self.hi = np.array([b for _, b in tiles], np.int64)
        self.incidence = np.zeros((t, p))
        self.incidence[np.arange(t), self.lo] = 1.0
        self.incidence[np.arange(t), self.hi] = 1.0
        f = {k: v.astype(np.float64) for k, v in arrays.items()}
        is_double = (self.lo == self.hi).astype(np.float64)[:, None]
        self.tok = (
            f["pip_embed"][self.lo]
            + f["pip_embed"][self.hi]
            + f["tile_embed"]
            + is_double * f["double_embed"]
        )
        # the pooled sets: hand_pool(hand @ tok / 8) = hand @ (tok @ W.T / 8)
        self.hand_tok = self.tok @ f["hand_pool.weight"].T / 8.0
        self.table_tok = self.tok @ f["table_pool.weight"].T / 32.0
        self.position = np.eye(self.w)
        self.train_token = _Linear(f, "train_token")
        self.trunk0, self.trunk2 = _Linear(f, "trunk.0"), _Linear(f, "trunk.2")
        self.pair_context = _Linear(f, "pair_context")
        self.open_embed = f["open_embed"]
        self.open_counts = _Linear(f, "open_counts", bias=False)
        self.pair1, self.pair3 = _Linear(f, "pair_mlp.1"), _Linear(f, "pair_mlp.3")
        self.special = _Linear(f, "special")
        self.value0, self.value2 = _Linear(f, "value_head.0"), _Linear(f, "value_head.2")
        self.rounds = GRAPH_ROUNDS[spec.net]
        if self.rounds:
            self.edges = np.zeros((t, p * p))
            self.edges[np.arange(t), self.lo * p + self.hi] = 1.0
            self.edges[np.arange(t), self.hi * p + self.lo] = 1.0
            self.double_of = np.array([cfg.tiles.tile_id(v, v) for v in range(p)], np.int64)
            self.node_in = _Linear(f, "node_in")
            self.node_pip = f["node_pip"]
            self.node_self = [_Linear(f, f"node_self.{r}") for r in range(self.rounds)]
            self.node_nb = [_Linear(f, f"node_nb.{r}", bias=False) for r in range(self.rounds)]
            self.open_node = _Linear(f, "open_node", bias=False)

    def view(self, obs: np.ndarray, name: str) -> np.ndarray:
        sl, shape = self.slices[name]
        return obs[:, sl].reshape(obs.shape[0], *shape)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Masked logits ``(N, A)`` (illegal: ``MASKED``) and values ``(N,)``."""
        logits, ctx = self._forward(obs, mask)
        return logits, self.value2(_relu(self.value0(ctx)))[:, 0]

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The masked logits alone, without the value head (a rollout's moves need only these)."""
        return self._forward(obs, mask)[0]

    def _forward(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Masked logits ``(N, A)`` and the trunk's context ``(N, hidden)`` (the value head's input)."""
        obs = np.asarray(obs, self.dtype).reshape(-1, self.size)
        mask = np.asarray(mask).reshape(obs.shape[0], -1) != 0
        n_rows, w, p, t = obs.shape[0], self.w, self.p, self.t
        hand, table = self.view(obs, "hand"), self.view(obs, "table")
        hand_pips, table_pips = hand @ self.incidence, table @ self.incidence
        ends = self.view(obs, "train_end")  # (N, W, P)
        voids = self.view(obs, "opponent_void").sum(1)
        per_train = np.stack(
            [
                self.view(obs, name)
                for name in ("train_started", "train_marker", "train_double", "pending_first", "train_length")
            ],
            axis=2,
        )
        position = np.broadcast_to(self.position, (n_rows, w, w))
        train_x = np.concatenate([ends, ends * (hand_pips[:, None, :] / 4.0), per_train, position], axis=2)
        train_tok = _relu(self.train_token(train_x))  # (N, W, hp)
        pooled = hand @ self.hand_tok + table @ self.table_tok
        nodes = self._pip_graph(hand, hand_pips, table_pips, ends, voids) if self.rounds else None
        parts: list[np.ndarray] = [] if nodes is None else [nodes.mean(1)]
        parts += [
            pooled,
            train_tok[:, 0],
            train_tok.sum(1),
            hand_pips / 4.0,
            table_pips / 8.0,
            obs[:, self.rest_idx],
        ]
        ctx = _relu(self.trunk2(_relu(self.trunk0(np.concatenate(parts, axis=1)))))
        logits = np.full((n_rows, self.num_actions), MASKED)
        tw = t * w
        logits[:, tw:] = np.where(mask[:, tw:], self.special(ctx), MASKED)
        rows, acts = np.nonzero(mask[:, :tw])
        if rows.size:
            tile, train = acts // w, acts % w
            end = ends.argmax(2)[rows, train]
            open_pip = np.clip(self.lo[tile] + self.hi[tile] - end, 0, p - 1)
            counts = np.stack(
                [
                    hand_pips[rows, open_pip] / 4.0,
                    table_pips[rows, open_pip] / 8.0,
                    voids[rows, open_pip] / 3.0,
                    hand_pips[rows, end] / 4.0,
                ],
                axis=1,
            )
            x = (
                self.tok[tile]
                + train_tok[rows, train]
                + self.open_embed[open_pip]
                + self.open_counts(counts)
                + self.pair_context(ctx)[rows]
            )
            if nodes is not None:
                x = x + self.open_node(nodes[rows, open_pip])
            logits[rows, acts] = self.pair3(_relu(self.pair1(_relu(x))))[:, 0]
        return logits, ctx

    def _pip_graph(
        self,
        hand: np.ndarray,
        hand_pips: np.ndarray,
        table_pips: np.ndarray,
        ends: np.ndarray,
        voids: np.ndarray,
    ) -> np.ndarray:
        """``(N, P, graph width)`` pip-node embeddings after the message passing (``GraphNet``)."""
        n_rows, p = hand.shape[0], self.p
        adjacency = (hand @ self.edges).reshape(n_rows, p, p) / 4.0
        features = np.stack(
            [
                hand_pips / 4.0,
                ends[:, 0],
                ends.sum(1) / 2.0,
                table_pips / 8.0,
                voids / 3.0,
                hand[:, self.double_of],
            ],
            axis=2,
        )
        x = _relu(self.node_in(features) + self.node_pip)
        for own, nb in zip(self.node_self, self.node_nb, strict=True):
            x = x + _relu(own(x) + nb(adjacency @ x))
        return x


class NumpyMlpNet:
    """:class:`~agents.mexican_train.tilenet.MlpNet` in numpy."""

    dtype: type = np.float64  #: what the forward pass computes in (:func:`numpy_net`)

    def __init__(self, spec: NetSpec, arrays: Arrays) -> None:
        self.spec = spec
        cfg = spec.config
        self.size, self.num_actions = spec.layout.size, cfg.num_actions
        f = {k: v.astype(np.float64) for k, v in arrays.items()}
        self.trunk0, self.trunk2 = _Linear(f, "trunk.0"), _Linear(f, "trunk.2")
        self.policy_head, self.value_head = _Linear(f, "policy_head"), _Linear(f, "value_head")

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Masked logits ``(N, A)`` (illegal: ``MASKED``) and values ``(N,)``."""
        obs = np.asarray(obs, self.dtype).reshape(-1, self.size)
        mask = np.asarray(mask).reshape(obs.shape[0], -1) != 0
        z = _relu(self.trunk2(_relu(self.trunk0(obs))))
        return np.where(mask, self.policy_head(z), MASKED), self.value_head(z)[:, 0]

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The masked logits alone (the value head is one small product: computed and dropped)."""
        return self(obs, mask)[0]


def numpy_net(spec: NetSpec, arrays: Arrays, dtype: type = np.float64) -> NumpyTileNet | NumpyMlpNet:
    """The numpy network of ``spec`` with the weights ``arrays`` (a ``state_dict`` as numpy),
    computing in ``dtype`` (float64, or float32 for speed)."""
    net = NumpyMlpNet(spec, arrays) if spec.net == "mlp" else NumpyTileNet(spec, arrays)
    if dtype != np.float64:
        _cast(net, dtype)
        net.dtype = dtype
    return net


class SelfPlayPolicy:
    """A self-play policy file as the ``ppo`` agent plays it: one decision at a time, in numpy.

    It has the attributes the agent checks of every policy (``observation_space.shape``,
    ``action_space.n``, ``features``, ``observation_version``); its logits need the action mask, since the
    structured networks score only the legal actions.
    """

    features = "env"

    def __init__(self, net: NumpyTileNet | NumpyMlpNet) -> None:
        self.net = net
        self.spec = net.spec
        #: the observation layout version the network reads (its file records it)
        self.observation_version = net.spec.observation_version
        self.observation_space = SimpleNamespace(shape=(net.size,))
        self.action_space = SimpleNamespace(n=net.num_actions)

    def masked_logits(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Logits of one decision (illegal actions: ``MASKED``)."""
        logits, _ = self.net(observation, mask)
        return logits[0]


def load_selfplay_policy(path: str | Path, env_version: int = OBSERVATION_VERSION) -> SelfPlayPolicy:
    """The policy file at ``path`` ready to play in an env writing observation version
    ``env_version`` (``ValueError`` naming the file if it is not one, or one of another
    version: :func:`~agents.mexican_train.selfplay_file.read_selfplay_file`)."""
    spec, arrays = read_selfplay_file(path, env_version)
    return SelfPlayPolicy(numpy_net(spec, arrays))
