"""The mutable state of a game: everything that changes during play, nothing static.

Trains are indexed absolutely: ``0 .. n-1`` are the personal trains of seats ``0 .. n-1``
(R7), ``n`` is the Mexican train. Hands and the table are tile-id bitmasks (see
:mod:`mtrain_env.tilegame.tiles`); the boneyard is a list whose LAST element is the top (the
next tile drawn, R8), so a draw is an O(1) ``pop()``.
"""

from __future__ import annotations

import enum


class Phase(enum.IntEnum):
    """Where a round stands."""

    SEEK_ENGINE = 0  #: ``engine_holder_opens``: nobody held the engine; seats draw in turn (R5)
    OPENING = 1  #: first turns (R9-R13)
    NORMAL = 2  #: second turns on (R14-R22)
    ROUND_OVER = 3  #: the round has ended (R23, R24); a session deals the next one
    GAME_OVER = 4  #: the last round of the episode has ended


class GameState:
    """All mutable state of one game (one episode: 1 round, or a session of rounds).

    Attributes are plain ints, lists and bitmasks so that copying and serializing are
    cheap; :mod:`mtrain_env.mexican_train.core.serialize` converts to and from a JSON dict.
    """

    __slots__ = (
        "blocked",
        "boneyard",
        "current",
        "doubles_this_turn",
        "ends",
        "engine",
        "engine_placed",
        "first_player",
        "first_player_forced",
        "first_turn_done",
        "hands",
        "has_drawn",
        "history_len",
        "markers",
        "obliged_this_turn",
        "owes",
        "pending",
        "phase",
        "pre_draw_voids",
        "round_index",
        "round_scores",
        "scores",
        "seat_offset",
        "table",
        "tiles_this_turn",
        "trains",
        "turn_doubles",
        "voids",
    )

    def __init__(self, num_players: int) -> None:
        n = num_players
        self.round_index = 0
        self.engine = 0  #: pip value v of the engine double (v, v) (R5)
        self.engine_placed = True  #: False while seats seek the engine (R5 variant)
        self.phase = Phase.OPENING
        self.first_player = 0  #: who opens this round (R6)
        self.seat_offset = 0  #: R6 rotation offset: round k opens with (offset + k) mod n
        self.first_player_forced = False  #: options["first_player"] overrides R5's engine holder
        self.current = 0  #: seat on turn
        self.hands: list[int] = [0] * n  #: tile bitmask per seat (hidden)
        self.boneyard: list[int] = []  #: tile ids, top LAST (hidden order)
        self.trains: list[list[int]] = [[] for _ in range(n + 1)]  #: tile ids from the station
        self.ends: list[int] = [0] * (n + 1)  #: open-end pip value per train (engine if empty)
        self.markers: list[bool] = [False] * n  #: marker on each personal train (R10, R16, R17)
        self.table = 0  #: bitmask of the tiles on the table, the engine included
        self.pending: list[int] = []  #: trains ending in a binding unsatisfied double, play order (R20, R21)
        self.turn_doubles: list[int] = []  #: trains whose end is a double laid this turn (R18)
        self.first_turn_done: list[bool] = [False] * n  #: who has had their first turn (R9, R12)
        self.tiles_this_turn = 0  #: tiles the seat on turn has laid this turn
        self.doubles_this_turn = 0  #: doubles among them (one_double_per_turn)
        self.owes = False  #: a tile is owed after a double (R18)
        self.has_drawn = False  #: the draw for the current owed tile is used (R16, R18)
        self.obliged_this_turn = False  #: the turn began with a double to satisfy (R20)
        self.voids: list[int] = [0] * n  #: per seat, pip bitmask it has shown it lacks (public)
        self.pre_draw_voids: list[int] = [0] * n  #: voids of the hand before an unrevealed draw
        self.blocked = False  #: the round ended blocked (R23)
        #: per finished round, the score of each seat: ints (pips, R24), floats under
        #: ``positive_scoring`` (:func:`~mtrain_env.mexican_train.core.scoring.score_type`)
        self.round_scores: list[list[float]] = []
        self.scores: list[float] = [0] * n  #: cumulative score per seat (R24, R25), typed alike
        self.history_len = 0  #: actions applied this episode

    def __deepcopy__(self, memo: dict[int, object]) -> GameState:
        """``copy.deepcopy`` is :meth:`copy` (OpenSpiel clones a Python state by deep-copying it)."""
        return self.copy()

    def copy(self) -> GameState:
        """A deep copy (lists copied; ints are immutable)."""
        new = GameState.__new__(GameState)
        for name in GameState.__slots__:
            value = getattr(self, name)
            if isinstance(value, list):
                value = [list(v) if isinstance(v, list) else v for v in value]
            setattr(new, name, value)
        return new
