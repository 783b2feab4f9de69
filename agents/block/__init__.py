"""Agents for partnership dominoes (:mod:`mtrain_env.block`) behind one small interface.

``make_agent(name, seed=..., **params)`` builds ``random``, ``greedy`` or ``classic``;
``python -m agents.block.bench`` plays them against each other in pairs.
"""

from __future__ import annotations

from typing import Any

from agents.block.base import BlockAgent, BlockDecision, decision_for, new_ends
from agents.block.classic import ClassicBlockAgent
from agents.block.simple import GreedyBlockAgent, RandomBlockAgent

REGISTRY: dict[str, type[BlockAgent]] = {
    cls.name: cls for cls in (RandomBlockAgent, GreedyBlockAgent, ClassicBlockAgent)
}


def make_agent(name: str, seed: int | None = None, **params: Any) -> BlockAgent:
    """Instantiate a registered agent; ``ValueError`` naming the known ones otherwise."""
    if name not in REGISTRY:
        raise ValueError(f"unknown block agent {name!r}; known: {sorted(REGISTRY)}")
    return REGISTRY[name](seed=seed, **params)


__all__ = [
    "REGISTRY",
    "BlockAgent",
    "BlockDecision",
    "ClassicBlockAgent",
    "GreedyBlockAgent",
    "RandomBlockAgent",
    "decision_for",
    "make_agent",
    "new_ends",
]
