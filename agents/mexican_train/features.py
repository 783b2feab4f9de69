"""Observation feature sets for learned policies: what a network sees of a decision.

* ``"env"``: the env's observation vector, as is.
* ``"planner"``: the env's vector plus two "advice" views computed from the same
  leak-free :class:`~agents.mexican_train.base.Decision` (public table + own hand, nothing hidden):

  - ``planner_choice`` (one-hot over the action space): the action the ``planner``
    baseline would take now (all zero when the seat is not on turn);
  - ``chain`` (one bit per tile id): the tiles of the longest chain the hand can lay on
    the seat's own train (:mod:`agents.mexican_train.chains`), the plan good players keep (``000``).

Why: a multilayer perceptron over the raw vector imitates the planner poorly (it misses
many of its choices and plays clearly worse than the planner it imitates) because the
planner's choice rests on a longest-path search that an MLP cannot redo from the tile
bits. With the search's result as an input the network starts from the planner's
play and learning is spent on when to deviate from it. The features are a function of
the seat's own information only, so the learned policy stays an honest player.

**Versions.** A policy file records the version of its input (:func:`input_version`):
for ``"env"`` that is the env's observation layout version
(:mod:`mtrain_env.mexican_train.observation`); ``"planner"`` has its own number
(:data:`PLANNER_VERSIONS`), which names the env vector it extends and the advice views
appended to it. Bump it when either changes (a new advice view, another chain rule, or
planner features over a later observation version).
"""

from __future__ import annotations

import numpy as np

from agents.mexican_train.base import Decision
from agents.mexican_train.chains import ChainSolver
from agents.mexican_train.planner import PlannerAgent
from agents.policy_format import check_feature_set
from mtrain_env.mexican_train.core.config import GameConfig

#: planner decisions between resets of its chain-search memo (keeps memory bounded)
_MEMO_RESET_EVERY = 2000


def feature_size(name: str, config: GameConfig, env_size: int) -> int:
    """Length of the feature vector of set ``name`` for a config whose env vector has ``env_size``."""
    check_feature_set(name)
    if name == "env":
        return env_size
    return env_size + config.num_actions + config.num_tiles


class FeatureEncoder:
    """Turns a :class:`Decision` into the network input of one feature set."""

    def __init__(self, name: str = "env") -> None:
        check_feature_set(name)
        self.name = name
        self._planner = PlannerAgent(seed=0)
        self._solvers: dict[tuple[int, bool], ChainSolver] = {}
        self._calls = 0

    def __call__(self, decision: Decision) -> np.ndarray:
        observation = decision.observation
        if self.name == "env":
            return observation
        config = decision.game.config
        self._calls += 1
        if self._calls % _MEMO_RESET_EVERY == 0:
            self._planner.reset()
            self._solvers.clear()
        choice = np.zeros(config.num_actions, dtype=np.float32)
        if decision.action_mask.any():
            choice[self._planner.act(decision)] = 1.0
        view = decision.view
        chain = np.zeros(config.num_tiles, dtype=np.float32)
        tiles = list(self._solver(config).longest(view.ends[view.seat], view.hand))
        chain[tiles] = 1.0
        return np.concatenate((observation, choice, chain))

    def _solver(self, config: GameConfig) -> ChainSolver:
        key = (config.max_pips, config.blank_penalty)
        solver = self._solvers.get(key)
        if solver is None:
            solver = self._solvers[key] = ChainSolver(config.tiles, config.blank_penalty)
        return solver
