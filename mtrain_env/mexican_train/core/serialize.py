"""GameState <-> JSON-serializable dict, with full validation on the way in.

:func:`state_from_dict` builds a NEW state and raises ``TypeError``/``ValueError`` (naming
the rule) on anything inconsistent, so a corrupt dict never half-loads.
"""

from __future__ import annotations

import math
from typing import Any

from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.scoring import score_type
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.deal import tile_from_json
from mtrain_env.tilegame.snapshot import req, req_bools, req_int
from mtrain_env.tilegame.tiles import bits_list

FORMAT_VERSION = 1
MEXICAN = "mexican"


def _train_ref(config: GameConfig, t: int) -> int | str:
    return MEXICAN if t == config.mexican else t


def _oriented(game: MexicanTrain, s: GameState, t: int) -> list[list[int]]:
    return [[a, b] for a, b in game.oriented_train(s, t)]


def _pips(mask: int) -> list[int]:
    return bits_list(mask)


def state_to_dict(game: MexicanTrain, s: GameState) -> dict[str, Any]:
    """A JSON-serializable snapshot of ``s`` (hidden information included)."""
    c = game.config
    tiles = game.tiles.tiles
    return {
        "format": FORMAT_VERSION,
        "config": c.to_dict(),
        "round": s.round_index,
        "phase": s.phase.name,
        "engine": [s.engine, s.engine],
        "engine_placed": s.engine_placed,
        "first_player": s.first_player,
        "seat_offset": s.seat_offset,
        "first_player_forced": s.first_player_forced,
        "current_player": s.current,
        "hands": [[list(tiles[i]) for i in bits_list(h)] for h in s.hands],
        "boneyard": [list(tiles[i]) for i in reversed(s.boneyard)],
        "trains": [_oriented(game, s, p) for p in range(c.num_players)],
        "mexican_train": _oriented(game, s, c.mexican),
        "markers": list(s.markers),
        "pending_doubles": [_train_ref(c, t) for t in s.pending],
        "turn_doubles": [_train_ref(c, t) for t in s.turn_doubles],
        "first_turn_done": list(s.first_turn_done),
        "turn": {
            "tiles": s.tiles_this_turn,
            "doubles": s.doubles_this_turn,
            "owes": s.owes,
            "has_drawn": s.has_drawn,
            "obliged": s.obliged_this_turn,
        },
        "voids": [_pips(v) for v in s.voids],
        "pre_draw_voids": [_pips(v) for v in s.pre_draw_voids],
        "blocked": s.blocked,
        "round_scores": [list(r) for r in s.round_scores],
        "scores": list(s.scores),
        "history_len": s.history_len,
    }


def _pip_mask(config: GameConfig, values: Any, key: str) -> int:
    if not isinstance(values, list):
        raise TypeError(f"state dict {key!r} must hold lists of pip values")
    m = 0
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= config.max_pips:
            raise ValueError(f"state dict {key!r}: {v!r} is not a pip value (R1)")
        m |= 1 << v
    return m


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _score(config: GameConfig, x: float, key: str) -> float:
    """A saved score as its config's type (:func:`score_type`): pip scores are whole (R24)."""
    if score_type(config) is float:
        return float(x)
    if not math.isfinite(x) or x != int(x):
        raise ValueError(f"R24: state dict {key!r} holds {x!r}, pip scores are whole numbers")
    return int(x)


def _train_index(config: GameConfig, ref: Any, key: str) -> int:
    if ref == MEXICAN:
        return config.mexican
    if isinstance(ref, bool) or not isinstance(ref, int) or not 0 <= ref < config.num_players:
        raise ValueError(f"state dict {key!r}: {ref!r} is not a seat index or 'mexican'")
    return ref


def state_from_dict(game: MexicanTrain, d: Any) -> GameState:
    """Rebuild a validated :class:`GameState` from :func:`state_to_dict` output."""
    c = game.config
    n = c.num_players
    if not isinstance(d, dict):
        raise TypeError(f"a state dict must be a dict, got {type(d).__name__}")
    if d.get("format") != FORMAT_VERSION:
        raise ValueError(f"state dict format must be {FORMAT_VERSION}, got {d.get('format')!r}")
    if req(d, "config", dict) != c.to_dict():
        raise ValueError("state dict was saved under a different config; build the env with it first")
    s = GameState(n)
    s.round_index = req_int(d, "round", 0, c.rounds - 1)
    phase_name = req(d, "phase", str)
    if phase_name not in Phase.__members__:
        raise ValueError(f"state dict 'phase' {phase_name!r} is not one of {list(Phase.__members__)}")
    s.phase = Phase[phase_name]
    engine = req(d, "engine", list)
    s.engine = c.engine_value(s.round_index)
    if engine != [s.engine, s.engine]:
        raise ValueError(f"R5: round {s.round_index} uses the engine {[s.engine] * 2}, not {engine}")
    s.engine_placed = req(d, "engine_placed", bool)
    if s.engine_placed != (s.phase != Phase.SEEK_ENGINE):
        raise ValueError("R5: the engine is placed in every phase but SEEK_ENGINE")
    s.first_player = req_int(d, "first_player", 0, n - 1)
    s.seat_offset = req_int(d, "seat_offset", 0, n - 1)
    s.first_player_forced = req(d, "first_player_forced", bool)
    s.current = req_int(d, "current_player", 0, n - 1)

    seen: dict[int, str] = {}

    def take(tile: Any, where: str) -> int:
        i = tile_from_json(c.tiles, tile, where)
        if i in seen:
            raise ValueError(f"R1: tile {game.tiles.tiles[i]} appears twice ({seen[i]}, {where})")
        seen[i] = where
        return i

    engine_id = game.tiles.double_id(s.engine)
    if s.engine_placed:
        seen[engine_id] = "the station"
    hands = req(d, "hands", list)
    if len(hands) != n:
        raise ValueError(f"state dict 'hands' must hold {n} hands")
    for p, hand in enumerate(hands):
        if not isinstance(hand, list):
            raise TypeError(f"state dict hands[{p}] must be a list of tiles")
        for tile in hand:
            s.hands[p] |= 1 << take(tile, f"hand {p}")
    s.boneyard = [take(t, "the boneyard") for t in req(d, "boneyard", list)][::-1]
    trains = req(d, "trains", list)
    if len(trains) != n:
        raise ValueError(f"state dict 'trains' must hold {n} personal trains")
    for t, train in enumerate([*trains, req(d, "mexican_train", list)]):
        if not isinstance(train, list):
            raise TypeError(f"state dict train {t} must be a list of [a, b] tiles")
        end = s.engine
        for tile in train:
            i = take(tile, f"train {_train_ref(c, t)}")
            if tile[0] != end:
                raise ValueError(
                    f"R7: train {_train_ref(c, t)} is broken: {tile} does not continue the open end {end}"
                )
            end = tile[1]
            s.trains[t].append(i)
        s.ends[t] = end
    if len(seen) != game.tiles.num_tiles:
        raise ValueError("R1: hands, boneyard, trains and engine are not exactly the set")
    if not s.engine_placed and engine_id not in s.boneyard:
        raise ValueError("R5: while seats seek the engine it must still be in the boneyard")
    s.table = game.tiles.full
    for p in range(n):
        s.table &= ~s.hands[p]
    for i in s.boneyard:
        s.table &= ~(1 << i)
    s.markers = req_bools(d, "markers", n)
    doubles = game.tiles.doubles
    for key, target in (("pending_doubles", s.pending), ("turn_doubles", s.turn_doubles)):
        for ref in req(d, key, list):
            t = _train_index(c, ref, key)
            if not s.trains[t] or not doubles >> s.trains[t][-1] & 1:
                raise ValueError(f"R20: {key} names train {ref!r}, which does not end in a double")
            if t in s.pending or t in s.turn_doubles:
                raise ValueError(f"R22: train {ref!r} is listed twice as an unsatisfied double")
            target.append(t)
    s.first_turn_done = req_bools(d, "first_turn_done", n)
    turn = req(d, "turn", dict)
    s.tiles_this_turn = req_int(turn, "tiles", 0, c.num_tiles)
    s.doubles_this_turn = req_int(turn, "doubles", 0, s.tiles_this_turn)
    s.owes = req(turn, "owes", bool)
    s.has_drawn = req(turn, "has_drawn", bool)
    s.obliged_this_turn = req(turn, "obliged", bool)
    for key, target_list in (("voids", s.voids), ("pre_draw_voids", s.pre_draw_voids)):
        values = req(d, key, list)
        if len(values) != n:
            raise ValueError(f"state dict {key!r} must hold {n} lists")
        for p, v in enumerate(values):
            target_list[p] = _pip_mask(c, v, key)
    s.blocked = req(d, "blocked", bool)
    round_scores = req(d, "round_scores", list)
    for r in round_scores:
        if not isinstance(r, list) or len(r) != n:
            raise ValueError(f"state dict 'round_scores' rows must hold {n} scores")
        if not all(_is_number(x) for x in r):
            raise TypeError("state dict 'round_scores' must hold numbers")
    scores = req(d, "scores", list)
    if len(scores) != n or not all(_is_number(x) for x in scores):
        raise ValueError(f"state dict 'scores' must hold {n} numbers")
    s.round_scores = [[_score(c, x, "round_scores") for x in r] for r in round_scores]
    s.scores = [_score(c, x, "scores") for x in scores]
    totals = [sum(r[p] for r in s.round_scores) for p in range(n)]
    if any(abs(a - b) > 1e-6 for a, b in zip(totals, s.scores, strict=True)):
        raise ValueError("R25: 'scores' must be the sum of 'round_scores'")
    finished = len(s.round_scores)
    expected = s.round_index + (1 if s.phase >= Phase.ROUND_OVER else 0)
    if finished != expected:
        raise ValueError(
            f"R25: {finished} scored rounds do not fit round {s.round_index} in phase {s.phase.name}"
        )
    s.history_len = req_int(d, "history_len", 0, 2**62)
    if s.phase < Phase.ROUND_OVER and not s.hands[s.current] and s.phase != Phase.SEEK_ENGINE:
        raise ValueError("R15: the seat on turn has no tiles")
    if s.phase < Phase.ROUND_OVER and not game.legal_moves(s):
        raise ValueError("R15: the seat on turn has no legal move in this state")
    return s
