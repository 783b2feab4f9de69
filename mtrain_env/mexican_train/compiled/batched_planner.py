"""The ``planner`` agent for many games at once: one numba call over a batch (issue 11).

Self-play's league opponents (:mod:`training.selfplay.learner`) play the games of a
:class:`~mtrain_env.mexican_train.compiled.batch.BatchedMexicanTrain` in which the seat on
turn is an opponent seat. :func:`planner_actions` returns, for each of those games, the
RELATIVE action that :class:`agents.mexican_train.planner.PlannerAgent` (default
``danger=2``) plays there, computed from the compiled states in one jitted call.

The rule is the planner's, decision for decision (``tests/test_batched_planner.py``
checks it move for move against the pure agent on decisions of batched games):

* the seat's longest own-train chain is searched afresh at every decision
  (:func:`.rollout._seat_chain`, the :class:`~agents.mexican_train.chains.ChainSolver`
  search) and only that seat's chain is reserved (the rollouts of ``mc`` reserve every
  seat's chain once per rollout and estimate the damage; the planner does neither);
* opening (R9, multi-tile): the chain's head on the own train, PASS once no chain is left;
* otherwise the play of highest :func:`agents.mexican_train.planner.play_key`, with the
  EXACT chain damage (tiles the chain loses, a fresh search of the hand without the tile),
  searched lazily best-first as the pure agent does; ties to the lowest relative action.

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
from mtrain_env.mexican_train.compiled.engine import (
    K_DRAW,
    K_MARKER_OFF_BY_OWNER_PLAY_ANYWHERE,
    K_MULTI_OPENING,
    K_N,
    K_OTHER,
    K_PASS,
    K_TILE_A,
    K_TILE_B,
    K_TILE_VALUE,
    K_TILES,
    K_WIDTH,
    MAX_MOVES,
    MAX_TILES,
    MAX_VALUES,
    NORMAL,
    OPENING,
    S_CURRENT,
    S_ENDS,
    S_HAND_COUNT,
    S_HAND_PIPS,
    S_LOC,
    S_MARKERS,
    S_OWES,
    S_PHASE,
    S_TURN_DOUBLES,
    S_TURN_DOUBLES_LEN,
)

__all__ = ["DANGER", "BatchedPlanner", "planner_actions"]

#: the pure planner's default: shed once an opponent holds this many tiles or fewer
DANGER = 2

_CACHE = cache_watching(__file__, engine.__file__, rollout.__file__)

# play_key field offsets (agents.mexican_train.planner.play_key)
_COVERS = 27
_SHED = 19
_DOUBLE_OK = 18
_LIFTS = 17
_DAMAGE = 9
_OFF_OWN = 8


@njit(cache=_CACHE)
def _length_without(
    tb: np.ndarray, end: int, hand: np.ndarray, k: int, tile: int, rest: np.ndarray, sc: Any
) -> int:
    """Length of the longest chain from ``end`` of the hand ``hand[:k]`` without ``tile``."""
    _moves, _reserved, _hand, used, chains, frames, counter, _memo, _zobrist, limit = sc
    j = 0
    for i in range(k):
        if hand[i] != tile:
            rest[j] = hand[i]
            j += 1
    count, _pips = rollout.longest_chain(tb, end, rest, j, used, chains, frames, counter, limit)
    return count


@njit(cache=_CACHE)
def _planner_action(s: np.ndarray, tb: np.ndarray, danger: int, sc: Any, work: Any) -> int:
    """The planner's RELATIVE action for the seat on turn in ``s`` (see the module docstring)."""
    moves, reserved, hand, used, chains, frames, counter, memo, zobrist, limit = sc
    chain, own, rest, keys, exact, rel = work
    p = s[S_CURRENT]
    count = engine.legal_moves_into(s, tb, moves)
    draw = tb[K_DRAW]
    width = tb[K_WIDTH]
    plays = 0
    for i in range(count):
        rel[i] = engine.to_relative(tb, p, moves[i])
        if moves[i] < draw:
            plays += 1
    if count == 1 or plays == 0:
        best = rel[0]  # the lowest legal action (draw and pass keep their ids)
        for i in range(count):
            best = min(best, rel[i])
        return best
    length = rollout._seat_chain(s, tb, p, hand, used, chains, frames, counter, memo, zobrist, limit)
    k = 0
    for t in range(tb[K_TILES]):
        reserved[t] = 0
        if s[S_LOC + t] == p:
            own[k] = t
            k += 1
    for j in range(length):
        chain[j] = chains[0, j]
        reserved[chain[j]] = 1
    head = chain[0] if length else -1
    phase = s[S_PHASE]
    if phase == OPENING and tb[K_MULTI_OPENING]:
        # R9: lay the chain; once it is laid, stop
        for i in range(count):
            if length and moves[i] == head * width + p:
                return rel[i]
            if not length and moves[i] == tb[K_PASS]:
                return rel[i]
    owed = -1
    if s[S_OWES] and s[S_TURN_DOUBLES_LEN] > 0:
        owed = s[S_TURN_DOUBLES + s[S_TURN_DOUBLES_LEN] - 1]
    lift = phase == NORMAL and s[S_MARKERS + p] != 0 and tb[K_MARKER_OFF_BY_OWNER_PLAY_ANYWHERE] == 0
    shed = False
    if phase == NORMAL:
        for q in range(tb[K_N]):
            if q != p and s[S_HAND_COUNT + q] <= danger:
                shed = True
                break
    pips = S_HAND_PIPS + p * MAX_VALUES
    end = s[S_ENDS + p]
    # every play's key with the damage's lower bound (exact where it is known)
    for i in range(count):
        m = moves[i]
        keys[i] = -1
        if m >= draw:
            continue
        t = m // width
        tr = m - t * width
        on_own = tr == p
        value = tb[K_TILE_VALUE + t]
        key = value | (0 if on_own else 1) << _OFF_OWN
        if tr == owed:
            key += 1 << _COVERS
        if shed:
            key += value << _SHED
        if tb[K_TILE_A + t] != tb[K_TILE_B + t] or s[pips + tb[K_TILE_A + t]] > 1:
            key += 1 << _DOUBLE_OK  # not a double, or one the hand can follow
        if on_own and lift:
            key += 1 << _LIFTS
        if on_own:
            exact[i] = length > 0 and t == head
            keys[i] = key + ((255 - 1) << _DAMAGE)
        else:
            exact[i] = reserved[t] == 0
            keys[i] = key + ((255 - (0 if reserved[t] == 0 else 1)) << _DAMAGE)
    # best-first: the highest key (lowest relative action on ties), searched when not exact
    while True:
        b = -1
        for i in range(count):
            if keys[i] < 0:
                continue
            if b < 0 or keys[i] > keys[b] or (keys[i] == keys[b] and rel[i] < rel[b]):
                b = i
        if exact[b]:
            return rel[b]
        t = moves[b] // width
        from_end = end if moves[b] - t * width != p else tb[K_OTHER + t * MAX_VALUES + end]
        damage = length - _length_without(tb, from_end, own, k, t, rest, sc)
        keys[b] += (1 - damage) * (1 << _DAMAGE)  # the bound counted 1 tile lost
        exact[b] = True


@njit(cache=_CACHE)
def planner_actions(
    states: np.ndarray, tb: np.ndarray, danger: int, sc: Any, work: Any, out: np.ndarray
) -> None:
    """``out[j]``: the planner's relative action in the state ``states[j]`` (k, STATE_SIZE)."""
    for j in range(states.shape[0]):
        out[j] = _planner_action(states[j], tb, danger, sc, work)


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
        self._work = (
            np.empty(MAX_TILES, np.int64),  # the seat's chain
            np.empty(MAX_TILES, np.int64),  # its hand
            np.empty(MAX_TILES, np.int64),  # the hand without one tile
            np.empty(MAX_MOVES, np.int64),  # play keys
            np.empty(MAX_MOVES, np.bool_),  # key exact
            np.empty(MAX_MOVES, np.int64),  # relative actions
        )

    def act(self, states: np.ndarray, games: np.ndarray) -> np.ndarray:
        """Relative actions of the seats on turn in ``states[games]`` (``(len(games),)`` int64).

        ``states`` may be the read-only ``BatchedMexicanTrain.states``: the kernel gets a
        copy of the chosen rows (one compiled signature, the batch never written)."""
        rows = np.ascontiguousarray(states[np.asarray(games, dtype=np.int64)], dtype=np.int64)
        out = np.empty(rows.shape[0], np.int64)
        if rows.shape[0]:
            planner_actions(rows, self.tables, self.danger, self._sc, self._work, out)
        return out
