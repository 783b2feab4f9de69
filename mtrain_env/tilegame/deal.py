"""Dealing helpers shared by every game: seeded shuffles and tiles read from JSON.

They depend only on a :class:`~mtrain_env.tilegame.tiles.TileSet`, not on a game's config,
so every game of the package deals and parses tiles the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mtrain_env.tilegame.actions import integer_value, short_repr
from mtrain_env.tilegame.tiles import TileSet

__all__ = ["shuffled_hands", "tile_from_json", "tile_pips"]


def shuffled_hands(
    pool: Sequence[int], num_hands: int, hand_size: int, rng: np.random.Generator
) -> tuple[list[int], list[int]]:
    """Shuffle ``pool`` (tile ids) with ``rng``; deal ``hand_size`` consecutive tiles per hand.

    Returns ``(hands, rest)``: the hands as tile bitmasks and the undealt tiles in shuffled
    order. One ``rng.permutation`` call per deal, so a seed fixes the deal.
    """
    if num_hands * hand_size > len(pool):
        raise ValueError(
            f"{num_hands} hands of {hand_size} need {num_hands * hand_size} tiles, pool has {len(pool)}"
        )
    # .tolist(): iterating the numpy array itself would make a numpy scalar per tile
    shuffled = [pool[j] for j in rng.permutation(len(pool)).tolist()]
    hands = []
    for h in range(num_hands):
        mask = 0
        for i in shuffled[h * hand_size : (h + 1) * hand_size]:
            mask |= 1 << i
        hands.append(mask)
    return hands, shuffled[num_hands * hand_size :]


def tile_pips(tile: Any, where: str = "input") -> tuple[int, int]:
    """The halves ``(a, b)`` of a tile given as a pair, as Python ints; ``TypeError`` otherwise.

    A pair is a list, a tuple or a 1-d numpy array of two integers (Python or numpy ints,
    :mod:`mtrain_env.tilegame.actions`); a float, string or bool half is refused rather than
    rounded (``(1.9, 2.2)`` is not the tile ``(1, 2)``), as is a string or bytes "pair".
    """
    if isinstance(tile, np.ndarray):
        pair = tile.tolist() if tile.shape == (2,) and tile.dtype.kind in "iu" else None
    elif isinstance(tile, Sequence) and not isinstance(tile, (str, bytes, bytearray)) and len(tile) == 2:
        pair = list(tile)
    else:
        pair = None
    if pair is None:
        raise TypeError(f"a tile in {where} must be a pair [a, b] of ints, got {short_repr(tile)}")
    a, b = integer_value(pair[0]), integer_value(pair[1])
    if a is None or b is None:
        raise TypeError(f"tile halves in {where} must be ints, got {short_repr(tile)}")
    return a, b


def tile_from_json(tiles: TileSet, tile: Any, where: str = "input") -> int:
    """Tile id of ``[a, b]`` (either order); ``TypeError`` if malformed (:func:`tile_pips`),
    ``ValueError`` naming the tile and the set if it is not in the set (R1)."""
    a, b = tile_pips(tile, where)
    return tiles.tile_id(a, b)
