"""Dealing helpers shared by every game: seeded shuffles, tiles read from JSON and the
shape of a fixed deal (its keys, its hands), each game's rules checked by its callbacks.

They depend only on a :class:`~mtrain_env.tilegame.tiles.TileSet`, not on a game's config,
so every game of the package deals and parses tiles the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mtrain_env.tilegame.actions import integer_value, short_repr
from mtrain_env.tilegame.tiles import TileSet, bits_list

__all__ = [
    "check_deal_keys",
    "constrained_deal",
    "read_hands",
    "shuffled_hands",
    "tile_from_json",
    "tile_pips",
]


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


def constrained_deal(
    unseen: int, needs: Sequence[int], allowed: Sequence[int], rng: np.random.Generator
) -> tuple[list[int], list[int]]:
    """Deal the ``unseen`` tiles (a bitmask) at random: ``needs[k]`` tiles to hand ``k``, from ``allowed[k]``.

    The determinization step of search over hidden hands: ``allowed`` masks out what a
    seat has shown it lacks. Returns ``(hands, rest)``: the hands as bitmasks and the
    undealt tiles in random order. Random greedy deals (most constrained hand first), and
    after 64 dead ends a dealer that keeps Hall's condition (for every set of hands, the
    tiles any of them may take >= the tiles they need) and so cannot fail. ``ValueError``
    if no deal exists.
    """
    m = len(needs)
    pool = bits_list(unseen)
    allowed = [a & unseen for a in allowed]
    order = sorted(range(m), key=lambda k: allowed[k].bit_count() - needs[k])
    for _attempt in range(64):
        shuffled = [pool[int(j)] for j in rng.permutation(len(pool))]
        hands = [0] * m
        left = unseen
        for k in order:
            got = 0
            for i in shuffled:
                if got == needs[k]:
                    break
                if (left & allowed[k]) >> i & 1:
                    hands[k] |= 1 << i
                    left ^= 1 << i
                    got += 1
            if got < needs[k]:
                break
        else:
            return hands, [i for i in shuffled if left >> i & 1]
    return hall_deal(unseen, needs, allowed, rng)


def hall_deal(
    unseen: int, needs: Sequence[int], allowed: Sequence[int], rng: np.random.Generator
) -> tuple[list[int], list[int]]:
    """A deal that cannot fail while one exists (:func:`constrained_deal`'s fallback, and the
    Mexican Train determinizer's): each hand's tiles are drawn uniformly among those that keep
    the rest dealable. Hall's condition over the sets ``S`` of hands (``|tiles some hand of S
    may take| >= the tiles S needs``) is kept as a margin per set, and a tile is refused when
    it would take the last slack of a set not containing the receiving hand. The rest comes
    back in random order. Not exactly uniform over deals; ``ValueError`` if no deal exists."""
    m = len(needs)
    subsets = range(1, 1 << m)
    union = [0] * (1 << m)
    need_sum = [0] * (1 << m)
    for sub in subsets:
        low = (sub & -sub).bit_length() - 1
        union[sub] = union[sub & (sub - 1)] | allowed[low]
        need_sum[sub] = need_sum[sub & (sub - 1)] + needs[low]
    margin = [0] * (1 << m)
    for sub in subsets:
        margin[sub] = union[sub].bit_count() - need_sum[sub]
        if margin[sub] < 0:
            raise ValueError(
                "the view admits no deal (no deal exists): the shown voids contradict the hand counts"
            )
    hands = [0] * m
    left = unseen
    for k in range(m):
        bit = 1 << k
        for _ in range(needs[k]):
            forbidden = 0
            for sub in subsets:
                if margin[sub] == 0 and not sub & bit:
                    forbidden |= union[sub]
            choices = bits_list(left & allowed[k] & ~forbidden)
            t = choices[int(rng.integers(len(choices)))]
            left ^= 1 << t
            hands[k] |= 1 << t
            for sub in subsets:
                if union[sub] >> t & 1 and not sub & bit:
                    margin[sub] -= 1
    rest = bits_list(left)
    return hands, [rest[int(i)] for i in rng.permutation(len(rest))]


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


def _is_list(value: Any) -> bool:
    """A list-like of a fixed deal: a ``Sequence`` but not a string."""
    return isinstance(value, Sequence) and not isinstance(value, str)


def check_deal_keys(deal: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    """``deal`` (``reset(options={"deal": ...})``): a dict with exactly the keys ``keys``.

    ``TypeError`` if it is not a dict, ``ValueError`` naming the keys and those found if a
    key is missing or unknown.
    """
    names = " and ".join(repr(k) for k in keys)
    if not isinstance(deal, dict):
        raise TypeError(f"deal must be a dict with {names}, got {type(deal).__name__}")
    if set(deal) != set(keys):
        raise ValueError(
            f"deal needs exactly the key{'s' if len(keys) > 1 else ''} {names} (got {sorted(deal)})"
        )
    return deal


def read_hands(
    tiles: TileSet,
    hands_in: Any,
    num_players: int,
    count_error: Callable[[int], str],
    deal_tile: Callable[[int, int], object],
    check_hand: Callable[[int, int], None],
) -> list[int]:
    """``deal["hands"]`` of a fixed deal (per seat a list of ``[a, b]`` tiles) as tile bitmasks.

    The shape and the tiles are checked here, the game's rules by its callbacks, in deal
    order: the number of hands (``ValueError(count_error(number))``, the game's rule id),
    each tile (:func:`tile_from_json`: ``TypeError`` if malformed, ``ValueError`` if not in
    the set; ``where`` is ``"hand k"``), then ``deal_tile(tile id, seat)`` (which refuses a
    tile dealt twice, in the game's words; its result is ignored) and, once a hand is
    read, ``check_hand(seat, bitmask)``. A value that is not a list of hands, or a hand
    that is not a list of tiles, is a ``TypeError``.
    """
    if not _is_list(hands_in):
        raise TypeError("deal['hands'] must be a list of hands, one per seat")
    if len(hands_in) != num_players:
        raise ValueError(count_error(len(hands_in)))
    hands = []
    for seat, hand in enumerate(hands_in):
        if not _is_list(hand):
            raise TypeError(f"deal['hands'][{seat}] must be a list of [a, b] tiles")
        where = f"hand {seat}"
        mask = 0
        for tile in hand:
            i = tile_from_json(tiles, tile, where)
            deal_tile(i, seat)
            mask |= 1 << i
        check_hand(seat, mask)
        hands.append(mask)
    return hands


def shown_hands(tiles: TileSet, hands: Any, num_players: int) -> list[int] | None:
    """Hands as a round's result shows them (per seat its tiles as ``[a, b]``, in tile-id
    order, no tile twice) as bitmasks; ``None`` if ``hands`` is not written that way."""
    seen = 0

    def deal_tile(tile: int, seat: int) -> None:
        nonlocal seen
        if seen >> tile & 1:
            raise ValueError(f"tile {tile} shown twice")
        seen |= 1 << tile

    try:
        masks = read_hands(tiles, hands, num_players, str, deal_tile, lambda seat, mask: None)
    except (TypeError, ValueError):
        return None
    as_shown = [[list(tiles.tiles[i]) for i in bits_list(m)] for m in masks]
    return masks if as_shown == hands else None
