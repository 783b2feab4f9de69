"""Two baselines: ``random`` (uniform over legal actions) and ``greedy`` (most pips first)."""

from __future__ import annotations

from agents.block.base import BlockAgent, BlockDecision


class RandomBlockAgent(BlockAgent):
    """Uniform over the legal actions, with its own seeded generator."""

    name = "random"

    def act(self, decision: BlockDecision) -> int:
        legal = decision.legal_actions
        return int(legal[int(self.rng.integers(len(legal)))])


class GreedyBlockAgent(BlockAgent):
    """Lays its heaviest playable tile (fewest pips left if the hand is lost); ties: a double
    first (doubles are the hardest tiles to place), then the lowest action id."""

    name = "greedy"

    def act(self, decision: BlockDecision) -> int:
        legal = decision.legal_actions
        tiles = decision.view.config.tiles
        pass_action = decision.codec.PASS
        if legal == [pass_action]:
            return pass_action
        return max(legal, key=lambda a: (tiles.pips[a >> 1], tiles.doubles >> (a >> 1) & 1, -a))
