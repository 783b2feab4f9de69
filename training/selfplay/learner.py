"""PPO self-play on the compiled batched engine: one shared policy, every seat learns.

:class:`SelfPlayPPO` plays ``num_games`` games of :class:`BatchedMexicanTrain` at once. In
every step the seat on turn in each game acts through batched forward passes of the
shared network (one per block of 64 games; games whose seat has a single legal action play
it without the network);
every seat's decisions become training data with that seat's own returns
(:mod:`training.selfplay.seatbook`). After ``steps`` steps the rollout's decisions train the
network with clipped PPO, action masking and GAE along each seat's chain.

League (``opponents="planner"``, ``opponent_share=P``): in the first ``round(P * B)`` games a
random subset of 1..n-1 seats (``opponent_seats=k``: exactly ``k`` seats; redrawn per game at
each round start, from a generator of the run's seed, the game and the round) is played by
the compiled ``planner``
(:class:`~mtrain_env.mexican_train.compiled.batched_planner.BatchedPlanner`, one call for
all those games a step). Their decisions are not recorded, so they earn nothing and train
nothing; the learner's seats of those games learn against them. The other games are pure
self-play.

Collection: who steps the games is :class:`~training.selfplay.collector.Collectors`: one
collector of every game in this process by default, or Ray actors each owning a slice of
the games (:mod:`training.selfplay.ray_collect`); either way the learner gets the same
decisions in the same order (:mod:`training.selfplay.collector` says how), so the run is
the same. The updates run on ``device`` (the CPU or a GPU); acting runs on the CPU.

Determinism: the run is a function of its :class:`SelfPlayConfig` (``seed``): the deals
come from ``BatchedMexicanTrain.reset(seed)``, the network's initial weights and the
minibatch order from generators seeded from it, each sampled action from a hash of the
seed, the game and the step, and torch runs on one thread unless ``threads`` says
otherwise (the updates on a GPU are the GPU's floats: another curve than the CPU's).
:meth:`SelfPlayPPO.state_dict` captures all of it (weights, optimizer, every game's state
and generator, the carried decisions), so a run resumed from a checkpoint continues
exactly as if it had not stopped.
"""

from __future__ import annotations

import time
from dataclasses import fields
from typing import Any

import numpy as np
import torch as th

from agents.mexican_train.tilenet import build_net, read_selfplay_policy
from training.selfplay.collector import (
    Collector,
    Collectors,
    LocalCollectors,
    initial_state,
    merge_batches,
    net_spec,
)
from training.selfplay.config import OPPONENTS, SelfPlayConfig
from training.selfplay.seatbook import Batch

#: the configuration lives in the torch-free :mod:`training.selfplay.config` (re-exported)
__all__ = ["OPPONENTS", "SelfPlayConfig", "SelfPlayPPO"]


class SelfPlayPPO:
    """The self-play learner (see the module docstring)."""

    def __init__(
        self,
        config: SelfPlayConfig,
        load_init: bool = True,
        device: str = "cpu",
        collectors: Collectors | None = None,
    ) -> None:
        """``load_init=False``: leave ``config.init`` unread (a resumed run's checkpoint holds
        the weights; its starting file may be gone by then). ``device``: where the updates
        run (a torch device name). ``collectors``: who collects the rollouts (default: one
        collector of every game in this process); they start from the run's first deals."""
        self.config = c = config
        th.set_num_threads(c.threads)
        self.device = th.device(device)
        self.spec = net_spec(c)
        self.net = build_net(self.spec, seed=c.seed)
        if c.init and load_init:
            start = read_selfplay_policy(c.init)
            if start.spec != self.spec:
                raise ValueError(f"init: {c.init} holds a {start.spec} network, this run needs {self.spec}")
            self.net.load_state_dict(start.state_dict())
            for param in self.net.parameters():
                param.requires_grad_(True)
        self.net.to(self.device).eval()
        self.optimizer = th.optim.Adam(self.net.parameters(), lr=c.lr, eps=1e-5)
        self.np_rng = np.random.default_rng([c.seed, 1])
        on_cpu = self.device.type == "cpu"
        self.collectors: Collectors = (
            collectors if collectors is not None else LocalCollectors(c, self.net if on_cpu else None)
        )
        self.collectors.load_state_dict(initial_state(c))
        self.league_moves = 0  #: decisions played by opponent seats in the last rollout
        self.env_steps = 0  #: env decisions played (every seat, forced ones included)
        self.trained = 0  #: decisions trained on
        self.updates = 0
        self.rounds = 0  #: rounds finished

    @property
    def collector(self) -> Collector:
        """The one collector of every game of a run collected in this process."""
        if not isinstance(self.collectors, LocalCollectors):
            raise AttributeError("this learner's rollouts are collected elsewhere")
        return self.collectors.collector

    def weights(self) -> dict[str, np.ndarray]:
        """The policy's weights as numpy arrays (what a collector's copy loads)."""
        return {k: v.detach().cpu().numpy() for k, v in self.net.state_dict().items()}

    def collect(self) -> Batch:
        """One rollout of ``steps`` env steps in every game; its trainable decisions, in
        one collector's order whoever collected them."""
        c = self.config
        parts = self.collectors.collect(self.weights)
        self.league_moves = int(sum(counts["league_moves"] for _, counts in parts))
        self.rounds += int(sum(counts["rounds"] for _, counts in parts))
        self.env_steps += c.steps * c.num_games
        return merge_batches([batch for batch, _ in parts])

    # ------------------------------------------------------------- learning
    def update(self, batch: Batch) -> dict[str, float]:
        """Clipped PPO epochs over ``batch``; the mean losses."""
        c = self.config
        n = len(batch)
        dev = self.device
        obs = th.from_numpy(batch.obs).to(dev)
        mask = th.from_numpy(batch.mask).to(dev)
        act = th.from_numpy(batch.action).to(dev)
        old_logp = th.from_numpy(batch.logp).to(dev)
        adv_all = th.from_numpy(batch.advantage).to(dev)
        ret = th.from_numpy(batch.returns).to(dev)
        sums = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0, "clip_frac": 0.0}
        count = 0
        self.net.train()
        for _ in range(c.epochs):
            order = th.from_numpy(self.np_rng.permutation(n)).to(dev)
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
        return stats

    # --------------------------------------------------------------- resume
    def state_dict(self) -> dict[str, Any]:
        """Everything the run's future depends on (at a rollout boundary), on the CPU: the
        same file whoever collects and wherever the updates run."""
        return {
            "config": self.config.to_json(),
            "net": {k: v.detach().cpu().clone() for k, v in self.net.state_dict().items()},
            "optimizer": _on_cpu(self.optimizer.state_dict()),
            **self.collectors.state_dict(),
            "np_rng": self.np_rng.bit_generator.state,
            "counters": {
                "env_steps": self.env_steps,
                "trained": self.trained,
                "updates": self.updates,
                "rounds": self.rounds,
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` (the config must be the same)."""
        saved = SelfPlayConfig.from_json(state["config"])
        if saved != self.config:
            diff = [f.name for f in fields(saved) if getattr(saved, f.name) != getattr(self.config, f.name)]
            raise ValueError(f"the checkpoint was written by another configuration (differs in {diff})")
        games = {k: state[k] for k in ("env", "book", "league", "clock")}
        # the games first: a bad snapshot is refused before anything else changes
        self.collectors.load_state_dict(games)
        self.net.load_state_dict(state["net"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.np_rng.bit_generator.state = state["np_rng"]
        counters = state["counters"]
        self.env_steps, self.trained = counters["env_steps"], counters["trained"]
        self.updates, self.rounds = counters["updates"], counters["rounds"]


def _on_cpu(value: Any) -> Any:
    """``value`` with every tensor in it copied to the CPU (an optimizer's state)."""
    if isinstance(value, th.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, dict):
        return {k: _on_cpu(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_on_cpu(v) for v in value]
    return value
