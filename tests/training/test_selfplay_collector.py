"""Collectors of slices of a run's games add up to one collector of every game: the same
decisions in the same order (league seats included), states that merge and split back,
sampling uniforms that depend on (seed, game, step) only."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from training.selfplay.checkpoint import _encode, state_sha256
from training.selfplay.collector import (
    INFER_GAMES,
    Collector,
    initial_state,
    merge_batches,
    merge_states,
    slices,
    split_state,
    uniforms,
)
from training.selfplay.learner import SelfPlayConfig
from training.selfplay.seatbook import Batch

SMALL: dict[str, Any] = {
    "num_players": 4,
    "max_pips": 6,
    "num_games": 150,
    "steps": 8,
    "hidden": 16,
    "pair_hidden": 8,
}


def _same_batch(a: Batch, b: Batch) -> None:
    for name in Batch.__dataclass_fields__:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("league", [False, True])
def test_slices_collect_what_one_collector_does(league: bool) -> None:
    extra: dict[str, Any] = {"opponents": "planner", "opponent_share": 0.6} if league else {}
    config = SelfPlayConfig(seed=4, **SMALL, **extra)
    start = initial_state(config)
    whole = Collector(config, 0, config.num_games)
    whole.load_state_dict(start)
    parts = [Collector(config, lo, hi, whole.net) for lo, hi in slices(config.num_games, 3)]
    for part in parts:
        part.load_state_dict(split_state(start, part.first, part.stop))
    for _ in range(3):  # the carried decisions of one rollout start the next
        one = whole.collect()
        _same_batch(merge_batches([p.collect() for p in parts]), one)
        assert sum(p.rounds for p in parts) == whole.rounds
        assert sum(p.league_moves for p in parts) == whole.league_moves
    assert whole.league_moves > 0 if league else whole.league_moves == 0
    merged = merge_states([p.state_dict() for p in parts])
    assert state_sha256(_encode(merged)) == state_sha256(_encode(whole.state_dict()))


def test_a_state_splits_and_merges_back() -> None:
    config = SelfPlayConfig(seed=2, **SMALL)
    c = Collector(config, 0, config.num_games)
    c.load_state_dict(initial_state(config))
    c.collect()
    state = c.state_dict()
    assert state["book"]["obs"].shape[0] > 0  # tails carried
    for count in (1, 2, 3):
        parts = [split_state(state, lo, hi) for lo, hi in slices(config.num_games, count)]
        assert state_sha256(_encode(merge_states(parts))) == state_sha256(_encode(state))


def test_slices_are_whole_blocks_in_order() -> None:
    assert slices(130, 2) == [(0, 64), (64, 130)]
    assert slices(256, 3) == [(0, 64), (64, 128), (128, 256)]
    assert slices(10, 1) == [(0, 10)]
    with pytest.raises(ValueError, match=rf"3 collectors need at least 3 blocks of {INFER_GAMES} games"):
        slices(128, 3)


def test_uniforms_depend_on_seed_game_and_step_only() -> None:
    games = np.arange(1000)
    u = uniforms(7, games, 5)
    assert u.min() >= 0.0 and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.05
    np.testing.assert_array_equal(uniforms(7, games[300:400], 5), u[300:400])
    assert not np.array_equal(uniforms(7, games, 6), u)
    assert not np.array_equal(uniforms(8, games, 5), u)
