"""What one seat may know: the public table plus its own hand (for agents and tooling).

:func:`public_view` redacts a :class:`GameState` for one seat: the other hands become
counts and the sleeping tiles (2 players) vanish; the line, who laid what, the passes
("voids"), the opener, the scores and finished hands (all hands are shown when a hand
ends) are public.

:func:`sample_state` turns a :class:`PublicView` back into a full :class:`GameState`: the
unseen tiles dealt at random among the other hands (their counts, never a tile matching
a pip the seat passed on) and, with 2 players, the sleeping tiles — a determinization
for search (a guess, never the truth).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mtrain_env.block.core.config import GameConfig
from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.block.core.state import GameState, HandResult, Phase
from mtrain_env.tilegame.deal import constrained_deal
from mtrain_env.tilegame.tiles import bits_list

__all__ = ["PublicView", "public_view", "sample_state"]


@dataclass(frozen=True)
class PublicView:
    """A seat's leak-free view; seats and pairs ABSOLUTE."""

    config: GameConfig
    seat: int  #: the observing seat
    hand: int  #: its own hand (tile bitmask)
    hand_counts: tuple[int, ...]  #: tiles in each seat's hand
    line: tuple[tuple[int, int], ...]  #: oriented tiles, end 0 to end 1
    ends: tuple[int, int]  #: open pips (end 0, end 1); -1 while the line is empty
    table: int  #: bitmask of the tiles in the line
    played_by: tuple[int, ...]  #: bitmask of the tiles each seat laid this hand
    voids: tuple[int, ...]  #: pip bitmask each seat has passed on this hand
    current: int  #: seat on turn
    opener: int  #: seat that opened this hand
    forced_opening: int  #: tile id the hand must open with (B5), or -1
    phase: Phase
    hand_index: int
    redeals: int
    scores: tuple[int, int]  #: match points per pair (penalties)
    results: tuple[HandResult, ...]  #: finished hands (every hand is shown at its end)
    tiebreak: bool
    match_loser: int
    last_player: int = -1  #: seat that laid the last tile (the closer of a cierre, B11)
    moves: int = 0  #: actions (plays and passes) taken in this hand

    @property
    def pair(self) -> int:
        return self.seat % 2

    @property
    def partner(self) -> int:
        """The seat opposite (itself with 2 players)."""
        return (self.seat + 2) % self.config.num_players

    @property
    def on_turn(self) -> bool:
        """Whether the viewing seat is to move now (only while the hand is being played)."""
        return self.phase == Phase.PLAYING and self.current == self.seat

    @property
    def unseen(self) -> int:
        """Tiles this seat cannot see: the other hands (and the sleeping tiles), as a bitmask."""
        return self.config.tiles.full & ~self.table & ~self.hand


def public_view(s: GameState, config: GameConfig, seat: int) -> PublicView:
    """The view of ``seat``: public state and its own hand, nothing hidden."""
    return PublicView(
        config=config,
        seat=seat,
        hand=s.hands[seat],
        hand_counts=tuple(h.bit_count() for h in s.hands),
        line=tuple(s.line),
        ends=(s.ends[0], s.ends[1]),
        table=s.table,
        played_by=tuple(s.played_by),
        voids=tuple(s.voids),
        current=s.current,
        opener=s.opener,
        forced_opening=s.forced_opening,
        phase=s.phase,
        hand_index=s.hand_index,
        redeals=s.redeals,
        scores=(s.scores[0], s.scores[1]),
        results=tuple(s.results),
        tiebreak=s.tiebreak,
        match_loser=s.match_loser,
        last_player=s.last_player,
        moves=s.moves,
    )


def sample_state(game: BlockDominoes, view: PublicView, rng: np.random.Generator) -> GameState:
    """A full state consistent with ``view``: the unseen tiles dealt at random (determinization).

    Every other seat gets exactly its hand count and no tile with a pip it has passed on
    (B9); the rest sleeps (2 players). The hand is not closed in ``view`` (B11: someone
    holds a tile that fits), so deals where nobody could play are dealt again (up to 1000
    times; the true deal passes, so this is rare). ``ValueError`` if the view admits no deal.
    """
    for _attempt in range(1000):
        s = _sample_once(game, view, rng)
        if s.phase != Phase.PLAYING or not s.line or any(game.can_play(s, q) for q in range(game.n)):
            return s
    raise ValueError("B11: no sampled deal leaves a seat able to play; the view looks closed")


def _sample_once(game: BlockDominoes, view: PublicView, rng: np.random.Generator) -> GameState:
    tiles = game.tiles
    others = [q for q in range(game.n) if q != view.seat]
    allowed = []
    for q in others:
        banned = 0
        for v in bits_list(view.voids[q]):
            banned |= tiles.match[v]
        allowed.append(~banned)
    dealt, rest = constrained_deal(view.unseen, [view.hand_counts[q] for q in others], allowed, rng)
    s = GameState(game.n)
    s.hand_index = view.hand_index
    s.phase = view.phase
    s.hands = [0] * game.n
    s.hands[view.seat] = view.hand
    for q, h in zip(others, dealt, strict=True):
        s.hands[q] = h
    for i in rest:
        s.sleeping |= 1 << i
    s.redeals = view.redeals
    s.line = list(view.line)
    s.ends = list(view.ends)
    s.table = view.table
    s.played_by = list(view.played_by)
    s.voids = list(view.voids)
    s.current = view.current
    s.opener = view.opener
    s.forced_opening = view.forced_opening
    s.last_player = view.last_player
    s.scores = list(view.scores)
    s.results = list(view.results)
    s.tiebreak = view.tiebreak
    s.match_loser = view.match_loser
    s.moves = view.moves
    return s
