"""Property: a state dict mutated in one field is refused cleanly or plays on lawfully.

Valid snapshots come from seeded random play (both games; sessions, matches, variants,
2 to 8 seats; mid-round, at round ends, after the episode, during dead steps, and after a
wrapper ended the game on an illegal move). Hypothesis changes ONE thing — a type, an
out-of-range or neighbouring integer, NaN or infinity, another phase, a flipped flag, a
list item removed, added, duplicated or moved, two tiles swapped, a key dropped or added —
and then either

* ``load_state_dict`` refuses it with ``ValueError``/``TypeError`` worded
  ``state dict 'KEY': RULE: ...`` where KEY is a key of the snapshot, and the env's own
  snapshot is exactly what it was; or
* it loads, and the env plays random legal moves (dead steps included) to the episode's
  end with every invariant (:mod:`~mtrain_env.mexican_train.core.invariants`,
  :mod:`~mtrain_env.block.core.invariants`, ``check_bookkeeping``) holding after every step.

The default run is small; ``-m slow`` runs many more examples.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import random
import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mtrain_env
import mtrain_env.block
from mtrain_env.block.core import invariants as block_invariants
from mtrain_env.mexican_train.core import invariants as mexican_invariants
from mtrain_env.tilegame.snapshot import json_equal

MESSAGE = re.compile(r"^state dict '(?P<key>[^']+)': (?:[RB]\d+(?:-[RB]\d+)?|AEC): \S")

#: (game, config keywords): sessions, matches, variants, 2 to 8 seats
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("mexican_train", {"num_players": 4}),
    ("mexican_train", {"num_players": 2, "max_pips": 6, "rounds": 3}),
    ("mexican_train", {"rules": "cardinal", "num_players": 3, "max_pips": 6, "rounds": 2}),
    ("mexican_train", {"rules": "wikipedia", "num_players": 8, "rounds": 2, "reward": "win"}),
    (
        "mexican_train",
        {"num_players": 5, "max_pips": 9, "rounds": 2, "positive_scoring": True, "blank_penalty": True},
    ),
    (
        "mexican_train",
        {"num_players": 3, "max_pips": 6, "no_double_satisfaction": True, "opening_draw": True},
    ),
    (
        "mexican_train",
        {
            "num_players": 6,
            "max_pips": 9,
            "satisfy_in_reverse_order": True,
            "cover_own_double_on_it": True,
            "one_double_per_turn": True,
            "reward": "penalty",
        },
    ),
    ("block", {}),
    ("block", {"num_players": 2, "match": True, "target": 30}),
    ("block", {"match": True, "closed_scoring": "both", "target": 25, "reward": "match"}),
    ("block", {"rules": "openspiel", "counter_clockwise": True, "reward": "raw"}),
]
CHECKS: dict[str, Callable[[Any, Any], None]] = {
    "mexican_train": mexican_invariants.check_state,
    "block": block_invariants.check_state,
}
#: how far the snapshot's game has gone: steps, or the episode's end (every dead step done)
CUTS = (0, 1, 4, 15, 40, 100, 250, 600, 10**9)


def make(ci: int, wrapped: bool = False) -> Any:
    game, kwargs = CONFIGS[ci]
    if game == "mexican_train":
        return (mtrain_env.env if wrapped else mtrain_env.raw_env)(**kwargs)
    return (mtrain_env.block.env if wrapped else mtrain_env.block.raw_env)(**kwargs)


def check(ci: int, raw: Any) -> None:
    CHECKS[CONFIGS[ci][0]](raw.game, raw.state_obj)
    raw.check_bookkeeping()


@functools.lru_cache(maxsize=512)
def snapshot(ci: int, seed: int, cut: int, illegal: bool) -> str:
    """The JSON snapshot of a seeded random game after ``cut`` steps (dead steps included);
    ``illegal``: then an illegal action through the wrapped env, and a few dead steps."""
    env = make(ci, wrapped=illegal)
    env.reset(seed=seed)
    raw = env.unwrapped
    rng = random.Random(seed)
    for _ in range(cut):
        if not raw.agents:
            break
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            env.step(None)
        else:
            legal = raw.legal_actions()
            env.step(legal[rng.randrange(len(legal))])
    if illegal and raw.agents and not all(raw.terminations.values()):
        legal = raw.legal_actions()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env.step(next(a for a in range(raw._num_actions) if a not in legal))
        for _ in range(rng.randrange(len(raw.agents) + 1)):
            env.step(None)
    return json.dumps(raw.state_dict())


# ----------------------------------------------------------------------- mutations
def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every position in a JSON tree (the root excluded)."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k))
            out.extend(paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*prefix, i))
            out.extend(paths(v, (*prefix, i)))
    return out


def tile_paths(d: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Positions holding a tile ``[a, b]`` (hands, boneyard, trains, line, ...)."""
    out = []
    for p in paths(d):
        v = get(d, p)
        if type(v) is list and len(v) == 2 and all(type(x) is int for x in v) and p[0] != "env":
            out.append(p)
    return out


def get(d: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        d = d[k]
    return d


def put(d: Any, path: tuple[Any, ...], value: Any) -> None:
    get(d, path[:-1])[path[-1]] = value


PHASES = ["SEEK_ENGINE", "OPENING", "NORMAL", "ROUND_OVER", "GAME_OVER", "PLAYING", "HAND_OVER", "nope"]


def variants(value: Any, data: st.DataObject) -> list[Any]:
    """The one-field replacements tried for ``value`` (by its type)."""
    if type(value) is bool:
        return [not value, int(value), None, "true"]
    if type(value) is int:
        return [
            value + 1,
            value - 1,
            -1,
            0,
            2**64,
            -(2**70),
            float(value),
            str(value),
            True,
            None,
            data.draw(st.integers(-3, 30)),
        ]
    if type(value) is float:
        return [math.nan, math.inf, -math.inf, value + 0.5, -1.0, int(value), str(value), None]
    if type(value) is str:
        return [*PHASES, "mexican", "player_0", "player_9", "", 0, None]
    if value is None:
        return [0, [], "x", [0, 0], {}]
    if type(value) is list:
        out: list[Any] = [
            None,
            {},
            "[]",
            value[:-1],
            value[1:],
            [*value, copy.deepcopy(value[-1])] if value else [0],
        ]
        if len(value) >= 2:
            i, j = data.draw(st.integers(0, len(value) - 1)), data.draw(st.integers(0, len(value) - 1))
            swapped = list(value)
            swapped[i], swapped[j] = swapped[j], swapped[i]
            out += [swapped, value[::-1]]
        out.append([*value, [data.draw(st.integers(0, 12)), data.draw(st.integers(0, 12))]])
        return out
    if type(value) is dict:
        keys = list(value)
        out = [None, [], {**value, "unknown": 0}]
        if keys:
            k = data.draw(st.sampled_from(keys))
            out.append({x: v for x, v in value.items() if x != k})
        return out
    return [None]


def mutate(d: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    """A deep copy of ``d`` with one field changed (or two tiles swapped)."""
    bad = copy.deepcopy(d)
    if data.draw(st.integers(0, 9)) == 0:
        tiles = tile_paths(bad)
        if len(tiles) >= 2:
            a, b = data.draw(st.sampled_from(tiles)), data.draw(st.sampled_from(tiles))
            x, y = get(bad, a), get(bad, b)
            put(bad, a, y)
            put(bad, b, x)
            return bad
    where = data.draw(st.sampled_from(paths(bad)))
    value = get(bad, where)
    put(bad, where, data.draw(st.sampled_from(variants(value, data))))
    return bad


# ------------------------------------------------------------------------ property
def play_to_the_end(ci: int, env: Any, rng: random.Random, record: list[str] | None = None) -> int:
    """Random legal moves (and dead steps) until no agent is left; invariants after every step
    (and the JSON snapshot after each appended to ``record``)."""
    steps = 0
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
        else:
            legal = env.legal_actions()
            assert legal, "a live agent on turn always has a legal action"
            env.step(legal[rng.randrange(len(legal))])
        check(ci, env)
        if record is not None:
            record.append(json.dumps(env.state_dict()))
        steps += 1
        assert steps < 200_000
    return steps


def one_mutation(data: st.DataObject) -> None:
    ci = data.draw(st.integers(0, len(CONFIGS) - 1), label="config")
    seed = data.draw(st.integers(0, 2), label="seed")
    cut = data.draw(st.sampled_from(CUTS), label="cut")
    illegal = data.draw(st.integers(0, 5), label="illegal") == 0
    good = json.loads(snapshot(ci, seed, cut, illegal))
    env = make(ci)
    env.load_state_dict(copy.deepcopy(good))
    check(ci, env)
    assert json_equal(env.state_dict(), good)
    bad = mutate(good, data)
    before = env.state_dict()
    try:
        env.load_state_dict(bad)
    except (ValueError, TypeError) as err:
        message = str(err)
        found = MESSAGE.match(message)
        assert found, f"not worded 'state dict KEY: RULE: ...': {message}"
        top = re.split(r"[.\[]", found["key"])[0]
        assert top in good or top in bad, f"{found['key']!r} is not a key of the snapshot: {message}"
        assert json_equal(env.state_dict(), before), f"refused ({message}) but the env changed"
        return
    check(ci, env)
    again = make(ci)  # what loaded is itself a valid snapshot
    again.load_state_dict(json.loads(json.dumps(env.state_dict())))
    assert json_equal(again.state_dict(), env.state_dict())
    play_to_the_end(ci, env, random.Random(seed))


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_mutated_state_dict_is_refused_cleanly_or_plays_on_lawfully(data: st.DataObject) -> None:
    one_mutation(data)


@pytest.mark.slow
@settings(max_examples=20_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_many_mutated_state_dicts(data: st.DataObject) -> None:
    one_mutation(data)


def test_every_base_snapshot_kind_occurs() -> None:
    """The snapshots mutated above cover mid-round, finished episodes, dead steps and wrapper ends."""
    seen = set()
    for ci in range(len(CONFIGS)):
        for cut in CUTS:
            for illegal in (False, True):
                d = json.loads(snapshot(ci, 0, cut, illegal))
                e = d["env"]
                if not e["agents"]:
                    seen.add("all dead steps done")
                elif any(e["truncations"].values()):
                    seen.add("ended by the wrapper")
                elif all(e["terminations"].values()):
                    seen.add("game over")
                else:
                    seen.add("under way")
                if e["skip_agent_selection"] is not None:
                    seen.add("dead steps under way")
    assert seen == {
        "all dead steps done",
        "ended by the wrapper",
        "game over",
        "under way",
        "dead steps under way",
    }


# ------------------------------------------------------------------ key order
def shuffled(value: Any, rng: random.Random) -> Any:
    """``value`` with the keys of every dict, at every depth, in a random order (lists kept)."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: shuffled(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [shuffled(x, rng) for x in value]
    return value


def continuation(ci: int, env: Any, seed: int) -> list[str]:
    """The snapshot after each of the steps to the episode's end (seeded random legal moves)."""
    out: list[str] = []
    play_to_the_end(ci, env, random.Random(seed), out)
    return out


@functools.lru_cache(maxsize=32)
def between_rounds(ci: int, seed: int) -> str | None:
    """The snapshot of the first step that ends a round with another round to come (its
    ``round_result`` then describes the round before the state's), or ``None``."""
    env = make(ci)
    env.reset(seed=seed)
    rng = random.Random(seed)
    while env.agents and not any(env.terminations.values()):
        legal = env.legal_actions()
        env.step(legal[rng.randrange(len(legal))])
        d = env.state_dict()
        if d["env"]["round_result"] is not None and not any(env.terminations.values()):
            return json.dumps(d)
    return None


@pytest.mark.parametrize("ci", range(len(CONFIGS)))
def test_a_snapshot_with_its_keys_in_another_order_loads_the_same_state(ci: int) -> None:
    """JSON objects are unordered: a snapshot whose keys were reordered at every depth loads
    the same state (written back key for key, in the env's own order) and plays on the same."""
    moved = 0
    texts = [snapshot(ci, *cut) for cut in ((0, 1, False), (1, 15, False), (2, 100, True), (0, 10**9, False))]
    texts += [t for t in [between_rounds(ci, 0)] if t is not None]
    for seed, text in enumerate(texts):
        for shuffle_seed in range(3):
            d = shuffled(json.loads(text), random.Random(shuffle_seed))
            moved += json.dumps(d) != text
            env = make(ci)
            env.load_state_dict(d)
            check(ci, env)
            assert json.dumps(env.state_dict()) == text
            plain = make(ci)
            plain.load_state_dict(json.loads(text))
            assert continuation(ci, env, seed) == continuation(ci, plain, seed)
    assert moved, "the shuffles changed no key order"
