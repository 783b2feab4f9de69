"""The table as JSON for the browser: one seat's view, or every hand for a replay.

:func:`table_json` builds from a :class:`~mtrain_env.mexican_train.core.public.PublicView`
(the leak-free view the env gives a seat: public table, hand COUNTS, boneyard COUNT)
plus the hands the page may show, ``shown``: the human's page gets its own hand only
(R15), the replay viewer every hand of a finished game. Nothing else about a hand or the
boneyard order ever enters the JSON, so a page cannot leak what its JSON does not carry.

Trains and seats are ABSOLUTE (train ``n`` is the Mexican train); tiles are ``[a, b]``
pairs, a train's tiles oriented from the station outward (R7) as the ``rgb_array``
render draws them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np

from mtrain_env.mexican_train.codec import ActionCodec
from mtrain_env.mexican_train.core.public import PublicView
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.tiles import bits_list

__all__ = ["decoded_annotations", "legal_json", "move_json", "table_json"]


def _tiles(game: MexicanTrain, bits: int) -> list[list[int]]:
    tiles = game.tiles.tiles
    return [list(tiles[i]) for i in bits_list(bits)]


def table_json(game: MexicanTrain, view: PublicView, shown: Mapping[int, int]) -> dict[str, Any]:
    """The table of ``view`` with the hands ``shown`` (seat -> tile bitmask), others as ``None``.

    ``game`` supplies only static tables and the train orientation.
    """
    config = view.config
    n = config.num_players
    # oriented_train and double_to_satisfy read only public fields (trains, engine,
    # pending, phase), which a PublicView carries under the same names
    public = cast(GameState, view)
    playing = view.phase < Phase.ROUND_OVER
    return {
        "num_players": n,
        "max_pips": config.max_pips,
        "rules": config.rules,
        "rounds": config.rounds,
        "round": view.round_index,
        "engine": view.engine,
        "engine_placed": view.engine_placed,
        "phase": view.phase.name.lower(),
        "playing": playing,
        "current": view.current if playing else -1,
        "boneyard": view.boneyard_count,
        "hand_counts": list(view.hand_counts),
        "hands": [_tiles(game, shown[q]) if q in shown else None for q in range(n)],
        "trains": [[list(t) for t in game.oriented_train(public, t)] for t in range(n + 1)],
        "markers": [bool(m) for m in view.markers],
        "open_doubles": sorted(set(view.pending) | set(view.turn_doubles)),
        "next_double": game.double_to_satisfy(public),
        "owes": bool(view.owes),
        "has_drawn": bool(view.has_drawn),
        "scores": [float(x) for x in view.scores],
        "round_scores": [[float(x) for x in row] for row in view.round_scores],
    }


def move_json(codec: ActionCodec, seat: int, action: int) -> dict[str, Any]:
    """One action of ``seat`` decoded with an ABSOLUTE train: ``{action, kind, tile, train, text}``."""
    decoded = codec.decode_action(action)
    out: dict[str, Any] = {"action": int(action), "kind": decoded.kind, "tile": None, "train": None}
    if decoded.kind == "play":
        assert decoded.tile is not None and decoded.train is not None
        n = codec.n
        out["tile"] = list(decoded.tile)
        out["train"] = n if decoded.train == n else (seat + decoded.train) % n
        where = "Mexican train" if out["train"] == n else f"player_{out['train']}'s train"
        out["text"] = f"{decoded.tile[0]}|{decoded.tile[1]} on {where}"
    else:
        out["text"] = decoded.kind.upper()
    return out


def legal_json(codec: ActionCodec, seat: int, mask: np.ndarray) -> list[dict[str, Any]]:
    """The legal actions of ``seat`` under its own ``mask``, decoded (empty off turn)."""
    return [move_json(codec, seat, int(a)) for a in np.flatnonzero(mask)]


def decoded_annotations(codec: ActionCodec, seat: int, annotations: Mapping[str, Any] | None) -> Any:
    """A step's annotations for display: dicts keyed by action ids gain each move's text.

    ``{"values": {"17": 3.2}}`` becomes ``{"values": [{"action": 17, "text": ..., "value": 3.2}]}``
    (best first); anything else is passed through as recorded.
    """
    if not annotations:
        return None
    out: dict[str, Any] = {}
    for key, value in annotations.items():
        if isinstance(value, Mapping) and value and all(_action_key(k, codec) for k in value):
            rows = [
                {**move_json(codec, seat, int(k)), "value": v}
                for k, v in value.items()
                if isinstance(v, int | float)
            ]
            out[key] = sorted(rows, key=lambda r: -r["value"]) if len(rows) == len(value) else value
        else:
            out[key] = value
    return out


def _action_key(key: Any, codec: ActionCodec) -> bool:
    text = str(key)
    return text.isascii() and text.isdigit() and int(text) < codec.num_actions  # not "²": int() refuses it
