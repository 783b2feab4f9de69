"""Agents behind one leak-free interface, the one play loop, and the tournament harness.

* :mod:`agents.base`: the interface every agent of every game implements;
* :mod:`agents.spec`: the one parser and validator of agent specs (``"mc[sims=64]"``);
* :mod:`agents.registry`: agents by name (``make_agent("planner", seed=0)``,
  ``make_agent("classic", game="block")``);
* :mod:`agents.play`: THE play loop (every caller plays games through it);
* :mod:`agents.mexican_train` and :mod:`agents.block`: each game's agents;
* :mod:`agents.tournament`: duplicate-deal tournaments, generic over both games;
  :func:`evaluate` scores one agent in one call, :func:`from_policy` makes an agent of a
  policy function or a model.
"""

from __future__ import annotations

from typing import Any

from agents.mexican_train.base import Agent, Decision, decision_for
from agents.registry import REGISTRIES, agent_class, agent_names, make_agent, register, resolve
from agents.spec import AgentSpec


def __getattr__(name: str) -> Any:
    """``agents.evaluate`` and ``agents.from_policy``, imported on first use (the harness is
    not needed to build an agent)."""
    if name == "evaluate":
        from agents.tournament.evaluate import evaluate

        return evaluate
    if name == "from_policy":
        from agents.custom import from_policy

        return from_policy
    raise AttributeError(f"module 'agents' has no attribute {name!r}")


#: the Mexican Train agent table (name -> class, or its "module:Class" path until first use)
REGISTRY = REGISTRIES["mexican_train"]

__all__ = [
    "REGISTRY",
    "Agent",
    "AgentSpec",
    "Decision",
    "agent_class",
    "agent_names",
    "decision_for",
    "evaluate",
    "from_policy",
    "make_agent",
    "register",
    "resolve",
]
