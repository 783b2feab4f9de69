"""The batched compiled planner (``compiled/batched_planner.py``) against the pure ``planner``.

Move for move: in batched games (several configs, presets and variant flags; seats on turn
play a mix of random legal moves and the planner's, so positions vary), every seat's
decision is asked of both the batched kernel (all games in one call) and the pure
:class:`~agents.mexican_train.planner.PlannerAgent`, which reads a seat decision built from
the game's public view. The wider run (more decisions, more configs) is ``slow``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from agents.mexican_train.base import Decision
from agents.mexican_train.planner import PlannerAgent
from mtrain_env.mexican_train.codec import ActionCodec
from mtrain_env.mexican_train.compiled import engine
from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain
from mtrain_env.mexican_train.compiled.batched_planner import BatchedPlanner
from mtrain_env.mexican_train.core.public import public_view


class _SeatEnv:
    """What a :class:`Decision` reads of an env, for the seat on turn in one batched game."""

    def __init__(self, batch: BatchedMexicanTrain, codec: ActionCodec, index: int) -> None:
        self.unwrapped = self
        self.agent_name_mapping = {f"player_{q}": q for q in range(batch.num_players)}
        self.game = batch.game.reference
        self.codec = codec
        self._config = batch.config
        self._state = batch.game_state(index)
        self._mask = batch._masks[index].copy()

    def observe_mask(self, agent_id: str) -> np.ndarray:
        return self._mask

    def public_view(self, agent_id: str) -> Any:
        return public_view(self._state, self._config, self.agent_name_mapping[agent_id])


def _compare(config: dict[str, Any], games: int, steps: int, seed: int) -> tuple[int, int]:
    """Play ``steps`` batch steps; assert every decision equal; ``(choices compared, forced)``."""
    batch = BatchedMexicanTrain(games, copy=True, **config)
    codec = ActionCodec(batch.config)
    planner = BatchedPlanner(batch.game.tables)
    pure = PlannerAgent()
    rng = np.random.default_rng(seed)
    _obs, mask, seat, _ = batch.reset(seed=seed)
    every = np.arange(games)
    choices = forced = 0
    for _ in range(steps):
        got = planner.act(batch.states, every)
        for i in range(games):
            decision = Decision(_SeatEnv(batch, codec, i), f"player_{int(seat[i])}")
            pure.reset()
            want = pure.act(decision)
            assert got[i] == want, (config, i, int(seat[i]), decision.legal_actions, int(got[i]), want)
            if mask[i].sum() > 1:
                choices += 1
            else:
                forced += 1
        legal_random = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
        actions = np.where(rng.random(games) < 0.5, got, legal_random)
        _obs, mask, seat, _r, _t, _info = batch.step(actions)
    return choices, forced


CONFIGS = [
    {"num_players": 4, "max_pips": 12},
    {"num_players": 2, "max_pips": 6},
    {"num_players": 3, "max_pips": 9, "rules": "wikipedia"},
    {"num_players": 5, "max_pips": 12, "one_tile_opening": True},
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{v}" for v in c.values()))
def test_batched_planner_plays_the_pure_planners_moves(config: dict[str, Any]) -> None:
    choices, _forced = _compare(config, games=16, steps=40, seed=11)
    assert choices > 100  # real choices were compared, not only forced draws


@pytest.mark.slow
@pytest.mark.parametrize(
    "config",
    [
        *CONFIGS,
        {"num_players": 6, "max_pips": 15},
        {"num_players": 4, "max_pips": 12, "blank_penalty": True, "positive_scoring": True},
        {"num_players": 4, "max_pips": 12, "rounds": 2},
    ],
    ids=lambda c: "-".join(f"{v}" for v in c.values()),
)
def test_batched_planner_many_decisions(config: dict[str, Any]) -> None:
    choices, _forced = _compare(config, games=32, steps=150, seed=5)
    assert choices > 1000  # short games (2 players, double-6) give ~1,100


def test_batched_planner_reads_no_hidden_information() -> None:
    """Dealing the opponents' hands and the boneyard afresh (same counts) never changes its move."""
    batch = BatchedMexicanTrain(8, copy=True, num_players=4, max_pips=12)
    planner = BatchedPlanner(batch.game.tables)
    batch.reset(seed=3)
    rng = np.random.default_rng(0)
    tiles = np.arange(int(batch.game.tables[engine.K_TILES]))
    changed = 0
    for _ in range(30):
        states = batch.states.copy()
        want = planner.act(states, np.arange(8))
        for s in states:
            loc = s[engine.S_LOC + tiles]
            seat = s[engine.S_CURRENT]
            hidden = tiles[
                (loc == engine.LOC_BONEYARD) | ((loc < engine.LOC_TRAIN) & (loc >= 0) & (loc != seat))
            ]
            s[engine.S_LOC + hidden] = rng.permutation(s[engine.S_LOC + hidden])
            changed += int((s[engine.S_LOC + tiles] != loc).any())
        assert np.array_equal(planner.act(states, np.arange(8)), want)
        batch.step(want)
    assert changed > 100  # the hidden tiles really moved
