"""Compiled information-set Monte Carlo tree search (single-observer ISMCTS, Cowling et al. 2012).

One tree over the searching seat's information set, grown by ``sims`` iterations, each on a
fresh determinization (:func:`.rollout.deal_hidden`: the unseen tiles re-dealt consistently
with the seat's view, a function of ``(base, index)``):

1. **select**: from the root, at each decision with more than one legal move (forced moves
   are applied without a node), the children whose move is legal in THIS world are the
   candidates; each gets an availability count. With an untried legal move left, one is
   expanded (chosen uniformly on the iteration's splitmix64 stream) and selection stops;
   else the child of the best UCB score ``Q + c sqrt(ln(availability) / visits)`` is
   followed, ``Q`` being the child's mean result for the seat that made its move (every
   seat maximises its own result: a paranoid-free, max^n tree);
2. **simulate**: the round is played out with the chain policy (:func:`.rollout.chain_rollout`);
3. **back up**: every node on the path adds the result of the seat that moved into it
   (:func:`.rollout.round_result`, the zero-sum pips of the round).

Edges are public moves (a tile on a train, DRAW, PASS), so opponents' nodes merge the worlds
in which they made the same public move, as SO-ISMCTS does. With ``branch_opponents=False``
the opponents do not branch: in the tree they play the chain policy (each seat's chains
reserved when the iteration's world is dealt), and only the searching seat's decisions are
nodes (its later decisions merged across worlds by availability, as above). With ``priors`` the root is a
PUCT node instead (AlphaZero's ``Q + c_puct P sqrt(N) / (1 + n)``): every root move is a
child from the start and the prior steers the visits; the ``ismcts_puct`` agent passes a
learned policy's probabilities there.

:func:`select_leaves` and :func:`back_up_leaves` split an iteration around step 2 for a
caller that values the leaves itself, a batch at a time (a network playing the seat's later
choices: ``ismcts[leaf=policy]``); the nodes of a batch's paths hold virtual visits
meanwhile.

A world the greedy dealer cannot deal (all its shuffles dead-end; rare) is replaced by the
template, itself a world from the pure sampler's exact dealer. The search is a function of
its inputs: deterministic given ``base`` and ``sims``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
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

__all__ = ["Tree", "back_up_leaves", "search", "select_leaves"]

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
    puct: bool,
    priors: np.ndarray,
    c_puct: float,
) -> tuple[int, bool, np.uint64]:
    """One node of an iteration's walk, ``player`` choosing among ``moves[:count]`` (legal
    in this world): the children whose move is legal gain availability; an untried legal
    move is expanded (uniformly on the stream ``x``; not at a PUCT node, whose children all
    exist) while the tree has room, else the best child by UCB (or PUCT) is taken. Returns
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
    if untried > 0 and not puct and stats[ST_NODES] < capacity:
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
        sqrt_n = math.sqrt(tree_f[node, N_VISITS] + 1.0)
        c = tree_i[node, N_CHILD]
        while c >= 0:
            m = tree_i[c, N_MOVE]
            if flag[m] != 0:
                v = tree_f[c, N_VISITS]
                q = tree_f[c, N_VALUE] / v if v > 0 else 0.0
                if puct:
                    score = q + c_puct * priors[m] * sqrt_n / (1.0 + v)
                elif v == 0:
                    score = np.inf
                else:
                    score = q + c_uct * math.sqrt(math.log(tree_f[c, N_AVAIL]) / v)
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
    priors: np.ndarray,
    c_puct: float,
    branch_opponents: bool,
    tree_i: np.ndarray,
    tree_f: np.ndarray,
    stats: np.ndarray,
    sc: Any,
    path: np.ndarray,
) -> int:
    """Step 1 of the next iteration (module docstring): its world dealt into ``work``'s
    state ``s`` (by way of ``root``; :func:`_walk_scratch`), then the tree walked from the
    root, each choice by :func:`_step_node`, forced moves applied without a node and, with
    ``branch_opponents`` off, the opponents on the chain policy, until a node is expanded,
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
    if not branch_opponents:
        rollout._reserve(s, tb, sc)  # the opponents' chains, for their moves in the tree
    node = 0
    plen = 0
    while s[S_PHASE] < ROUND_OVER and plen < path.shape[0]:
        count = engine.legal_moves_into(s, tb, moves)
        if count == 1:
            engine.apply(s, tb, moves[0])
            continue
        p = s[S_CURRENT]
        if p != seat and not branch_opponents:
            engine.apply(s, tb, rollout._choose(s, tb, moves, count, sc[1], danger))
            continue
        puct = node == 0 and c_puct > 0.0
        chosen, expanded, x = _step_node(
            tree_i, tree_f, stats, node, moves, count, flag, p, x, c_uct, puct, priors, c_puct
        )
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
    priors: np.ndarray,
    c_puct: float,
    branch_opponents: bool,
    tree_i: np.ndarray,
    tree_f: np.ndarray,
    stats: np.ndarray,
    sc: Any,
) -> None:
    """Run ``iterations`` more iterations on the tree (``tree_i``/``tree_f``/``stats``, set up
    by :class:`Tree`; its root's children are the root moves when ``c_puct > 0``). Stops
    early when the tree is full. ``priors[move]``: the root prior (PUCT only)."""
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
            priors,
            c_puct,
            branch_opponents,
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


@njit(cache=_CACHE)
def select_leaves(
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
    leaves: np.ndarray,
    paths: np.ndarray,
    virtual: np.ndarray,
    lengths: np.ndarray,
) -> int:
    """The select and expand steps of up to ``leaves.shape[0]`` iterations of :func:`search`
    with the opponents on the chain policy (``branch_opponents=False``, UCB root), for a
    caller that values the leaves itself (a network playing the seat's later choices,
    :class:`Tree` with a ``leaf_values`` function). Iteration ``b`` leaves its world's state,
    played on from the expanded node to the seat's next real choice or the round's end
    (:func:`.rollout.advance_to_choice`), in ``leaves[b]`` and its path in ``paths[b,
    :lengths[b]]``. Every node on the path takes a virtual visit at its current mean
    (``virtual[b, j]``, the value added; the root a visit), so the batch's later
    iterations spread over the moves as UCB's exploration term shrinks;
    :func:`back_up_leaves` replaces them with the leaves' values. Returns the
    iterations selected (fewer only when the tree is full)."""
    work = _walk_scratch(template, tb)
    s = work[1]
    no_priors = np.empty(0, np.float64)
    capacity = tree_i.shape[0]
    for b in range(leaves.shape[0]):
        if stats[ST_NODES] >= capacity:
            return b
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
            no_priors,
            0.0,
            False,
            tree_i,
            tree_f,
            stats,
            sc,
            paths[b],
        )
        rollout.advance_to_choice(s, tb, seat, danger, sc)
        leaves[b] = s
        lengths[b] = plen
        tree_f[0, N_VISITS] += 1.0
        for j in range(plen):
            nd = paths[b, j]
            v = tree_f[nd, N_VISITS]
            virtual[b, j] = tree_f[nd, N_VALUE] / v if v > 0 else 0.0
            tree_f[nd, N_VALUE] += virtual[b, j]
            tree_f[nd, N_VISITS] = v + 1.0
        stats[ST_DONE] += 1
    return leaves.shape[0]


@njit(cache=_CACHE)
def back_up_leaves(
    tree_f: np.ndarray,
    paths: np.ndarray,
    virtual: np.ndarray,
    lengths: np.ndarray,
    values: np.ndarray,
    count: int,
) -> None:
    """Replace the virtual visits of :func:`select_leaves`' first ``count`` iterations by
    their leaves' ``values`` (the seat's results): each path node's value loses the mean it
    was given and gains the value; its visit stays counted."""
    for b in range(count):
        for j in range(lengths[b]):
            tree_f[paths[b, j], N_VALUE] += values[b] - virtual[b, j]


class Tree:
    """One decision's search tree on a :class:`~.rollout.Determinizer` (the seat's view only).

    ``grow(iterations)`` runs more iterations (call it repeatedly under a time budget);
    :meth:`root_stats` reads the visits and mean results of the root moves. With
    ``leaf_values`` (the opponents on the chain policy, a UCB root) the iterations run in
    batches of ``batch``: :func:`select_leaves` picks a batch's leaves under virtual visits,
    ``leaf_values(states)`` gives the seat's result of each (``(count, STATE_SIZE)`` states
    at the seat's real choice or over; e.g. a network playing the seat's later choices)
    and :func:`back_up_leaves` records them.
    """

    def __init__(
        self,
        det: Determinizer,
        base: int,
        capacity: int,
        root_moves: list[int],
        priors: np.ndarray | None = None,
        c_uct: float = 10.0,
        c_puct: float = 0.0,
        branch_opponents: bool = True,
        danger: int = 2,
        sc: Any = None,
        leaf_values: Callable[[np.ndarray], np.ndarray] | None = None,
        batch: int = 32,
    ) -> None:
        if leaf_values is not None and (branch_opponents or priors is not None):
            raise ValueError("leaf_values needs the opponents on the chain policy and a UCB root")
        self.det = det
        self.leaf_values = leaf_values
        self.batch = int(batch)
        self.base = int(base)
        self.c_uct = float(c_uct)
        self.c_puct = float(c_puct) if priors is not None else 0.0
        self.branch_opponents = bool(branch_opponents)
        self.danger = int(danger)
        self.sc = rollout.scratch() if sc is None else sc
        size = capacity + len(root_moves) + 1
        self.tree_i = np.empty((size, 4), np.int64)
        self.tree_f = np.empty((size, 3), np.float64)
        self.stats = np.zeros(4, np.int64)
        self.priors = np.zeros(int(det.game.tables[K_ACTIONS]), np.float64)
        self.root_moves = list(root_moves)
        _new_node(self.tree_i, self.tree_f, self.stats, -1, -1, -1)
        if priors is not None:
            self.priors[np.array(root_moves, np.int64)] = priors
            for m in reversed(root_moves):  # listed in increasing move order
                _new_node(self.tree_i, self.tree_f, self.stats, 0, m, det.view.seat)

    def grow(self, iterations: int) -> None:
        """Run ``iterations`` more iterations."""
        det = self.det
        if self.leaf_values is not None:
            self._grow_batches(int(iterations))
            return
        search(
            *det.dealer,
            self.base,
            int(iterations),
            det.view.seat,
            self.danger,
            self.c_uct,
            self.priors,
            self.c_puct,
            self.branch_opponents,
            self.tree_i,
            self.tree_f,
            self.stats,
            self.sc,
        )

    def _grow_batches(self, iterations: int) -> None:
        """``iterations`` more iterations valued by :attr:`leaf_values`, a batch at a time."""
        assert self.leaf_values is not None
        det = self.det
        size = min(self.batch, iterations)
        leaves = np.empty((size, STATE_SIZE), np.int64)
        paths = np.empty((size, MAX_PATH), np.int64)
        virtual = np.empty((size, MAX_PATH), np.float64)
        lengths = np.zeros(size, np.int64)
        left = iterations
        while left > 0:
            count = min(size, left)
            got = select_leaves(
                *det.dealer,
                self.base,
                det.view.seat,
                self.danger,
                self.c_uct,
                self.tree_i,
                self.tree_f,
                self.stats,
                self.sc,
                leaves[:count],
                paths[:count],
                virtual[:count],
                lengths[:count],
            )
            if got:
                values = np.asarray(self.leaf_values(leaves[:got]), np.float64)
                back_up_leaves(self.tree_f, paths, virtual, lengths, values, got)
            if got < count:  # the tree is full
                return
            left -= count

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
