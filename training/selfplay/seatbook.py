"""Per-seat trajectories of self-play: which seat's decision earns which reward.

In ``B`` games played by one shared policy, every step is a decision of the seat on turn
in each game. Each ``(game, seat)`` has its own trajectory: the chain of that seat's
decisions in that game. A decision's reward is everything that seat receives from the
step it acts in until its next decision (or its episode's end): the round results that
the env gives every seat at a round's end (``BatchedMexicanTrain`` step rewards ``(B, n)``).

Decisions with a single legal action (forced draws and passes) are not recorded: they
carry no choice, so they are part of the environment between two real decisions and their
step's rewards are credited to the seat's previous recorded decision.

:class:`SeatBook` keeps the decisions of one rollout in flat arrays, in the order they
were taken, with for each the index of the same seat's next decision (``next``), whether
its episode ended before that (``done``) and its accumulated ``reward``, and where it was
taken (``when``: the collector's step count, ``game``: the game's index in the run), the
key that puts the decisions of several collectors in one order. At the end of a
rollout (:meth:`SeatBook.finish`) GAE runs along each chain:

* ``done``: ``delta = r - V(s)``, advantage ``delta``;
* a successor in the rollout: ``delta = r + gamma V(s') - V(s)``,
  ``A = delta + gamma lambda A'`` (``A' = 0`` when the successor is the chain's tail);
* the chain's tail (the seat's last decision, whose successor is not known yet) is not
  trained in this rollout: it bootstraps its predecessor and is carried into the next
  rollout as its first decision (:meth:`SeatBook.begin`), rewards still accruing, as
  PPO's last observation of a rollout is the first of the next.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Batch", "SeatBook"]


@dataclass
class Batch:
    """The trainable decisions of one rollout (views into the book's arrays, copied)."""

    obs: np.ndarray
    mask: np.ndarray
    action: np.ndarray
    logp: np.ndarray
    value: np.ndarray
    advantage: np.ndarray
    returns: np.ndarray
    #: the step of the run each decision was taken in, and its game's index in the run:
    #: ``(when, game)`` orders the decisions of every collector as one collector has them
    when: np.ndarray
    game: np.ndarray

    def __len__(self) -> int:
        return int(self.action.shape[0])


class SeatBook:
    """Decisions of ``num_games`` games with ``num_players`` seats (see the module docstring).

    Args:
        capacity: the most decisions one rollout records (``steps * num_games`` suffices).
        first_game: the run's index of this book's game 0 (a collector of a slice of games).
    """

    def __init__(
        self,
        num_games: int,
        num_players: int,
        obs_size: int,
        num_actions: int,
        capacity: int,
        first_game: int = 0,
    ) -> None:
        self.num_games, self.num_players = num_games, num_players
        self.first_game = first_game
        cap = capacity + num_games * num_players  # room for the carried tails
        self.capacity = cap
        self.obs = np.zeros((cap, obs_size), np.float32)
        self.mask = np.zeros((cap, num_actions), np.bool_)
        self.action = np.zeros(cap, np.int64)
        self.logp = np.zeros(cap, np.float32)
        self.value = np.zeros(cap, np.float32)
        self.reward = np.zeros(cap, np.float64)
        self.done = np.zeros(cap, np.bool_)
        self.next = np.full(cap, -1, np.int64)
        self.when = np.zeros(cap, np.int64)
        self.game = np.zeros(cap, np.int64)
        #: index of each (game, seat)'s latest decision in the arrays, -1 for none
        self.last = np.full((num_games, num_players), -1, np.int64)
        self.size = 0
        #: the first index of each recorded step (chunks are chronological)
        self._chunks: list[int] = []

    @staticmethod
    def row_bytes(obs_size: int, num_actions: int) -> int:
        """Bytes of one decision in the arrays above: ``obs`` (float32) and ``mask`` (bool)
        rows, then ``action``, ``logp``, ``value``, ``reward``, ``done``, ``next``, ``when``
        and ``game``."""
        return 4 * obs_size + num_actions + 8 + 4 + 4 + 8 + 1 + 8 + 8 + 8

    # ----------------------------------------------------------- recording
    def begin(self) -> None:
        """Start a rollout: the chains' tails move to the front, everything else is dropped."""
        tails = self.last[self.last >= 0]
        k = tails.size
        order = np.argsort(tails, kind="stable")
        src = tails[order]
        for arr in (
            self.obs,
            self.mask,
            self.action,
            self.logp,
            self.value,
            self.reward,
            self.when,
            self.game,
        ):
            arr[:k] = arr[src]
        self.done[:k] = False
        self.next[:k] = -1
        remap = np.full(self.capacity, -1, np.int64)
        remap[src] = np.arange(k)
        live = self.last >= 0
        self.last[live] = remap[self.last[live]]
        self.size = k
        self._chunks = [0] if k else []

    def record(
        self,
        games: np.ndarray,
        seats: np.ndarray,
        obs: np.ndarray,
        mask: np.ndarray,
        action: np.ndarray,
        logp: np.ndarray,
        value: np.ndarray,
        when: int = 0,
    ) -> np.ndarray:
        """Append one step's decisions (one per game in ``games``, taken in step ``when``);
        their indices."""
        m = games.shape[0]
        start = self.size
        if start + m > self.capacity:
            raise RuntimeError(f"SeatBook is full ({self.capacity} decisions)")
        idx = np.arange(start, start + m)
        self.obs[idx] = obs
        self.mask[idx] = mask
        self.action[idx] = action
        self.logp[idx] = logp
        self.value[idx] = value
        self.reward[idx] = 0.0
        self.done[idx] = False
        self.next[idx] = -1
        self.when[idx] = when
        self.game[idx] = games + self.first_game
        prev = self.last[games, seats]
        has = prev >= 0
        self.next[prev[has]] = idx[has]
        self.last[games, seats] = idx
        self.size = start + m
        self._chunks.append(start)
        return idx

    def credit(self, rewards: np.ndarray, terminated: np.ndarray) -> None:
        """Credit a step's rewards ``(B, n)`` to each seat's latest decision; close the
        chains of the games whose episode ``terminated``."""
        hit = np.flatnonzero(np.any(rewards != 0, axis=1) | terminated)
        if hit.size == 0:
            return
        last = self.last[hit]  # (k, n)
        has = last >= 0
        np.add.at(self.reward, last[has], rewards[hit][has])
        ended = hit[terminated[hit]]
        if ended.size:
            tails = self.last[ended]
            self.done[tails[tails >= 0]] = True
            self.last[ended] = -1

    def close(self, games: np.ndarray, seats: np.ndarray) -> None:
        """End the chains of ``(games[j], seats[j])`` (seats handed to a league opponent
        between rounds): their latest decisions become terminal."""
        tails = self.last[games, seats]
        has = tails >= 0
        self.done[tails[has]] = True
        self.last[games[has], seats[has]] = -1

    # -------------------------------------------------------------- returns
    def finish(self, gamma: float, lam: float) -> Batch:
        """GAE along every chain; the trainable decisions (all but the chains' tails)."""
        n = self.size
        adv = np.zeros(n, np.float64)
        value = self.value[:n].astype(np.float64)
        nxt = self.next[:n]
        done = self.done[:n]
        tail = np.zeros(n, np.bool_)
        live = self.last[self.last >= 0]
        tail[live] = True
        bounds = [*self._chunks, n]
        for c in range(len(bounds) - 2, -1, -1):  # steps in reverse: a successor is always later
            sl = slice(bounds[c], bounds[c + 1])
            r = self.reward[sl]
            d = done[sl]
            j = nxt[sl]
            has = j >= 0
            nv = np.where(has, value[np.maximum(j, 0)], 0.0)
            na = np.where(has & ~tail[np.maximum(j, 0)], adv[np.maximum(j, 0)], 0.0)
            delta = r + gamma * nv * ~d - value[sl]
            adv[sl] = np.where(d, r - value[sl], delta + gamma * lam * na)
        train = np.flatnonzero(~tail)
        return Batch(
            obs=self.obs[train].copy(),
            mask=self.mask[train].copy(),
            action=self.action[train].copy(),
            logp=self.logp[train].copy(),
            value=self.value[train].copy(),
            advantage=adv[train].astype(np.float32),
            returns=(adv[train] + value[train]).astype(np.float32),
            when=self.when[train].copy(),
            game=self.game[train].copy(),
        )
