"""``mc_infer``: ``mc`` on determinizations resampled by how likely the opponents' plays were.

Everything is :class:`~agents.mexican_train.mc.MCAgent` (successive halving, the planner
prior, common random numbers, the budget knobs) except where the worlds come from: each
determinization ``i`` of a decision is drawn from a pool of ``pool`` fresh samples
(``sample_state``'s prior: hand counts and shown voids) with probability proportional to
the likelihood of the opponents' attributed plays in that sample
(:mod:`agents.mexican_train.inference`: a chain-keeping opponent model, weight
``beta``) — sampling importance resampling. With no attributed play yet the
pool is skipped (sample ``i`` is the prior's).

The budget ``sims`` counts rollouts as in ``mc`` (inference costs the extra ``pool - 1``
deals and their weights per determinization, not rollouts). Deterministic given the seed
and ``sims``: sample ``i`` depends only on the decision's stream and ``i``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.mexican_train.base import Decision
from agents.mexican_train.inference import OpponentModel, PlayTracker, resample
from agents.mexican_train.mc import MCAgent, Rows, Runner
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.public import sample_state
from mtrain_env.mexican_train.core.state import GameState
from mtrain_env.tilegame.tiles import bits_list

#: samples each determinization is resampled from
DEFAULT_POOL = 8
#: the opponent model's continuation weight (the maximum-likelihood fit on planner games)
DEFAULT_BETA = 3.0


class MCInferAgent(MCAgent):
    """``mc`` whose worlds are weighted by the opponents' observed plays.

    Args (beyond :class:`~agents.mexican_train.mc.MCAgent`'s):
        pool: samples per determinization (1: plain ``mc``).
        beta: the opponent model's continuation weight (0: uniform among matching tiles).
    """

    name = "mc_infer"

    def __init__(
        self, *args: Any, pool: int = DEFAULT_POOL, beta: float = DEFAULT_BETA, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        if self.threads > 1:
            raise ValueError("mc_infer deals its weighted worlds one at a time: threads must be 1")
        if self.leaf != "rollout" or self.policy == "lookahead":
            raise ValueError(
                "mc_infer plays its weighted worlds out by chain rollouts: "
                "leaf must be 'rollout' and policy not 'lookahead', "
                f"got leaf={self.leaf!r}, policy={self.policy!r}"
            )
        if pool < 1:
            raise ValueError(f"pool must be >= 1, got {pool}")
        if not beta >= 0:
            raise ValueError(f"beta must be >= 0, got {beta}")
        self.pool = pool
        self.beta = float(beta)
        self.tracker = PlayTracker()
        self._models: dict[GameConfig, OpponentModel] = {}

    def params(self) -> dict[str, Any]:
        return {**super().params(), "pool": self.pool, "beta": self.beta}

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.tracker.reset()

    def act(self, decision: Decision) -> int:
        self.tracker.update(decision.view)
        return super().act(decision)

    def _model(self, config: GameConfig) -> OpponentModel:
        model = self._models.get(config)
        if model is None:
            model = self._models[config] = OpponentModel(config, self.beta)
        return model

    def _picker(self, decision: Decision) -> Callable[[int, int, np.ndarray], int]:
        """``(base, index, owners) ->`` which of the pool's samples determinization ``index`` is (SIR)."""
        score = self._model(decision.game.config).scorer(decision.view, self.tracker.plays)
        return lambda base, index, owners: resample(score(owners), np.random.default_rng([base, index, 3]))

    def _python_world(self, decision: Decision) -> Callable[[int, int], GameState]:
        """Determinization ``index``: one of ``pool`` pure-core samples, picked by how likely the
        opponents' attributed plays were in each (the model's weights, resampled)."""
        game = decision.game
        view = decision.view
        seat = view.seat
        unseen = bits_list(view.unseen)
        pool = self.pool if self.tracker.plays else 1
        pick = self._picker(decision)

        def world(base: int, index: int) -> GameState:
            samples = [
                sample_state(game, view, np.random.default_rng([base, index * pool + j])) for j in range(pool)
            ]
            if pool == 1:
                return samples[0]
            owners = np.full((pool, len(unseen)), -1, np.int64)
            for j, s in enumerate(samples):
                for u, t in enumerate(unseen):
                    for q, hand in enumerate(s.hands):
                        if q != seat and hand >> t & 1:
                            owners[j, u] = q
            return samples[pick(base, index, owners)]

        return world

    def _compiled_runner(self, decision: Decision, moves: list[int]) -> Runner:
        rollout = self._rollout_module
        cgame, sc, _ = self._compiled_game(decision.game.config)
        view = decision.view
        seat = view.seat
        tb = cgame.tables
        unseen = np.array(bits_list(view.unseen), np.int64)
        pool = self.pool if self.tracker.plays else 1
        pick = self._picker(decision)
        det: Any = None
        from mtrain_env.mexican_train.compiled import engine as ce  # numba: the 'fast' extra

        def world(base: int, index: int) -> np.ndarray:
            samples = [det.state(base, index * pool + j) for j in range(pool)]
            if pool == 1:
                return samples[0]
            loc = np.stack([s[ce.S_LOC + unseen] for s in samples])
            owners = np.where(loc == ce.LOC_BONEYARD, -1, loc)
            return samples[pick(base, index, owners)]

        def run(base: int, first: int, alive: list[int], quota: int | None, deadline: float | None) -> Rows:
            nonlocal det
            if det is None:
                det = rollout.Determinizer(cgame, view, np.random.default_rng([base, 0, 2]))
            cand = np.array([moves[i] for i in alive], np.int64)
            out = np.zeros(len(alive), np.float64)
            stage_done = 0
            while quota is None or stage_done < quota:
                rollout.rollout_root(world(base, first + stage_done), tb, cand, seat, 2, out, sc)
                yield out.tolist()
                stage_done += 1
                if deadline is not None and time.perf_counter() >= deadline:
                    return

        return run
