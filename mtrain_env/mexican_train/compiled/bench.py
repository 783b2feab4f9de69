"""The compiled contenders of :mod:`mtrain_env.bench_speed`: random legal play on the compiled
rules core and through the batched API, each loop timed in CPU seconds.

:class:`CompiledLoop` plays legal moves + apply (no observation) from a pool of pre-dealt
round-0 deals (the pure core's dealing code, so dealing is not counted) inside one jitted
call per chunk (``engine.random_steps``, an xorshift32 picks the move).
:class:`BatchLoop` plays the batched API
(:class:`~mtrain_env.mexican_train.compiled.batch.BatchedMexicanTrain`) with an observation
and a mask for every decision, its actions from ``engine.random_actions`` (a jitted uniform
pick from each mask, the stand-in for a policy); a call counts ``B`` decisions, autoreset
deals included. Both compile (or load the on-disk cache) before any timing.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from mtrain_env.mexican_train.compiled import engine
from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain
from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain, deal_arrays
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.dealing import Deal, random_deal

_clock = time.process_time  # CPU time of this process: waiting for a core is not a cost


def deal_pool(config: GameConfig, size: int, seed: int) -> list[Deal]:
    """``size`` round-0 deals from one seeded Generator (the pure core's dealing code)."""
    rng = np.random.default_rng(seed)
    return [random_deal(config, config.engine_value(0), rng) for _ in range(size)]


def pool_arrays(config: GameConfig, deals: list[Deal]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pool as ``(hands, boneyards, bone_lens)`` arrays for ``engine.random_steps``."""
    hands = np.empty((len(deals), config.num_tiles), np.int64)
    boneyards = np.full((len(deals), config.num_tiles), -1, np.int64)
    lens = np.empty(len(deals), np.int64)
    for d, deal in enumerate(deals):
        hand_of, bone = deal_arrays(config, deal)
        hands[d] = hand_of
        boneyards[d, : len(bone)] = bone
        lens[d] = len(bone)
    return hands, boneyards, lens


class CompiledLoop:
    """Random legal play on the compiled core; ``run(seconds)`` returns (steps/s, steps)."""

    def __init__(self, config: GameConfig, deals: list[Deal], seed: int, chunk: int) -> None:
        self.game = CompiledMexicanTrain(config)
        self.pool = pool_arrays(config, deals)
        self.state = self.game.new_state()
        self.state[engine.S_PHASE] = engine.GAME_OVER  # the first call deals
        self.rng = np.array([seed % 0xFFFFFFFF or 1, 0], np.int64)
        self.moves = np.empty(engine.MAX_MOVES, np.int64)
        self.chunk = chunk
        self._steps(1)  # compile (or load from the on-disk cache) before timing

    def _steps(self, k: int) -> int:
        hands, bones, lens = self.pool
        return int(
            engine.random_steps(self.state, self.game.tables, hands, bones, lens, self.rng, self.moves, k)
        )

    def run(self, seconds: float) -> tuple[float, int]:
        steps = 0
        start = _clock()
        end = start + seconds
        while _clock() < end:
            steps += self._steps(self.chunk)
        return steps / max(_clock() - start, 1e-9), steps


class BatchLoop:
    """Random legal play through the batched API; ``run(seconds)`` returns (steps/s, steps)."""

    def __init__(self, games: int, seed: int, copy: bool, **config: Any) -> None:
        self.batch = BatchedMexicanTrain(games, copy=copy, **config)
        _, self.mask, _, _ = self.batch.reset(seed=seed)
        self.rng = np.array([seed % 0xFFFFFFFF or 1], np.int64)
        self.actions = np.zeros(games, np.int64)
        self.run(0.05)  # compile (or load the on-disk cache) before timing

    def run(self, seconds: float) -> tuple[float, int]:
        batch, rng, actions = self.batch, self.rng, self.actions
        steps = 0
        start = _clock()
        end = start + seconds
        while _clock() < end:
            engine.random_actions(self.mask, rng, actions)
            _, self.mask, *_ = batch.step(actions)
            steps += batch.num_games
        return steps / max(_clock() - start, 1e-9), steps
