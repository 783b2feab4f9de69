"""The ``rgb_array`` picture (:mod:`mtrain_env.mexican_train.render_image`).

In the spirit of ``gymnasium.utils.env_checker`` / PettingZoo's ``render_test``: every frame
is an ``(H, W, 3)`` ``uint8`` array whose shape depends only on the config (so a game
makes a video); the picture follows play; it shows what it claims (tiles oriented from the
station, R7; all of a 40-tile Mexican train); and it never shows hidden information
(R8 boneyard face down, other seats' hands; STYLE point 6).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from PIL import Image

import mtrain_env
from mtrain_env.mexican_train import render_image
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase

CONFIGS = [
    pytest.param({"num_players": 2}, id="2p-d12"),
    pytest.param({}, id="4p-d12"),
    pytest.param({"num_players": 8}, id="8p-d12"),
    pytest.param({"num_players": 4, "max_pips": 18}, id="4p-d18"),
    pytest.param({"num_players": 12, "max_pips": 18}, id="12p-d18"),
    pytest.param({"num_players": 3, "max_pips": 6, "rules": "wikipedia"}, id="3p-d6-wikipedia"),
    pytest.param({"rules": "cardinal"}, id="4p-cardinal-seek-engine"),
    pytest.param({"num_players": 3, "max_pips": 9, "rounds": 3}, id="3p-d9-session"),
]


def frame(env: Any) -> np.ndarray:
    """``frame(env)`` in ``rgb_array`` mode, checked to be an array."""
    image = env.render()
    assert isinstance(image, np.ndarray)
    return image


def play_frames(kwargs: dict[str, Any], seed: int) -> tuple[Any, list[np.ndarray], set[Phase]]:
    """Play one random game with ``render_mode="rgb_array"``; a frame after every step."""
    env = mtrain_env.raw_env(render_mode="rgb_array", **kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    frames = [frame(env)]
    phases = {env.state_obj.phase}
    while not all(env.terminations.values()):
        env.step(int(rng.choice(env.legal_actions())))
        frames.append(frame(env))
        phases.add(env.state_obj.phase)
    return env, frames, phases


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_rgb_array_frames_have_one_shape_per_config(kwargs: dict[str, Any]) -> None:
    """Every frame of a whole game is an (H, W, 3) uint8 array of the same, config-given shape."""
    env, frames, phases = play_frames(kwargs, seed=3)
    shape = render_image.frame_shape(env.config)
    assert len(frames) > 10
    assert shape[2] == 3 and shape[0] % 16 == 0 and shape[1] % 16 == 0  # video codecs like this
    for image in frames:
        assert image.dtype == np.uint8
        assert image.shape == shape
    assert Phase.GAME_OVER in phases
    # consecutive frames differ: the picture follows play (each step changes the table or the turn)
    changed = sum(not np.array_equal(a, b) for a, b in itertools.pairwise(frames))
    assert changed >= len(frames) // 2
    # another deal with the same config has the same frame size
    other = mtrain_env.raw_env(render_mode="rgb_array", **kwargs)
    other.reset(seed=4)
    assert frame(other).shape == shape


def test_frame_height_grows_with_seats_only() -> None:
    """One lane per train (R7): more seats make a taller frame; the width is fixed."""
    shapes = [render_image.frame_shape(mtrain_env.raw_env(num_players=n).config) for n in (2, 4, 8)]
    assert shapes[0][0] < shapes[1][0] < shapes[2][0]
    assert len({s[1] for s in shapes}) == 1
    d18 = render_image.frame_shape(mtrain_env.raw_env(num_players=4, max_pips=18).config)
    assert d18 == shapes[1]


def _first_tile_play(env: Any) -> tuple[int, int, int]:
    """A legal play of the seat on turn: ``(action, tile id, absolute train)``."""
    game: MexicanTrain = env.game
    for move in game.legal_moves(env.state_obj):
        if move < game.draw:
            tile, train = divmod(move, game.width)
            seat = env.current_seat
            rel = env.config.num_players if train == game.mexican else (train - seat) % env.config.num_players
            return env.encode_action(game.tiles.tiles[tile], rel), tile, train
    raise AssertionError("no tile play available")


def test_picture_changes_where_a_tile_is_played() -> None:
    """Laying a tile (R9) changes the picture, in that train's lane and in the hand panel."""
    env = mtrain_env.raw_env(render_mode="rgb_array")
    env.reset(seed=1)
    layout = render_image._renderer(env.config).layout
    before = frame(env)
    action, _, train = _first_tile_play(env)
    env.step(action)
    after = frame(env)
    diff = np.any(before != after, axis=2)
    lane = slice(layout.lane_y[train], layout.lane_y[train] + layout.lane_h[train])
    tiles_area = slice(layout.tiles_x, layout.width)
    assert diff[lane, tiles_area].any(), "the played train's lane did not change"
    assert diff[layout.hand_top :, :].any(), "the hand panel did not change"
    # the other lanes' tile areas are untouched (the turn marker lives on the plates)
    for t in range(env.config.num_trains):
        if t != train:
            other = slice(layout.lane_y[t], layout.lane_y[t] + layout.lane_h[t])
            assert not diff[other, tiles_area].any(), f"lane {t} changed"


def test_tiles_are_drawn_from_the_station_outward() -> None:
    """R7: the first tile of a train shows the engine value on the station side (left)."""
    env = mtrain_env.raw_env(render_mode="rgb_array")
    env.reset(seed=2)
    action, tile, train = _first_tile_play(env)
    env.step(action)
    engine = env.state_obj.engine
    a, b = env.game.tiles.tiles[tile]
    other = b if a == engine else a
    layout = render_image._renderer(env.config).layout
    half = render_image.HALF
    lane_y, lane_h = layout.lane_y[train], layout.lane_h[train]
    y = lane_y + (lane_h - half) // 2  # a one-tile train is centred in its lane
    crop = frame(env)[y : y + half, layout.tiles_x : layout.tiles_x + 2 * half]

    def composed(x: int, z: int) -> np.ndarray:
        face = render_image.tile_face(x, z, half)
        img = Image.new("RGB", face.size, render_image.LANE_BG)
        img.paste(face, (0, 0), face)
        return np.asarray(img)

    np.testing.assert_array_equal(crop, composed(engine, other))
    if other != engine:
        assert not np.array_equal(crop, composed(other, engine))


def _chain(game: MexicanTrain, start: int, length: int, avoid: int) -> list[int]:
    """Tile ids of a valid train of ``length`` tiles from ``start`` (R7), avoiding ``avoid``."""
    tiles = game.tiles
    used = {tiles.double_id(start)} | {i for i in range(tiles.num_tiles) if avoid >> i & 1}
    path: list[int] = []

    def extend(end: int) -> bool:
        if len(path) == length:
            return True
        for i in range(tiles.num_tiles):
            a, b = tiles.tiles[i]
            if i not in used and end in (a, b):
                used.add(i)
                path.append(i)
                if extend(b if a == end else a):
                    return True
                used.discard(i)
                path.pop()
        return False

    assert extend(start)
    return path


def _with_mexican_train(env: Any, tiles: list[int]) -> tuple[MexicanTrain, GameState]:
    s = env.state_obj.copy()
    s.trains[env.config.mexican] = list(tiles)
    return env.game, s


@pytest.mark.parametrize("kwargs", [{}, {"num_players": 8}, {"num_players": 2, "max_pips": 18}])
def test_long_mexican_train_fits(kwargs: dict[str, Any]) -> None:
    """A 40-tile Mexican train is drawn whole, inside its lane, in a frame of the usual size."""
    env = mtrain_env.raw_env(render_mode="rgb_array", **kwargs)
    env.reset(seed=0)
    s0 = env.state_obj
    chain = _chain(env.game, s0.engine, 40, s0.hands[s0.current])
    layout = render_image._renderer(env.config).layout
    shape = render_image.frame_shape(env.config)
    m = env.config.mexican
    frames = {}
    for length in (38, 39, 40):
        frame = render_image.draw_table(*_with_mexican_train(env, chain[:length]))
        assert frame.shape == shape
        frames[length] = frame
    # each added tile shows: the 40th tile is not clipped away
    assert not np.array_equal(frames[39], frames[40])
    assert not np.array_equal(frames[38], frames[39])
    # and nothing spills out of the Mexican lane (tile faces are ivory)
    ivory = np.all(frames[40] == render_image.IVORY, axis=2)
    base_ivory = np.all(render_image.draw_table(env.game, s0) == render_image.IVORY, axis=2)
    new = ivory & ~base_ivory
    rows = np.flatnonzero(new.any(axis=1))
    assert rows.size
    assert layout.lane_y[m] <= rows.min() and rows.max() < layout.lane_y[m] + layout.lane_h[m]
    assert np.flatnonzero(new.any(axis=0)).max() < layout.width - render_image.MARGIN


def _deal(hands: list[list[tuple[int, int]]], boneyard: list[tuple[int, int]]) -> dict[str, Any]:
    return {"hands": [[list(t) for t in h] for h in hands], "boneyard": [list(t) for t in boneyard]}


@pytest.mark.parametrize("kwargs", [{}, {"num_players": 8}, {"num_players": 3, "max_pips": 18}])
def test_hidden_information_is_not_drawn(kwargs: dict[str, Any]) -> None:
    """R8/STYLE 6: opponents' hands and the boneyard order never change the picture.

    Two deals share the hand of seat 0 (on turn) and every hand size, but the opponents'
    tiles are exchanged and the boneyard is reordered: the frames must be identical, at
    reset and after the same tile play. Changing seat 0's OWN hand must change the frame
    (so the comparison can fail).
    """
    probe = mtrain_env.raw_env(**kwargs)
    c = probe.config
    rng = np.random.default_rng(5)
    pool = [(a, b) for a in range(c.max_pips + 1) for b in range(a, c.max_pips + 1)]
    pool.remove((c.max_pips, c.max_pips))  # the engine is set aside (R5)
    order = [pool[int(i)] for i in rng.permutation(len(pool))]
    h, n = c.hand_size, c.num_players
    hands = [order[p * h : (p + 1) * h] for p in range(n)]
    boneyard = order[n * h :]
    # twin: the opponents' tiles redistributed, the boneyard reversed
    opp = [t for p in range(1, n) for t in hands[p]] + boneyard
    opp = [opp[int(i)] for i in rng.permutation(len(opp))]
    twin_hands = [hands[0]] + [opp[(p - 1) * h : p * h] for p in range(1, n)]
    twin_boneyard = opp[(n - 1) * h :]
    assert twin_hands[1:] != hands[1:] and twin_boneyard != boneyard
    # own hand changed: seat 0 swaps one tile with seat 1
    own_hands = [list(hh) for hh in hands]
    own_hands[0][0], own_hands[1][0] = own_hands[1][0], own_hands[0][0]

    def start(hs: list[list[tuple[int, int]]], bone: list[tuple[int, int]]) -> Any:
        e = mtrain_env.raw_env(render_mode="rgb_array", **kwargs)
        e.reset(seed=0, options={"deal": _deal(hs, bone), "first_player": 0})
        assert e.current_seat == 0
        return e

    env_a, env_b = start(hands, boneyard), start(twin_hands, twin_boneyard)
    env_own = start(own_hands, boneyard)
    np.testing.assert_array_equal(frame(env_a), frame(env_b))
    assert not np.array_equal(frame(env_a), frame(env_own))
    # the same public play keeps the pictures identical while seat 0 is on turn
    steps = 0
    while env_a.current_seat == 0 and env_a.state_obj.phase < Phase.ROUND_OVER and steps < 5:
        legal = env_a.legal_actions()
        assert legal == env_b.legal_actions()
        env_a.step(legal[0])
        env_b.step(legal[0])
        steps += 1
        if env_a.current_seat == 0:
            np.testing.assert_array_equal(frame(env_a), frame(env_b))
    assert steps >= 1


def test_tile_faces_are_distinct_for_every_value() -> None:
    """Each value 0..18 has its own face (dots up to 9, numerals above), so ends can be read."""
    half = render_image.HALF
    halves = []
    for v in range(19):
        face = np.asarray(render_image.tile_face(v, 0, half))
        assert face.shape == (half, 2 * half, 4)
        halves.append(face[:, :half].tobytes())
    assert len(set(halves)) == 19
    vertical = render_image.tile_face(3, 12, half, vertical=True)
    assert vertical.size == (half, 2 * half)
