"""The action codec: ``Discrete(T * (n + 1) + 2)`` with trains RELATIVE to the acting seat.

::

    action = tile_id * (n + 1) + train      train 0 = own, k = seat (seat + k) mod n, n = Mexican
    DRAW   = T * (n + 1)
    PASS   = T * (n + 1) + 1

``tile_id`` is :func:`mtrain_env.tilegame.tiles.TileSet.tile_id` (lexicographic ``(a, b)``,
``a <= b``). The rules core speaks ABSOLUTE trains (train k = seat k's); this module
converts both ways with per-seat lookup tables, so every conversion is O(1).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.tilegame.actions import coerce_action, integer_value, short_repr
from mtrain_env.tilegame.deal import tile_from_json
from mtrain_env.tilegame.tiles import Tile


class Action(NamedTuple):
    """A decoded action: ``kind`` is ``"play"``, ``"draw"`` or ``"pass"``."""

    kind: str
    tile: Tile | None = None
    train: int | None = None  #: relative train index (0 own, n Mexican)


class ActionCodec:
    """Encode/decode actions and convert between relative and absolute trains."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.n = n = config.num_players
        self.width = w = config.num_trains
        self.num_tiles = t = config.num_tiles
        self.num_actions = config.num_actions
        self.DRAW = config.draw_action
        self.PASS = config.pass_action
        self._tiles = config.tiles
        # rel_to_abs[seat][action] and abs_to_rel[seat][action], built with numpy, kept as
        # lists (scalar lookups are faster on lists)
        rel_to_abs = np.empty((n, self.num_actions), dtype=np.int64)
        tile_base = np.repeat(np.arange(t) * w, w)
        rel_train = np.tile(np.arange(w), t)
        for seat in range(n):
            abs_train = np.where(rel_train == n, n, (rel_train + seat) % n)
            rel_to_abs[seat, : t * w] = tile_base + abs_train
            rel_to_abs[seat, t * w :] = [self.DRAW, self.PASS]
        abs_to_rel = np.empty_like(rel_to_abs)
        for seat in range(n):
            abs_to_rel[seat, rel_to_abs[seat]] = np.arange(self.num_actions)
        self.rel_to_abs = [row.tolist() for row in rel_to_abs]
        self.abs_to_rel = [row.tolist() for row in abs_to_rel]

    def encode_action(self, tile: Tile, train: int) -> int:
        """Action id of laying ``tile`` (``(a, b)`` in either order) on relative ``train``.

        ``TypeError`` for halves or a train that are not integers (no rounding of floats, no
        bools or strings), ``ValueError`` for a tile not in the set (R1) or a train out of range.
        """
        tile_id = tile_from_json(self._tiles, tile, "encode_action")
        where = integer_value(train)
        if where is None:
            raise TypeError(f"train must be an int, got {short_repr(train)}")
        if not 0 <= where <= self.n:
            raise ValueError(
                f"train must be 0 (own) .. {self.n - 1} (other seats) or {self.n} (Mexican), got {where}"
            )
        return tile_id * self.width + where

    def decode_action(self, action: int) -> Action:
        """Inverse of :meth:`encode_action` (and DRAW / PASS); takes what ``step`` takes."""
        action = coerce_action(action, self.num_actions)
        if action == self.DRAW:
            return Action("draw")
        if action == self.PASS:
            return Action("pass")
        tile_id, train = divmod(action, self.width)
        return Action("play", self._tiles.tiles[tile_id], train)

    def describe(self, action: int) -> str:
        """Short text for an action, e.g. ``"(5, 12) on own train"``."""
        a = self.decode_action(action)
        if a.kind != "play":
            return a.kind.upper()
        assert a.train is not None
        if a.train == 0:
            where = "own train"
        elif a.train == self.n:
            where = "Mexican train"
        else:
            where = f"train +{a.train}"
        return f"{a.tile} on {where}"
