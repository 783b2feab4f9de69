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

import json
import math
from collections.abc import Mapping
from typing import Any, NamedTuple, cast

import numpy as np

from mtrain_env.mexican_train.codec import ActionCodec
from mtrain_env.mexican_train.core.public import PublicView
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.tiles import bits_list

__all__ = [
    "ANNOTATION_MEANINGS",
    "ActionTable",
    "decoded_annotations",
    "legal_json",
    "move_json",
    "table_json",
    "trim_annotations",
]


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


#: rows of an action table the viewer gets: the best ones, and the move played besides
TOP_ROWS = 12
#: annotations kept per decision (the rest are counted)
MAX_NOTES = 6
#: a note that is not an action table is shown when its JSON is at most this long
MAX_NOTE_CHARS = 240
#: the longest action id an action table's key may spell
_MAX_ACTION_DIGITS = 7
#: what the agents' action tables mean: their units and which way is better
ANNOTATION_MEANINGS = {
    "values": (
        "the search's estimate of the round's result for this seat after the move, in pips "
        "against the table: the players' mean penalty minus its own (its score minus the mean "
        "with positive scoring); higher is better. mc lists only the moves still in its race "
        "and keeps its prior's move unless a better one leads clearly, so the move played need "
        "not rank first"
    ),
    "visits": "how often the search tried the move (ismcts plays the most visited); more is preferred",
    "probs": "the policy's probability of playing the move (0 to 1)",
}


class ActionTable(NamedTuple):
    """The part of an action table (``{"17": 3.2, ...}``) the viewer shows."""

    rows: tuple[tuple[int, float], ...]  #: (action, value), best first; the move played among them
    size: int  #: the table's rows in the file
    played_rank: int | None  #: the move played's rank in the whole table (1: best), if listed


def _action_table(value: Any) -> list[tuple[int, float]] | None:
    """``value`` as (action, number) pairs when it is an action table, else None."""
    if not isinstance(value, Mapping) or not value:
        return None
    rows = []
    for k, v in value.items():
        text = str(k)
        if not (text.isascii() and text.isdigit() and len(text) <= _MAX_ACTION_DIGITS):
            return None  # not "²": int() refuses what str.isdigit() accepts
        if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v):
            return None
        rows.append((int(text), float(v)))
    return rows


def trim_annotations(action: int, notes: Mapping[str, Any]) -> dict[str, Any] | None:
    """The part of a decision's annotations the viewer shows, bounded whatever a file holds:
    of each action table the :data:`TOP_ROWS` best rows and the move played
    (:class:`ActionTable`), other notes when short (else how long they were), at most
    :data:`MAX_NOTES` of them. Used as a replay is read, so a file's annotations are never
    kept whole (:func:`~mtrain_env.replay.loads_replay`'s ``annotations``)."""
    out: dict[str, Any] = {}
    items = list(notes.items())
    for key, value in items[:MAX_NOTES]:
        name = str(key)[:40]
        if isinstance(value, ActionTable):
            out[name] = value
            continue
        rows = _action_table(value)
        if rows is not None:
            ranked = sorted(rows, key=lambda r: (-r[1], r[0]))
            place = next((i for i, r in enumerate(ranked) if r[0] == action), None)
            shown = ranked[:TOP_ROWS]
            if place is not None and place >= TOP_ROWS:
                shown.append(ranked[place])
            out[name] = ActionTable(tuple(shown), len(ranked), None if place is None else place + 1)
            continue
        text = json.dumps(value, ensure_ascii=False, default=str)
        out[name] = value if len(text) <= MAX_NOTE_CHARS else f"(a note of {len(text)} characters, not shown)"
    if len(items) > MAX_NOTES:
        out["(more)"] = f"{len(items) - MAX_NOTES} more notes not shown"
    return out or None


def decoded_annotations(
    codec: ActionCodec, seat: int, annotations: Mapping[str, Any] | None, action: int | None = None
) -> Any:
    """A step's annotations for display (trimmed first: :func:`trim_annotations`): each
    action table becomes ``{"meaning", "size", "played_rank", "rows"}``, its rows
    ``{action, kind, tile, train, text, value, played}`` best first (``meaning``: units and
    direction, None for a table no known agent writes); other notes as recorded."""
    if not annotations:
        return None
    trimmed = trim_annotations(-1 if action is None else action, annotations) or {}
    out: dict[str, Any] = {}
    for key, value in trimmed.items():
        if not isinstance(value, ActionTable):
            out[key] = value
            continue
        rows = []
        for a, v in value.rows:
            move = (
                move_json(codec, seat, a)
                if a < codec.num_actions
                else {"action": a, "kind": None, "tile": None, "train": None, "text": f"action {a}"}
            )
            rows.append({**move, "value": v, "played": a == action})
        out[key] = {
            "meaning": ANNOTATION_MEANINGS.get(key),
            "size": value.size,
            "played_rank": value.played_rank,
            "rows": rows,
        }
    return out
