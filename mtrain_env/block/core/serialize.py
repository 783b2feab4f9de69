"""GameState <-> JSON-serializable dict, with full validation on the way in.

:func:`state_from_dict` builds a NEW state and raises ``TypeError``/``ValueError`` (naming
the rule) on anything inconsistent, so a corrupt dict never half-loads.
"""

from __future__ import annotations

from typing import Any

from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.block.core.state import CIERRE, DOMINO, GameState, HandResult, Phase
from mtrain_env.tilegame.deal import tile_from_json
from mtrain_env.tilegame.snapshot import req, req_int
from mtrain_env.tilegame.tiles import bits_list

FORMAT_VERSION = 1
GAME_NAME = "partnership_dominoes"

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


def _int_list(value: Any, key: str, length: int, lo: int, hi: int) -> list[int]:
    if not isinstance(value, list) or len(value) != length:
        raise ValueError(f"state dict {key!r} must be a list of {length} ints")
    for x in value:
        if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
            raise ValueError(f"state dict {key!r}: {x!r} is not an int in {lo}..{hi}")
    return list(value)


def _result_from_dict(game: BlockDominoes, d: Any, index: int) -> HandResult:
    n = game.n
    key = f"results[{index}]"
    if not isinstance(d, dict):
        raise TypeError(f"state dict {key} must be a dict")
    kind = req(d, "kind", str)
    if kind not in (DOMINO, CIERRE):
        raise ValueError(f"state dict {key}.kind must be {DOMINO!r} or {CIERRE!r}, got {kind!r}")
    pips = _int_list(d.get("pips"), f"{key}.pips", n, 0, 168)
    pair_pips = _int_list(d.get("pair_pips"), f"{key}.pair_pips", 2, 0, 168)
    if pair_pips != [sum(pips[0::2]), sum(pips[1::2])]:
        raise ValueError(f"B10/B11: state dict {key}.pair_pips do not add up its pips")
    result = HandResult(
        kind=kind,
        seat=req_int(d, "seat", 0, n - 1),
        opener=req_int(d, "opener", 0, n - 1),
        winner=req_int(d, "winner", 0, 1),
        lead=req_int(d, "lead", 0, n - 1),
        pips=tuple(pips),
        pair_pips=(pair_pips[0], pair_pips[1]),
        points=tuple(_int_list(d.get("points"), f"{key}.points", 2, 0, 168)),  # type: ignore[arg-type]
        tie=req(d, "tie", bool),
    )
    if result.lead % 2 != result.winner:
        raise ValueError(f"B6: state dict {key}.lead is not in the winning pair")
    return result


def state_from_dict(game: BlockDominoes, d: Any) -> GameState:
    """Rebuild a validated :class:`GameState` from :func:`state_to_dict` output."""
    c = game.config
    n = game.n
    tiles = game.tiles
    if not isinstance(d, dict):
        raise TypeError(f"a state dict must be a dict, got {type(d).__name__}")
    if d.get("format") != FORMAT_VERSION or d.get("game") != GAME_NAME:
        raise ValueError(f"not a {GAME_NAME} state dict of format {FORMAT_VERSION}")
    if req(d, "config", dict) != c.to_dict():
        raise ValueError("state dict was saved under a different config; build the env with it first")
    s = GameState(n)
    s.hand_index = req_int(d, "hand_index", 0, 2**31)
    phase_name = req(d, "phase", str)
    if phase_name not in Phase.__members__:
        raise ValueError(f"state dict 'phase' {phase_name!r} is not one of {list(Phase.__members__)}")
    s.phase = Phase[phase_name]

    seen: dict[int, str] = {}

    def take(tile: Any, where: str) -> int:
        i = tile_from_json(tiles, tile, where)
        if i in seen:
            raise ValueError(f"B1: tile {tiles.tiles[i]} appears twice ({seen[i]}, {where})")
        seen[i] = where
        return i

    def tile_list(value: Any, where: str) -> int:
        if not isinstance(value, list):
            raise TypeError(f"state dict {where} must be a list of [a, b] tiles")
        mask = 0
        for t in value:
            mask |= 1 << take(t, where)
        return mask

    hands = req(d, "hands", list)
    if len(hands) != n:
        raise ValueError(f"state dict 'hands' must hold {n} hands")
    s.hands = [tile_list(h, f"hand {p}") for p, h in enumerate(hands)]
    s.sleeping = tile_list(req(d, "sleeping", list), "sleeping")
    if n == 4 and s.sleeping:
        raise ValueError("B3: with 4 players no tile sleeps")
    s.redeals = req_int(d, "redeals", 0, 2**31)
    line = req(d, "line", list)
    for k, t in enumerate(line):
        i = take(t, "the line")
        s.table |= 1 << i
        if k and line[k - 1][1] != t[0]:
            raise ValueError(f"B8: the line is broken: {line[k - 1]} then {t}")
        s.line.append((int(t[0]), int(t[1])))
    if len(seen) != tiles.num_tiles:
        raise ValueError("B1: hands, sleeping tiles and the line are not exactly the set")
    s.ends = [s.line[0][0], s.line[-1][1]] if s.line else [-1, -1]
    played_by = req(d, "played_by", list)
    if len(played_by) != n:
        raise ValueError(f"state dict 'played_by' must hold {n} lists")
    seen_played: dict[int, str] = {}
    for p, value in enumerate(played_by):
        if not isinstance(value, list):
            raise TypeError("state dict 'played_by' must hold lists of tiles")
        for t in value:
            i = tile_from_json(tiles, t, f"played_by[{p}]")
            if i in seen_played:
                raise ValueError(f"B8: {tiles.tiles[i]} is listed as laid twice")
            seen_played[i] = f"{p}"
            s.played_by[p] |= 1 << i
    if sum(s.played_by) != s.table:
        raise ValueError("B8: 'played_by' must list exactly the tiles of the line")
    voids = req(d, "voids", list)
    if len(voids) != n:
        raise ValueError(f"state dict 'voids' must hold {n} lists")
    for p, v in enumerate(voids):
        if not isinstance(v, list):
            raise TypeError("state dict 'voids' must hold lists of pips")
        for x in v:
            if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= c.max_pips:
                raise ValueError(f"state dict 'voids': {x!r} is not a pip value")
            s.voids[p] |= 1 << x
            if s.hands[p] & tiles.match[x]:
                raise ValueError(f"B9: seat {p} passed on {x} but holds a {x} (there is no boneyard)")
    s.current = req_int(d, "current_player", 0, n - 1)
    s.opener = req_int(d, "opener", 0, n - 1)
    forced = d.get("forced_opening")
    if forced is None:
        s.forced_opening = -1
    else:
        s.forced_opening = tile_from_json(tiles, forced, "forced_opening")
        if s.line or not s.hands[s.opener] >> s.forced_opening & 1:
            raise ValueError("B5: a forced opening tile must still be in the opener's hand")
    s.last_player = req_int(d, "last_player", -1, n - 1)
    if (s.last_player < 0) != (not s.line):
        raise ValueError("state dict 'last_player' must be -1 exactly while the line is empty")
    s.scores = _int_list(d.get("scores"), "scores", 2, 0, 2**31)
    raw_results = req(d, "results", list)
    s.results = [_result_from_dict(game, r, k) for k, r in enumerate(raw_results)]
    totals = [sum(r.points[p] for r in s.results) for p in (0, 1)]
    if totals != s.scores:
        raise ValueError("B13: 'scores' must be the sum of the results' points")
    s.match_loser = req_int(d, "match_loser", -1, 1)
    s.tiebreak = req(d, "tiebreak", bool)
    s.moves = req_int(d, "moves", 0, 10 * c.max_hand_moves)
    if s.phase == Phase.PLAYING:
        if len(s.results) != s.hand_index:
            raise ValueError("B13: a hand under way must follow one result per finished hand")
        if not all(s.hands):
            raise ValueError("B10: a hand under way has no empty hand")
        if s.line and not any(game.can_play(s, p) for p in range(n)):
            raise ValueError("B11: nobody can play: this hand is closed")
        if not s.line and s.current != s.opener:
            raise ValueError("B5: the opener is on turn while the line is empty")
        if s.match_loser >= 0:
            raise ValueError("B13: the match is decided; no hand is under way")
    else:
        if len(s.results) != s.hand_index + 1:
            raise ValueError("B13: a finished hand needs its result")
        if (s.phase == Phase.HAND_OVER) != (c.match and s.match_loser < 0):
            raise ValueError("B13: HAND_OVER means a match goes on; GAME_OVER that the episode ended")
    return s
