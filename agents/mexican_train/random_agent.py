"""``random``: uniform over the legal actions (the floor every strategy must beat)."""

from __future__ import annotations

from agents.mexican_train.base import Agent, Decision


class RandomAgent(Agent):
    """Picks uniformly among the legal actions with its own seeded generator."""

    name = "random"

    def act(self, decision: Decision) -> int:
        legal = decision.legal_actions
        return int(legal[int(self.rng.integers(len(legal)))])
