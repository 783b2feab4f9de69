"""Self-play policy networks over the raw observation, and their policy files.

Two actor-critic networks read the env's observation vector (``features="env"``, nothing
else: no planner advice) and its action mask, and return masked action logits and a value:

* :class:`TileNet` sees the game's structure. Tiles are tokens: each tile id has a learned
  embedding, built from the embeddings of its two pip values plus its own; the hand and the
  table are pooled as sets of those tokens (a sum over the tiles present, with the counts
  of each pip value in hand and on the table). The trains are tokens too (open-end pip,
  started, marker, unsatisfied double, first pending, length, relative position). A trunk
  turns the pooled sets, the train tokens and the rest of the observation into a context
  vector. Each LEGAL ``(tile, train)`` action is then scored from its own tokens: the
  tile's embedding, the train's token, the pip the play would leave open (with how many
  hand tiles, table tiles and opponents' shown voids share it: what chain building needs)
  and the context, through a small MLP shared by every pair. DRAW and PASS are scored from
  the context. Only legal pairs are scored, so a decision costs a few pair evaluations,
  not ``T x (n + 1)``.
* :class:`MlpNet` is the baseline: an MLP over the flat vector with one logit per action.

**Policy files** (``.npz``, read by the ``ppo`` agent) are those of
:mod:`agents.mexican_train.selfplay_file` (``policy.json`` + float32 ``.npy``, no pickle);
:func:`read_selfplay_policy` rebuilds the torch network from one (``--init``, tests), the
``ppo`` agent plays them with the numpy forward pass of :mod:`agents.mexican_train.numpy_nets`.

Imports torch (training only: the ``ppo`` agent never imports this module).
"""

from __future__ import annotations

from pathlib import Path

import torch as th
from torch import nn

from agents.mexican_train.selfplay_file import (
    GRAPH_ROUNDS,
    GRAPH_WIDTH,
    MASKED,
    NET_KINDS,
    SELFPLAY_FORMAT,
    NetSpec,
    is_selfplay_policy,
    read_selfplay_file,
    write_selfplay_file,
)
from mtrain_env.mexican_train.observation import OBSERVATION_VERSION

__all__ = [
    "MASKED",
    "NET_KINDS",
    "SELFPLAY_FORMAT",
    "MlpNet",
    "NetSpec",
    "TileNet",
    "build_net",
    "is_selfplay_policy",
    "read_selfplay_policy",
    "save_selfplay_policy",
]


class _Views:
    """Index tensors of the observation views a network slices."""

    def __init__(self, spec: NetSpec) -> None:
        config = spec.config
        layout = spec.layout  # the layout of the network's observation version
        self.layout = layout
        self.size = layout.size
        self.v = layout.views
        self.n = config.num_players
        self.w = config.num_trains
        self.t = config.num_tiles
        self.p = config.max_pips + 1
        self.num_actions = config.num_actions

    def get(self, obs: th.Tensor, name: str) -> th.Tensor:
        view = self.v[name]
        return obs[:, view.slice].reshape(obs.shape[0], *view.shape)


class TileNet(nn.Module):
    """The structured actor-critic (see the module docstring)."""

    tile_lo: th.Tensor
    tile_hi: th.Tensor
    incidence: th.Tensor
    is_double: th.Tensor
    rest_idx: th.Tensor
    edges: th.Tensor
    double_of: th.Tensor
    #: rounds of message passing over the hand's pip graph (0: none; :class:`GraphNet` has 3)
    graph_rounds = GRAPH_ROUNDS["tile"]
    #: width of the pip-node embeddings of the graph
    graph_width = GRAPH_WIDTH

    def __init__(self, spec: NetSpec) -> None:
        super().__init__()
        self.spec = spec
        cfg = spec.config
        vw = _Views(spec)
        self.views = vw
        h, hp = spec.hidden, spec.pair_hidden
        t, p, w = vw.t, vw.p, vw.w
        tiles = cfg.tiles.tiles
        lo = th.tensor([a for a, _ in tiles])
        hi = th.tensor([b for _, b in tiles])
        incidence = th.zeros(t, p)
        incidence[th.arange(t), lo] = 1.0
        incidence[th.arange(t), hi] = 1.0
        self.register_buffer("tile_lo", lo, persistent=False)
        self.register_buffer("tile_hi", hi, persistent=False)
        self.register_buffer("incidence", incidence, persistent=False)
        self.register_buffer("is_double", (lo == hi).float()[:, None], persistent=False)
        # tile tokens: pip embeddings of both halves + a per-tile term
        self.pip_embed = nn.Parameter(th.randn(p, hp) * 0.3)
        self.tile_embed = nn.Parameter(th.zeros(t, hp))
        self.double_embed = nn.Parameter(th.zeros(hp))
        # set pooling of the hand and the table into the trunk (sum of tile tokens)
        self.hand_pool = nn.Linear(hp, h, bias=False)
        self.table_pool = nn.Linear(hp, h, bias=False)
        # train tokens: end pip one-hot, 5 flags/values, relative position
        self.train_in = 2 * p + 5 + w
        self.train_token = nn.Linear(self.train_in, hp)
        # trunk: pooled sets + own and pooled train tokens + pip counts + the rest of the observation
        rest = vw.size - 2 * t
        gw = self.graph_width
        graph = gw if self.graph_rounds else 0
        self.trunk = nn.Sequential(
            nn.Linear(h + 2 * hp + 2 * p + rest + graph, h),
            nn.ReLU(),
            nn.Linear(h, h),
            nn.ReLU(),
        )
        # pair scorer
        self.pair_context = nn.Linear(h, hp)
        self.open_embed = nn.Parameter(th.randn(p, hp) * 0.3)
        self.open_counts = nn.Linear(4, hp, bias=False)
        self.pair_mlp = nn.Sequential(nn.ReLU(), nn.Linear(hp, hp), nn.ReLU(), nn.Linear(hp, 1))
        self.special = nn.Linear(h, 2)  # DRAW, PASS
        self.value_head = nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 1))
        if self.graph_rounds:
            # the hand as a multigraph on pip values: tile (a, b) is an edge a - b (a loop for
            # a double); chains are trails in it. edges[t] is the (P x P) adjacency of tile t.
            edges = th.zeros(t, p * p)
            edges[th.arange(t), lo * p + hi] = 1.0
            edges[th.arange(t), hi * p + lo] = 1.0
            self.register_buffer("edges", edges, persistent=False)
            self.register_buffer(
                "double_of", th.tensor([cfg.tiles.tile_id(v, v) for v in range(p)]), persistent=False
            )
            self.node_in = nn.Linear(6, gw)
            self.node_pip = nn.Parameter(th.randn(p, gw) * 0.3)
            self.node_self = nn.ModuleList(nn.Linear(gw, gw) for _ in range(self.graph_rounds))
            self.node_nb = nn.ModuleList(nn.Linear(gw, gw, bias=False) for _ in range(self.graph_rounds))
            self.open_node = nn.Linear(gw, hp, bias=False)
        rest_idx = th.cat(
            [th.arange(vw.size)[vw.v[name].slice] for name in vw.v if name not in ("hand", "table")]
        )
        self.register_buffer("rest_idx", rest_idx, persistent=False)

    def tokens(self) -> th.Tensor:
        """``(T, pair_hidden)`` tile embeddings."""
        pe = self.pip_embed
        return pe[self.tile_lo] + pe[self.tile_hi] + self.tile_embed + self.is_double * self.double_embed

    def forward(self, obs: th.Tensor, mask: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        """Masked logits ``(N, A)`` (illegal: ``MASKED``) and values ``(N,)``."""
        vw = self.views
        n_rows = obs.shape[0]
        w, p, t = vw.w, vw.p, vw.t
        tok = self.tokens()
        hand = vw.get(obs, "hand")
        table = vw.get(obs, "table")
        hand_pips = hand @ self.incidence  # (N, P): hand tiles with each pip
        table_pips = table @ self.incidence
        ends = vw.get(obs, "train_end")  # (N, W, P)
        voids = vw.get(obs, "opponent_void").sum(1)  # (N, P): opponents void in each pip
        per_train = th.stack(
            [
                vw.get(obs, "train_started"),
                vw.get(obs, "train_marker"),
                vw.get(obs, "train_double"),
                vw.get(obs, "pending_first"),
                vw.get(obs, "train_length"),
            ],
            dim=2,
        )  # (N, W, 5)
        position = th.eye(w, device=obs.device).expand(n_rows, w, w)
        train_x = th.cat([ends, ends * (hand_pips.unsqueeze(1) / 4.0), per_train, position], dim=2)
        train_tok = th.relu(self.train_token(train_x))  # (N, W, hp)
        pooled = self.hand_pool(hand @ tok / 8.0) + self.table_pool(table @ tok / 32.0)
        nodes = None
        extra = []
        if self.graph_rounds:
            nodes = self._pip_graph(hand, hand_pips, table_pips, ends, voids)
            extra = [nodes.mean(1)]
        trunk_in = th.cat(
            [
                *extra,
                pooled,
                train_tok[:, 0],
                train_tok.sum(1),
                hand_pips / 4.0,
                table_pips / 8.0,
                obs[:, self.rest_idx],
            ],
            dim=1,
        )
        ctx = self.trunk(trunk_in)
        logits = th.full((n_rows, vw.num_actions), MASKED, dtype=obs.dtype, device=obs.device)
        special = self.special(ctx)
        tw = t * w
        logits[:, tw:] = th.where(mask[:, tw:], special, logits[:, tw:])
        rows, acts = th.nonzero(mask[:, :tw], as_tuple=True)
        if rows.numel():
            tile, train = acts // w, acts % w
            end = ends.argmax(2)[rows, train]
            lo, hi = self.tile_lo[tile], self.tile_hi[tile]
            # the half left open (the end itself for a double); clamped only for masks that
            # no game gives (a tile that does not match its train's end)
            open_pip = (lo + hi - end).clamp(0, p - 1)
            counts = th.stack(
                [
                    hand_pips[rows, open_pip] / 4.0,
                    table_pips[rows, open_pip] / 8.0,
                    voids[rows, open_pip] / 3.0,
                    hand_pips[rows, end] / 4.0,
                ],
                dim=1,
            )
            x = (
                tok[tile]
                + train_tok[rows, train]
                + self.open_embed[open_pip]
                + self.open_counts(counts)
                + self.pair_context(ctx)[rows]
            )
            if nodes is not None:
                x = x + self.open_node(nodes[rows, open_pip])
            logits[rows, acts] = self.pair_mlp(x).squeeze(1)
        value = self.value_head(ctx).squeeze(1)
        return logits, value

    def _pip_graph(
        self, hand: th.Tensor, hand_pips: th.Tensor, table_pips: th.Tensor, ends: th.Tensor, voids: th.Tensor
    ) -> th.Tensor:
        """``(N, P, pair_hidden)`` embeddings of the pip values after message passing along
        the hand's tiles (what chains the hand can build from each pip)."""
        n_rows, p = hand.shape[0], self.views.p
        adjacency = (hand @ self.edges).reshape(n_rows, p, p) / 4.0
        features = th.stack(
            [
                hand_pips / 4.0,
                ends[:, 0],  # the own train's open end
                ends.sum(1) / 2.0,  # trains open on the pip
                table_pips / 8.0,
                voids / 3.0,
                hand[:, self.double_of],  # the double of the pip is in hand
            ],
            dim=2,
        )
        x = th.relu(self.node_in(features) + self.node_pip)
        for own, nb in zip(self.node_self, self.node_nb, strict=True):
            x = x + th.relu(own(x) + nb(adjacency @ x))
        return x


class GraphNet(TileNet):
    """:class:`TileNet` plus message passing over the hand's pip graph (tiles are edges between
    pip values, so chains are trails): each pip value gets an embedding of the chains the hand
    can build from it, pooled into the context and given to every pair that leaves it open."""

    graph_rounds = GRAPH_ROUNDS["graph"]


class MlpNet(nn.Module):
    """The baseline: flat observation -> 2 hidden layers -> one logit per action, and a value."""

    def __init__(self, spec: NetSpec) -> None:
        super().__init__()
        self.spec = spec
        vw = _Views(spec)
        self.views = vw
        h = spec.hidden
        self.trunk = nn.Sequential(nn.Linear(vw.size, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.policy_head = nn.Linear(h, vw.num_actions)
        self.value_head = nn.Linear(h, 1)

    def forward(self, obs: th.Tensor, mask: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        """Masked logits ``(N, A)`` (illegal: ``MASKED``) and values ``(N,)``."""
        z = self.trunk(obs)
        logits = th.where(mask, self.policy_head(z), th.full((), MASKED, dtype=obs.dtype))
        return logits, self.value_head(z).squeeze(1)


def build_net(spec: NetSpec, seed: int | None = None) -> TileNet | MlpNet:
    """A fresh network of ``spec`` (weights from ``seed``, else torch's global generator)."""
    classes: dict[str, type[TileNet] | type[MlpNet]] = {"tile": TileNet, "graph": GraphNet, "mlp": MlpNet}
    cls = classes[spec.net]
    if seed is None:
        return cls(spec)
    with th.random.fork_rng(devices=[]):
        th.manual_seed(seed)
        return cls(spec)


# ----------------------------------------------------------------- policy files
def save_selfplay_policy(net: TileNet | MlpNet, path: str | Path) -> Path:
    """Write ``net`` (a :class:`TileNet` or :class:`MlpNet`) as a policy file, atomically."""
    arrays = {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}
    return write_selfplay_file(net.spec, arrays, path)


def read_selfplay_policy(path: str | Path, env_version: int = OBSERVATION_VERSION) -> TileNet | MlpNet:
    """The torch network stored at ``path``, in eval mode without gradients, for an env
    writing observation version ``env_version``; ``ValueError`` (``<path>: <what is
    wrong>``) for anything that is not such a file or a network of another version."""
    spec, arrays = read_selfplay_file(path, env_version)
    net = build_net(spec, seed=0)
    net.load_state_dict({k: th.from_numpy(v.copy()) for k, v in arrays.items()})
    net.eval()
    for param in net.parameters():
        param.requires_grad_(False)
    return net
