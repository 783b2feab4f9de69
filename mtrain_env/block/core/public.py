"""What one seat may know: the public table plus its own hand (for agents and tooling).

:func:`public_view` redacts a :class:`GameState` for one seat: the other hands become
counts and the sleeping tiles (2 players) vanish; the line, who laid what, the passes
("voids"), the opener, the scores and finished hands (all hands are shown when a hand
ends) are public.
"""

from __future__ import annotations

from dataclasses import dataclass

from mtrain_env.block.core.config import GameConfig
from mtrain_env.block.core.state import GameState, HandResult, Phase

__all__ = ["PublicView", "public_view"]


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

    @property
    def pair(self) -> int:
        return self.seat % 2

    @property
    def partner(self) -> int:
        """The seat opposite (itself with 2 players)."""
        return (self.seat + 2) % self.config.num_players

    @property
    def on_turn(self) -> bool:
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
    )
