"""``classic``: the table strategy of Latin-American dominó, as a one-move scoring rule.

001 points to "estrategias y reglas básicas" without spelling them out; these are the
classic principles the brief names, each one term of the score of a legal move (the
highest score is played; ties go to the lowest action id):

* **hold**: lay the tile whose numbers you hold most of (``hold``): you stay able to follow them;
* **follow**: leave open ends you can still play on (``follow``);
* **partner**: keep your partner's numbers open (the numbers of the tiles the partner has laid,
  ``partner``) and never leave an end the partner has passed on (``partner_void``);
* **block**: leave ends the opponents have passed on, above all the next player
  (``block``), and avoid the numbers the opponents have been laying (``opponent``);
* **doubles** early (``double``; a double can only go where its number is open) and heavy
  tiles before light ones (``pips``; fewer pips to count if the hand is lost).

Everything comes from the seat's public view (its hand, who laid what, who passed on what).
"""

from __future__ import annotations

from typing import Any

from agents.block.base import BlockAgent, BlockDecision, new_ends

#: Hand-set, then ``hold``/``double``/``pips`` tuned against ``greedy`` in duplicate matches
#: (tuned on one range of match seeds, confirmed on another), where they beat the hand-set
#: weights. The partner terms stay: without them the agent scores worse.
DEFAULT_WEIGHTS: dict[str, float] = {
    "hold": 0.5,
    "follow": 1.0,
    "partner": 1.0,
    "partner_void": 2.0,
    "block": 2.5,
    "opponent": 0.5,
    "double": 3.0,
    "pips": 3.0,
}


class ClassicBlockAgent(BlockAgent):
    """Scores each legal move by the classic principles (see the module doc)."""

    name = "classic"

    def __init__(self, seed: int | None = None, **weights: float) -> None:
        super().__init__(seed)
        unknown = sorted(set(weights) - set(DEFAULT_WEIGHTS))
        if unknown:
            raise ValueError(f"unknown weight(s) {unknown}; known: {sorted(DEFAULT_WEIGHTS)}")
        self.weights = {**DEFAULT_WEIGHTS, **{k: float(v) for k, v in weights.items()}}

    def params(self) -> dict[str, Any]:
        return dict(self.weights)

    def act(self, decision: BlockDecision) -> int:
        legal = decision.legal_actions
        pass_action = decision.codec.PASS
        if legal == [pass_action]:
            return pass_action
        view = decision.view
        c = view.config
        tiles = c.tiles
        n = c.num_players
        seat = view.seat
        order = decision.game.order[seat]
        nxt = order[1]
        partner = view.partner if c.partners else -1
        opponents = [q for q in range(n) if q % 2 != seat % 2]
        w = self.weights

        def count(mask: int, v: int) -> int:
            return (mask & tiles.match[v]).bit_count()

        opp_laid = [sum(count(view.played_by[q], v) for q in opponents) for v in range(7)]
        best, best_score = legal[0], float("-inf")
        for action in legal:
            t = action >> 1
            a, b = tiles.tiles[t]
            rest = view.hand & ~(1 << t)
            score = w["hold"] * (count(rest, a) + (count(rest, b) if b != a else 0))
            for e in new_ends(view, action):
                score += w["follow"] * count(rest, e)
                if partner >= 0:
                    score += w["partner"] * count(view.played_by[partner], e)
                    score -= w["partner_void"] * (view.voids[partner] >> e & 1)
                for q in opponents:
                    score += w["block"] * (view.voids[q] >> e & 1) * (2 if q == nxt else 1)
                score -= w["opponent"] * opp_laid[e]
            score += w["double"] * (a == b) + w["pips"] * tiles.pips[t] / 12
            if score > best_score:
                best, best_score = action, score
        return best
