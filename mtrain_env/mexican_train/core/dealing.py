"""Deals (R4, R5, R8): random deals from a seeded generator, and validated fixed deals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.tilegame.deal import check_deal_keys, read_hands, shuffled_hands, tile_from_json


class Deal:
    """Hands (tile bitmasks by seat) and the boneyard (tile ids, top LAST)."""

    __slots__ = ("boneyard", "hands")

    def __init__(self, hands: list[int], boneyard: list[int]) -> None:
        self.hands = hands
        self.boneyard = boneyard


def random_deal(config: GameConfig, engine_value: int, rng: np.random.Generator) -> Deal:
    """Shuffle with ``rng`` and deal ``hand_size`` tiles per seat (R4).

    The engine is set aside first (R5) unless ``engine_holder_opens``, where it is
    shuffled in. The rest forms the boneyard (R8).
    """
    tiles = config.tiles
    engine_id = tiles.double_id(engine_value)
    pool = list(range(tiles.num_tiles))
    if not config.engine_holder_opens:
        del pool[engine_id]
    hands, rest = shuffled_hands(pool, config.num_players, config.hand_size, rng)
    # the shuffled order is the draw order: the first remaining tile is drawn first
    return Deal(hands, rest[::-1])


def parse_deal(config: GameConfig, engine_value: int, deal: Any) -> Deal:
    """Validate a fixed deal ``{"hands": [[[a, b], ...], ...], "boneyard": [[a, b], ...]}``.

    Hands are by seat, any non-zero sizes; the boneyard is listed top first (draw order).
    Hands, boneyard and the engine must be exactly the set (R1, R5), each tile once; with
    ``engine_holder_opens`` the engine is one of the dealt tiles. Every seat is dealt at
    least one tile it keeps (R4): a seat with none, or with only the engine it must place
    (``engine_holder_opens``), would take no turn at all (R15) and the round would be over
    before it was played (R12, R19). Raises ``TypeError`` for malformed input and
    ``ValueError`` for a deal that is not the set or leaves a seat without a tile.
    """
    deal = check_deal_keys(deal, ("hands", "boneyard"))
    tiles = config.tiles
    n = config.num_players
    seen: dict[int, str] = {}
    engine_id = tiles.double_id(engine_value)

    def take(i: int, where: str) -> int:
        if i in seen:
            raise ValueError(f"R1: tile {tiles.tiles[i]} is dealt twice ({seen[i]} and {where})")
        if i == engine_id and not config.engine_holder_opens:
            raise ValueError(
                f"R5: the engine {tiles.tiles[i]} is set aside before the deal; it cannot be in {where}"
            )
        seen[i] = where
        return i

    def check_hand(seat: int, mask: int) -> None:
        if mask == 0 or mask == 1 << engine_id:
            only = (
                "is empty"
                if mask == 0
                else f"holds only the engine {tiles.tiles[engine_id]}, which goes to the station (R5)"
            )
            raise ValueError(
                f"R4: deal['hands'][{seat}] {only}; every seat is dealt a tile to play "
                "(a seat without one takes no turn, R15, and the round would end unplayed, R19)"
            )

    hands = read_hands(
        tiles,
        deal["hands"],
        n,
        lambda got: f"deal['hands'] has {got} hands for {n} players (R3)",
        lambda i, seat: take(i, f"hand {seat}"),
        check_hand,
    )
    bone_in = deal["boneyard"]
    if not isinstance(bone_in, Sequence) or isinstance(bone_in, str):
        raise TypeError("deal['boneyard'] must be a list of [a, b] tiles, top first")
    boneyard = [take(tile_from_json(tiles, tile, "the boneyard"), "the boneyard") for tile in bone_in]
    expected = tiles.num_tiles - (0 if config.engine_holder_opens else 1)
    if len(seen) != expected:
        missing = [tiles.tiles[i] for i in range(tiles.num_tiles) if i not in seen and i != engine_id]
        raise ValueError(
            f"R1: hands + boneyard + engine must be exactly the double-{config.max_pips} set; "
            f"missing {missing[:10]}{'...' if len(missing) > 10 else ''}"
        )
    return Deal(hands, boneyard[::-1])
