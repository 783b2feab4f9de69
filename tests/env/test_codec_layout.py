"""The action codec and the published observation layout.

* codec: ``action = tile_id * (n + 1) + train``, ``DRAW = T(n + 1)``, ``PASS = T(n + 1) + 1``
  with ``tile_id(a, b) = a(2N + 3 - a)/2 + (b - a)`` (env docstring); encode/decode are
  inverse over every action; trains are RELATIVE: ``k`` is seat ``(seat + k) % n``, ``n`` the
  Mexican train (R7) — checked against where a played tile actually lands;
* layout: the named views tile the vector exactly (no gap, no overlap), relative views
  follow the documented seat order, and the ``Box`` space contains every observation seen
  in random games.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import mtrain_env
from mtrain_env.mexican_train.core.state import Phase

CONFIGS = [
    pytest.param({}, id="pagat-4p-d12"),
    pytest.param({"num_players": 2, "max_pips": 6}, id="2p-d6"),
    pytest.param({"num_players": 3, "max_pips": 9}, id="3p-d9"),
    pytest.param({"num_players": 8}, id="8p-d12"),
    pytest.param({"num_players": 5, "max_pips": 15, "rounds": 3}, id="5p-d15-session3"),
    pytest.param({"num_players": 11, "max_pips": 18}, id="11p-d18"),
    pytest.param({"rules": "cardinal", "rounds": 2, "num_players": 6}, id="cardinal-6p-session2"),
    pytest.param(
        {"rounds": 3, "positive_scoring": True, "blank_penalty": True, "num_players": 3}, id="positive-blank"
    ),
]


def doc_tile_id(max_pips: int, a: int, b: int) -> int:
    """The documented tile id formula (either order)."""
    a, b = min(a, b), max(a, b)
    return a * (2 * max_pips + 3 - a) // 2 + (b - a)


def all_tiles(max_pips: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(max_pips + 1) for b in range(a, max_pips + 1)]


# ------------------------------------------------------------------------------ codec
@pytest.mark.parametrize("kwargs", CONFIGS)
def test_codec_formula_and_round_trip(kwargs: dict[str, Any]) -> None:
    """encode follows the documented formula for both tile orders; decode inverts every action."""
    env = mtrain_env.raw_env(**kwargs)
    n, N = env.config.num_players, env.config.max_pips
    tiles = all_tiles(N)
    T = len(tiles)
    assert T == (N + 1) * (N + 2) // 2  # R1
    assert env.action_space("player_0").n == T * (n + 1) + 2
    assert T * (n + 1) == env.DRAW
    assert T * (n + 1) + 1 == env.PASS
    assert [doc_tile_id(N, a, b) for a, b in tiles] == list(range(T))
    for a, b in tiles:
        for train in range(n + 1):
            expected = doc_tile_id(N, a, b) * (n + 1) + train
            assert env.encode_action((a, b), train) == expected
            assert env.encode_action((b, a), train) == expected
            assert env.encode_action([b, a], train) == expected
    seen = set()
    for action in range(env.config.num_actions):
        d = env.decode_action(action)
        if action == env.DRAW:
            assert d.kind == "draw"
        elif action == env.PASS:
            assert d.kind == "pass"
        else:
            assert d.kind == "play"
            assert d.tile is not None and d.tile[0] <= d.tile[1]
            assert env.encode_action(d.tile, d.train) == action
            seen.add((d.tile, d.train))
    assert len(seen) == T * (n + 1)
    assert env.decode_action(np.int64(env.DRAW)).kind == "draw"


ENCODERS = [  # double-6 both, so that every legal action fits in every integer dtype
    pytest.param(lambda: mtrain_env.raw_env(num_players=2, max_pips=6), "double-6", id="mexican"),
    pytest.param(lambda: mtrain_env.block_dominoes_env().unwrapped, "double-6", id="block"),
]


@pytest.mark.parametrize(("make", "set_name"), ENCODERS)
@pytest.mark.parametrize(
    ("tile", "where", "error"),
    [
        pytest.param((0, 19), 0, ValueError, id="pip-19"),
        pytest.param((-1, 0), 0, ValueError, id="pip-neg"),
        pytest.param((np.int64(7), 20), 0, ValueError, id="np-pip-20"),
        pytest.param([7, 7], 0, ValueError, id="pip-7-of-double-6"),
        pytest.param((0, 1), 99, ValueError, id="where-99"),
        pytest.param((0, 1), -1, ValueError, id="where-neg"),
        pytest.param((0, 1), 1.0, TypeError, id="where-float"),
        pytest.param((0, 1), True, TypeError, id="where-bool"),
        pytest.param((0, 1), "0", TypeError, id="where-str"),
        pytest.param((0, 1), None, TypeError, id="where-none"),
        pytest.param((0, 1, 2), 0, TypeError, id="triple"),
        pytest.param((1,), 0, TypeError, id="single"),
        pytest.param("01", 0, TypeError, id="str-tile"),
        pytest.param(b"\x01\x02", 0, TypeError, id="bytes-tile"),
        pytest.param(None, 0, TypeError, id="none-tile"),
        pytest.param((1.9, 2.2), 0, TypeError, id="float-pips"),  # was read as (1, 2)
        pytest.param((1.0, 2), 0, TypeError, id="integral-float-pip"),
        pytest.param(("1", "2"), 0, TypeError, id="str-pips"),  # was read as (1, 2)
        pytest.param((True, 2), 0, TypeError, id="bool-pip"),  # was read as (1, 2)
        pytest.param((np.float64(1), 2), 0, TypeError, id="np-float-pip"),
        pytest.param((np.bool_(True), 2), 0, TypeError, id="np-bool-pip"),
        pytest.param((None, 2), 0, TypeError, id="none-pip"),
        pytest.param(np.array([1.0, 2.0]), 0, TypeError, id="float-array-tile"),
        pytest.param(np.array([[1, 2]]), 0, TypeError, id="2d-array-tile"),
    ],
)
def test_encode_rejects_bad_input(
    make: Any, set_name: str, tile: Any, where: Any, error: type[Exception]
) -> None:
    """Non-integer pips or train/end raise ``TypeError`` naming the value (no silent rounding,
    R1); a pip outside the set raises ``ValueError`` naming the tile and the set."""
    env = make()
    with pytest.raises(error) as err:
        env.encode_action(tile, where)
    message = str(err.value)
    assert message
    if error is ValueError and where == 0:  # a tile outside the set: named, with the set and R1
        assert "R1" in message and set_name in message and str(tuple(map(int, tile))) in message, message


@pytest.mark.parametrize(("make", "set_name"), ENCODERS)
def test_encode_accepts_every_integer_type(make: Any, set_name: str) -> None:
    """Numpy integer pips, a 1-d integer array tile and a numpy train give the int encoding."""
    env = make()
    expected = env.encode_action((2, 5), 1)
    for tile in [(np.int8(5), np.uint64(2)), [np.int32(2), 5], np.array([5, 2]), (np.array(2), 5)]:
        assert env.encode_action(tile, np.uint8(1)) == expected
        assert type(env.encode_action(tile, 1)) is int


#: accepted by ``step`` (when legal) and by ``decode_action``
INTEGER_KINDS = [
    pytest.param(lambda a: a, id="int"),
    *(pytest.param(t, id=t.__name__) for t in (np.int8, np.int16, np.int32, np.int64)),
    *(pytest.param(t, id=t.__name__) for t in (np.uint8, np.uint16, np.uint32, np.uint64)),
    pytest.param(lambda a: np.array(a, dtype=np.int64), id="0d-int64"),
    pytest.param(lambda a: np.array(a, dtype=np.uint64), id="0d-uint64"),
]


@pytest.mark.parametrize(("make", "set_name"), ENCODERS)
@pytest.mark.parametrize("kind", INTEGER_KINDS)
def test_decode_accepts_what_step_accepts(make: Any, set_name: str, kind: Any) -> None:
    """``decode_action`` takes every integer kind ``step`` takes (0-d arrays included)."""
    env = make()
    env.reset(seed=2)
    action = env.legal_actions()[0]
    assert action < 128  # every dtype holds it
    assert env.decode_action(kind(action)) == env.decode_action(action)
    env.step(kind(action))  # and step takes it too


@pytest.mark.parametrize(("make", "set_name"), ENCODERS)
@pytest.mark.parametrize(
    "action", [-1, "num_actions", 1.5, 2.0, True, np.bool_(False), None, "3", np.array([3]), np.float32(3)]
)
def test_decode_refuses_what_step_refuses(make: Any, set_name: str, action: Any) -> None:
    """Same error class and the same words as ``step``'s refusal (which adds agent and legal list)."""
    env = make()
    env.reset(seed=2)
    if isinstance(action, str) and action == "num_actions":
        action = env.config.num_actions
    with pytest.raises((ValueError, TypeError)) as decoded:
        env.decode_action(action)
    with pytest.raises((ValueError, TypeError)) as stepped:
        env.step(action)
    assert type(decoded.value) is type(stepped.value)
    assert str(decoded.value) in str(stepped.value)
    assert f"Discrete({env.config.num_actions})" in str(decoded.value)


def _end(train: list[list[int]], engine: int) -> int:
    return train[-1][1] if train else engine


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_relative_trains_land_where_documented(kwargs: dict[str, Any]) -> None:
    """R7 + codec: relative train k of seat s is seat (s + k) % n's train; n is the Mexican train.

    After every play, exactly that train has grown by the decoded tile, oriented to match
    its previous open end; no other train changed. Every relative index is exercised.
    """
    env = mtrain_env.raw_env(**kwargs)
    n = env.config.num_players
    used: set[int] = set()
    for seed in range(4):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not all(env.terminations.values()):
            legal = env.legal_actions()
            action = int(rng.choice(legal))
            seat = env.current_seat
            before = env.state_dict()
            round_before = env.state_obj.round_index
            env.step(action)
            if env.state_obj.round_index != round_before:
                continue  # a session dealt the next round: the trains were cleared
            d = env.decode_action(action)
            if d.kind != "play":
                continue
            after = env.state_dict()
            target = n if d.train == n else (seat + d.train) % n
            trains_b = [*before["trains"], before["mexican_train"]]
            trains_a = [*after["trains"], after["mexican_train"]]
            for t in range(n + 1):
                if t == target:
                    assert trains_a[t][:-1] == trains_b[t]
                    laid = trains_a[t][-1]
                    assert sorted(laid) == sorted(d.tile)
                    assert laid[0] == _end(trains_b[t], before["engine"][0])
                else:
                    assert trains_a[t] == trains_b[t], f"train {t} changed; expected only {target}"
            used.add(d.train)
    assert 0 in used and n in used, f"own and Mexican trains never played on ({used})"
    if n > 2:
        assert len(used) >= 3, f"no play on another seat's train ({used})"


# ----------------------------------------------------------------------------- layout
@pytest.mark.parametrize("kwargs", CONFIGS)
def test_layout_tiles_the_vector(kwargs: dict[str, Any]) -> None:
    """Views are contiguous, disjoint, cover the vector and match their shapes."""
    env = mtrain_env.raw_env(**kwargs)
    views = env.observation_layout
    size = env.observation_space("player_0")["observation"].shape[0]
    ordered = sorted(views.items(), key=lambda kv: kv[1].slice.start)
    pos = 0
    covered = np.zeros(size, dtype=int)
    for name, v in ordered:
        assert v.slice.step in (None, 1), name
        assert v.slice.start == pos, f"gap or overlap before {name}"
        assert v.slice.stop - v.slice.start == int(np.prod(v.shape)), name
        covered[v.slice] += 1
        pos = v.slice.stop
    assert pos == size
    assert (covered == 1).all()
    n, pips = env.config.num_players, env.config.max_pips + 1
    T, w = env.config.num_tiles, n + 1
    expected_shapes = {
        "hand": (T,),
        "table": (T,),
        "train_end": (w, pips),
        "train_marker": (w,),
        "opponent_void": (n - 1, pips),
        "opponent_hand_count": (n - 1,),
        "engine": (pips,),
    }
    for name, shape in expected_shapes.items():
        assert views[name].shape == shape, name
    assert ("round" in views) == (env.config.rounds > 1)
    assert ("scores" in views) == (env.config.rounds > 1)


def _split(env: Any, obs: np.ndarray) -> dict[str, np.ndarray]:
    return {k: obs[v.slice].reshape(v.shape) for k, v in env.observation_layout.items()}


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_space_contains_every_observation_and_views_are_relative(kwargs: dict[str, Any]) -> None:
    """The Dict(Box, Box) space contains every observation; relative views follow the seats.

    For observer s: ``train_end`` row k is the open end of seat (s + k) % n's train and row n
    the Mexican train's (one-hot); ``train_marker`` likewise (0 for the Mexican);
    ``opponent_hand_count`` row k - 1 is seat (s + k) % n's hand size / hand_size;
    ``engine`` is the round's engine (R5); ``table`` holds the tiles on the table.
    """
    env = mtrain_env.raw_env(**kwargs)
    c = env.config
    n, N = c.num_players, c.max_pips
    space = env.observation_space("player_0")
    for seed in range(2 if n * c.num_tiles < 1000 else 1):  # the biggest tables: one game
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while True:
            d = env.state_dict()
            trains = [*d["trains"], d["mexican_train"]]
            engine = d["engine"][0]
            on_table = {tuple(sorted(t)) for tr in trains for t in tr}
            if d["engine_placed"]:
                on_table.add((engine, engine))
            table = np.zeros(c.num_tiles, dtype=np.float32)
            for a, b in on_table:
                table[doc_tile_id(N, a, b)] = 1
            for s in range(n):
                o = env.observe(f"player_{s}")
                assert o["observation"].dtype == np.float32
                assert space.contains(o), f"observation of player_{s} outside the space"
                v = _split(env, o["observation"])
                if env.state_obj.phase >= Phase.ROUND_OVER:
                    continue
                for k in range(n + 1):
                    t = n if k == n else (s + k) % n
                    row = np.zeros(N + 1, dtype=np.float32)
                    row[_end(trains[t], engine)] = 1
                    np.testing.assert_array_equal(v["train_end"][k], row)
                    marker = 0.0 if k == n else float(d["markers"][t])
                    assert v["train_marker"][k] == marker
                for k in range(1, n):
                    q = (s + k) % n
                    assert v["opponent_hand_count"][k - 1] == pytest.approx(len(d["hands"][q]) / c.hand_size)
                assert v["engine"].argmax() == engine and v["engine"].sum() == 1
                np.testing.assert_array_equal(v["table"], table)
                if c.rounds > 1:
                    assert v["round"].argmax() == d["round"] and v["round"].sum() == 1
            if all(env.terminations.values()):
                break
            env.step(int(rng.choice(env.legal_actions())))
