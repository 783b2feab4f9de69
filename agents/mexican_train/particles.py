"""A particle filter over the hidden hands of one seat's round, from the public move log.

``mc_infer``'s weights see only what a seat's successive views show (hand counts, voids,
the tiles on the trains). A player at the table sees more: every move, by whom, in
order. Given that log and a model of how the opponents choose, each world can be weighted
by how likely every opponent's choice was in it, which per-tile features cannot express (a
planner that laid a light tile on the Mexican train held no heavier tile fitting any open
end, and that tile was not on its longest chain).

:class:`ParticleFilter` keeps ``count`` full worlds (``GameState`` s whose public part is
the table's) with log-weights:

* :meth:`~ParticleFilter.start` samples them from the seat's view (``sample_state``: hand
  counts and shown voids), at the seat's first decision of a round;
* :meth:`~ParticleFilter.observe` takes each later move of the log (the mover is the seat
  on turn): an opponent's choice among several legal moves multiplies a world's weight by
  ``1 - eps`` if the model (``planner``) would have made it there, else by ``eps`` shared
  among the other legal moves; a move the world makes impossible (a tile it puts
  elsewhere, a draw while it holds a play) by :data:`IMPOSSIBLE`. The move is then applied
  to every world, repaired where needed (the played tile swapped into the mover's hand; a
  tile played right after a draw was the drawn one, which costs nothing);
* :meth:`~ParticleFilter.sync` reconciles the seat's own hand with its view (its own draws
  are known to it only afterwards), resamples when the weights degenerate, and jitters the
  copies (swaps of hidden tiles the voids allow) so they do not stay identical.

Information used: the seat's views and the public moves; nothing hidden.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from agents.mexican_train.planner import PlannerAgent
from mtrain_env.mexican_train.core.public import PublicView, banned_tiles, public_view, sample_state
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.tiles import bits_list

__all__ = [
    "DEFAULT_EPS",
    "IMPOSSIBLE",
    "HeardWorlds",
    "ParticleFilter",
    "StateDecision",
    "TrackerFactory",
    "WorldTracker",
    "filter_factory",
    "is_choice",
    "model_log_likelihood",
    "shuffled_boneyards",
]

#: the share of probability the planner model leaves to the moves it would not make
DEFAULT_EPS = 0.1
#: log-weight of a move a world makes impossible (the world is repaired and kept, much lighter)
IMPOSSIBLE = math.log(1e-4)


def shuffled_boneyards(truth: np.ndarray, base: int, first: int, count: int) -> np.ndarray:
    """``(count, STATE_SIZE)`` copies of the compiled state ``truth`` whose boneyards are
    shuffled: copy ``d`` is world ``first + d`` of stream ``base``, dealt from the boneyard's
    tiles sorted (the order ``truth`` had never matters: the boneyard is face down, R8)."""
    from mtrain_env.mexican_train.compiled import engine as ce  # numba: the 'fast' extra

    size = int(truth[ce.S_BONE_LEN])
    tiles = np.sort(truth[ce.S_BONEYARD : ce.S_BONEYARD + size])
    roots = np.repeat(truth[None, :], count, axis=0)
    for d in range(count):
        rng = np.random.default_rng([base, first + d, 4])
        roots[d, ce.S_BONEYARD : ce.S_BONEYARD + size] = rng.permutation(tiles)
    return roots


def is_choice(s: GameState) -> bool:
    """Whether a move in ``s`` says something of the mover's hand through its choice: not a
    play right after a draw (R16: that only says what was drawn: luck, not hands), and in
    a phase where the seat chooses (R9 opening, normal play)."""
    return not s.has_drawn and s.phase in (Phase.OPENING, Phase.NORMAL)


def model_log_likelihood(
    game: MexicanTrain,
    codec: Any,
    model: Any,
    s: GameState,
    mover: int,
    move: int,
    legal: list[int],
    eps: float,
) -> float:
    """Log-probability that ``mover`` chose the legal ``move`` in ``s`` under ``model`` (an
    agent, the planner here): ``log(1 - eps)`` if the model makes it, else ``eps`` shared
    among the other legal moves; 0 for a forced move."""
    if len(legal) == 1:
        return 0.0
    choice = StateDecision(game, codec, s, mover)
    predicted = choice.to_move(model.act(choice))
    return math.log(1.0 - eps) if predicted == move else math.log(eps / (len(legal) - 1))


class StateDecision:
    """``seat``'s decision in a simulated :class:`GameState`, with the interface of
    :class:`~agents.mexican_train.base.Decision` that rule-based agents use (view, legal
    actions, move conversion): what that agent would do in a world."""

    __slots__ = ("_state", "_view", "codec", "game", "seat")

    def __init__(self, game: MexicanTrain, codec: Any, state: GameState, seat: int) -> None:
        self.game = game
        self.codec = codec
        self._state = state
        self.seat = seat
        self._view: PublicView | None = None

    @property
    def view(self) -> PublicView:
        if self._view is None:
            self._view = public_view(self._state, self.game.config, self.seat)
        return self._view

    @property
    def legal_actions(self) -> list[int]:
        to_rel = self.codec.abs_to_rel[self.seat]
        return sorted(to_rel[m] for m in self.game.legal_moves(self._state))

    def to_move(self, action: int) -> int:
        return int(self.codec.rel_to_abs[self.seat][action])

    def to_action(self, move: int) -> int:
        return int(self.codec.abs_to_rel[self.seat][move])


class ParticleFilter:
    """Weighted worlds of one seat's round, updated move by move (module docstring).

    Args:
        game: the table's rules core.
        codec: the table's action codec.
        seat: the observing seat.
        count: worlds kept.
        eps: the share of the model's probability left to the moves it would not make.
        rng: draws the worlds, the resampling and the jitter.
    """

    def __init__(
        self, game: MexicanTrain, codec: Any, seat: int, count: int, eps: float, rng: np.random.Generator
    ) -> None:
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        if not 0.0 < eps < 1.0:
            raise ValueError(f"eps must be in (0, 1), got {eps}")
        self.game = game
        self.codec = codec
        self.seat = seat
        self.count = count
        self.eps = eps
        self.rng = rng
        self.model = PlannerAgent()
        self.worlds: list[GameState] = []
        self.log_weights = np.zeros(0)
        self._drawn: list[int] = []  #: per world, the tile its mover drew this turn (-1: none)

    @property
    def started(self) -> bool:
        return bool(self.worlds)

    def start(self, view: PublicView) -> None:
        """Fresh worlds from ``view`` (the seat's first decision of a round), equal weights."""
        self.model.reset()
        self.worlds = [sample_state(self.game, view, self.rng) for _ in range(self.count)]
        self.log_weights = np.zeros(self.count)
        self._drawn = [-1] * self.count

    def observe(self, move: int) -> None:
        """The next move of the log (absolute core move of the seat on turn)."""
        if not self.worlds:
            return
        mover = self.worlds[0].current
        for i, s in enumerate(self.worlds):
            if mover != self.seat:
                self._make_possible(i, s, mover, move)
                self.log_weights[i] += self._log_likelihood(s, mover, move)
            self._apply(i, s, move)

    def weights(self) -> np.ndarray:
        """The worlds' normalised weights."""
        w = np.exp(self.log_weights - self.log_weights.max())
        return w / w.sum()

    def sync(self, view: PublicView) -> None:
        """Make every world's copy of the seat's hand its true one (``view``), then resample
        and jitter when the effective sample size falls under half the worlds."""
        self.sync_hand(view)
        self.resample_if_degenerate(view)

    def sync_hand(self, view: PublicView) -> None:
        """Make every world's copy of the seat's hand its true one (its own draws, R16, are
        known to it only from its next view)."""
        hand = view.hand
        for s in self.worlds:
            missing = bits_list(hand & ~s.hands[self.seat])
            extra = bits_list(s.hands[self.seat] & ~hand)
            for t, x in zip(missing, extra, strict=True):
                _swap(s, self.seat, x, t)

    def matches(self, view: PublicView) -> bool:
        """Whether every world's public part is the table's (after :meth:`sync_hand`)."""
        return all(_public_matches(w, view) for w in self.worlds)

    def settle(self, view: PublicView) -> None:
        """:meth:`resample_if_degenerate` (the tracker protocol's name)."""
        self.resample_if_degenerate(view)

    def resample_if_degenerate(self, view: PublicView) -> None:
        """Resample and jitter when the effective sample size falls under half the worlds."""
        w = self.weights()
        if 1.0 / float((w * w).sum()) < self.count / 2:
            self._resample(view, w)

    def _log_likelihood(self, s: GameState, mover: int, move: int) -> float:
        if not is_choice(s):
            return 0.0
        legal = self.game.legal_moves(s)
        if move not in legal:
            return IMPOSSIBLE
        return model_log_likelihood(self.game, self.codec, self.model, s, mover, move, legal, self.eps)

    def _make_possible(self, i: int, s: GameState, mover: int, move: int) -> None:
        """Repair world ``s`` so that ``mover`` can make ``move``: a played tile is swapped into
        its hand (for the tile it drew this turn, if it drew: that was the one; else for a
        random one of its tiles); before a draw or a pass, its tiles that could be played
        are swapped for hidden tiles that could not, from the boneyard first (R15, R16: a
        seat draws or passes only when it has no play)."""
        game = self.game
        if move < game.draw:
            tile = move // game.width
            if not s.hands[mover] >> tile & 1:
                drawn = self._drawn[i]
                if drawn >= 0 and s.hands[mover] >> drawn & 1:
                    _swap(s, mover, drawn, tile)
                else:
                    hand = bits_list(s.hands[mover])
                    _swap(s, mover, hand[int(self.rng.integers(len(hand)))], tile)
            return
        for _ in range(4):
            playable = {m // game.width for m in game.legal_moves(s) if m < game.draw}
            if not playable:
                return
            spare = [t for t in s.boneyard if t not in playable]
            if not spare:
                spare = [
                    t
                    for q, hand in enumerate(s.hands)
                    if q not in (mover, self.seat)
                    for t in bits_list(hand)
                    if t not in playable
                ]
            for x in playable:
                if not spare:
                    return
                _swap(s, mover, x, spare.pop(int(self.rng.integers(len(spare)))))

    def _apply(self, i: int, s: GameState, move: int) -> None:
        game = self.game
        self._drawn[i] = s.boneyard[-1] if move == game.draw and s.boneyard else -1
        game.apply(s, move)

    def _resample(self, view: PublicView, w: np.ndarray) -> None:
        """Systematic resampling; every copy after the first of a world gets a few swaps of
        hidden tiles between places the shown voids allow (R15, R16; the jitter)."""
        positions = (self.rng.random() + np.arange(self.count)) / self.count
        picks = np.minimum(np.searchsorted(np.cumsum(w), positions), self.count - 1)
        seen: set[int] = set()
        worlds = []
        for p in picks.tolist():
            world = self.worlds[p].copy()
            if p in seen:
                self._jitter(world, view)
            seen.add(p)
            worlds.append(world)
        self.worlds = worlds
        self.log_weights = np.zeros(self.count)
        self._drawn = [-1] * self.count

    def _jitter(self, s: GameState, view: PublicView, swaps: int = 2) -> None:
        opponents = [q for q in range(len(s.hands)) if q != self.seat]
        banned = {q: banned_tiles(view, q) for q in opponents}
        places = [*opponents, -1]  # -1: the boneyard
        for _ in range(swaps):
            a, b = self.rng.choice(len(places), 2, replace=False)
            pa, pb = places[a], places[b]
            ta = _tiles_at(s, pa)
            tb = _tiles_at(s, pb)
            if not ta or not tb:
                continue
            x = ta[int(self.rng.integers(len(ta)))]
            y = tb[int(self.rng.integers(len(tb)))]
            if (pb >= 0 and banned[pb] >> x & 1) or (pa >= 0 and banned[pa] >> y & 1):
                continue
            holder = pa if pa >= 0 else pb
            if holder == pa:
                _swap(s, pa, x, y)
            else:
                _swap(s, pb, y, x)


def _tiles_at(s: GameState, place: int) -> list[int]:
    return list(s.boneyard) if place < 0 else bits_list(s.hands[place])


def _swap(s: GameState, seat: int, out: int, into: int) -> None:
    """Exchange ``seat``'s tile ``out`` with tile ``into``, wherever ``into`` is (another hand or
    the boneyard, at the same position): the counts stay as they are."""
    for q, hand in enumerate(s.hands):
        if hand >> into & 1:
            s.hands[q] = hand & ~(1 << into) | 1 << out
            break
    else:
        s.boneyard[s.boneyard.index(into)] = out
    s.hands[seat] = s.hands[seat] & ~(1 << out) | 1 << into


def _public_matches(world: GameState, view: PublicView) -> bool:
    """Whether ``view``'s seat sees the same in ``world`` as at the table (its hand synced
    first): the filter's worlds replay the same moves, so they diverge only where a draw
    decides something public (R5's search for the engine)."""
    return public_view(world, view.config, view.seat) == view


class WorldTracker(Protocol):
    """What :class:`HeardWorlds` drives: hidden-hand inference fed by the public move log
    (:class:`ParticleFilter`, :class:`~agents.mexican_train.history.HistorySampler`)."""

    game: MexicanTrain

    def start(self, view: PublicView) -> None: ...
    def observe(self, move: int) -> None: ...
    def sync_hand(self, view: PublicView) -> None: ...
    def matches(self, view: PublicView) -> bool: ...
    def settle(self, view: PublicView) -> None: ...
    @property
    def worlds(self) -> list[GameState]: ...
    def weights(self) -> np.ndarray: ...


#: builds a tracker for ``(game, codec, seat, rng)``
TrackerFactory = Callable[[MexicanTrain, Any, int, np.random.Generator], WorldTracker]


def filter_factory(count: int, eps: float) -> TrackerFactory:
    """A :class:`ParticleFilter` of ``count`` worlds and model share ``eps`` per round."""

    def make(game: MexicanTrain, codec: Any, seat: int, rng: np.random.Generator) -> WorldTracker:
        return ParticleFilter(game, codec, seat, count, eps, rng)

    return make


class HeardWorlds:
    """A seat's hidden-hand tracker fed by the moves it hears (:meth:`~agents.base.BaseAgent.inform`).

    :meth:`hear` buffers each public move; :meth:`update`, at each of the seat's decisions,
    feeds them to the tracker (or starts a fresh one from ``factory`` at the round's first
    decision, or when its table no longer matches the real one), reconciles the seat's hand
    and lets the tracker settle (resample, or walk).
    """

    def __init__(self, factory: TrackerFactory) -> None:
        self.factory = factory
        self.tracker: WorldTracker | None = None
        self.round = -1
        self.heard: list[tuple[int, int]] = []
        self.restarts = 0  #: fresh starts after the worlds diverged from the table

    def reset(self) -> None:
        self.tracker = None
        self.round = -1
        self.heard = []

    def hear(self, seat: int, action: int) -> None:
        self.heard.append((seat, action))

    def update(
        self, game: MexicanTrain, codec: Any, view: PublicView, rng: np.random.Generator
    ) -> WorldTracker:
        """The tracker at this decision of ``view``'s seat (``rng`` seeds a fresh one)."""
        f = self.tracker
        fresh = f is None or f.game.config != game.config or view.round_index != self.round
        if not fresh:
            assert f is not None
            to_abs = codec.rel_to_abs
            for seat, action in self.heard:
                f.observe(to_abs[seat][action])
            f.sync_hand(view)
            if not f.matches(view):
                self.restarts += 1
                fresh = True
        self.heard = []
        if fresh:
            f = self.tracker = self.factory(game, codec, view.seat, rng)
            f.start(view)
            f.sync_hand(view)
            self.round = view.round_index
        assert f is not None
        f.settle(view)
        return f
