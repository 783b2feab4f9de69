"""What one seat may know: the public table plus its own hand, and determinization.

:func:`public_view` redacts a :class:`GameState` for one seat: the other hands become
counts and the boneyard a count; everything else on the table (trains, markers, pending
doubles, turn flags, shown voids, scores) is public. Agents see only this.

:func:`sample_state` turns a :class:`PublicView` back into a full :class:`GameState` by
dealing the unseen tiles at random among the opponents' hands (respecting their counts
and the pips each has shown it lacks) and the boneyard (random order) — the
determinization step of Monte Carlo search (a guess, never the truth).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.deal import hall_deal
from mtrain_env.tilegame.tiles import bits_list


@dataclass(frozen=True)
class PublicView:
    """A seat's leak-free view. Trains and seats are ABSOLUTE (train ``n`` = Mexican)."""

    config: GameConfig
    seat: int  #: the observing seat
    hand: int  #: its own hand (tile bitmask)
    hand_counts: tuple[int, ...]  #: tiles in each seat's hand
    boneyard_count: int
    round_index: int
    engine: int
    engine_placed: bool
    phase: Phase
    first_player: int
    current: int  #: seat on turn
    trains: tuple[tuple[int, ...], ...]  #: tile ids from the station outward, per train
    ends: tuple[int, ...]  #: open-end pip value per train
    markers: tuple[bool, ...]
    table: int  #: bitmask of the tiles on the table
    pending: tuple[int, ...]  #: trains with a binding unsatisfied double, satisfaction order
    turn_doubles: tuple[int, ...]  #: trains ending in a double laid this turn
    first_turn_done: tuple[bool, ...]
    tiles_this_turn: int
    doubles_this_turn: int
    owes: bool
    has_drawn: bool
    obliged_this_turn: bool
    voids: tuple[int, ...]  #: per seat, pip bitmask it has shown it lacks
    scores: tuple[float, ...]
    round_scores: tuple[tuple[float, ...], ...]

    @property
    def unseen(self) -> int:
        """Tiles this seat cannot see: the other hands and the boneyard (bitmask)."""
        mask = self.config.tiles.full & ~self.table & ~self.hand
        if not self.engine_placed:
            mask |= 1 << self.config.tiles.double_id(self.engine)
        return mask

    @property
    def on_turn(self) -> bool:
        """Whether the viewing seat is to move now (never once the round is over)."""
        return self.current == self.seat and self.phase < Phase.ROUND_OVER


def public_view(s: GameState, config: GameConfig, seat: int) -> PublicView:
    """The view of ``seat``: public state and its own hand, nothing hidden."""
    return PublicView(
        config=config,
        seat=seat,
        hand=s.hands[seat],
        hand_counts=tuple(h.bit_count() for h in s.hands),
        boneyard_count=len(s.boneyard),
        round_index=s.round_index,
        engine=s.engine,
        engine_placed=s.engine_placed,
        phase=s.phase,
        first_player=s.first_player,
        current=s.current,
        trains=tuple(tuple(t) for t in s.trains),
        ends=tuple(s.ends),
        markers=tuple(s.markers),
        table=s.table,
        pending=tuple(s.pending),
        turn_doubles=tuple(s.turn_doubles),
        first_turn_done=tuple(s.first_turn_done),
        tiles_this_turn=s.tiles_this_turn,
        doubles_this_turn=s.doubles_this_turn,
        owes=s.owes,
        has_drawn=s.has_drawn,
        obliged_this_turn=s.obliged_this_turn,
        # the seat on turn right after its own draw: its voids are reset, keep them so
        voids=tuple(s.voids),
        scores=tuple(s.scores),
        round_scores=tuple(tuple(r) for r in s.round_scores),
    )


def banned_tiles(view: PublicView, seat: int) -> int:
    """Tiles (bitmask) ``seat``'s hand cannot hold, as far as ``view`` shows: every tile with
    a pip the seat has shown it lacks (it drew or passed where a tile with that pip was
    playable, R15/R16), and the engine while it is still in the boneyard (R5 variant)."""
    tiles = view.config.tiles
    banned = 0 if view.engine_placed else 1 << tiles.double_id(view.engine)
    for v in bits_list(view.voids[seat]):
        banned |= tiles.match[v]
    return banned


def sample_state(game: MexicanTrain, view: PublicView, rng: np.random.Generator) -> GameState:
    """A full state consistent with ``view``: unseen tiles dealt at random (determinization).

    Opponents get exactly their hand counts and never a tile with a pip they have shown
    they lack; the rest is the boneyard in random order. Seats are dealt most-constrained
    first; a dead end is retried with a fresh shuffle, and after 64 dead ends (late in a
    round, with a small boneyard and several shown voids, a valid deal can be that rare)
    :func:`_exact_deal` deals by Hall's condition, which cannot fail. ``ValueError`` if
    the view admits no deal at all (its voids contradict its hand counts).
    """
    n = game.n
    unseen = bits_list(view.unseen)
    opponents = [q for q in range(n) if q != view.seat]
    allowed = {q: ~banned_tiles(view, q) for q in opponents}
    order = sorted(
        opponents, key=lambda q: sum(1 for i in unseen if allowed[q] >> i & 1) - view.hand_counts[q]
    )
    for _attempt in range(64):
        pool = [unseen[int(j)] for j in rng.permutation(len(unseen))]
        hands = [0] * n
        hands[view.seat] = view.hand
        taken: set[int] = set()
        ok = True
        for q in order:
            need = view.hand_counts[q]
            got = 0
            for i in pool:
                if got == need:
                    break
                if i not in taken and allowed[q] >> i & 1:
                    hands[q] |= 1 << i
                    taken.add(i)
                    got += 1
            if got < need:
                ok = False
                break
        if ok:
            boneyard = [i for i in pool if i not in taken]
            return _assemble(view, hands, boneyard)
    return _exact_deal(game, view, rng)


def _exact_deal(game: MexicanTrain, view: PublicView, rng: np.random.Generator) -> GameState:
    """The fallback of :func:`sample_state` that cannot fail on a consistent view: the opponents'
    hands dealt by :func:`~mtrain_env.tilegame.deal.hall_deal` from the tiles their shown voids
    allow (R16: a seat that drew or passed lacked every tile matching the ends it could play);
    the boneyard gets the rest, in random order. Slower than the greedy dealer (used only after
    it fails)."""
    unseen = view.unseen
    opponents = [q for q in range(game.n) if q != view.seat]
    allowed = [unseen & ~banned_tiles(view, q) for q in opponents]
    dealt, boneyard = hall_deal(unseen, [view.hand_counts[q] for q in opponents], allowed, rng)
    hands = [0] * game.n
    hands[view.seat] = view.hand
    for q, hand in zip(opponents, dealt, strict=True):
        hands[q] = hand
    return _assemble(view, hands, boneyard)


def _assemble(view: PublicView, hands: list[int], boneyard: list[int]) -> GameState:
    n = len(hands)
    s = GameState(n)
    s.round_index = view.round_index
    s.engine = view.engine
    s.engine_placed = view.engine_placed
    s.phase = view.phase
    s.first_player = view.first_player
    s.seat_offset = (view.first_player - view.round_index) % n
    s.current = view.current
    s.hands = hands
    s.boneyard = boneyard
    s.trains = [list(t) for t in view.trains]
    s.ends = list(view.ends)
    s.markers = list(view.markers)
    s.table = view.table
    s.pending = list(view.pending)
    s.turn_doubles = list(view.turn_doubles)
    s.first_turn_done = list(view.first_turn_done)
    s.tiles_this_turn = view.tiles_this_turn
    s.doubles_this_turn = view.doubles_this_turn
    s.owes = view.owes
    s.has_drawn = view.has_drawn
    s.obliged_this_turn = view.obliged_this_turn
    s.voids = list(view.voids)
    s.pre_draw_voids = list(view.voids)
    s.scores = list(view.scores)
    s.round_scores = [list(r) for r in view.round_scores]
    return s
