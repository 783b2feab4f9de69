"""The fast observation encoder against a slow, view-by-view reference built from ``state_dict``.

The encoder (:mod:`mtrain_env.mexican_train.observation`) packs bits into one int for speed; this test
re-derives every published view the plain way — one numpy view at a time, from the JSON
snapshot and the layout's documentation — and requires the two to agree exactly, for
every seat, at every step of random games over presets, variants, set sizes and sessions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import mtrain_env
from mtrain_env.mexican_train.core.serialize import MEXICAN
from tests.env.test_codec_layout import doc_tile_id

CONFIGS = [
    pytest.param({}, id="pagat-4p-d12"),
    pytest.param({"num_players": 2, "max_pips": 6}, id="2p-d6"),
    pytest.param({"num_players": 8}, id="8p-d12"),
    pytest.param({"num_players": 3, "max_pips": 9, "rounds": 4}, id="3p-d9-session4"),
    pytest.param({"rules": "cardinal", "num_players": 5, "rounds": 2}, id="cardinal-5p-session2"),
    pytest.param({"rules": "wikipedia", "opening_draw": True}, id="wikipedia-opening-draw"),
    pytest.param({"satisfy_in_reverse_order": True, "num_players": 6}, id="reverse-order-6p"),
    pytest.param({"cover_own_double_on_it": True, "one_double_per_turn": True}, id="cover-own-one-double"),
    pytest.param({"num_players": 10, "max_pips": 15}, id="10p-d15"),
]

PHASE_FLAGS = ("SEEK_ENGINE", "OPENING", "NORMAL")


def reference_observation(env: Any, d: dict[str, Any], seat: int) -> dict[str, np.ndarray]:
    """Every view of ``seat``'s observation, computed view by view from the snapshot ``d``."""
    c = env.config
    n, N, T = c.num_players, c.max_pips, c.num_tiles
    pips = N + 1
    engine = d["engine"][0]
    trains = [*d["trains"], d["mexican_train"]]
    order = [(seat + k) % n for k in range(n)]  # relative seats
    rel_train = [*order, n]  # relative trains: own, next seats, Mexican
    ref_of = {t: t for t in range(n)} | {MEXICAN: n}
    pending = [ref_of[t] for t in d["pending_doubles"]]
    turn_doubles = [ref_of[t] for t in d["turn_doubles"]]
    v = {name: np.zeros(view.shape, dtype=np.float32) for name, view in env.observation_layout.items()}
    for a, b in d["hands"][seat]:
        v["hand"][doc_tile_id(N, a, b)] = 1
    for train in trains:
        for a, b in train:
            v["table"][doc_tile_id(N, a, b)] = 1
    if d["engine_placed"]:
        v["table"][doc_tile_id(N, engine, engine)] = 1
    for k, t in enumerate(rel_train):
        v["train_started"][k] = len(trains[t]) > 0
        v["train_end"][k, trains[t][-1][1] if trains[t] else engine] = 1
        v["train_marker"][k] = t < n and d["markers"][t]
        v["train_double"][k] = t in pending or t in turn_doubles
        v["train_length"][k] = len(trains[t]) / pips
    if pending and d["phase"] == "NORMAL":
        head = pending[-1] if c.satisfy_in_reverse_order else pending[0]
        v["pending_first"][rel_train.index(head)] = 1
        v["pending_count"][0] = len(pending)
    for i, name in enumerate(PHASE_FLAGS):
        v["phase"][i] = d["phase"] == name
    v["phase"][3] = d["turn"]["owes"]
    v["phase"][4] = d["turn"]["has_drawn"]
    v["engine"][engine] = 1
    for k, q in enumerate(order):
        v["first_turn_done"][k] = d["first_turn_done"][q]
        if k:
            v["opponent_void"][k - 1, d["voids"][q]] = 1
            v["opponent_hand_count"][k - 1] = len(d["hands"][q]) / c.hand_size
    v["boneyard_count"][0] = len(d["boneyard"]) / T
    if c.rounds > 1:
        v["round"][d["round"]] = 1
        v["scores"][:] = [d["scores"][q] / (c.hand_size * N) for q in order]
    return v


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_every_view_matches_the_reference_encoder(kwargs: dict[str, Any]) -> None:
    """Bit-for-bit (float32) agreement of every view, every seat, every step."""
    env = mtrain_env.raw_env(**kwargs)
    n = env.config.num_players
    layout = env.observation_layout
    seen_pending = seen_voids = False
    for seed in range(2 if n * env.config.num_tiles < 1000 else 1):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not all(env.terminations.values()):
            d = env.state_dict()
            seen_pending |= bool(d["pending_doubles"])
            seen_voids |= any(d["voids"])
            for seat in range(n):
                obs = env.observe(f"player_{seat}")["observation"]
                expected = reference_observation(env, d, seat)
                flat = np.concatenate([expected[name].ravel() for name in layout])
                if not np.array_equal(obs, flat):
                    wrong = [
                        name
                        for name, view in layout.items()
                        if not np.array_equal(obs[view.slice], flat[view.slice])
                    ]
                    pytest.fail(
                        f"player_{seat}, step {d['history_len']}: views {wrong} differ from the reference"
                    )
            env.step(int(rng.choice(env.legal_actions())))
    assert seen_voids, "no game showed a void: the opponent_void view went untested"
    if n <= 6:
        assert seen_pending, "no game left a double pending: train_double/pending_first went untested"
