"""Hidden hands sampled from the posterior of the whole public move log (MCMC over histories).

:class:`~agents.mexican_train.particles.ParticleFilter` weights worlds move by move and
repairs the ones a move contradicts; its 64-512 worlds lose most of what the log says
(docs/champion.md step 8). :class:`HistorySampler` instead keeps ONE history of the round and walks
it by Metropolis-Hastings, so every opponent choice since the seat's first decision is
re-checked against every proposed change.

A history assigns each tile hidden at the start (the opponents' hands and the boneyard)
to a *slot*: an opponent's starting hand, one of its draws (R16: the tile it took then),
or the boneyard still face down. A tile the seat draws leaves the history (it is seen). An
opponent's hand at any past moment follows: its starting tiles, plus its draws until
then, minus its plays until then. Its log-likelihood is, over all its moves since the
start (on the public state of that moment, kept as a snapshot):

* :data:`~agents.mexican_train.particles.IMPOSSIBLE` times three for a move that hand could not
  make (a tile it did not hold; a draw or a pass while it held a play, R15/R16);
* ``log(1 - eps)`` for a choice among several legal moves that the model (``planner``)
  would make in that hand, ``log(eps / (legal - 1))`` otherwise; nothing for a forced
  move or a play right after a draw (which only says what was drawn: that slot is pinned).

A proposal swaps the slots of two hidden tiles (symmetric; a tile an opponent played must
stay in one of that opponent's slots from before the play), accepted with probability
``min(1, exp(delta log-likelihood))``. New moves extend the history with the smallest
repair that makes them possible; :meth:`HistorySampler.settle` then walks ``steps``
proposals and keeps every ``thin``-th state as a world.

Information used: the seat's views and the public moves; nothing hidden.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.mexican_train.particles import (
    DEFAULT_EPS,
    IMPOSSIBLE,
    ParticleFilter,
    TrackerFactory,
    WorldTracker,
    is_choice,
    model_log_likelihood,
)
from agents.mexican_train.planner import PlannerAgent
from mtrain_env.mexican_train.core.public import PublicView, banned_tiles, public_view
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState
from mtrain_env.tilegame.tiles import bits_list

__all__ = ["DEFAULT_THIN", "HistoryChains", "HistorySampler", "history_factory"]

#: keep every tenth state of a walk as a world
DEFAULT_THIN = 10

_BONEYARD = -1  #: owner of a tile still face down
_NEVER = 1 << 30  #: "played at" of a tile not played
_HARD = 3 * IMPOSSIBLE  #: log-likelihood of a move the hand could not make
_CACHE_LIMIT = 200_000  #: memoised move likelihoods kept (a pure function: clearing changes no result)


@dataclass
class _Move:
    """One opponent move of the log: the public state before it (``state``), the move."""

    time: int
    mover: int
    move: int
    state: GameState


class HistorySampler:
    """One MCMC walk over the round's hidden history (module docstring).

    Args:
        game: the table's rules core.
        codec: the table's action codec.
        seat: the observing seat.
        steps: proposals walked at each decision (:meth:`settle`).
        thin: keep every ``thin``-th state of the walk as a world.
        eps: the share of the model's probability left to the moves it would not make.
        rng: the walk's random stream.
    """

    def __init__(
        self,
        game: MexicanTrain,
        codec: Any,
        seat: int,
        steps: int,
        thin: int,
        rng: np.random.Generator,
        eps: float = DEFAULT_EPS,
    ) -> None:
        if steps < 1 or thin < 1:
            raise ValueError(f"steps and thin must be >= 1, got {steps} and {thin}")
        if not 0.0 < eps < 1.0:
            raise ValueError(f"eps must be in (0, 1), got {eps}")
        self.game = game
        self.codec = codec
        self.seat = seat
        self.steps = steps
        self.thin = thin
        self.eps = eps
        self.rng = rng
        self.model = PlannerAgent()
        self.accepted = 0
        self.proposed = 0
        self._reference: ParticleFilter | None = None

    @property
    def started(self) -> bool:
        return self._reference is not None

    @property
    def reference(self) -> GameState:
        """The table's public state now (the reference world; its hidden part is arbitrary)."""
        assert self._reference is not None
        return self._reference.worlds[0]

    def start(self, view: PublicView) -> None:
        """A fresh history at the seat's first decision of a round: the reference world's
        deal (hand counts and shown voids kept) is the walk's first state."""
        self.model.reset()
        self._reference = ParticleFilter(self.game, self.codec, self.seat, 1, self.eps, self.rng)
        self._reference.start(view)
        world = self.reference
        n = self.game.n
        self.owner: dict[int, int] = {}
        self.since: dict[int, int] = {}
        for q in range(n):
            if q != self.seat:
                for t in bits_list(world.hands[q]):
                    self.owner[t], self.since[t] = q, -1
        for t in world.boneyard:
            self.owner[t], self.since[t] = _BONEYARD, -1
        self.played: dict[int, int] = {}  #: tile -> time an opponent played it
        self.played_by: dict[int, int] = {}  #: tile -> the opponent who played it
        self.pinned: set[int] = set()  #: drawn tiles played right away: their slot is known
        self.banned = {q: banned_tiles(view, q) for q in range(n) if q != self.seat}
        self.moves: dict[int, list[_Move]] = {q: [] for q in range(n) if q != self.seat}
        self.cache: dict[tuple[int, int, int], float] = {}
        self.time = 0
        self.energy = dict.fromkeys(self.moves, 0.0)
        self.samples: list[list[int]] = []
        self._worlds: list[GameState] | None = None

    # -- the log ---------------------------------------------------------------------------
    def observe(self, move: int) -> None:
        """The next move of the log (absolute core move of the seat on turn).

        After each of the seat's own draws, call :meth:`sync_hand` with its next view before
        the next move is heard (``HeardWorlds.update`` does, at every decision): the history
        forgets a drawn tile the seat lays without it, but the reference world does not."""
        if self._reference is None:
            return
        world = self.reference
        mover = world.current
        game = self.game
        if mover != self.seat:
            self.moves[mover].append(_Move(self.time, mover, move, world.copy()))
            if move < game.draw:
                self._record_play(mover, move // game.width, world.has_drawn)
            elif move == game.draw:
                spare = self._tiles_of(_BONEYARD)
                if spare:
                    x = spare[int(self.rng.integers(len(spare)))]
                    self.owner[x], self.since[x] = mover, self.time
        elif move < game.draw:
            self._forget(move // game.width)  # a tile the seat drew, if it is still hidden
        self.time += 1
        self._reference.observe(move)

    def _record_play(self, mover: int, tile: int, after_draw: bool) -> None:
        """Make the history hold ``tile`` in ``mover``'s hand now, with the least change."""
        held = self._holding(mover)
        if after_draw:  # R16: the tile played right after a draw is the one drawn
            drawn = max(held, key=self.since.__getitem__)
            if drawn != tile:
                self._swap(drawn, tile)
            self.pinned.add(tile)
        elif tile not in held:
            self._swap(held[int(self.rng.integers(len(held)))], tile)
        self.played[tile] = self.time
        self.played_by[tile] = mover

    def _holding(self, q: int) -> list[int]:
        """The tiles opponent ``q`` holds now in the current history."""
        return [t for t, owner in self.owner.items() if owner == q and t not in self.played]

    def _forget(self, tile: int) -> None:
        """``tile`` is now seen by the seat (it drew it): out of the history; its slot, if an
        opponent's, takes a tile of the face-down boneyard instead."""
        if tile not in self.owner:
            return
        q, since = self.owner.pop(tile), self.since.pop(tile)
        if q != _BONEYARD:
            spare = self._tiles_of(_BONEYARD)
            z = spare[int(self.rng.integers(len(spare)))]
            self.owner[z], self.since[z] = q, since

    def _tiles_of(self, place: int) -> list[int]:
        return sorted(t for t, q in self.owner.items() if q == place)

    def _swap(self, a: int, b: int) -> None:
        self.owner[a], self.owner[b] = self.owner[b], self.owner[a]
        self.since[a], self.since[b] = self.since[b], self.since[a]

    # -- measurement only: the true history ----------------------------------------------------
    def plant(self, state: GameState) -> None:
        """Make the history the true one of ``state`` (the table at :meth:`start`): every
        opponent's hand and the boneyard. It cheats: only measurements call it, to check
        that a walk started at the truth settles where a fair one does."""
        for q, hand in enumerate(state.hands):
            if q != self.seat:
                for t in bits_list(hand):
                    self.owner[t], self.since[t] = q, -1
        for t in state.boneyard:
            self.owner[t], self.since[t] = _BONEYARD, -1

    def drew(self, mover: int, tile: int) -> None:
        """``mover``'s last draw (just observed) was truly ``tile`` (a measurement's cheat, as
        :meth:`plant`)."""
        newest = max(self._holding(mover), key=self.since.__getitem__)
        self._swap(newest, tile)

    # -- the walk ----------------------------------------------------------------------------
    def sync(self, view: PublicView) -> None:
        """At a decision of the seat: :meth:`sync_hand`, then :meth:`settle`."""
        self.sync_hand(view)
        self.settle(view)

    def sync_hand(self, view: PublicView) -> None:
        """Drop the tiles the seat has drawn (R16; it sees them now) from the history."""
        for t in bits_list(view.hand):
            self._forget(t)
        assert self._reference is not None
        self._reference.sync_hand(view)

    def matches(self, view: PublicView) -> bool:
        """Whether the reference world's public part is still the table's (R5's engine
        search can make a replayed draw public)."""
        return public_view(self.reference, view.config, view.seat) == view

    def settle(self, view: PublicView) -> None:
        """Walk ``steps`` proposals and keep every ``thin``-th state (:attr:`samples`)."""
        for q in self.energy:
            self.energy[q] = self._log_likelihood(q)
        movable = sorted(t for t in self.owner if t not in self.pinned)
        self.samples = []
        self._worlds = None
        for step in range(self.steps):
            self._propose(movable)
            if (step + 1) % self.thin == 0:
                self.samples.append(self.hands())

    def _propose(self, movable: list[int]) -> None:
        if len(movable) < 2:
            return
        i, j = self.rng.choice(len(movable), 2, replace=False)
        a, b = movable[int(i)], movable[int(j)]
        qa, qb = self.owner[a], self.owner[b]
        if qa == qb and self.since[a] == self.since[b]:
            return
        if not (self._fits(a, qb, self.since[b]) and self._fits(b, qa, self.since[a])):
            return
        self.proposed += 1
        touched = {q for q in (qa, qb) if q != _BONEYARD}
        self._swap(a, b)
        new = {q: self._log_likelihood(q) for q in touched}
        delta = sum(new[q] - self.energy[q] for q in touched)
        if delta >= 0 or self.rng.random() < math.exp(delta):
            self.energy.update(new)
            self.accepted += 1
        else:
            self._swap(a, b)

    def _fits(self, tile: int, owner: int, since: int) -> bool:
        """Whether ``tile`` may take a slot of ``owner`` from ``since``: a played tile only one of
        its player's slots from before the play; a starting hand no tile its seat had shown
        it lacks when the history began (R15/R16 voids, :func:`banned_tiles`)."""
        if tile in self.played:
            return owner == self.played_by[tile] and since < self.played[tile]
        return not (owner != _BONEYARD and since < 0 and self.banned[owner] >> tile & 1)

    def _log_likelihood(self, q: int) -> float:
        """Log-likelihood of opponent ``q``'s moves under its hands in the current history."""
        spans = [
            (self.since[t], self.played.get(t, _NEVER), t) for t, owner in self.owner.items() if owner == q
        ]
        total = 0.0
        for index, m in enumerate(self.moves[q]):
            hand = 0
            for since, played, t in spans:
                if since < m.time <= played:
                    hand |= 1 << t
            key = (q, index, hand)
            value = self.cache.get(key)
            if value is None:
                if len(self.cache) >= _CACHE_LIMIT:
                    self.cache.clear()
                value = self.cache[key] = self._move_log_likelihood(m, hand)
            total += value
        return total

    def _move_log_likelihood(self, m: _Move, hand: int) -> float:
        s = m.state
        saved = s.hands[m.mover]
        s.hands[m.mover] = hand
        try:
            legal = self.game.legal_moves(s)
            if m.move not in legal:
                return _HARD
            if not is_choice(s):
                return 0.0
            return model_log_likelihood(
                self.game, self.codec, self.model, s, m.mover, m.move, legal, self.eps
            )
        finally:
            s.hands[m.mover] = saved

    # -- worlds ------------------------------------------------------------------------------
    def hands(self) -> list[int]:
        """Every seat's hand now in the current history (the seat's own from the reference)."""
        out = [0] * self.game.n
        out[self.seat] = self.reference.hands[self.seat]
        for t, q in self.owner.items():
            if q != _BONEYARD and t not in self.played:
                out[q] |= 1 << t
        return out

    @property
    def worlds(self) -> list[GameState]:
        """The kept states of the last walk as full worlds (equal weights)."""
        if self._worlds is None:
            self._worlds = [self.world(h) for h in self.samples]
        return self._worlds

    def weights(self) -> np.ndarray:
        """Equal weights: the walk's states are posterior samples already."""
        return np.full(len(self.samples), 1.0 / max(len(self.samples), 1))

    def world(self, hands: list[int]) -> GameState:
        """The table now with these hands and the rest of the hidden tiles face down."""
        s = self.reference.copy()
        s.hands = list(hands)
        held = 0
        for h in hands:
            held |= h
        s.boneyard = sorted(t for t in self.owner if t not in self.played and not held >> t & 1)
        assert len(s.boneyard) == len(self.reference.boneyard)
        return s


class HistoryChains:
    """``count`` independent walks of the same posterior; the worlds are all their kept states.

    One walk's kept states are near copies of one another (two agree on 42% of the hidden
    tiles while each places 26% right, docs/champion.md step 9), so a search on them bets on a few
    worlds. Independent walks, each from its own random start with its own stream, are as
    varied as the posterior: the same proposals a decision, split between them. They share
    the memo of move likelihoods, a pure function of the public log and a hand (the model,
    ``planner``, reads only the mover's view).
    """

    def __init__(
        self,
        game: MexicanTrain,
        codec: Any,
        seat: int,
        count: int,
        steps: int,
        thin: int,
        rng: np.random.Generator,
        eps: float = DEFAULT_EPS,
    ) -> None:
        if count < 1 or steps < count:
            raise ValueError(f"need 1 <= chains <= steps, got {count} chains of {steps} steps")
        self.game = game
        streams = rng.spawn(count)
        self.walks = [HistorySampler(game, codec, seat, steps // count, thin, r, eps) for r in streams]
        self._worlds: list[GameState] | None = None

    def start(self, view: PublicView) -> None:
        for walk in self.walks:
            walk.start(view)
        shared = self.walks[0].cache
        for walk in self.walks[1:]:
            walk.cache = shared

    def observe(self, move: int) -> None:
        for walk in self.walks:
            walk.observe(move)

    def sync_hand(self, view: PublicView) -> None:
        for walk in self.walks:
            walk.sync_hand(view)

    def matches(self, view: PublicView) -> bool:
        return all(walk.matches(view) for walk in self.walks)

    def settle(self, view: PublicView) -> None:
        self._worlds = None
        for walk in self.walks:
            walk.settle(view)

    @property
    def worlds(self) -> list[GameState]:
        """Every walk's kept states, walk by walk (equal weights)."""
        if self._worlds is None:
            self._worlds = [w for walk in self.walks for w in walk.worlds]
        return self._worlds

    def weights(self) -> np.ndarray:
        """Equal weights: every kept state is a posterior sample."""
        count = len(self.worlds)
        return np.full(count, 1.0 / max(count, 1))


def history_factory(steps: int, thin: int, eps: float, chains: int = 1) -> TrackerFactory:
    """A :class:`HistorySampler` walking ``steps`` proposals a decision, per round; with
    ``chains`` > 1, :class:`HistoryChains` of that many walks sharing the ``steps``."""

    def make(game: MexicanTrain, codec: Any, seat: int, rng: np.random.Generator) -> WorldTracker:
        if chains > 1:
            return HistoryChains(game, codec, seat, chains, steps, thin, rng, eps)
        return HistorySampler(game, codec, seat, steps, thin, rng, eps)

    return make
