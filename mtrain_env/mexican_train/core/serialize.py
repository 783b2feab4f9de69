"""GameState <-> JSON-serializable dict, with full validation on the way in.

:func:`state_from_dict` reads every key with its exact JSON type and range, builds a NEW
state, and checks it with :func:`~mtrain_env.mexican_train.core.invariants.check_state`
(the rules' invariants, the same ones the soak checks after every step). Anything wrong
raises ``TypeError``/``ValueError`` naming the key and the rule, so a corrupt dict never
half-loads. Hands may list their tiles in any order and orientation (they are sets); the
boneyard is in draw order and trains are oriented from the station, as written.
"""

from __future__ import annotations

from typing import Any

from mtrain_env.mexican_train.core.config import MEXICAN, GameConfig
from mtrain_env.mexican_train.core.invariants import check_state
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.scoring import score_type
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.snapshot import (
    bad_type,
    bad_value,
    check_keys,
    json_equal,
    read_finite,
    read_pips,
    read_tile,
    read_tile_set,
    req,
    req_bools,
    req_int,
)
from mtrain_env.tilegame.tiles import bits_list

FORMAT_VERSION = 1

#: the keys of a snapshot's game part, in the order :func:`state_to_dict` writes them
KEYS = (
    "format",
    "config",
    "round",
    "phase",
    "engine",
    "engine_placed",
    "first_player",
    "seat_offset",
    "first_player_forced",
    "current_player",
    "hands",
    "boneyard",
    "trains",
    "mexican_train",
    "markers",
    "pending_doubles",
    "turn_doubles",
    "first_turn_done",
    "turn",
    "voids",
    "pre_draw_voids",
    "blocked",
    "round_scores",
    "scores",
    "history_len",
)
TURN_KEYS = ("tiles", "doubles", "owes", "has_drawn", "obliged")


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
        "pending_doubles": [c.train_ref(t) for t in s.pending],
        "turn_doubles": [c.train_ref(t) for t in s.turn_doubles],
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


def _train_index(config: GameConfig, ref: Any, key: str) -> int:
    if ref == MEXICAN and type(ref) is str:
        return config.mexican
    if type(ref) is not int:
        raise bad_type(key, "R20", f"a train is a seat index or 'mexican', got {ref!r}")
    if not 0 <= ref < config.num_players:
        raise bad_value(key, "R20", f"{ref!r} is not a seat index 0..{config.num_players - 1} or 'mexican'")
    return ref


def _list_of(value: Any, length: int, key: str, rule: str) -> list[Any]:
    if type(value) is not list:
        raise bad_type(key, rule, f"must be a list, got {type(value).__name__}")
    if len(value) != length:
        raise bad_value(key, rule, f"must hold {length} items, got {len(value)}")
    return value


def _train(game: MexicanTrain, value: Any, engine: int, key: str) -> tuple[list[int], int]:
    """An oriented train: tile ids and the open end (R7)."""
    if type(value) is not list:
        raise bad_type(key, "R7", f"a train is a list of [inner, outer] tiles, got {type(value).__name__}")
    end = engine
    ids = []
    for k, tile in enumerate(value):
        i, a, b = read_tile(game.tiles, tile, f"{key}[{k}]", "R7")
        if a != end:
            raise bad_value(f"{key}[{k}]", "R7", f"{tile} does not continue the open end {end}")
        ids.append(i)
        end = b
    return ids, end


def _scores(config: GameConfig, value: Any, key: str) -> list[float]:
    row = _list_of(value, config.num_players, key, "R24")
    kind = score_type(config)
    return [read_finite(x, kind, f"{key}[{p}]", "R24") for p, x in enumerate(row)]


def state_from_dict(game: MexicanTrain, d: Any) -> GameState:
    """Rebuild a validated :class:`GameState` from :func:`state_to_dict` output."""
    c = game.config
    n = c.num_players
    if type(d) is not dict:
        raise TypeError(f"a state dict must be a dict, got {type(d).__name__}")
    check_keys(d, KEYS, "", "R1-R25")
    fmt = d["format"]
    if type(fmt) is not int or fmt != FORMAT_VERSION:
        raise bad_value("format", "R1-R25", f"this version reads format {FORMAT_VERSION}, got {fmt!r}")
    if not json_equal(req(d, "config", dict, "R1-R4"), c.to_dict()):
        raise bad_value("config", "R1-R4", "saved under a different config; build the env with it first")
    s = GameState(n)
    s.round_index = req_int(d, "round", 0, c.rounds - 1, "R25")
    phase_name = req(d, "phase", str, "R25")
    if phase_name not in Phase.__members__:
        raise bad_value("phase", "R25", f"{phase_name!r} is not one of {list(Phase.__members__)}")
    s.phase = Phase[phase_name]
    s.engine = c.engine_value(s.round_index)
    engine = req(d, "engine", list, "R5")
    if not json_equal(engine, [s.engine, s.engine]):
        raise bad_value(
            "engine", "R5", f"round {s.round_index} uses the engine {[s.engine] * 2}, not {engine}"
        )
    s.engine_placed = req(d, "engine_placed", bool, "R5")
    s.first_player = req_int(d, "first_player", 0, n - 1, "R6")
    s.seat_offset = req_int(d, "seat_offset", 0, n - 1, "R6")
    s.first_player_forced = req(d, "first_player_forced", bool, "R6")
    s.current = req_int(d, "current_player", 0, n - 1, "R15")
    hands = _list_of(d["hands"], n, "hands", "R4")
    s.hands = [  # sets of tiles of the set (R1), each once
        read_tile_set(
            game.tiles, h, f"hands[{p}]", "R1", "R1", list_rule="R4", expected="a hand is a list of tiles"
        )
        for p, h in enumerate(hands)
    ]
    boneyard = req(d, "boneyard", list, "R8")
    s.boneyard = [read_tile(game.tiles, t, f"boneyard[{k}]", "R8")[0] for k, t in enumerate(boneyard)][::-1]
    trains = [*_list_of(d["trains"], n, "trains", "R7"), req(d, "mexican_train", list, "R14")]
    s.table = 0
    for t, train in enumerate(trains):
        key = "mexican_train" if t == n else f"trains[{t}]"
        s.trains[t], s.ends[t] = _train(game, train, s.engine, key)
        for i in s.trains[t]:
            s.table |= 1 << i
    if s.engine_placed:
        s.table |= 1 << game.tiles.double_id(s.engine)
    s.markers = req_bools(d, "markers", n, "R17")
    for key, target in (("pending_doubles", s.pending), ("turn_doubles", s.turn_doubles)):
        refs = req(d, key, list, "R20")
        target.extend(_train_index(c, ref, f"{key}[{k}]") for k, ref in enumerate(refs))
    s.first_turn_done = req_bools(d, "first_turn_done", n, "R9")
    turn = req(d, "turn", dict, "R18")
    check_keys(turn, TURN_KEYS, "turn.", "R18")
    s.tiles_this_turn = req_int(turn, "tiles", 0, c.num_tiles, "R18", "turn.")
    s.doubles_this_turn = req_int(turn, "doubles", 0, s.tiles_this_turn, "R18", "turn.")
    s.owes = req(turn, "owes", bool, "R18", "turn.")
    s.has_drawn = req(turn, "has_drawn", bool, "R16", "turn.")
    s.obliged_this_turn = req(turn, "obliged", bool, "R20", "turn.")
    for key, target_list in (("voids", s.voids), ("pre_draw_voids", s.pre_draw_voids)):
        values = _list_of(d[key], n, key, "R16")
        for p, v in enumerate(values):
            target_list[p] = read_pips(v, c.max_pips, f"{key}[{p}]", "R16")
    s.blocked = req(d, "blocked", bool, "R23")
    rows = req(d, "round_scores", list, "R25")
    s.round_scores = [_scores(c, r, f"round_scores[{k}]") for k, r in enumerate(rows)]
    s.scores = _scores(c, d["scores"], "scores")
    s.history_len = req_int(d, "history_len", 0, 2**62, "R15")
    check_state(game, s)
    return s
