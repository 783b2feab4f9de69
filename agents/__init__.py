"""Agents behind one leak-free interface, the one play loop, and the tournament harness.

* :mod:`agents.base`: the interface every agent of every game implements;
* :mod:`agents.spec`: the one parser and validator of agent specs (``"mc[sims=64]"``);
* :mod:`agents.registry`: agents by name (``make_agent("planner", seed=0)``,
  ``make_agent("classic", game="block")``);
* :mod:`agents.play`: THE play loop (every caller plays games through it);
* :mod:`agents.mexican_train` and :mod:`agents.block`: each game's agents;
* :mod:`agents.tournament`: duplicate-deal tournaments, generic over both games;
  :func:`agents.tournament.evaluate` scores one agent in one call;
* :mod:`agents.custom`: :func:`~agents.custom.from_policy` makes an agent of a policy function or a model.
"""

from __future__ import annotations

from agents.mexican_train.base import Agent, Decision, decision_for
from agents.registry import REGISTRIES, agent_class, agent_names, make_agent, register, resolve
from agents.spec import AgentSpec

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
    "make_agent",
    "register",
    "resolve",
]
