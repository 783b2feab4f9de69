"""PPO self-play on the compiled batched engine: one shared policy, every seat learns (issue 11).

:class:`SelfPlayPPO` plays ``num_games`` games of :class:`BatchedMexicanTrain` at once. In
every step the seat on turn in each game acts through ONE batched forward pass of the
shared network (games whose seat has a single legal action play it without the network);
every seat's decisions become training data with that seat's own returns
(:mod:`training.selfplay.seatbook`). After ``steps`` steps the rollout's decisions train the
network with clipped PPO, action masking and GAE along each seat's chain.

League (``opponents="planner"``, ``opponent_share=P``): in the first ``round(P * B)`` games a
random subset of 1..n-1 seats (``opponent_seats=k``: exactly ``k`` seats; redrawn per game at
each round start, from the run's ``league_rng``) is played by the compiled ``planner``
(:class:`~mtrain_env.mexican_train.compiled.batched_planner.BatchedPlanner`, one call for
all those games a step). Their decisions are not recorded, so they earn nothing and train
nothing; the learner's seats of those games learn against them. The other games are pure
self-play.

Determinism: the run is a function of its :class:`SelfPlayConfig` (``seed``): the deals
come from ``BatchedMexicanTrain.reset(seed)``, the network's initial weights, the sampled
actions and the minibatch order from generators seeded from it, and torch runs on one
thread unless ``threads`` says otherwise. :meth:`SelfPlayPPO.state_dict` captures all of
it (weights, optimizer, every game's state and generator, the carried decisions), so a
run resumed from a checkpoint continues exactly as if it had not stopped.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import torch as th

from agents.mexican_train.tilenet import NET_KINDS, NetSpec, build_net, read_selfplay_policy
from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain
from mtrain_env.mexican_train.compiled.batched_planner import BatchedPlanner
from training.selfplay.seatbook import Batch, SeatBook

__all__ = ["OPPONENTS", "SelfPlayConfig", "SelfPlayPPO"]

#: league opponents a run can play against: none (pure self-play) or the batched planner
OPPONENTS = ("none", "planner")


@dataclass(frozen=True)
class SelfPlayConfig:
    """Everything that defines a self-play run (checked on construction, one-line errors)."""

    num_players: int = 4
    max_pips: int = 12
    net: str = "tile"
    hidden: int = 128
    pair_hidden: int = 64
    num_games: int = 256
    steps: int = 64  #: env steps per rollout (each steps every game once)
    epochs: int = 3
    minibatch: int = 2048
    lr: float = 3e-4
    gamma: float = 1.0
    lam: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    seed: int = 0
    threads: int = 1
    #: a self-play policy file whose weights start the network ("": fresh weights from ``seed``)
    init: str = ""
    #: who plays the opponent seats of the league games (:data:`OPPONENTS`)
    opponents: str = "none"
    #: the share of the games that are league games (the first ``league_games`` games)
    opponent_share: float = 0.0
    #: opponent seats of each league game: 0 draws 1..n-1 uniformly, k plays exactly k
    #: (``n - 1``: one learner seat against the lineup, a best response to it)
    opponent_seats: int = 0

    def __post_init__(self) -> None:
        ints = {
            "num_players": (2, 8),
            "max_pips": (6, 18),
            "hidden": (8, 4096),
            "pair_hidden": (8, 4096),
            "num_games": (1, 1 << 16),
            "steps": (1, 1 << 16),
            "epochs": (1, 100),
            "minibatch": (16, 1 << 20),
            "threads": (1, 64),
            "seed": (0, 2**63 - 1),
        }
        for name, (lo, hi) in ints.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ValueError(f"{name} must be an int in {lo}..{hi}, got {v!r}")
        floats: dict[str, tuple[float, float]] = {
            "lr": (0.0, 1.0),
            "gamma": (0.0, 1.0),
            "lam": (0.0, 1.0),
            "clip": (0.0, 10.0),
            "ent_coef": (0.0, 10.0),
            "vf_coef": (0.0, 100.0),
            "max_grad_norm": (0.0, 1e6),
            "opponent_share": (0.0, 1.0),
        }
        for name, (flo, fhi) in floats.items():
            v = getattr(self, name)
            if (
                isinstance(v, bool)
                or not isinstance(v, (int, float))
                or not math.isfinite(v)
                or not flo <= v <= fhi
            ):
                raise ValueError(f"{name} must be a number in [{flo}, {fhi}], got {v!r}")
        if self.lr <= 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if self.net not in NET_KINDS:
            raise ValueError(f"net must be one of {', '.join(NET_KINDS)}, got {self.net!r}")
        if not isinstance(self.init, str):
            raise ValueError(f"init must be a policy file path, got {self.init!r}")
        if self.opponents not in OPPONENTS:
            raise ValueError(f"opponents must be one of {', '.join(OPPONENTS)}, got {self.opponents!r}")
        if self.opponents == "none" and self.opponent_share:
            raise ValueError(f"opponent_share needs opponents (e.g. planner), got {self.opponent_share!r}")
        if isinstance(self.opponent_seats, bool) or not isinstance(self.opponent_seats, int):
            raise ValueError(f"opponent_seats must be an int, got {self.opponent_seats!r}")
        if not 0 <= self.opponent_seats < self.num_players:
            most, got = self.num_players - 1, self.opponent_seats
            raise ValueError(f"opponent_seats must be in 0..{most} (0: drawn 1..n-1), got {got!r}")
        if self.opponent_seats and self.opponents == "none":
            raise ValueError(f"opponent_seats needs opponents (e.g. planner), got {self.opponent_seats!r}")
        if self.opponents != "none" and self.league_games == 0:
            raise ValueError(
                f"opponent_share must give at least one of the {self.num_games} games opponents "
                f"with opponents {self.opponents}, got {self.opponent_share!r}"
            )

    @property
    def league_games(self) -> int:
        """How many games (the first ones) have opponent seats."""
        if self.opponents == "none":
            return 0
        return math.floor(self.opponent_share * self.num_games + 0.5)

    def game(self) -> dict[str, int]:
        """The ``BatchedMexicanTrain`` / ``raw_env`` game keywords."""
        return {"num_players": self.num_players, "max_pips": self.max_pips}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SelfPlayConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown self-play settings {unknown}")
        return cls(**data)


class SelfPlayPPO:
    """The self-play learner (see the module docstring)."""

    def __init__(self, config: SelfPlayConfig) -> None:
        self.config = c = config
        th.set_num_threads(c.threads)
        self.env = BatchedMexicanTrain(
            c.num_games, copy=False, num_players=c.num_players, max_pips=c.max_pips
        )
        self.spec = NetSpec.make(c.net, self.env.config, c.hidden, c.pair_hidden)
        self.net = build_net(self.spec, seed=c.seed)
        if c.init:
            start = read_selfplay_policy(c.init)
            if start.spec != self.spec:
                raise ValueError(f"init: {c.init} holds a {start.spec} network, this run needs {self.spec}")
            self.net.load_state_dict(start.state_dict())
            for param in self.net.parameters():
                param.requires_grad_(True)
        self.optimizer = th.optim.Adam(self.net.parameters(), lr=c.lr, eps=1e-5)
        self.book = SeatBook(
            c.num_games, self.env.num_players, self.env.obs_size, self.env.num_actions, c.steps * c.num_games
        )
        self.gen = th.Generator().manual_seed(c.seed)
        self.np_rng = np.random.default_rng([c.seed, 1])
        self.obs, self.mask, self.seat, _ = self.env.reset(seed=c.seed)
        # the league: opponent seats of the first league_games games, redrawn every round
        self.planner = BatchedPlanner(self.env.game.tables) if c.opponents == "planner" else None
        self.opponent = np.zeros((c.num_games, self.env.num_players), np.bool_)
        self.league_rng = np.random.default_rng([c.seed, 2])
        self._draw_opponents(np.arange(c.league_games))
        self._games = np.arange(c.num_games)
        self.league_moves = 0  #: decisions played by opponent seats in the last rollout
        self.env_steps = 0  #: env decisions played (every seat, forced ones included)
        self.trained = 0  #: decisions trained on
        self.updates = 0
        self.rounds = 0  #: rounds finished
        self.stats: dict[str, float] = {}

    # -------------------------------------------------------------- acting
    def _draw_opponents(self, games: np.ndarray) -> None:
        """New opponent seats for league ``games`` whose round starts: how many (1..n-1 drawn
        uniformly, or ``opponent_seats``), then which ones; a learner seat handed to an
        opponent ends its chain."""
        n = self.env.num_players
        rng = self.league_rng
        fixed = self.config.opponent_seats
        for g in games.tolist():
            row = np.zeros(n, np.bool_)
            count = fixed if fixed else int(rng.integers(1, n))
            row[rng.choice(n, count, replace=False)] = True
            handed = np.flatnonzero(row & ~self.opponent[g])
            self.book.close(np.full(handed.size, g), handed)
            self.opponent[g] = row

    def _act(self) -> tuple[np.ndarray, np.ndarray]:
        """Actions of every game's seat on turn; the games whose learner seat made a real
        choice (opponent seats play the league's moves, never recorded)."""
        mask = self.mask
        legal = mask.sum(1)
        league = self.opponent[self._games, self.seat]
        choice = np.flatnonzero((legal > 1) & ~league)
        actions = mask.argmax(1).astype(np.int64)  # the only legal action of forced games
        if self.planner is not None:
            games = np.flatnonzero(league)
            actions[games] = self.planner.act(self.env.states, games)
            self.league_moves += games.size
        if choice.size:
            self._choose(choice, actions)
        return actions, choice

    def _choose(self, choice: np.ndarray, actions: np.ndarray) -> None:
        """The learner's actions in the games ``choice`` (written into ``actions``), recorded
        for training: a sample of the policy, with its log-probability and value."""
        mask = self.mask
        obs = th.from_numpy(self.obs[choice])
        m = th.from_numpy(mask[choice].astype(np.bool_))
        with th.no_grad():
            logits, value = self.net(obs, m)
            logp_all = th.log_softmax(logits, dim=1)
            a = th.multinomial(logp_all.exp(), 1, generator=self.gen).squeeze(1)
            logp = logp_all.gather(1, a[:, None]).squeeze(1)
        actions[choice] = a.numpy()
        self.book.record(
            choice,
            self.seat[choice],
            self.obs[choice],
            mask[choice],
            actions[choice],
            logp.numpy(),
            value.numpy(),
        )

    def collect(self) -> Batch:
        """One rollout of ``steps`` env steps in every game; its trainable decisions."""
        c = self.config
        book = self.book
        book.begin()
        self.league_moves = 0
        for _ in range(c.steps):
            actions, _ = self._act()
            self.obs, self.mask, self.seat, rewards, terminated, info = self.env.step(actions)
            book.credit(rewards, terminated)
            self.rounds += int(info["round_over"].sum())
            if c.league_games:
                self._draw_opponents(np.flatnonzero(info["round_over"][: c.league_games]))
        self.env_steps += c.steps * c.num_games
        return book.finish(c.gamma, c.lam)

    # ------------------------------------------------------------- learning
    def update(self, batch: Batch) -> dict[str, float]:
        """Clipped PPO epochs over ``batch``; the mean losses."""
        c = self.config
        n = len(batch)
        obs = th.from_numpy(batch.obs)
        mask = th.from_numpy(batch.mask)
        act = th.from_numpy(batch.action)
        old_logp = th.from_numpy(batch.logp)
        adv_all = th.from_numpy(batch.advantage)
        ret = th.from_numpy(batch.returns)
        sums = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0, "clip_frac": 0.0}
        count = 0
        self.net.train()
        for _ in range(c.epochs):
            order = th.from_numpy(self.np_rng.permutation(n))
            for start in range(0, n, c.minibatch):
                idx = order[start : start + c.minibatch]
                if idx.numel() < 2:
                    continue
                logits, value = self.net(obs[idx], mask[idx])
                logp_all = th.log_softmax(logits, dim=1)
                logp = logp_all.gather(1, act[idx, None]).squeeze(1)
                entropy = -(logp_all.exp() * logp_all).sum(1).mean()
                adv = adv_all[idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                ratio = th.exp(logp - old_logp[idx])
                pl = -th.min(ratio * adv, th.clamp(ratio, 1 - c.clip, 1 + c.clip) * adv).mean()
                vl = ((value - ret[idx]) ** 2).mean()
                loss = pl + c.vf_coef * vl - c.ent_coef * entropy
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                th.nn.utils.clip_grad_norm_(self.net.parameters(), c.max_grad_norm)
                self.optimizer.step()
                with th.no_grad():
                    log_ratio = logp - old_logp[idx]
                    sums["approx_kl"] += float(((ratio - 1) - log_ratio).mean())
                    sums["clip_frac"] += float(((ratio - 1).abs() > c.clip).float().mean())
                sums["policy_loss"] += float(pl.detach())
                sums["value_loss"] += float(vl.detach())
                sums["entropy"] += float(entropy.detach())
                count += 1
        self.net.eval()
        self.trained += n
        self.updates += 1
        return {k: v / max(count, 1) for k, v in sums.items()}

    def iterate(self) -> dict[str, float]:
        """One rollout and its update; timings and losses."""
        t0 = time.perf_counter()
        batch = self.collect()
        t1 = time.perf_counter()
        stats = self.update(batch)
        t2 = time.perf_counter()
        stats.update(
            collect_s=t1 - t0,
            update_s=t2 - t1,
            decisions=float(self.config.steps * self.config.num_games),
            trained=float(len(batch)),
            league_decisions=float(self.league_moves),
            mean_return=float(batch.returns.mean()) if len(batch) else 0.0,
        )
        self.stats = stats
        return stats

    # --------------------------------------------------------------- resume
    def state_dict(self) -> dict[str, Any]:
        """Everything the run's future depends on (at a rollout boundary)."""
        book = self.book
        book.begin()  # only the tails remain; they are what the next rollout starts with
        k = book.size
        return {
            "config": self.config.to_json(),
            "net": {k_: v.clone() for k_, v in self.net.state_dict().items()},
            "optimizer": self.optimizer.state_dict(),
            "env": self.env.state_dict(),
            "book": {
                "obs": book.obs[:k].copy(),
                "mask": book.mask[:k].copy(),
                "action": book.action[:k].copy(),
                "logp": book.logp[:k].copy(),
                "value": book.value[:k].copy(),
                "reward": book.reward[:k].copy(),
                "last": book.last.copy(),
            },
            "torch_gen": self.gen.get_state(),
            "np_rng": self.np_rng.bit_generator.state,
            "league": {"opponent": self.opponent.copy(), "rng": self.league_rng.bit_generator.state},
            "counters": {
                "env_steps": self.env_steps,
                "trained": self.trained,
                "updates": self.updates,
                "rounds": self.rounds,
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` (the config must be the same)."""
        saved = type(self.config).from_json(state["config"])  # a subclass learner's config
        if saved != self.config:
            diff = [f.name for f in fields(saved) if getattr(saved, f.name) != getattr(self.config, f.name)]
            raise ValueError(f"the checkpoint was written by another configuration (differs in {diff})")
        # the games first: a bad snapshot is refused before anything else changes
        self.obs, self.mask, self.seat = self.env.load_state_dict(state["env"])
        self.net.load_state_dict(state["net"])
        self.optimizer.load_state_dict(state["optimizer"])
        b, book = state["book"], self.book
        k = b["obs"].shape[0]
        for name in ("obs", "mask", "action", "logp", "value", "reward"):
            getattr(book, name)[:k] = b[name]
        book.done[:k] = False
        book.next[:k] = -1
        book.last[...] = b["last"]
        book.size = k
        book._chunks = [0] if k else []
        self.gen.set_state(state["torch_gen"])
        self.np_rng.bit_generator.state = state["np_rng"]
        self.opponent[...] = state["league"]["opponent"]
        self.league_rng.bit_generator.state = state["league"]["rng"]
        counters = state["counters"]
        self.env_steps, self.trained = counters["env_steps"], counters["trained"]
        self.updates, self.rounds = counters["updates"], counters["rounds"]
