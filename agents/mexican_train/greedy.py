"""``greedy``: shed the most pips now.

Among the legal plays it lays the tile of highest value (R2; with ``blank_penalty`` the
penalty value of :meth:`TileSet.tile_value`, so a blank counts 25). Ties: the seat's own
train first, then the lowest relative action id. It draws or passes only when that is
the only legal action (so in the R9 opening it never stops a chain early). No search,
no randomness: ``greedy`` is deterministic and ignores its seed.
"""

from __future__ import annotations

from functools import cache

from agents.mexican_train.base import Agent, Decision
from mtrain_env.tilegame.tiles import tile_set


@cache
def value_table(max_pips: int, blank_penalty: bool) -> tuple[int, ...]:
    """Penalty value of each tile id of a double-``max_pips`` set (R2, ``blank_penalty``)."""
    tiles = tile_set(max_pips)
    return tuple(tiles.tile_value(i, blank_penalty) for i in range(tiles.num_tiles))


def greedy_key(value: int, own_train: bool) -> int:
    """``greedy``'s preference for one play (higher is better): the tile's value (R2), then
    the seat's own train. ``mc``'s greedy rollout policy ranks plays with it too."""
    return value * 2 + own_train


class GreedyAgent(Agent):
    """Lays the highest-value legal tile; own train on ties, then the lowest action id."""

    name = "greedy"

    def act(self, decision: Decision) -> int:
        legal = decision.legal_actions
        if len(legal) == 1:
            return int(legal[0])
        game = decision.game
        width = game.width
        seat = decision.seat
        values = value_table(game.config.max_pips, game.config.blank_penalty)
        best = -1
        best_key = -1
        for a in legal:  # increasing: ties go to the lowest action id
            move = decision.to_move(a)
            if move >= game.draw:
                continue
            tile, train = divmod(move, width)
            k = greedy_key(values[tile], train == seat)
            if k > best_key:
                best_key, best = k, a
        return int(best if best >= 0 else legal[0])
