"""Compiled rollouts for search: determinize a seat's view and play rounds out in numba.

The ``mc`` agent's hot loop (:mod:`agents.mexican_train.mc`) compiled: for each
determinization (the unseen tiles dealt among the opponents and the boneyard, consistent
with the view) and each candidate move, copy the state, apply the move and play the round
to its end with the chain-keeping rollout policy, then score it for the searching seat.
Many rollouts run in one call (:func:`rollout_matrix`); nothing allocates per rollout.

* **Policy** (:func:`chain_rollout`): the planner's rule exactly as the pure
  :class:`agents.mexican_train.rollout_policies.ChainPolicy` plays it: each seat's longest own-train
  chain is reserved when the rollout starts (:func:`longest_chain`, the
  :class:`agents.mexican_train.chains.ChainSolver` search), plays are ranked by the
  planner's ``play_key`` (its terms packed the same way), ties to the lowest move id.
  ``tests/compiled/test_rollout.py`` proves it move for move against the pure policy. The
  planner's own move (:func:`planner_move`: its chain searched afresh at each choice, the
  exact chain damage, ties to the lowest relative action) is the batched ``planner``
  opponents' (:mod:`.batched_planner`). The chain search keeps no memo between calls;
  with a memo the pure solver counts fewer expanded states, so the two agree whenever
  neither reaches its node limit (the compiled default, :data:`NODE_LIMIT`, is far above
  what dealt hands need).
* **Determinization** (:func:`deal_hidden`): the greedy dealer of
  :func:`mtrain_env.mexican_train.core.public.sample_state` (same constraints, same
  algorithm: most-constrained opponent first, 64 shuffles) on a splitmix64 stream, so a
  determinization is a function of ``(base, index)``; when all 64 shuffles dead-end the
  call reports it and the caller deals that one with the pure sampler (its exact fallback).
* **Threads**: the kernels release the GIL, so :func:`run_rollouts` can split one
  decision's determinizations over a :class:`ThreadPool` (one scratch per thread); the
  results are the same array as on one thread.
* **Layout**: the template state (:meth:`Determinizer.template`) is a pure determinization
  converted once by ``CompiledMexicanTrain.to_compiled``; a determinization rewrites only
  the hidden fields (where each unseen tile is, the boneyard order, the opponents'
  ``hand_pips``).

Numba caches a function by the file it is defined in; these kernels inline
:mod:`.engine`'s, so a locator (:func:`.cache.cache_watching`) adds
``engine.py``'s hash to this file's cache stamp: editing either file recompiles them.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from numba import njit

from mtrain_env.mexican_train.compiled import engine
from mtrain_env.mexican_train.compiled.cache import cache_watching
from mtrain_env.mexican_train.compiled.engine import (
    K_DOUBLE_ID,
    K_DRAW,
    K_MARKER_OFF_BY_OWNER_PLAY_ANYWHERE,
    K_MULTI_OPENING,
    K_N,
    K_OTHER,
    K_PASS,
    K_POSITIVE_SCORING,
    K_TILE_A,
    K_TILE_B,
    K_TILE_VALUE,
    K_TILES,
    K_WIDTH,
    LOC_BONEYARD,
    MAX_MOVES,
    MAX_SEATS,
    MAX_TILES,
    MAX_VALUES,
    NORMAL,
    OPENING,
    ROUND_OVER,
    S_BONE_LEN,
    S_BONEYARD,
    S_CURRENT,
    S_HAND_COUNT,
    S_HAND_PIPS,
    S_LOC,
    S_MARKERS,
    S_OWES,
    S_PHASE,
    S_ROUND_SCORES,
    S_ROUNDS_SCORED,
    S_TURN_DOUBLES,
    S_TURN_DOUBLES_LEN,
    STATE_SIZE,
)
from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain
from mtrain_env.mexican_train.core.public import PublicView, banned_tiles, sample_state
from mtrain_env.tilegame.tiles import bits_list

__all__ = [
    "NODE_LIMIT",
    "Determinizer",
    "ThreadPool",
    "advance_states",
    "advance_to_choice",
    "chain_rollout",
    "deal_hidden",
    "longest_chain",
    "observe_rows",
    "results_rows",
    "rollout_matrix",
    "run_rollouts",
    "scratch",
    "step_rows",
]

#: expanded chain-search states after which a search keeps its best chain so far
NODE_LIMIT = 20_000
#: shuffles of the greedy dealer before it gives up (as ``sample_state``)
DEAL_ATTEMPTS = 64
#: ``play_key`` field offsets (:func:`agents.mexican_train.planner.play_key`)
_COVERS = 27
_SHED = 19
_DOUBLE_OK = 18
_LIFTS = 17
_DAMAGE = 9
_OFF_OWN = 8


#: numba's cache flag; the stamp also watches the engine, whose kernels these inline
_CACHE = cache_watching(__file__, engine.__file__)


# ============================================================ longest chain
@njit(cache=_CACHE)
def _popcount(x: int) -> int:
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@njit(cache=_CACHE)
def _bound(end: int, left: int, odd: int) -> int:
    """Upper bound on the tiles of a trail from ``end`` (``ChainSolver._bound``)."""
    k = _popcount(odd)
    if (odd >> end) & 1:
        return left - (k - 2) // 2
    return left - k // 2


@njit(cache=_CACHE)
def _flip(tb: np.ndarray, tile: int) -> int:
    a = tb[K_TILE_A + tile]
    b = tb[K_TILE_B + tile]
    if a == b:
        return 0
    return (1 << a) | (1 << b)


# the fields of one depth of the search stack (``frames[depth, F_*]``)
F_END = 0  #: open end
F_LEFT = 1  #: unused tiles
F_ODD = 2  #: pips of odd degree among them (bitmask)
F_PREFIX = 3  #: index of the double laid at once on arrival, or -1
F_START = 4  #: 1 with that double (the chain's first tile), else 0
F_PREFIX_PIPS = 5
F_BEST_COUNT = 6  #: best chain after the prefix so far
F_BEST_PIPS = 7
F_BOUND = 8  #: parity bound of this state
F_NEXT = 9  #: next hand index to try (k: done)
F_CHILD = 10  #: hand index of the child being searched
FRAME_FIELDS = 11


@njit(cache=_CACHE)
def _enter(
    tb: np.ndarray,
    frames: np.ndarray,
    depth: int,
    end: int,
    left: int,
    odd: int,
    tiles: np.ndarray,
    k: int,
    used: np.ndarray,
    chains: np.ndarray,
    counter: np.ndarray,
    limit: int,
) -> None:
    """Open the search state ``(end, unused tiles)`` at ``depth`` (``ChainSolver._best``'s entry)."""
    f = frames[depth]
    f[F_PREFIX] = -1
    f[F_START] = 0
    f[F_PREFIX_PIPS] = 0
    double = tb[K_DOUBLE_ID + end]
    for i in range(k):
        if tiles[i] == double and not used[i]:
            used[i] = True  # a loop at the end: always lay it now
            left -= 1
            chains[depth, 0] = double
            f[F_PREFIX] = i
            f[F_START] = 1
            f[F_PREFIX_PIPS] = tb[K_TILE_VALUE + double]
            break
    f[F_END] = end
    f[F_LEFT] = left
    f[F_ODD] = odd
    f[F_BEST_COUNT] = 0
    f[F_BEST_PIPS] = 0
    counter[0] += 1
    if counter[0] <= limit:
        f[F_BOUND] = _bound(end, left, odd)
        f[F_NEXT] = 0
    else:
        f[F_NEXT] = k  # past the limit: the prefix alone


@njit(cache=_CACHE)
def longest_chain(
    tb: np.ndarray,
    end: int,
    tiles: np.ndarray,
    k: int,
    used: np.ndarray,
    chains: np.ndarray,
    frames: np.ndarray,
    counter: np.ndarray,
    limit: int,
) -> tuple[int, int]:
    """A longest chain of the hand ``tiles[:k]`` (increasing ids) from open end ``end``:
    ``(tiles, pips)``, the chain in ``chains[0, :tiles]`` in laying order.

    :class:`agents.mexican_train.chains.ChainSolver`'s depth-first search (same order,
    same cuts, same tie-break), on an explicit stack (``frames``; numba's cache cannot
    hold recursive functions) and without its memo; ``counter[0]`` gets the states
    expanded (past ``limit`` a state is not expanded). ``used``, ``chains`` and ``frames``
    are scratch."""
    odd = 0
    for i in range(k):
        used[i] = False
        odd ^= _flip(tb, tiles[i])
    counter[0] = 0
    _enter(tb, frames, 0, end, k, odd, tiles, k, used, chains, counter, limit)
    depth = 0
    while True:
        f = frames[depth]
        descended = False
        while f[F_NEXT] < k:
            i = f[F_NEXT]
            f[F_NEXT] = i + 1
            if used[i]:
                continue
            t = tiles[i]
            new_end = tb[K_OTHER + t * MAX_VALUES + f[F_END]]
            if new_end < 0:
                continue
            new_odd = f[F_ODD] ^ _flip(tb, t)
            if f[F_BEST_COUNT] and 1 + _bound(new_end, f[F_LEFT] - 1, new_odd) < f[F_BEST_COUNT]:
                continue  # cannot reach the best length: prune
            used[i] = True
            f[F_CHILD] = i
            _enter(
                tb, frames, depth + 1, new_end, f[F_LEFT] - 1, new_odd, tiles, k, used, chains, counter, limit
            )
            depth += 1
            descended = True
            break
        if descended:
            continue
        # this state is searched: its result, then back to the parent
        if f[F_PREFIX] >= 0:
            used[f[F_PREFIX]] = False
        count = f[F_BEST_COUNT] + f[F_START]
        pips = f[F_BEST_PIPS] + f[F_PREFIX_PIPS]
        if depth == 0:
            return count, pips
        parent = frames[depth - 1]
        i = parent[F_CHILD]
        used[i] = False
        t = tiles[i]
        total = count + 1
        total_pips = pips + tb[K_TILE_VALUE + t]
        if total > parent[F_BEST_COUNT] or (
            total == parent[F_BEST_COUNT] and total_pips > parent[F_BEST_PIPS]
        ):
            parent[F_BEST_COUNT] = total
            parent[F_BEST_PIPS] = total_pips
            start = parent[F_START]
            chains[depth - 1, start] = t
            for j in range(count):
                chains[depth - 1, start + 1 + j] = chains[depth, j]
            if total >= parent[F_BOUND]:
                parent[F_NEXT] = k  # the bound is reached: done
        depth -= 1


# ========================================================= rollout policy
#: entries of the chain memo (direct-mapped on a Zobrist hash of ``(end, hand)``)
MEMO_SIZE = 4096
#: hands of more tiles than this bypass the memo
MEMO_HAND = 40
#: memo row: valid, end, hand size, chain length, the hand's tiles, the chain's tiles
MEMO_WIDTH = 4 + 2 * MEMO_HAND


@njit(cache=_CACHE, inline="always")
def _hand_chain(tb: np.ndarray, end: int, hand: np.ndarray, k: int, h: int, sc: Any) -> int:
    """A longest chain from open end ``end`` of the hand ``hand[:k]`` (increasing ids) into
    ``sc``'s ``chains[0]``; returns its length. ``h``: the XOR of the hand's tiles' Zobrist
    keys, which the caller sums while it collects the hand.

    :func:`longest_chain` is a function of ``(end, hand)`` alone, so its results are
    remembered (the memo, direct-mapped on a Zobrist hash and verified tile by tile on a
    hit) without changing any answer: the searching seat's hand after a candidate recurs
    in every determinization.
    """
    used, chains, frames, counter, memo, zobrist, limit = sc[3], sc[4], sc[5], sc[6], sc[7], sc[8], sc[9]
    if k == 0:
        return 0
    h ^= zobrist[MAX_TILES + end]
    slot = -1
    if k <= MEMO_HAND:
        slot = h & (MEMO_SIZE - 1)
        row = memo[slot]
        if row[0] and row[1] == end and row[2] == k:
            same = True
            for j in range(k):
                if row[4 + j] != hand[j]:
                    same = False
                    break
            if same:
                count = row[3]
                for j in range(count):
                    chains[0, j] = row[4 + MEMO_HAND + j]
                return count
    count, _pips = longest_chain(tb, end, hand, k, used, chains, frames, counter, limit)
    if slot >= 0:
        row = memo[slot]
        row[0] = 1
        row[1] = end
        row[2] = k
        row[3] = count
        for j in range(k):
            row[4 + j] = hand[j]
        for j in range(count):
            row[4 + MEMO_HAND + j] = chains[0, j]
    return count


@njit(cache=_CACHE, inline="always")
def _seat_chain(s: np.ndarray, tb: np.ndarray, q: int, sc: Any) -> int:
    """Seat ``q``'s longest own-train chain into ``sc``'s ``chains[0]``; returns its length;
    ``sc``'s hand array holds the seat's tiles (increasing ids) afterwards."""
    hand = sc[2]
    zobrist = sc[8]
    k = 0
    h = 0
    for t in range(tb[K_TILES]):
        if s[S_LOC + t] == q:
            hand[k] = t
            k += 1
            h ^= zobrist[t]
    return _hand_chain(tb, s[engine.S_ENDS + q], hand, k, h, sc)


@njit(cache=_CACHE)
def _reserve(s: np.ndarray, tb: np.ndarray, sc: Any) -> None:
    """``reserved[tile] = 1`` for every tile of each seat's longest own-train chain (the chain
    policy's; :func:`planner_move` searches at each choice instead and never reserves)."""
    reserved = sc[1]
    chains = sc[4]
    for t in range(tb[K_TILES]):
        reserved[t] = 0
    for q in range(tb[K_N]):
        count = _seat_chain(s, tb, q, sc)
        for j in range(count):
            reserved[chains[0, j]] = 1


@njit(cache=_CACHE)
def _tile_key(tb: np.ndarray, tile: int, own: bool, reserved: bool) -> int:
    """The damage, off-own and value terms of ``play_key`` (``ChainPolicy.tile_keys``)."""
    # own train: the chain's next tile costs itself, another moves the end off the chain;
    # elsewhere: an extra costs nothing, a reserved tile cuts the chain for good
    damage = (1 if reserved else 2) if own else (3 if reserved else 0)
    off_own = 0 if own else 1
    return (255 - damage) << _DAMAGE | off_own << _OFF_OWN | tb[K_TILE_VALUE + tile]


@njit(cache=_CACHE, inline="always")
def _turn_terms(s: np.ndarray, tb: np.ndarray, danger: int) -> tuple[int, bool, bool]:
    """What ``play_key``'s turn-wide terms read for the seat on turn: the train of the double
    it owes a tile on (R18, R20; -1: none), whether a play on its own train lifts its marker
    (R17), whether it sheds (an opponent holds ``danger`` tiles or fewer)."""
    p = s[S_CURRENT]
    phase = s[S_PHASE]
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
    return owed, lift, shed


@njit(cache=_CACHE, inline="always")
def _play_terms(
    s: np.ndarray, tb: np.ndarray, p: int, t: int, tr: int, owed: int, lift: bool, shed: bool
) -> int:
    """``play_key``'s covers, shed, double-ok and lifts terms of seat ``p`` (on turn) laying
    tile ``t`` on train ``tr`` (the damage, off-own and value terms are the caller's)."""
    key = 0
    if tr == owed:
        key += 1 << _COVERS
    if shed:
        key += tb[K_TILE_VALUE + t] << _SHED
    a = tb[K_TILE_A + t]
    if a != tb[K_TILE_B + t] or s[S_HAND_PIPS + p * MAX_VALUES + a] > 1:
        key += 1 << _DOUBLE_OK  # not a double, or one the hand can follow
    if tr == p and lift:
        key += 1 << _LIFTS
    return key


@njit(cache=_CACHE, inline="always")
def _choose(
    s: np.ndarray, tb: np.ndarray, moves: np.ndarray, count: int, reserved: np.ndarray, danger: int
) -> int:
    """The chain policy's move among ``moves[:count]`` (more than one legal move)."""
    width = tb[K_WIDTH]
    draw = tb[K_DRAW]
    p = s[S_CURRENT]
    if s[S_PHASE] == OPENING and tb[K_MULTI_OPENING]:
        # R9: lay reserved tiles; stop when none fits
        for i in range(count):
            m = moves[i]
            if m < draw and reserved[m // width]:
                return m
        for i in range(count):
            if moves[i] == tb[K_PASS]:
                return moves[i]
        return moves[0]
    owed, lift, shed = _turn_terms(s, tb, danger)
    best = moves[0]
    best_key = -1
    for i in range(count):
        m = moves[i]
        if m >= draw:
            continue
        t = m // width
        tr = m - t * width
        key = _tile_key(tb, t, tr == p, reserved[t] != 0) + _play_terms(s, tb, p, t, tr, owed, lift, shed)
        if key > best_key:
            best_key = key
            best = m
    return best


@njit(cache=_CACHE)
def _length_without(
    tb: np.ndarray, end: int, hand: np.ndarray, k: int, tile: int, rest: np.ndarray, sc: Any
) -> int:
    """Length of the longest chain from ``end`` of the hand ``hand[:k]`` without ``tile``."""
    zobrist = sc[8]
    j = 0
    h = 0
    for i in range(k):
        if hand[i] != tile:
            rest[j] = hand[i]
            j += 1
            h ^= zobrist[hand[i]]
    return _hand_chain(tb, end, rest, j, h, sc)


@njit(cache=_CACHE)
def planner_move(s: np.ndarray, tb: np.ndarray, moves: np.ndarray, count: int, danger: int, sc: Any) -> int:
    """The move :class:`agents.mexican_train.planner.PlannerAgent` (``danger``) plays among the
    legal ``moves[:count]`` of the seat on turn in ``s`` (ABSOLUTE), decision for decision:

    * the seat's longest own-train chain is searched afresh (:func:`_seat_chain`) and only
      that seat's chain is reserved (the chain policy reserves every seat's chain once a
      rollout and estimates the damage; the planner does neither);
    * opening (R9, multi-tile): the chain's head on the own train, PASS once no chain is left;
    * otherwise the play of highest :func:`agents.mexican_train.planner.play_key`, with the
      EXACT chain damage (tiles the chain loses, a fresh search of the hand without the
      tile), searched lazily best-first as the pure agent does; ties to the lowest RELATIVE
      action.

    It reads only what the seat on turn may know (its own hand and public fields), so it
    serves as a fair opponent (:mod:`.batched_planner`)."""
    reserved = sc[1]
    chains = sc[4]
    chain, own, rest, keys, exact, rel = sc[10]
    p = s[S_CURRENT]
    draw = tb[K_DRAW]
    width = tb[K_WIDTH]
    plays = 0
    for i in range(count):
        rel[i] = engine.to_relative(tb, p, moves[i])
        if moves[i] < draw:
            plays += 1
    if count == 1 or plays == 0:
        best = 0  # the lowest legal action (draw and pass keep their ids)
        for i in range(count):
            if rel[i] < rel[best]:
                best = i
        return moves[best]
    length = _seat_chain(s, tb, p, sc)
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
                return moves[i]
            if not length and moves[i] == tb[K_PASS]:
                return moves[i]
    owed, lift, shed = _turn_terms(s, tb, danger)
    end = s[engine.S_ENDS + p]
    # every play's key with the damage's lower bound (exact where it is known)
    for i in range(count):
        m = moves[i]
        keys[i] = -1
        if m >= draw:
            continue
        t = m // width
        tr = m - t * width
        on_own = tr == p
        key = tb[K_TILE_VALUE + t] | (0 if on_own else 1) << _OFF_OWN
        key += _play_terms(s, tb, p, t, tr, owed, lift, shed)
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
            return moves[b]
        t = moves[b] // width
        from_end = end if moves[b] - t * width != p else tb[K_OTHER + t * MAX_VALUES + end]
        damage = length - _length_without(tb, from_end, own, k, t, rest, sc)
        keys[b] += (1 - damage) * (1 << _DAMAGE)  # the bound counted 1 tile lost
        exact[b] = True


@njit(cache=_CACHE)
def chain_rollout(s: np.ndarray, tb: np.ndarray, danger: int, sc: Any, trace: np.ndarray) -> int:
    """Play ``s`` to the end of its round (in place) with the chain policy; returns the moves
    applied, written to ``trace`` as far as it is long. ``sc``: :func:`scratch`."""
    _reserve(s, tb, sc)
    moves = sc[0]
    reserved = sc[1]
    steps = 0
    while s[S_PHASE] < ROUND_OVER:
        count = engine.legal_moves_into(s, tb, moves)
        m = moves[0] if count == 1 else _choose(s, tb, moves, count, reserved, danger)
        if steps < trace.shape[0]:
            trace[steps] = m
        engine.apply(s, tb, m)
        steps += 1
    return steps


@njit(cache=_CACHE)
def round_result(s: np.ndarray, tb: np.ndarray, seat: int) -> float:
    """The finished round's zero-sum result for ``seat`` (higher is better; as
    ``agents.mexican_train.rollout_policies.round_result``)."""
    n = tb[K_N]
    row = s[S_ROUNDS_SCORED] - 1
    scores = s[S_ROUND_SCORES + row * MAX_SEATS : S_ROUND_SCORES + (row + 1) * MAX_SEATS].view(np.float64)
    total = 0.0
    for q in range(n):
        total += scores[q]
    mean = total / n
    if tb[K_POSITIVE_SCORING]:
        return scores[seat] - mean
    return mean - scores[seat]


# ========================================================== determinization
@njit(cache=_CACHE)
def _splitmix(x: np.uint64) -> np.uint64:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=_CACHE)
def deal_hidden(
    s: np.ndarray,
    tb: np.ndarray,
    unseen: np.ndarray,
    allowed: np.ndarray,
    order: np.ndarray,
    need: np.ndarray,
    base: int,
    index: int,
    pool: np.ndarray,
    owner: np.ndarray,
) -> bool:
    """Deal the ``unseen`` tiles of the template ``s`` afresh (in place): opponent
    ``order[j]`` gets ``need[j]`` tiles it is ``allowed`` (``allowed[seat, tile]``), the
    rest is the boneyard in random order. The greedy dealer of ``sample_state`` on the
    splitmix64 stream of ``(base, index)``; False (``s`` unchanged) if all
    :data:`DEAL_ATTEMPTS` shuffles dead-end. ``pool`` and ``owner`` are scratch."""
    u = unseen.shape[0]
    x = _splitmix(np.uint64(base) ^ _splitmix(np.uint64(index)))
    for _attempt in range(DEAL_ATTEMPTS):
        for i in range(u):
            pool[i] = unseen[i]
            owner[i] = -1
        for i in range(u - 1, 0, -1):  # Fisher-Yates
            x = _splitmix(x)
            j = int(x % np.uint64(i + 1))
            tmp = pool[i]
            pool[i] = pool[j]
            pool[j] = tmp
        ok = True
        for j in range(order.shape[0]):  # most constrained first; each takes its first fits
            q = order[j]
            got = 0
            for i in range(u):
                if got == need[j]:
                    break
                if owner[i] < 0 and allowed[q, pool[i]]:
                    owner[i] = q
                    got += 1
            if got < need[j]:
                ok = False
                break
        if not ok:
            continue
        for j in range(order.shape[0]):
            row = S_HAND_PIPS + order[j] * MAX_VALUES
            for v in range(MAX_VALUES):
                s[row + v] = 0
        k = 0
        for i in range(u):
            t = pool[i]
            q = owner[i]
            if q < 0:
                s[S_BONEYARD + k] = t
                s[S_LOC + t] = LOC_BONEYARD
                k += 1
            else:
                s[S_LOC + t] = q
                a = tb[K_TILE_A + t]
                b = tb[K_TILE_B + t]
                s[S_HAND_PIPS + q * MAX_VALUES + a] += 1
                if b != a:
                    s[S_HAND_PIPS + q * MAX_VALUES + b] += 1
        s[S_BONE_LEN] = k
        return True
    return False


# ================================================================ the batch
@njit(cache=_CACHE)
def _play_candidates(
    root: np.ndarray,
    tb: np.ndarray,
    candidates: np.ndarray,
    seat: int,
    danger: int,
    out: np.ndarray,
    sc: Any,
    s: np.ndarray,
    trace: np.ndarray,
) -> None:
    """``out[c]`` = ``seat``'s result of candidate ``c`` applied to ``root`` and played out
    by chain rollouts; ``s`` and ``trace`` are the caller's work arrays."""
    for c in range(candidates.shape[0]):
        s[:] = root
        engine.apply(s, tb, candidates[c])
        chain_rollout(s, tb, danger, sc, trace)
        out[c] = round_result(s, tb, seat)


@njit(cache=_CACHE, nogil=True)
def rollout_matrix(
    template: np.ndarray,
    tb: np.ndarray,
    unseen: np.ndarray,
    allowed: np.ndarray,
    order: np.ndarray,
    need: np.ndarray,
    base: int,
    first: int,
    candidates: np.ndarray,
    seat: int,
    danger: int,
    out: np.ndarray,
    dealt: np.ndarray,
    sc: Any,
) -> None:
    """Determinizations ``first .. first + out.shape[0] - 1`` of ``template``, each with
    every candidate move played out: ``out[d, c]`` = ``seat``'s result of candidate ``c`` on
    determinization ``first + d``. ``dealt[d]`` = 0 where the greedy dealer gave up
    (``out[d]`` untouched: the caller deals that one itself, :func:`run_rollouts`)."""
    root = template.copy()
    s = np.empty(STATE_SIZE, np.int64)
    pool = np.empty(MAX_TILES, np.int64)
    owner = np.empty(MAX_TILES, np.int64)
    trace = np.empty(0, np.int64)
    for d in range(out.shape[0]):
        root[:] = template
        if not deal_hidden(root, tb, unseen, allowed, order, need, base, first + d, pool, owner):
            dealt[d] = 0
            continue
        dealt[d] = 1
        _play_candidates(root, tb, candidates, seat, danger, out[d], sc, s, trace)


@njit(cache=_CACHE, nogil=True)
def rollout_root(
    root: np.ndarray,
    tb: np.ndarray,
    candidates: np.ndarray,
    seat: int,
    danger: int,
    out: np.ndarray,
    sc: Any,
) -> None:
    """Every candidate played out on one given full state by chain rollouts: ``out[c]``."""
    s = np.empty(STATE_SIZE, np.int64)
    trace = np.empty(0, np.int64)
    _play_candidates(root, tb, candidates, seat, danger, out, sc, s, trace)


# ================================================== leaves for a network
@njit(cache=_CACHE)
def advance_to_choice(s: np.ndarray, tb: np.ndarray, seat: int, danger: int, sc: Any) -> None:
    """Play ``s`` forward (in place) until ``seat`` has a real choice (more than one legal
    move) or the round is over: the other seats by the chain policy (each seat's chain
    reserved afresh), every forced move as it comes. The steps of ``leaf=policy``'s
    rollouts, between the searching seat's own decisions."""
    _reserve(s, tb, sc)
    moves = sc[0]
    reserved = sc[1]
    while s[S_PHASE] < ROUND_OVER:
        count = engine.legal_moves_into(s, tb, moves)
        if count == 1:
            engine.apply(s, tb, moves[0])
        elif s[S_CURRENT] == seat:
            return
        else:
            engine.apply(s, tb, _choose(s, tb, moves, count, reserved, danger))


@njit(cache=_CACHE, nogil=True)
def _advance_candidates(
    root: np.ndarray, tb: np.ndarray, candidates: np.ndarray, seat: int, danger: int, out: np.ndarray, sc: Any
) -> None:
    """``out[c]`` = ``root`` with candidate ``c`` applied and played to ``seat``'s next real
    choice or the round's end (:func:`advance_to_choice`)."""
    for c in range(candidates.shape[0]):
        s = out[c]
        s[:] = root
        engine.apply(s, tb, candidates[c])
        advance_to_choice(s, tb, seat, danger, sc)


@njit(cache=_CACHE, nogil=True)
def advance_matrix(
    template: np.ndarray,
    tb: np.ndarray,
    unseen: np.ndarray,
    allowed: np.ndarray,
    order: np.ndarray,
    need: np.ndarray,
    base: int,
    first: int,
    candidates: np.ndarray,
    seat: int,
    danger: int,
    out: np.ndarray,
    dealt: np.ndarray,
    sc: Any,
) -> None:
    """As :func:`rollout_matrix`, but each candidate is played only up to ``seat``'s next
    real choice (:func:`advance_to_choice`): ``out[d, c]`` is that STATE (``(count, k,
    STATE_SIZE)``), to be valued by the caller. ``dealt[d] = 0``: the dealer gave up."""
    root = template.copy()
    pool = np.empty(MAX_TILES, np.int64)
    owner = np.empty(MAX_TILES, np.int64)
    for d in range(out.shape[0]):
        root[:] = template
        if not deal_hidden(root, tb, unseen, allowed, order, need, base, first + d, pool, owner):
            dealt[d] = 0
            continue
        dealt[d] = 1
        _advance_candidates(root, tb, candidates, seat, danger, out[d], sc)


@njit(cache=_CACHE, nogil=True)
def observe_rows(
    states: np.ndarray,
    rows: np.ndarray,
    tb: np.ndarray,
    seat: int,
    obs: np.ndarray,
    masks: np.ndarray,
    legal: np.ndarray,
) -> None:
    """``seat``'s observation and action mask (relative encoding, the AEC env's) of each
    state ``states[rows[i]]`` into ``obs[i]`` / ``masks[i]``; ``seat`` is on turn in each."""
    for i in range(rows.shape[0]):
        s = states[rows[i]]
        engine.encode_into(s, tb, seat, obs[i])
        engine.mask_into(s, tb, legal, masks[i])


@njit(cache=_CACHE, nogil=True)
def step_rows(
    states: np.ndarray, rows: np.ndarray, tb: np.ndarray, seat: int, actions: np.ndarray, danger: int, sc: Any
) -> None:
    """``seat`` plays its RELATIVE action ``actions[i]`` in ``states[rows[i]]``, which then
    goes on to ``seat``'s next real choice or the round's end (:func:`advance_to_choice`)."""
    for i in range(rows.shape[0]):
        s = states[rows[i]]
        engine.apply(s, tb, engine.to_absolute(tb, seat, actions[i]))
        advance_to_choice(s, tb, seat, danger, sc)


@njit(cache=_CACHE, nogil=True)
def results_rows(
    states: np.ndarray, rows: np.ndarray, tb: np.ndarray, seat: int, over: np.ndarray, out: np.ndarray
) -> None:
    """For each ``r`` in ``rows``: ``over[r]``, whether ``states[r]``'s round is over, and
    where it is, ``out[r]`` = ``seat``'s result."""
    for i in range(rows.shape[0]):
        r = rows[i]
        over[r] = states[r, S_PHASE] >= ROUND_OVER
        if over[r]:
            out[r] = round_result(states[r], tb, seat)


def advance_states(
    det: Determinizer,
    base: int,
    first: int,
    count: int,
    candidates: list[int],
    danger: int = 2,
    sc: Any = None,
) -> np.ndarray:
    """``(count, len(candidates), STATE_SIZE)``: determinizations ``first .. first + count - 1``
    of stream ``base``, each candidate applied and played to the seat's next real choice
    or the round's end (:func:`advance_matrix`; the pure sampler deals what the greedy
    dealer gives up on, as :func:`run_rollouts`)."""
    tb = det.game.tables
    sc = scratch() if sc is None else sc
    cand = np.array(candidates, np.int64)
    out = np.empty((count, len(candidates), STATE_SIZE), np.int64)
    dealt = np.ones(count, np.int64)
    seat = det.view.seat
    advance_matrix(*det.dealer, base, first, cand, seat, danger, out, dealt, sc)
    for d in np.flatnonzero(dealt == 0).tolist():
        _advance_candidates(det.fallback(base, first + d), tb, cand, seat, danger, out[d], sc)
    return out


def scratch(limit: int = NODE_LIMIT) -> tuple[Any, ...]:
    """The work arrays every rollout kernel and :func:`planner_move` take (``sc``), with the
    chain memo and the chain search's node ``limit``. Reuse one per game config (the memo's
    chains are those of one tile set), never across configs; the memo only saves work."""
    zobrist = np.random.default_rng(0x5EED).integers(1, 1 << 62, MAX_TILES + MAX_VALUES, dtype=np.int64)
    return (
        np.empty(MAX_MOVES, np.int64),  # legal moves
        np.zeros(MAX_TILES, np.int64),  # reserved[tile] (planner: the chain on turn)
        np.empty(MAX_TILES, np.int64),  # a hand's tiles
        np.zeros(MAX_TILES, np.bool_),  # used by the chain search
        np.empty((MAX_TILES + 2, MAX_TILES + 1), np.int64),  # chains per depth
        np.empty((MAX_TILES + 2, FRAME_FIELDS), np.int64),  # search stack
        np.zeros(1, np.int64),  # states expanded
        np.zeros((MEMO_SIZE, MEMO_WIDTH), np.int64),  # chain memo
        zobrist,
        int(limit),
        (  # the planner's work arrays (planner_move)
            np.empty(MAX_TILES, np.int64),  # the seat's chain
            np.empty(MAX_TILES, np.int64),  # its hand
            np.empty(MAX_TILES, np.int64),  # the hand without one tile
            np.empty(MAX_MOVES, np.int64),  # play keys
            np.empty(MAX_MOVES, np.bool_),  # key exact
            np.empty(MAX_MOVES, np.int64),  # relative actions
        ),
    )


class ThreadPool:
    """Threads for :func:`run_rollouts` and a rollout scratch for each (one per game config:
    a scratch's memo holds chains of one tile set)."""

    def __init__(self, threads: int) -> None:
        if threads < 2:
            raise ValueError(f"a rollout thread pool needs >= 2 threads, got {threads}")
        self.threads = threads
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="rollouts")
        self.scratch = [scratch() for _ in range(threads)]

    def close(self) -> None:
        """Stop the threads (a pool is also stopped when it is garbage collected)."""
        self.executor.shutdown(wait=True)

    def blocks(self, first: int, count: int, work: Callable[[int, int, Any], np.ndarray]) -> np.ndarray:
        """``work(first, count, scratch)`` over one contiguous block of determinizations
        ``first .. first + count - 1`` per thread, each on its thread's scratch, the blocks'
        rows concatenated in order. When ``work``'s rows are functions of their index alone
        (a world is a function of ``(base, index)``), the result is the array one call on
        one thread would give."""
        bounds = np.linspace(0, count, min(self.threads, count) + 1).astype(np.int64).tolist()
        parts = self.executor.map(
            lambda i: work(first + bounds[i], bounds[i + 1] - bounds[i], self.scratch[i]),
            range(len(bounds) - 1),
        )
        return np.concatenate(list(parts), axis=0)


class Determinizer:
    """One seat's decision, ready for compiled rollouts: a template state and the dealer's
    constraints, both read from the seat's :class:`PublicView` only.

    The template is one pure determinization (:func:`sample_state` from ``rng``) converted
    once; every determinization ``index`` re-deals its hidden tiles (:func:`deal_hidden`).

    Only the seat on turn decides, and for it re-dealing from the voids is exact where
    ``sample_state`` needs more: no opponent is a seat that just drew unseen (the drawer
    is the seat on turn), and a world where the round would already have ended (R23,
    nobody can play) leaves the seat on turn no choice to search. A view of a seat not on
    turn is refused.
    """

    def __init__(self, game: CompiledMexicanTrain, view: PublicView, rng: np.random.Generator) -> None:
        if not view.on_turn:
            raise ValueError(f"a Determinizer deals the worlds of the seat on turn; seat {view.seat} is not")
        self.game = game
        self.view = view
        reference = game.reference
        n = game.n
        self.template = game.to_compiled(sample_state(reference, view, rng))
        unseen_list = bits_list(view.unseen)
        self.unseen = np.array(unseen_list, np.int64)
        allowed = np.zeros((MAX_SEATS, MAX_TILES), np.bool_)
        opponents = [q for q in range(n) if q != view.seat]
        counts: dict[int, int] = {}
        for q in opponents:
            banned = banned_tiles(view, q)
            ok = [i for i in unseen_list if not banned >> i & 1]
            allowed[q, ok] = True
            counts[q] = len(ok)
        self.allowed = allowed
        order = sorted(opponents, key=lambda q: counts[q] - view.hand_counts[q])  # as sample_state
        self.order = np.array(order, np.int64)
        self.need = np.array([view.hand_counts[q] for q in order], np.int64)

    @property
    def dealer(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(template, tables, unseen, allowed, order, need)``: the first arguments of every
        kernel that deals this view's worlds (:func:`rollout_matrix`, :func:`advance_matrix`,
        the ISMCTS ``search``)."""
        return (self.template, self.game.tables, self.unseen, self.allowed, self.order, self.need)

    def state(self, base: int, index: int) -> np.ndarray:
        """Determinization ``index`` of the stream ``base`` as a full compiled state (the pure
        sampler deals it when the greedy dealer gives up, as ``sample_state`` does)."""
        s = self.template.copy()
        pool = np.empty(MAX_TILES, np.int64)
        owner = np.empty(MAX_TILES, np.int64)
        tb = self.game.tables
        if not deal_hidden(s, tb, self.unseen, self.allowed, self.order, self.need, base, index, pool, owner):
            s = self.fallback(base, index)
        return s

    def fallback(self, base: int, index: int) -> np.ndarray:
        """Determinization ``index`` dealt by the pure sampler (its exact dealer cannot fail)."""
        rng = np.random.default_rng([base, index, 1])
        return self.game.to_compiled(sample_state(self.game.reference, self.view, rng))


def run_rollouts(
    det: Determinizer,
    base: int,
    first: int,
    count: int,
    candidates: list[int],
    danger: int = 2,
    sc: Any = None,
    pool: ThreadPool | None = None,
) -> np.ndarray:
    """``(count, len(candidates))`` results of the view's seat: determinizations ``first ..
    first + count - 1`` of stream ``base``, every candidate (an absolute move) on each.

    With a ``pool``, the determinizations are split into one contiguous block per thread
    (the kernels release the GIL), each on its thread's scratch; a determinization is a
    function of ``(base, index)`` and the memo never changes an answer, so the result is
    the same array as on one thread."""
    if pool is not None and count > 1:
        return pool.blocks(
            first,
            count,
            lambda at, n, block_sc: run_rollouts(det, base, at, n, candidates, danger, block_sc),
        )
    tb = det.game.tables
    sc = scratch() if sc is None else sc
    cand = np.array(candidates, np.int64)
    out = np.zeros((count, len(candidates)), np.float64)
    dealt = np.ones(count, np.int64)
    seat = det.view.seat
    rollout_matrix(*det.dealer, base, first, cand, seat, danger, out, dealt, sc)
    for d in np.flatnonzero(dealt == 0).tolist():
        rollout_root(det.fallback(base, first + d), tb, cand, seat, danger, out[d], sc)
    return out
