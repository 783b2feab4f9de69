"""Agents for Mexican Train behind one interface (:mod:`agents.base`).

``make_agent(name, seed=..., **params)`` builds a registered agent by name.
"""

from __future__ import annotations

from typing import Any

from agents.base import Agent, Decision, decision_for
from agents.greedy import GreedyAgent
from agents.mc import MCAgent
from agents.planner import PlannerAgent
from agents.random_agent import RandomAgent

REGISTRY: dict[str, type[Agent]] = {
    cls.name: cls for cls in (RandomAgent, GreedyAgent, PlannerAgent, MCAgent)
}


def register(cls: type[Agent]) -> type[Agent]:
    """Add an agent class to the registry under ``cls.name``."""
    REGISTRY[cls.name] = cls
    return cls


def make_agent(name: str, seed: int | None = None, **params: Any) -> Agent:
    """Instantiate a registered agent; ``ValueError`` naming the known ones otherwise."""
    if name not in REGISTRY:
        raise ValueError(f"unknown agent {name!r}; known: {sorted(REGISTRY)}")
    return REGISTRY[name](seed=seed, **params)


# the trained-policy agent registers itself; imported here so that every process that
# imports ``agents`` (tournament workers are spawned fresh) knows "ppo" (torch loads lazily)
from agents import ppo as _ppo  # noqa: E402, F401

__all__ = ["REGISTRY", "Agent", "Decision", "decision_for", "make_agent", "register"]
