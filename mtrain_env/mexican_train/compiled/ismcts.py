"""Compiled information-set Monte Carlo tree search (single-observer ISMCTS, Cowling et al. 2012).

One tree over the searching seat's information set, grown by ``sims`` iterations, each on a
fresh determinization (:func:`.rollout.deal_hidden`: the unseen tiles re-dealt consistently
with the seat's view, a function of ``(base, index)``):

1. **select**: from the root, at each decision with more than one legal move (forced moves
   are applied without a node), the children whose move is legal in THIS world are the
   candidates; each gets an availability count. The opponents do not branch: in the tree
   they play the chain policy (each seat's chains reserved when the iteration's world is
   dealt), so only the searching seat's decisions are nodes (its later decisions merged
   across worlds by availability). With an untried legal move left, one is
   expanded (chosen uniformly on the iteration's splitmix64 stream) and selection stops;
   else the child of the best UCB score ``Q + c sqrt(ln(availability) / visits)`` is
   followed, ``Q`` being the child's mean result for the seat;
2. **simulate**: the round is played out with the chain policy (:func:`.rollout.chain_rollout`);
3. **back up**: every node on the path adds the result of the seat that moved into it
   (:func:`.rollout.round_result`, the zero-sum pips of the round).

A world the greedy dealer cannot deal (all its shuffles dead-end; rare) is replaced by the
template, itself a world from the pure sampler's exact dealer. The search is a function of
its inputs: deterministic given ``base`` and ``sims``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from mtrain_env.mexican_train.compiled import engine, rollout
from mtrain_env.mexican_train.compiled.cache import cache_watching
from mtrain_env.mexican_train.compiled.engine import (
    K_ACTIONS,
    K_N,
    MAX_MOVES,
    MAX_SEATS,
    MAX_TILES,
    ROUND_OVER,
    S_CURRENT,
    S_PHASE,
    STATE_SIZE,
)
from mtrain_env.mexican_train.compiled.rollout import Determinizer, chain_rollout, deal_hidden, round_result

__all__ = ["Tree", "search"]

_CACHE = cache_watching(__file__, engine.__file__, rollout.__file__)

# integer fields of a node (``tree_i[node, *]``)
N_MOVE = 0  #: the absolute move into the node (-1: root)
N_PLAYER = 1  #: the seat that made it
N_CHILD = 2  #: first child, or -1
N_SIBLING = 3  #: next sibling, or -1
# float fields (``tree_f[node, *]``)
N_VISITS = 0
N_AVAIL = 1  #: iterations in which the node's move was legal at its parent
N_VALUE = 2  #: sum of the mover's results
#: the longest path of nodes followed in one iteration
MAX_PATH = 1024
# ``stats`` entries
ST_NODES = 0  #: nodes in the tree
ST_INDEX = 1  #: next determinization index
ST_DONE = 2  #: iterations run
ST_FALLBACKS = 3  #: worlds the greedy dealer could not deal (template used)


@njit(cache=_CACHE)
def _new_node(
    tree_i: np.ndarray, tree_f: np.ndarray, stats: np.ndarray, parent: int, move: int, player: int
) -> int:
    nd = stats[ST_NODES]
    stats[ST_NODES] = nd + 1
    tree_i[nd, N_MOVE] = move
    tree_i[nd, N_PLAYER] = player
    tree_i[nd, N_CHILD] = -1
    tree_i[nd, N_SIBLING] = -1
    tree_f[nd, N_VISITS] = 0.0
    tree_f[nd, N_AVAIL] = 0.0
    tree_f[nd, N_VALUE] = 0.0
    if parent >= 0:
        tree_i[nd, N_SIBLING] = tree_i[parent, N_CHILD]
        tree_i[parent, N_CHILD] = nd
    return nd


@njit(cache=_CACHE, inline="always")
def _step_node(
    tree_i: np.ndarray,
    tree_f: np.ndarray,
    stats: np.ndarray,
    node: int,
    moves: np.ndarray,
    count: int,
    flag: np.ndarray,
    player: int,
    x: np.uint64,
    c_uct: float,
) -> tuple[int, bool, np.uint64]:
    """One node of an iteration's walk, ``player`` choosing among ``moves[:count]`` (legal
    in this world): the children whose move is legal gain availability; an untried legal
    move is expanded (uniformly on the stream ``x``) while the tree has room, else the best
    child by UCB is taken. Returns
    ``(child or -1 when the tree is full and nothing here was tried, expanded, x)``;
    ``flag`` is left all zeros."""
    capacity = tree_i.shape[0]
    for i in range(count):
        flag[moves[i]] = 1
    c = tree_i[node, N_CHILD]
    while c >= 0:
        m = tree_i[c, N_MOVE]
        if flag[m] != 0:
            flag[m] = 2  # has a child
            tree_f[c, N_AVAIL] += 1.0
        c = tree_i[c, N_SIBLING]
    untried = 0
    for i in range(count):
        if flag[moves[i]] == 1:
            untried += 1
    chosen = -1
    if untried > 0 and stats[ST_NODES] < capacity:
        x = rollout._splitmix(x)
        k = int(x % np.uint64(untried))
        for i in range(count):
            if flag[moves[i]] == 1:
                if k == 0:
                    chosen = _new_node(tree_i, tree_f, stats, node, moves[i], player)
                    tree_f[chosen, N_AVAIL] = 1.0
                    break
                k -= 1
    expanded = chosen >= 0
    if not expanded:
        best_score = -np.inf
        c = tree_i[node, N_CHILD]
        while c >= 0:
            m = tree_i[c, N_MOVE]
            if flag[m] != 0:
                v = tree_f[c, N_VISITS]
                q = tree_f[c, N_VALUE] / v if v > 0 else 0.0
                score = np.inf if v == 0 else q + c_uct * math.sqrt(math.log(tree_f[c, N_AVAIL]) / v)
                # ties: the lower move (children are listed newest first)
                if chosen < 0 or score > best_score or (score == best_score and m < tree_i[chosen, N_MOVE]):
                    best_score = score
                    chosen = c
            c = tree_i[c, N_SIBLING]
    for i in range(count):
        flag[moves[i]] = 0
    return chosen, expanded, x


@njit(cache=_CACHE, inline="always")
def _walk_scratch(
    template: np.ndarray, tb: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The arrays :func:`_walk` works in: ``(root, s, pool, owner, moves, flag)``."""
    return (
        template.copy(),
        np.empty(STATE_SIZE, np.int64),
        np.empty(MAX_TILES, np.int64),
        np.empty(MAX_TILES, np.int64),
        np.empty(MAX_MOVES, np.int64),
        np.zeros(tb[K_ACTIONS], np.int64),
    )


@njit(cache=_CACHE, inline="always")
def _walk(
    work: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    template: np.ndarray,
    tb: np.ndarray,
    unseen: np.ndarray,
    allowed: np.ndarray,
    order: np.ndarray,
    need: np.ndarray,
    base: int,
    seat: int,
    danger: int,
    c_uct: float,
    tree_i: np.ndarray,
    tree_f: np.ndarray,
    stats: np.ndarray,
    sc: Any,
    path: np.ndarray,
) -> int:
    """Step 1 of the next iteration (module docstring): its world dealt into ``work``'s
    state ``s`` (by way of ``root``; :func:`_walk_scratch`), then the tree walked from the
    root, each choice by :func:`_step_node`, forced moves applied without a node and the
    opponents on the chain policy, until a node is expanded,
    the tree is full or the round ends. ``s`` is left where the walk stopped and
    ``path[:length]`` holds the nodes followed; returns the length."""
    root, s, pool, owner, moves, flag = work
    index = stats[ST_INDEX]
    stats[ST_INDEX] = index + 1
    root[:] = template
    if not deal_hidden(root, tb, unseen, allowed, order, need, base, index, pool, owner):
        stats[ST_FALLBACKS] += 1  # root keeps the template: a world of the exact dealer
    s[:] = root
    x = rollout._splitmix(np.uint64(base) ^ rollout._splitmix(np.uint64(index) ^ np.uint64(0xA5A5)))
    rollout._reserve(s, tb, sc)  # the opponents' chains, for their moves in the tree
    node = 0
    plen = 0
    while s[S_PHASE] < ROUND_OVER and plen < path.shape[0]:
        count = engine.legal_moves_into(s, tb, moves)
        if count == 1:
            engine.apply(s, tb, moves[0])
            continue
        p = s[S_CURRENT]
        if p != seat:
            engine.apply(s, tb, rollout._choose(s, tb, moves, count, sc[1], danger))
            continue
        chosen, expanded, x = _step_node(tree_i, tree_f, stats, node, moves, count, flag, p, x, c_uct)
        if chosen < 0:  # the tree is full and nothing here was tried: play on from here
            break
        engine.apply(s, tb, tree_i[chosen, N_MOVE])
        path[plen] = chosen
        plen += 1
        node = chosen
        if expanded:
            break
    return plen


@njit(cache=_CACHE)
def search(
    template: np.ndarray,
    tb: np.ndarray,
    unseen: np.ndarray,
    allowed: np.ndarray,
    order: np.ndarray,
    need: np.ndarray,
    base: int,
    iterations: int,
    seat: int,
    danger: int,
    c_uct: float,
    tree_i: np.ndarray,
    tree_f: np.ndarray,
    stats: np.ndarray,
    sc: Any,
) -> None:
    """Run ``iterations`` more iterations on the tree (``tree_i``/``tree_f``/``stats``, set up
    by :class:`Tree`). Stops early when the tree is full."""
    work = _walk_scratch(template, tb)
    s = work[1]
    path = np.empty(MAX_PATH, np.int64)
    results = np.empty(MAX_SEATS, np.float64)
    trace = np.empty(0, np.int64)
    n = tb[K_N]
    capacity = tree_i.shape[0]
    for _ in range(iterations):
        if stats[ST_NODES] >= capacity:
            return
        plen = _walk(
            work,
            template,
            tb,
            unseen,
            allowed,
            order,
            need,
            base,
            seat,
            danger,
            c_uct,
            tree_i,
            tree_f,
            stats,
            sc,
            path,
        )
        chain_rollout(s, tb, danger, sc, trace)
        for q in range(n):
            results[q] = round_result(s, tb, q)
        tree_f[0, N_VISITS] += 1.0
        for j in range(plen):
            nd = path[j]
            tree_f[nd, N_VISITS] += 1.0
            tree_f[nd, N_VALUE] += results[tree_i[nd, N_PLAYER]]
        stats[ST_DONE] += 1


class Tree:
    """One decision's search tree on a :class:`~.rollout.Determinizer` (the seat's view only).

    ``grow(iterations)`` runs more iterations (call it repeatedly under a time budget);
    :meth:`root_stats` reads the visits and mean results of the root moves.
    """

    def __init__(
        self,
        det: Determinizer,
        base: int,
        capacity: int,
        root_moves: list[int],
        c_uct: float = 30.0,
        danger: int = 2,
        sc: Any = None,
    ) -> None:
        self.det = det
        self.base = int(base)
        self.c_uct = float(c_uct)
        self.danger = int(danger)
        self.sc = rollout.scratch() if sc is None else sc
        size = capacity + len(root_moves) + 1
        self.tree_i = np.empty((size, 4), np.int64)
        self.tree_f = np.empty((size, 3), np.float64)
        self.stats = np.zeros(4, np.int64)
        self.root_moves = list(root_moves)
        _new_node(self.tree_i, self.tree_f, self.stats, -1, -1, -1)

    def grow(self, iterations: int) -> None:
        """Run ``iterations`` more iterations."""
        det = self.det
        search(
            *det.dealer,
            self.base,
            int(iterations),
            det.view.seat,
            self.danger,
            self.c_uct,
            self.tree_i,
            self.tree_f,
            self.stats,
            self.sc,
        )

    @property
    def iterations(self) -> int:
        """Iterations run so far."""
        return int(self.stats[ST_DONE])

    def root_stats(self) -> dict[int, tuple[float, float]]:
        """``{root move: (visits, mean result)}`` of the root's children (untried moves absent)."""
        out = {}
        c = int(self.tree_i[0, N_CHILD])
        while c >= 0:
            v = float(self.tree_f[c, N_VISITS])
            out[int(self.tree_i[c, N_MOVE])] = (v, float(self.tree_f[c, N_VALUE]) / v if v else 0.0)
            c = int(self.tree_i[c, N_SIBLING])
        return out
