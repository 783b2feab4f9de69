"""Dealing helpers shared by every game: seeded shuffles and tiles read from JSON.

They depend only on a :class:`~mtrain_env.tilegame.tiles.TileSet`, not on a game's config,
so every game of the package deals and parses tiles the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mtrain_env.tilegame.tiles import TileSet

__all__ = ["shuffled_hands", "tile_from_json"]


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


def tile_from_json(tiles: TileSet, tile: Any, where: str = "input") -> int:
    """Tile id of ``[a, b]`` (either order); ``TypeError`` if malformed, ``ValueError`` if not in the set."""
    if not isinstance(tile, Sequence) or isinstance(tile, str) or len(tile) != 2:
        raise TypeError(f"a tile in {where} must be a pair [a, b], got {tile!r}")
    a, b = tile
    for x in (a, b):
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            raise TypeError(f"tile halves in {where} must be ints, got {tile!r}")
    return tiles.tile_id(int(a), int(b))
