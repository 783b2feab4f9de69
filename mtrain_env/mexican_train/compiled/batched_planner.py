"""The ``planner`` agent for many games at once: one numba call over a batch.

Self-play's league opponents (:mod:`training.selfplay.learner`) play the games of a
:class:`~mtrain_env.mexican_train.compiled.batch.BatchedMexicanTrain` in which the seat on
turn is an opponent seat. :func:`planner_actions` returns, for each of those games, the
RELATIVE action that :class:`agents.mexican_train.planner.PlannerAgent` (default
``danger=2``) plays there, computed from the compiled states in one jitted call.

The rule is the planner's, decision for decision: :func:`.rollout.planner_move` (the seat's
chain searched afresh, the exact chain damage, best-first). ``tests/compiled/test_batched_planner.py``
checks it move for move against the pure agent on decisions of batched games.

Hidden information: of a state the kernel reads only what the seat on turn may know: its
own hand (``S_LOC`` entries equal to the seat, ``S_HAND_PIPS`` of the seat), and public
fields (``S_CURRENT``, ``S_PHASE``, ``S_ENDS``, ``S_MARKERS``, ``S_HAND_COUNT``,
``S_OWES``, ``S_TURN_DOUBLES``, the fields of the legal-move rules, which are public or
the seat's own). Opponents' hands and the boneyard order are never read.

The chain search keeps no memo across calls beyond :func:`.rollout.scratch`'s (keyed by
the whole ``(end, hand)``, so it never changes an answer); the pure planner's memo counts
fewer expanded states, so the two agree whenever neither search reaches its node limit
(far above what dealt hands need).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from mtrain_env.mexican_train.compiled import engine, rollout
from mtrain_env.mexican_train.compiled.cache import cache_watching
from mtrain_env.mexican_train.compiled.engine import S_CURRENT

__all__ = ["DANGER", "BatchedPlanner", "planner_actions"]

#: the pure planner's default: shed once an opponent holds this many tiles or fewer
DANGER = 2

_CACHE = cache_watching(__file__, engine.__file__, rollout.__file__)


@njit(cache=_CACHE)
def _planner_action(s: np.ndarray, tb: np.ndarray, danger: int, sc: Any) -> int:
    """The planner's RELATIVE action for the seat on turn in ``s`` (:func:`.rollout.planner_move`)."""
    moves = sc[0]
    count = engine.legal_moves_into(s, tb, moves)
    return engine.to_relative(tb, s[S_CURRENT], rollout.planner_move(s, tb, moves, count, danger, sc))


@njit(cache=_CACHE)
def planner_actions(states: np.ndarray, tb: np.ndarray, danger: int, sc: Any, out: np.ndarray) -> None:
    """``out[j]``: the planner's relative action in the state ``states[j]`` (k, STATE_SIZE)."""
    for j in range(states.shape[0]):
        out[j] = _planner_action(states[j], tb, danger, sc)


class BatchedPlanner:
    """The ``planner`` agent over a batch of compiled games of one config.

    Args:
        tables: the config's compiled tables (``BatchedMexicanTrain.game.tables``).
        danger: as :class:`agents.mexican_train.planner.PlannerAgent`.
        node_limit: the chain search's budget per call (:data:`.rollout.NODE_LIMIT`).
    """

    def __init__(
        self, tables: np.ndarray, danger: int = DANGER, node_limit: int = rollout.NODE_LIMIT
    ) -> None:
        if isinstance(danger, bool) or not isinstance(danger, int) or danger < 0:
            raise ValueError(f"danger must be a non-negative int, got {danger!r}")
        self.tables = tables
        self.danger = danger
        self._sc = rollout.scratch(node_limit)

    def act(self, states: np.ndarray, games: np.ndarray) -> np.ndarray:
        """Relative actions of the seats on turn in ``states[games]`` (``(len(games),)`` int64).

        ``states`` may be the read-only ``BatchedMexicanTrain.states``: the kernel gets a
        copy of the chosen rows (one compiled signature, the batch never written)."""
        rows = np.ascontiguousarray(states[np.asarray(games, dtype=np.int64)], dtype=np.int64)
        out = np.empty(rows.shape[0], np.int64)
        if rows.shape[0]:
            planner_actions(rows, self.tables, self.danger, self._sc, out)
        return out
