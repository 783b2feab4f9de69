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

import time
from dataclasses import fields
from typing import Any

import numpy as np
import torch as th

from agents.mexican_train.tilenet import NetSpec, build_net, read_selfplay_policy
from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain
from mtrain_env.mexican_train.compiled.batched_planner import BatchedPlanner
from training.selfplay.config import OPPONENTS, SelfPlayConfig
from training.selfplay.seatbook import Batch, SeatBook

#: the configuration lives in the torch-free :mod:`training.selfplay.config` (re-exported)
__all__ = ["OPPONENTS", "SelfPlayConfig", "SelfPlayPPO"]


class SelfPlayPPO:
    """The self-play learner (see the module docstring)."""

    def __init__(self, config: SelfPlayConfig, load_init: bool = True) -> None:
        """``load_init=False``: leave ``config.init`` unread (a resumed run's checkpoint holds
        the weights; its starting file may be gone by then)."""
        self.config = c = config
        th.set_num_threads(c.threads)
        self.env = BatchedMexicanTrain(
            c.num_games, copy=False, num_players=c.num_players, max_pips=c.max_pips
        )
        self.spec = NetSpec.make(c.net, self.env.config, c.hidden, c.pair_hidden)
        self.net = build_net(self.spec, seed=c.seed)
        if c.init and load_init:
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
