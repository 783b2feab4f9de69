"""The exact optimum of the rest of a round for one seat that sees everything (a CHEAT's bound).

On the true state, with the boneyard's order known and every other seat playing a fixed
deterministic policy (the chain policy of ``mc``'s rollouts, the model the ``oracle``
agents search with, or with a ``scratch(planner=True)`` the planner's own moves, the
opponents of the "X + 3 x planner" lineup exactly), what is left of a round is a
deterministic one-player problem: the seat's own choices alone decide its result. This
module solves it by trying every sequence of those choices, depth first, forced moves and
the other seats' turns played as they come
(:func:`~mtrain_env.mexican_train.compiled.rollout.advance_to_choice`). A position reached
twice by the same moves in another order is solved once (a table keyed by a 128-bit
BLAKE2 digest of the compiled state, so a collision is out of practical reach).

The search is exponential in the seat's choices left, so it takes a node budget and gives
up (``None``) past it: in practice it solves positions where the seat holds up to about ten
tiles in a fraction of a second to a few seconds (docs/champion.md, step 21), and not the
start of a round. ``agents.tournament.exact_gap`` measures how far the one-ply bounds'
continuations (``oracle[rollout=policy]``, ``oracle[rollout=search,levels=k]``) fall short
of this optimum where it can be found.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from mtrain_env.mexican_train.compiled import engine, rollout
from mtrain_env.tilegame.validate import as_int

__all__ = ["exact_results_on"]


class _OverBudgetError(Exception):
    """Raised inside the search when it has expanded more positions than allowed."""


def exact_results_on(
    root: np.ndarray,
    tb: np.ndarray,
    seat: int,
    candidates: list[int],
    sc: Any,
    max_nodes: int = 1_000_000,
    danger: int = 2,
) -> list[float] | None:
    """The best result for ``seat`` (in pips, ``rollout_policies.round_result``'s scale) after each of
    ``candidates`` on the true compiled state ``root`` (``seat`` on turn), over every
    sequence of the seat's later choices; None when the candidates' trees together need
    more than ``max_nodes`` positions. The other seats play ``sc``'s policy (the chain
    policy with ``danger``, or the planner with ``scratch(planner=True)``)."""
    as_int("max_nodes", max_nodes, low=1, numpy=False, error=ValueError)
    solved: dict[bytes, float] = {}
    legal = np.empty(engine.MAX_MOVES, np.int64)
    nodes = 0

    def child(s: np.ndarray, move: int) -> np.ndarray:
        out = s.copy()
        engine.apply(out, tb, move)
        rollout.advance_to_choice(out, tb, seat, danger, sc)
        return out

    def best(s: np.ndarray) -> float:
        nonlocal nodes
        nodes += 1
        if nodes > max_nodes:
            raise _OverBudgetError
        if s[engine.S_PHASE] >= engine.ROUND_OVER:
            return float(rollout.round_result(s, tb, seat))
        key = hashlib.blake2b(s.tobytes(), digest_size=16).digest()
        value = solved.get(key)
        if value is None:
            moves = legal[: engine.legal_moves_into(s, tb, legal)].copy()
            value = solved[key] = max(best(child(s, int(m))) for m in moves)
        return value

    try:
        return [best(child(root, m)) for m in candidates]
    except _OverBudgetError:
        return None
