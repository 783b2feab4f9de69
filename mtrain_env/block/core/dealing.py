"""Deals (B3, B4): seeded random deals with the redeal rule, and validated fixed deals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mtrain_env.block.core.config import HAND_SIZE, GameConfig
from mtrain_env.tilegame.deal import check_deal_keys, read_hands, shuffled_hands

__all__ = ["Deal", "parse_deal", "random_deal", "too_many_doubles"]


class Deal:
    """Hands (tile bitmasks by seat), the sleeping tiles (bitmask) and the redeal count."""

    __slots__ = ("hands", "redeals", "sleeping")

    def __init__(self, hands: list[int], sleeping: int = 0, redeals: int = 0) -> None:
        self.hands = hands
        self.sleeping = sleeping
        self.redeals = redeals


def too_many_doubles(config: GameConfig, hands: Sequence[int]) -> int:
    """B4: the first seat holding ``redeal_doubles`` or more doubles, or -1 (always -1 when off)."""
    threshold = config.redeal_doubles
    if threshold is None:
        return -1
    doubles = config.tiles.doubles
    for seat, h in enumerate(hands):
        if (h & doubles).bit_count() >= threshold:
            return seat
    return -1


def random_deal(config: GameConfig, rng: np.random.Generator) -> Deal:
    """B3/B4: shuffle the 28 tiles with ``rng``, 7 per seat; redeal while a hand shows too many doubles.

    With 2 players the 14 undealt tiles sleep (out of play). Each (re)deal is one
    ``rng.permutation`` call, so the seed fixes the deal and the number of redeals.
    """
    pool = list(range(config.num_tiles))
    redeals = 0
    while True:
        hands, rest = shuffled_hands(pool, config.num_players, HAND_SIZE, rng)
        if too_many_doubles(config, hands) < 0:
            break
        redeals += 1
    sleeping = 0
    for i in rest:
        sleeping |= 1 << i
    return Deal(hands, sleeping, redeals)


def parse_deal(config: GameConfig, deal: Any) -> Deal:
    """Validate a fixed deal ``{"hands": [[[a, b], ...] per seat]}``.

    Hands may have any non-zero sizes. With 4 players they must hold the whole set (B3);
    with 2 players the tiles not named sleep. A deal the redeal rule would throw back (B4)
    is refused. ``TypeError`` for malformed input, ``ValueError`` for an impossible deal.
    """
    n = config.num_players
    tiles = config.tiles
    seen: dict[int, int] = {}

    def deal_tile(i: int, seat: int) -> None:
        if i in seen:
            raise ValueError(f"B1: tile {tiles.tiles[i]} is dealt twice (hands {seen[i]} and {seat})")
        seen[i] = seat

    def check_hand(seat: int, mask: int) -> None:
        if not mask:
            raise ValueError(f"B3: hand {seat} is empty; every seat holds tiles at the deal")

    hands_in = check_deal_keys(deal, ("hands",))["hands"]
    hands = read_hands(
        tiles,
        hands_in,
        n,
        lambda got: f"B2: deal['hands'] has {got} hands for {n} players",
        deal_tile,
        check_hand,
    )
    sleeping = tiles.full & ~sum(hands)
    if n == 4 and sleeping:
        missing = [tiles.tiles[i] for i in range(tiles.num_tiles) if sleeping >> i & 1]
        raise ValueError(f"B3: with 4 players the whole set is dealt; missing {missing}")
    seat = too_many_doubles(config, hands)
    if seat >= 0:
        raise ValueError(
            f"B4: hand {seat} holds {config.redeal_doubles} or more doubles and would be redealt "
            f"(pass redeal_doubles=None to play such a deal)"
        )
    return Deal(hands, sleeping, 0)
