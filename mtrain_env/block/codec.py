"""The action codec: ``Discrete(2 T + 1)``, (tile, end) plays then PASS (``T = 28``).

::

    action = tile_id * 2 + end        end 0 = the line's left end, 1 = its right end
    PASS   = 2 * T                    (= 56 for double six)

``tile_id(a, b)`` with ``a <= b`` is ``a * (2N + 3 - a) / 2 + (b - a)`` (``N = 6``), the
lexicographic numbering of :class:`mtrain_env.tilegame.tiles.TileSet`. Ends are ABSOLUTE
(both ends are shared by every seat), so the env action IS the rules-core move. The
opening tile is always ``end 0``; when both ends show the same pip only ``end 0`` is legal
(the two placements are mirror images, B8). Decoding is a table lookup (O(1)).
"""

from __future__ import annotations

from typing import NamedTuple

from mtrain_env.block.core.config import GameConfig
from mtrain_env.tilegame.actions import coerce_action, integer_value, short_repr
from mtrain_env.tilegame.deal import tile_from_json
from mtrain_env.tilegame.tiles import Tile

__all__ = ["Action", "ActionCodec"]


class Action(NamedTuple):
    """A decoded action: ``kind`` is ``"play"`` or ``"pass"``."""

    kind: str
    tile: Tile | None = None
    end: int | None = None


class ActionCodec:
    """Encode/decode actions of one config (tables built once)."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self._tiles = config.tiles
        self.num_actions = config.num_actions
        self.PASS = config.pass_action
        self._decoded = [Action("play", self._tiles.tiles[a >> 1], a & 1) for a in range(self.PASS)] + [
            Action("pass")
        ]

    def encode_action(self, tile: Tile, end: int) -> int:
        """Action id of laying ``tile`` (``(a, b)``, either order) on ``end`` (0 left, 1 right).

        ``TypeError`` for halves or an end that are not integers (no rounding of floats, no
        bools or strings), ``ValueError`` for a tile not in the set (B1) or an end not 0/1.
        """
        tile_id = tile_from_json(self._tiles, tile, "encode_action")
        side = integer_value(end)
        if side is None:
            raise TypeError(f"end must be 0 or 1, got {short_repr(end)}")
        if side not in (0, 1):
            raise ValueError(f"end must be 0 (left) or 1 (right), got {side}")
        return tile_id * 2 + side

    def decode_action(self, action: int) -> Action:
        """Inverse of :meth:`encode_action` (and PASS); takes what ``step`` takes."""
        return self._decoded[coerce_action(action, self.num_actions)]

    def describe(self, action: int) -> str:
        """Short text, e.g. ``"(3, 5) on the left end"`` or ``"PASS"``."""
        a = self.decode_action(action)
        if a.kind == "pass":
            return "PASS"
        return f"{a.tile} on the {'right' if a.end else 'left'} end"
