"""Agents for partnership block dominoes (:mod:`mtrain_env.block`) behind the common interface.

``make_agent(name, seed=..., **params)`` builds ``random``, ``greedy`` or ``classic``
(the ``block`` table of :mod:`agents.registry`); ``mtrain bench --game block`` plays them
against each other in pairs.
"""

from __future__ import annotations

from typing import Any

from agents import registry
from agents.block.base import BlockAgent, BlockDecision, decision_for, new_ends
from agents.block.classic import ClassicBlockAgent
from agents.block.simple import GreedyBlockAgent, RandomBlockAgent

#: the block agent table (name -> class, or its "module:Class" path until first use)
REGISTRY = registry.REGISTRIES["block"]


def make_agent(name: str, seed: int | None = None, **params: Any) -> BlockAgent:
    """Instantiate a registered block agent; ``ValueError`` naming the known ones otherwise."""
    agent: BlockAgent = registry.make_agent(name, seed=seed, game="block", **params)
    return agent


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
