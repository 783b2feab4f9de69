"""Deep Monte-Carlo self-play (DouZero's recipe) on the compiled batched engine (issue 11).

The second learner next to PPO (:mod:`training.selfplay.learner`). Like DouZero
(Zha et al. 2021, ``douzero/dmc``) it learns an action-value ``Q(s, a)`` by regressing it
on Monte-Carlo returns, and acts epsilon-greedily on it:

* ``Q(s, a)`` is the self-play network's per-action score (its logits): for the ``tile``
  net that is the score of each LEGAL ``(tile, train)`` pair, computed from the tile's and
  the train's tokens (the action features DouZero feeds its Q network), DRAW and PASS from
  the context. The value head is not used. So the saved policy file is an ordinary
  self-play policy file, and the ``ppo`` agent playing it greedily (argmax of the logits)
  plays ``argmax_a Q(s, a)``.
* Acting: one shared network for every seat of ``num_games`` games, one batched forward
  pass a step; with probability ``epsilon`` a uniformly random legal action, else the
  greedy one. Decisions with a single legal action are played without the network and not
  recorded (as PPO does: :mod:`training.selfplay.seatbook`).
* Targets: every recorded decision of every seat, with target the seat's Monte-Carlo
  return from that decision to its episode's end, ``G = r + gamma G'`` along the seat's
  chain (the rewards of :class:`~training.selfplay.seatbook.SeatBook`'s per-seat
  accounting). A decision is trained in the rollout in which its episode ends: the book
  (:class:`ReturnBook`) carries the decisions of unfinished episodes into the next rollout.
* Loss: mean squared error of ``Q(s, a_taken)`` against ``G``, ``epochs`` passes of
  ``minibatch`` decisions, Adam, gradient norm clipped at ``max_grad_norm``.

The run machinery (budget, evaluation, curve, checkpoints, exact resume) is that of PPO:
:class:`SelfPlayDMC` is a :class:`~training.selfplay.learner.SelfPlayPPO` whose acting,
returns and update are replaced, configured by :class:`DMCConfig` (the PPO settings plus
``epsilon``; ``lam``, ``clip``, ``ent_coef`` and ``vf_coef`` are not used).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th

from training.selfplay.config import DMCConfig
from training.selfplay.learner import SelfPlayPPO
from training.selfplay.seatbook import Batch, SeatBook

__all__ = ["DMCConfig", "ReturnBook", "SelfPlayDMC"]


class ReturnBook(SeatBook):
    """A :class:`SeatBook` that yields Monte-Carlo returns of finished episodes.

    A decision is *closed* once its seat's chain has reached its episode's end (``done``):
    :meth:`finish` returns the closed decisions with ``returns`` ``G = r + gamma G(next)``
    (``G = r`` at the episode's last decision) and :meth:`begin` keeps every decision that
    is not closed (whole chains of unfinished episodes, not only their tails), in order,
    with their links. The arrays grow when a rollout needs more room.
    """

    def record(
        self,
        games: np.ndarray,
        seats: np.ndarray,
        obs: np.ndarray,
        mask: np.ndarray,
        action: np.ndarray,
        logp: np.ndarray,
        value: np.ndarray,
    ) -> np.ndarray:
        need = self.size + games.shape[0]
        if need > self.capacity:
            self._grow(max(need, 2 * self.capacity))
        return super().record(games, seats, obs, mask, action, logp, value)

    def _grow(self, capacity: int) -> None:
        for name in ("obs", "mask", "action", "logp", "value", "reward", "done", "next"):
            old = getattr(self, name)
            new = np.full((capacity, *old.shape[1:]), -1 if name == "next" else 0, old.dtype)
            new[: self.size] = old[: self.size]
            setattr(self, name, new)
        self.capacity = capacity

    def _bounds(self) -> list[int]:
        return [*self._chunks, self.size]

    def closed(self) -> np.ndarray:
        """``(size,)`` whether each decision's episode has ended."""
        n = self.size
        closed = np.zeros(n, np.bool_)
        bounds = self._bounds()
        for c in range(len(bounds) - 2, -1, -1):  # a successor is always in a later step
            sl = slice(bounds[c], bounds[c + 1])
            j = self.next[sl]
            closed[sl] = self.done[sl] | ((j >= 0) & closed[np.maximum(j, 0)])
        return closed

    def begin(self) -> None:
        """Start a rollout: drop the closed decisions, keep the rest (order and links)."""
        n = self.size
        keep = np.flatnonzero(~self.closed())
        k = keep.size
        remap = np.full(max(n, 1), -1, np.int64)
        remap[keep] = np.arange(k)
        for arr in (self.obs, self.mask, self.action, self.logp, self.value, self.reward):
            arr[:k] = arr[keep]
        nxt = self.next[keep]
        self.next[:k] = np.where(nxt >= 0, remap[np.maximum(nxt, 0)], -1)
        self.next[k:n] = -1
        self.done[:n] = False  # an open decision is never an episode's end
        live = self.last >= 0
        self.last[live] = remap[self.last[live]]
        starts = np.searchsorted(keep, np.asarray(self._chunks, np.int64))
        self._chunks = [int(s) for s in np.unique(starts) if s < k]
        self.size = k

    def returns(self, gamma: float) -> np.ndarray:
        """``(size,)`` Monte-Carlo returns (meaningful for the closed decisions)."""
        n = self.size
        g = np.zeros(n, np.float64)
        bounds = self._bounds()
        for c in range(len(bounds) - 2, -1, -1):
            sl = slice(bounds[c], bounds[c + 1])
            j = self.next[sl]
            g[sl] = self.reward[sl] + gamma * np.where(j >= 0, g[np.maximum(j, 0)], 0.0)
        return g

    def finish(self, gamma: float, lam: float = 1.0) -> Batch:
        """The closed decisions with their Monte-Carlo returns (``lam`` is not used);
        ``value`` is ``Q(s, a)`` when acting, ``advantage`` the return minus it."""
        train = np.flatnonzero(self.closed())
        g = self.returns(gamma)[train]
        value = self.value[train].copy()
        return Batch(
            obs=self.obs[train].copy(),
            mask=self.mask[train].copy(),
            action=self.action[train].copy(),
            logp=self.logp[train].copy(),
            value=value,
            advantage=(g - value).astype(np.float32),
            returns=g.astype(np.float32),
        )

    def links(self) -> dict[str, Any]:
        """What :class:`SeatBook`'s snapshot lacks for a carried chain (after :meth:`begin`)."""
        return {"next": self.next[: self.size].copy(), "chunks": np.asarray(self._chunks, np.int64)}

    def load_links(self, links: dict[str, Any]) -> None:
        k = links["next"].shape[0]
        self.next[:k] = links["next"]
        self._chunks = [int(s) for s in links["chunks"]]


class SelfPlayDMC(SelfPlayPPO):
    """The deep Monte-Carlo learner (see the module docstring)."""

    config: DMCConfig
    book: ReturnBook

    def __init__(self, config: DMCConfig, load_init: bool = True) -> None:
        if not isinstance(config, DMCConfig):
            raise TypeError(f"SelfPlayDMC needs a DMCConfig, got {type(config).__name__}")
        super().__init__(config, load_init)
        c = config
        self.book = ReturnBook(
            c.num_games, self.env.num_players, self.env.obs_size, self.env.num_actions, c.steps * c.num_games
        )

    def _choose(self, choice: np.ndarray, actions: np.ndarray) -> None:
        """Epsilon-greedy actions on ``Q`` in the games ``choice``; recorded with ``Q(s, a)``."""
        mask = self.mask
        obs = th.from_numpy(self.obs[choice])
        m = th.from_numpy(mask[choice].astype(np.bool_))
        with th.no_grad():
            q, _ = self.net(obs, m)
            greedy = q.argmax(1)
            explore = th.rand(choice.size, generator=self.gen) < self.config.epsilon
            uniform = th.multinomial(m.float(), 1, generator=self.gen).squeeze(1)
            a = th.where(explore, uniform, greedy)
            q_taken = q.gather(1, a[:, None]).squeeze(1)
        actions[choice] = a.numpy()
        self.book.record(
            choice,
            self.seat[choice],
            self.obs[choice],
            mask[choice],
            actions[choice],
            np.zeros(choice.size, np.float32),
            q_taken.numpy(),
        )

    def update(self, batch: Batch) -> dict[str, float]:
        """``epochs`` passes of MSE regression of ``Q(s, a_taken)`` on the returns."""
        c = self.config
        n = len(batch)
        obs = th.from_numpy(batch.obs)
        mask = th.from_numpy(batch.mask)
        act = th.from_numpy(batch.action)
        target = th.from_numpy(batch.returns)
        total, count = 0.0, 0
        self.net.train()
        for _ in range(c.epochs):
            order = th.from_numpy(self.np_rng.permutation(n))
            for start in range(0, n, c.minibatch):
                idx = order[start : start + c.minibatch]
                q, _ = self.net(obs[idx], mask[idx])
                loss = ((q.gather(1, act[idx, None]).squeeze(1) - target[idx]) ** 2).mean()
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                th.nn.utils.clip_grad_norm_(self.net.parameters(), c.max_grad_norm)
                self.optimizer.step()
                total += float(loss.detach())
                count += 1
        self.net.eval()
        self.trained += n
        self.updates += 1
        # how far the acting Q was from the returns it earned (before this update)
        acting_mse = float(np.mean(batch.advantage.astype(np.float64) ** 2)) if n else 0.0
        return {"q_loss": total / max(count, 1), "acting_q_mse": acting_mse}

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()  # compacts the book (ReturnBook.begin) first
        state["book_links"] = self.book.links()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        k = state["book"]["obs"].shape[0]
        if k > self.book.capacity:
            self.book._grow(k)
        super().load_state_dict(state)
        self.book.load_links(state["book_links"])
