"""GameState <-> JSON-serializable dict, with full validation on the way in.

:func:`state_from_dict` reads every key with its exact JSON type and range, builds a NEW
state, and checks it with :func:`~mtrain_env.block.core.invariants.check_state` (the rules'
invariants, the same ones the soak checks after every step). Anything wrong raises
``TypeError``/``ValueError`` naming the key and the rule, so a corrupt dict never
half-loads. Hands, sleeping tiles and who laid what may list their tiles in any order and
orientation (they are sets); the line is oriented from end 0 to end 1, as written.
"""

from __future__ import annotations

from typing import Any

from mtrain_env.block.core.invariants import check_state
from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.block.core.state import CIERRE, DOMINO, GameState, HandResult, Phase
from mtrain_env.tilegame.snapshot import (
    bad_type,
    bad_value,
    check_keys,
    json_equal,
    read_pips,
    read_tile,
    read_tile_set,
    req,
    req_int,
)
from mtrain_env.tilegame.tiles import bits_list

FORMAT_VERSION = 1
GAME_NAME = "partnership_dominoes"

#: the keys of a snapshot's game part, in the order :func:`state_to_dict` writes them
KEYS = (
    "format",
    "game",
    "config",
    "hand_index",
    "phase",
    "hands",
    "sleeping",
    "redeals",
    "line",
    "played_by",
    "voids",
    "current_player",
    "opener",
    "forced_opening",
    "last_player",
    "scores",
    "results",
    "match_loser",
    "tiebreak",
    "moves",
)
RESULT_KEYS = ("kind", "seat", "opener", "winner", "lead", "pips", "pair_pips", "points", "tie")
#: bound on counters that only grow (hands of a match, redeals of a deal)
MAX_COUNT = 2**31

__all__ = ["state_from_dict", "state_to_dict"]


def _tiles_json(game: BlockDominoes, mask: int) -> list[list[int]]:
    return [list(game.tiles.tiles[i]) for i in bits_list(mask)]


def _result_to_dict(r: HandResult) -> dict[str, Any]:
    return {
        "kind": r.kind,
        "seat": r.seat,
        "opener": r.opener,
        "winner": r.winner,
        "lead": r.lead,
        "pips": list(r.pips),
        "pair_pips": list(r.pair_pips),
        "points": list(r.points),
        "tie": r.tie,
    }


def state_to_dict(game: BlockDominoes, s: GameState) -> dict[str, Any]:
    """A JSON-serializable snapshot of ``s`` (hidden information included)."""
    tiles = game.tiles.tiles
    return {
        "format": FORMAT_VERSION,
        "game": GAME_NAME,
        "config": game.config.to_dict(),
        "hand_index": s.hand_index,
        "phase": s.phase.name,
        "hands": [_tiles_json(game, h) for h in s.hands],
        "sleeping": _tiles_json(game, s.sleeping),
        "redeals": s.redeals,
        "line": [list(t) for t in s.line],
        "played_by": [_tiles_json(game, m) for m in s.played_by],
        "voids": [bits_list(v) for v in s.voids],
        "current_player": s.current,
        "opener": s.opener,
        "forced_opening": list(tiles[s.forced_opening]) if s.forced_opening >= 0 else None,
        "last_player": s.last_player,
        "scores": list(s.scores),
        "results": [_result_to_dict(r) for r in s.results],
        "match_loser": s.match_loser,
        "tiebreak": s.tiebreak,
        "moves": s.moves,
    }


def _int_list(value: Any, key: str, length: int, lo: int, hi: int, rule: str) -> list[int]:
    if type(value) is not list:
        raise bad_type(key, rule, f"must be a list of {length} ints, got {type(value).__name__}")
    if len(value) != length:
        raise bad_value(key, rule, f"must hold {length} ints, got {len(value)}")
    for k, x in enumerate(value):
        if type(x) is not int:
            raise bad_type(f"{key}[{k}]", rule, f"must be int, got {type(x).__name__} {x!r}")
        if not lo <= x <= hi:
            raise bad_value(f"{key}[{k}]", rule, f"must be in {lo}..{hi}, got {x}")
    return list(value)


def _result_from_dict(game: BlockDominoes, d: Any, index: int) -> HandResult:
    n = game.n
    key = f"results[{index}]"
    if type(d) is not dict:
        raise bad_type(key, "B10-B12", f"a hand's result is a dict, got {type(d).__name__}")
    prefix = f"{key}."
    check_keys(d, RESULT_KEYS, prefix, "B10-B12")
    kind = req(d, "kind", str, "B10", prefix)
    if kind not in (DOMINO, CIERRE):
        raise bad_value(f"{prefix}kind", "B10", f"must be {DOMINO!r} or {CIERRE!r}, got {kind!r}")
    top = sum(game.tiles.pips)
    return HandResult(
        kind=kind,
        seat=req_int(d, "seat", 0, n - 1, "B10", prefix),
        opener=req_int(d, "opener", 0, n - 1, "B5", prefix),
        winner=req_int(d, "winner", 0, 1, "B10", prefix),
        lead=req_int(d, "lead", 0, n - 1, "B6", prefix),
        pips=tuple(_int_list(d["pips"], f"{prefix}pips", n, 0, top, "B10")),
        pair_pips=tuple(_int_list(d["pair_pips"], f"{prefix}pair_pips", 2, 0, top, "B10")),  # type: ignore[arg-type]
        points=tuple(_int_list(d["points"], f"{prefix}points", 2, 0, top, "B12")),  # type: ignore[arg-type]
        tie=req(d, "tie", bool, "B11", prefix),
    )


def state_from_dict(game: BlockDominoes, d: Any) -> GameState:
    """Rebuild a validated :class:`GameState` from :func:`state_to_dict` output."""
    c = game.config
    n = game.n
    tiles = game.tiles
    if type(d) is not dict:
        raise TypeError(f"a state dict must be a dict, got {type(d).__name__}")
    check_keys(d, KEYS, "", "B1-B13")
    fmt = d["format"]
    if type(fmt) is not int or fmt != FORMAT_VERSION or d["game"] != GAME_NAME:
        raise bad_value("format", "B1-B13", f"not a {GAME_NAME} state dict of format {FORMAT_VERSION}")
    if not json_equal(req(d, "config", dict, "B1-B13"), c.to_dict()):
        raise bad_value("config", "B1-B13", "saved under a different config; build the env with it first")
    s = GameState(n)
    s.hand_index = req_int(d, "hand_index", 0, MAX_COUNT, "B13")
    phase_name = req(d, "phase", str, "B13")
    if phase_name not in Phase.__members__:
        raise bad_value("phase", "B13", f"{phase_name!r} is not one of {list(Phase.__members__)}")
    s.phase = Phase[phase_name]
    hands = req(d, "hands", list, "B3")
    if len(hands) != n:
        raise bad_value("hands", "B3", f"must hold {n} hands, got {len(hands)}")
    # hands, sleeping tiles and who laid what are sets: any order, either orientation, each tile once (B1)
    s.hands = [read_tile_set(tiles, h, f"hands[{p}]", "B3", "B1") for p, h in enumerate(hands)]
    s.sleeping = read_tile_set(tiles, d["sleeping"], "sleeping", "B3", "B1")
    s.redeals = req_int(d, "redeals", 0, MAX_COUNT, "B4")
    line = req(d, "line", list, "B8")
    for k, t in enumerate(line):
        i, a, b = read_tile(tiles, t, f"line[{k}]", "B8")
        s.table |= 1 << i
        s.line.append((a, b))
    s.ends = [s.line[0][0], s.line[-1][1]] if s.line else [-1, -1]
    played_by = req(d, "played_by", list, "B8")
    if len(played_by) != n:
        raise bad_value("played_by", "B8", f"must hold {n} lists, got {len(played_by)}")
    s.played_by = [read_tile_set(tiles, m, f"played_by[{p}]", "B8", "B1") for p, m in enumerate(played_by)]
    voids = req(d, "voids", list, "B9")
    if len(voids) != n:
        raise bad_value("voids", "B9", f"must hold {n} lists, got {len(voids)}")
    s.voids = [read_pips(v, c.max_pips, f"voids[{p}]", "B9") for p, v in enumerate(voids)]
    s.current = req_int(d, "current_player", 0, n - 1, "B7")
    s.opener = req_int(d, "opener", 0, n - 1, "B5")
    forced = d["forced_opening"]
    s.forced_opening = -1 if forced is None else read_tile(tiles, forced, "forced_opening", "B5")[0]
    s.last_player = req_int(d, "last_player", -1, n - 1, "B8")
    s.scores = _int_list(d["scores"], "scores", 2, 0, MAX_COUNT, "B13")
    raw_results = req(d, "results", list, "B13")
    s.results = [_result_from_dict(game, r, k) for k, r in enumerate(raw_results)]
    s.match_loser = req_int(d, "match_loser", -1, 1, "B13")
    s.tiebreak = req(d, "tiebreak", bool, "B13")
    s.moves = req_int(d, "moves", 0, MAX_COUNT, "B9")
    check_state(game, s)
    return s
