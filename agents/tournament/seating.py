"""Who sits where and every seed: lineups, rotations and seeds derived from the run's seed.

Pure functions of integers, shared by the harness (to play) and the results file (to
check that a row is the one the plan derives for its seat).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

_TAG_DEAL, _TAG_SESSION, _TAG_AGENT = 0, 1, 2


def make_lineups(num_agents: int, num_players: int) -> list[tuple[int, ...]]:
    """Default lineups (agent indices by seat): cycle the agents, or every ``P``-subset."""
    if num_agents <= num_players:
        return [tuple(i % num_agents for i in range(num_players))]
    return list(itertools.combinations(range(num_agents), num_players))


def partner_lineups(num_agents: int, num_players: int) -> list[tuple[int, ...]]:
    """Default lineups of a partnership game (seats ``s`` and ``s + 2`` are partners).

    Partners are the same agent, so a game measures one agent's pair against another's:
    every two agents meet as ``a b a b`` (one agent alone plays itself); rotating the
    lineup by one seat swaps the pairs' hands.
    """
    if num_agents == 1:
        return [(0,) * num_players]
    return [(a, b) * (num_players // 2) for a, b in itertools.combinations(range(num_agents), 2)]


def seating(lineup: Sequence[int], rotation: int) -> tuple[int, ...]:
    """Agent index by seat in ``rotation``: seat ``s`` holds ``lineup[(s - rotation) mod P]``."""
    p = len(lineup)
    return tuple(lineup[(s - rotation) % p] for s in range(p))


def rotations(lineup: Sequence[int]) -> int:
    """Distinct rotations of a lineup: its cyclic period (``a b a b`` -> 2, ``a b c d`` -> 4).

    Rotating by the period gives back the same agent at every seat, so further rotations
    would replay identical seatings (exact copies for deterministic agents); the period
    already seats every agent of the lineup at every seat.
    """
    p = len(lineup)
    return next(k for k in range(1, p + 1) if all(lineup[s] == lineup[(s + k) % p] for s in range(p)))


def derive_seed(*words: int) -> int:
    """A 64-bit seed from non-negative ints via ``SeedSequence`` (order-sensitive, collision-safe)."""
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, np.uint64)[0])


def deal_seed(seed: int, deal: int) -> int:
    """Seed of the round-0 deal and first player of ``deal``."""
    return derive_seed(seed, _TAG_DEAL, deal)


def session_seed(seed: int, deal: int) -> int:
    """Env seed of ``deal``: deals rounds 1.. of a session, identically in every rotation."""
    return derive_seed(seed, _TAG_SESSION, deal)


def agent_seed(seed: int, deal: int, lineup: int, rotation: int, seat: int) -> int:
    """Seed for ``agent.reset()`` of the agent at ``seat`` in one game."""
    return derive_seed(seed, _TAG_AGENT, deal, lineup, rotation, seat)
