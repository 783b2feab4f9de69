"""Domino sets (R1, R2): tile ids, pip tables and bitmask helpers.

A double-N set holds every tile ``(a, b)`` with ``0 <= a <= b <= N`` (R1). Tiles are
numbered in lexicographic order of ``(a, b)`` with ``a <= b``::

    tile_id(a, b) = a * (2N + 3 - a) // 2 + (b - a)

so for double-12, ``(0, 0)`` is 0, ``(0, 12)`` is 12, ``(1, 1)`` is 13 and ``(12, 12)`` is 90.

Hands and the set of tiles on the table are Python ``int`` bitmasks over tile ids
(bit ``i`` set = tile ``i`` present): the rules core does its set algebra with ``&``, ``|``
and ``^`` on machine-word-sized ints, which is what makes legal-move generation fast in
pure Python (the pgx idea of precomputed tables, without an array library).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

Tile = tuple[int, int]

#: Set sizes the project supports and tests (R1).
SUPPORTED_MAX_PIPS: tuple[int, ...] = (6, 9, 12, 15, 18)


def bits_list(mask: int) -> list[int]:
    """The indices of the set bits of ``mask``, in increasing order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class TileSet:
    """The static tables of one double-N set (R1, R2); immutable and shared.

    Attributes:
        max_pips: N, the highest pip value.
        num_tiles: ``(N + 1)(N + 2) / 2``.
        tiles: tile id -> ``(a, b)`` with ``a <= b``.
        pips: tile id -> ``a + b`` (R2).
        match: pip value v -> bitmask of the tiles that have a v half.
        doubles: bitmask of the doubles (R2).
        full: bitmask of the whole set.
    """

    def __init__(self, max_pips: int) -> None:
        self.max_pips = max_pips
        n = max_pips
        self.tiles: tuple[Tile, ...] = tuple((a, b) for a in range(n + 1) for b in range(a, n + 1))
        self.num_tiles = len(self.tiles)
        self._ids = {t: i for i, t in enumerate(self.tiles)}
        self.pips: tuple[int, ...] = tuple(a + b for a, b in self.tiles)
        self.match: tuple[int, ...] = tuple(
            sum(1 << i for i, (a, b) in enumerate(self.tiles) if v in (a, b)) for v in range(n + 1)
        )
        self.doubles = sum(1 << i for i, (a, b) in enumerate(self.tiles) if a == b)
        self.full = (1 << self.num_tiles) - 1
        # other_end[id * (N + 1) + v]: the half left open when tile `id` is laid against v,
        # or -1 when the tile has no v half (R7).
        width = n + 1
        other = [-1] * (self.num_tiles * width)
        for i, (a, b) in enumerate(self.tiles):
            other[i * width + a] = b
            other[i * width + b] = a
        self.other_end: tuple[int, ...] = tuple(other)

    def tile_id(self, a: int, b: int) -> int:
        """The id of tile ``(a, b)``, in either order; ``ValueError`` if not in the set (R1)."""
        key = (a, b) if a <= b else (b, a)
        try:
            return self._ids[key]
        except KeyError:
            raise ValueError(f"R1: ({a}, {b}) is not a tile of the double-{self.max_pips} set") from None

    def double_id(self, v: int) -> int:
        """The id of the double ``(v, v)``."""
        return self.tile_id(v, v)

    def mask_of(self, tile_ids: Iterable[int]) -> int:
        """Bitmask of the given tile ids."""
        m = 0
        for i in tile_ids:
            m |= 1 << i
        return m

    def hand_value(self, mask: int, blank_penalty: bool = False) -> int:
        """Penalty pips of the tiles in ``mask`` (R24; ``blank_penalty`` variant)."""
        return sum(self.tile_value(i, blank_penalty) for i in bits_list(mask))

    def tile_value(self, tile_id: int, blank_penalty: bool = False) -> int:
        """One tile's penalty: its pips (R2), or 25 per blank half and 50 for 0-0 (variant)."""
        a, b = self.tiles[tile_id]
        if blank_penalty and (a == 0 or b == 0):
            return 50 if a == b else 25 + a + b
        return a + b


@cache
def tile_set(max_pips: int) -> TileSet:
    """The shared :class:`TileSet` for a double-``max_pips`` set."""
    return TileSet(max_pips)
