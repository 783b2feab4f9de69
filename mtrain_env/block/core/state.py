"""The mutable state of partnership block dominoes: everything that changes during play.

Hands, the table and each seat's played tiles are tile-id bitmasks (see
:mod:`mtrain_env.tilegame.tiles`); voids are pip bitmasks. The line is kept as oriented tiles
from its left end (end 0) to its right end (end 1).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Phase(enum.IntEnum):
    """Where an episode stands."""

    PLAYING = 0  #: a hand is under way
    HAND_OVER = 1  #: a hand has ended and the match goes on (the next hand is dealt by the env)
    GAME_OVER = 2  #: the episode is over (one hand, or the match decided, B13)


#: How a hand ended (B10, B11).
DOMINO = "domino"
CIERRE = "cierre"


@dataclass(frozen=True)
class HandResult:
    """The outcome of one hand (B10-B12), all seats and pairs ABSOLUTE.

    Attributes:
        kind: ``"domino"`` (a player went out) or ``"cierre"`` (nobody could play).
        seat: the player who went out, or who laid the closing tile.
        opener: the player who opened the hand ("llevaba la mano").
        winner: the pair that won the hand (``seat % 2``; each player alone with 2 players).
        lead: the winning player the next hand's opener is taken from (B6): the one who went
            out; in a cierre the winning pair's member with fewer pips (tie: the first of
            them in play order from the closer).
        pips: pips left in each seat's hand.
        pair_pips: pips left per pair.
        points: points each pair scores this hand (B10-B12; penalties, lower is better).
        tie: a cierre with equal pair pips (decided by ``closed_tie``).
    """

    kind: str
    seat: int
    opener: int
    winner: int
    lead: int
    pips: tuple[int, ...]
    pair_pips: tuple[int, int]
    points: tuple[int, int]
    tie: bool = False


class GameState:
    """All mutable state of one episode (a hand, or a match of hands)."""

    __slots__ = (
        "current",
        "ends",
        "forced_opening",
        "hand_index",
        "hands",
        "last_player",
        "line",
        "match_loser",
        "moves",
        "opener",
        "phase",
        "played_by",
        "redeals",
        "results",
        "scores",
        "sleeping",
        "table",
        "tiebreak",
        "voids",
    )

    def __init__(self, num_players: int) -> None:
        n = num_players
        self.hand_index = 0  #: hands started in this episode, minus one
        self.phase = Phase.PLAYING
        self.hands: list[int] = [0] * n  #: tile bitmask per seat (hidden)
        self.sleeping = 0  #: tiles left face down, out of play (2 players only, B3; hidden)
        self.redeals = 0  #: redeals of this hand's deal (B4; public: the hands were shown)
        self.line: list[tuple[int, int]] = []  #: oriented tiles, end 0 (left) to end 1 (right)
        self.ends: list[int] = [-1, -1]  #: open pip at end 0 and end 1; -1 while the line is empty
        self.table = 0  #: bitmask of the tiles in the line
        self.played_by: list[int] = [0] * n  #: bitmask of the tiles each seat laid this hand
        self.voids: list[int] = [0] * n  #: pip bitmask each seat has passed on this hand (public)
        self.current = 0  #: seat on turn
        self.opener = 0  #: seat that opened (or opens) this hand
        self.forced_opening = -1  #: tile id the opener must lay (B5), or -1
        self.last_player = -1  #: seat that laid the last tile (the closer in a cierre)
        self.scores: list[int] = [0, 0]  #: match points per pair (B13; penalties)
        self.results: list[HandResult] = []  #: finished hands of this episode
        self.match_loser = -1  #: pair that lost the match (B13), or -1
        self.tiebreak = False  #: the next/current hand breaks a both-over-target tie (B13)
        self.moves = 0  #: actions applied in this hand (plays and passes)

    def __deepcopy__(self, memo: dict[int, object]) -> GameState:
        """``copy.deepcopy`` is :meth:`copy` (OpenSpiel clones a Python state by deep-copying it)."""
        return self.copy()

    def copy(self) -> GameState:
        """An independent copy (lists copied; ints and results are immutable)."""
        c = GameState.__new__(GameState)
        for name in self.__slots__:
            value = getattr(self, name)
            setattr(c, name, value[:] if isinstance(value, list) else value)
        return c
