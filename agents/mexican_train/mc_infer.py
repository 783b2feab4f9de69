"""``mc_infer``: ``mc`` on determinizations resampled by how likely the opponents' plays were.

Everything is :class:`~agents.mexican_train.mc.MCAgent` (successive halving, the planner
prior, common random numbers, the budget knobs) except where the worlds come from: each
determinization ``i`` of a decision is drawn from a pool of ``pool`` fresh samples
(``sample_state``'s prior: hand counts and shown voids) with probability proportional to
the likelihood of the opponents' attributed plays in that sample
(:mod:`agents.mexican_train.inference`: a chain-keeping opponent model, weight
``beta``) — sampling importance resampling. With no attributed play yet the
pool is skipped (sample ``i`` is the prior's).

The worlds are played out by chain rollouts (``leaf="rollout"``) or, with
``leaf="policy"``, by the seat's self-play network (the ``champion``'s leaves: the
weighted worlds are dealt in Python, then advanced and valued in batches,
:meth:`~agents.mexican_train.value_leaf.ValueLeaves.results_on`); ``champion[pool=...]``
is this agent.

The budget ``sims`` counts rollouts as in ``mc`` (inference costs the extra ``pool - 1``
deals and their weights per determinization, not rollouts). Deterministic given the seed
and ``sims``: sample ``i`` depends only on the decision's stream and ``i``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from agents.mexican_train.base import Decision
from agents.mexican_train.hand_model import HandModel, LearnedModel, hand_model_path
from agents.mexican_train.inference import OpponentModel, PlayTracker, resample
from agents.mexican_train.mc import NETWORK_LEAVES, VALUE_CHUNK, MCAgent, Runner
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.public import sample_state
from mtrain_env.mexican_train.core.state import GameState
from mtrain_env.tilegame.tiles import bits_list

#: samples each determinization is resampled from
DEFAULT_POOL = 8
#: the opponent model's continuation weight (the maximum-likelihood fit on planner games)
DEFAULT_BETA = 3.0
#: what weights the worlds (``MCInferAgent(model=...)``)
MODELS = ("chain", "learned")
#: the learned model's temper: 2 placed more hidden tiles right than 1 on held-out planner
#: games at 2, 4 and 6 players (``python -m training.hand_model``), 3 little more than 2
DEFAULT_ALPHA = 2.0


class MCInferAgent(MCAgent):
    """``mc`` whose worlds are weighted by the opponents' observed plays.

    Args (beyond :class:`~agents.mexican_train.mc.MCAgent`'s):
        pool: samples per determinization (1: plain ``mc``).
        beta: the opponent model's continuation weight (0: uniform among matching tiles).
        model: what weights the worlds: ``"chain"`` (default: the chain-keeping model of the
            attributed plays, :class:`~agents.mexican_train.inference.OpponentModel`) or
            ``"learned"`` (the hand model of the table, trained on planner games:
            :class:`~agents.mexican_train.hand_model.LearnedModel`; it weights from the
            first decision, plays attributed or not).
        alpha: the learned model's temper (its log-weights times ``alpha``).
        hands: the learned model's file (default: the table's shipped one).
    """

    name = "mc_infer"

    def __init__(
        self,
        *args: Any,
        pool: int = DEFAULT_POOL,
        beta: float = DEFAULT_BETA,
        model: str = "chain",
        alpha: float = DEFAULT_ALPHA,
        hands: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if self.threads > 1 and pool > 1:
            raise ValueError(
                f"{self.name} deals its weighted worlds one at a time: threads must be 1 with pool={pool}"
            )
        if self.leaf == "value" or self.policy == "lookahead":
            raise ValueError(
                "mc_infer plays its weighted worlds out by chain rollouts or the network's "
                "(leaf='rollout' or 'policy', policy not 'lookahead'), "
                f"got leaf={self.leaf!r}, policy={self.policy!r}"
            )
        if pool < 1:
            raise ValueError(f"pool must be >= 1, got {pool}")
        if not beta >= 0:
            raise ValueError(f"beta must be >= 0, got {beta}")
        if model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {model!r}")
        if not alpha >= 0:
            raise ValueError(f"alpha must be >= 0, got {alpha}")
        if hands is not None and model != "learned":
            raise ValueError(f"hands= is the file of model='learned', got model={model!r}")
        self.pool = pool
        self.beta = float(beta)
        self.model = model
        self.alpha = float(alpha)
        self.hands = hands
        self.tracker = PlayTracker()
        self._models: dict[GameConfig, OpponentModel | LearnedModel] = {}

    def params(self) -> dict[str, Any]:
        return {**super().params(), **self._inference_params()}

    def _inference_params(self) -> dict[str, Any]:
        """The inference knobs, the learned model's only when it is the one used."""
        params: dict[str, Any] = {"pool": self.pool, "beta": self.beta}
        if self.model == "learned":
            params.update(model=self.model, alpha=self.alpha, hands=self.hands)
        return params

    def _pool(self) -> int:
        """Samples per world at this decision: 1 when nothing weights them (the chain model
        with no attributed play yet)."""
        return self.pool if self.model == "learned" or self.tracker.plays else 1

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.tracker.reset()

    def act(self, decision: Decision) -> int:
        self.tracker.update(decision.view)
        return super().act(decision)

    def check_game(self, config: GameConfig) -> None:
        """``mc``'s checks, and the learned hand model's table (``model="learned"``)."""
        super().check_game(config)
        if self.model == "learned":
            try:
                self._model(config)
            except FileNotFoundError as err:
                raise ValueError(str(err)) from None

    def _model(self, config: GameConfig) -> OpponentModel | LearnedModel:
        model = self._models.get(config)
        if model is None:
            if self.model == "learned":
                hand_model = HandModel.load(self.hands or hand_model_path(config))
                hand_model.check(config)
                model = LearnedModel(hand_model, self.alpha)
            else:
                model = OpponentModel(config, self.beta)
            self._models[config] = model
        return model

    def _picker(self, decision: Decision) -> Callable[[int, int, np.ndarray], int]:
        """``(base, index, owners) ->`` which of the pool's samples determinization ``index`` is (SIR)."""
        score = self._model(decision.game.config).scorer(decision.view, self.tracker.plays)
        return lambda base, index, owners: _pick(base, index, score(owners))

    def _python_world(self, decision: Decision) -> Callable[[int, int], GameState]:
        """Determinization ``index``: one of ``pool`` pure-core samples, picked by how likely the
        opponents' attributed plays were in each (the model's weights, resampled)."""
        game = decision.game
        view = decision.view
        seat = view.seat
        unseen = bits_list(view.unseen)
        pool = self._pool()
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
        pool = self._pool()
        if pool == 1:
            return super()._compiled_runner(decision, moves)  # the prior's worlds: plain ``mc``
        rollout = self._rollout_module
        config = decision.game.config
        cgame, sc, _ = self._compiled_game(config)
        leaves = self._network_leaves(config) if self.leaf in NETWORK_LEAVES else None
        seat = decision.view.seat
        tb = cgame.tables
        unseen = np.array(bits_list(decision.view.unseen), np.int64)
        score = self._model(config).scorer(decision.view, self.tracker.plays)
        from mtrain_env.mexican_train.compiled import engine as ce  # numba: the 'fast' extra

        def worlds(det: Any, base: int, first: int, count: int) -> np.ndarray:
            """Determinizations ``first .. first + count - 1``: each one of its ``pool``
            samples, resampled by the opponents' likelihood (scored in one batch)."""
            samples = det.states(base, np.arange(first * pool, (first + count) * pool))
            loc = samples[:, ce.S_LOC + unseen]
            logw = score(np.where(loc == ce.LOC_BONEYARD, -1, loc)).reshape(count, pool)
            picks = [_pick(base, first + d, logw[d]) for d in range(count)]
            return samples.reshape(count, pool, -1)[np.arange(count), picks]

        def rows(det: Any, base: int, first: int, count: int, candidates: list[int]) -> np.ndarray:
            roots = worlds(det, base, first, count)
            if leaves is not None:
                return leaves.results_on(roots, tb, seat, candidates, sc)
            cand = np.array(candidates, np.int64)
            out = np.zeros((count, len(candidates)), np.float64)
            for root, row in zip(roots, out, strict=True):
                rollout.rollout_root(root, tb, cand, seat, 2, row, sc)
            return out

        chunk = VALUE_CHUNK if leaves is not None else 1  # determinizations a call under a deadline
        return self._staged_runner(decision, moves, rows, chunk)


def _pick(base: int, index: int, log_weights: np.ndarray) -> int:
    """Which of determinization ``index``'s pool samples it is: drawn by the weights
    (sampling importance resampling), from a stream of ``base`` and ``index`` only."""
    return resample(log_weights, np.random.default_rng([base, index, 3]))
