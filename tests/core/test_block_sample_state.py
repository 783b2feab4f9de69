"""Block dominoes' determinizer (``core.public.sample_state``) and the shared constrained dealer.

A sampled state shows the seat exactly its view, is a state the rules reach (the
invariants hold: the hidden tiles are the unseen ones, no seat holds a pip it passed on,
the hand is not closed), and varies with the generator; the dealer's Hall fallback deals
what the random greedy one may miss, and refuses an impossible deal.
"""

from __future__ import annotations

import numpy as np
import pytest

from mtrain_env.block.core.config import GameConfig
from mtrain_env.block.core.invariants import check_state
from mtrain_env.block.core.public import public_view, sample_state
from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.tilegame.deal import constrained_deal, hall_deal


@pytest.mark.parametrize("players", [2, 4])
def test_sampled_states_keep_the_view_and_the_rules(players: int) -> None:
    game = BlockDominoes(GameConfig.make(num_players=players))
    rng = np.random.default_rng(1)
    varied = 0
    for _ in range(40):
        s = game.new_game(rng)
        while game.legal_moves(s):
            seat = s.current
            view = public_view(s, game.config, seat)
            t = sample_state(game, view, rng)
            assert public_view(t, game.config, seat) == view
            check_state(game, t)
            for q in range(players):
                for v in range(7):
                    if view.voids[q] >> v & 1:
                        assert not t.hands[q] & game.tiles.match[v]
            varied += t.hands != s.hands
            moves = game.legal_moves(s)
            game.apply(s, moves[int(rng.integers(len(moves)))])
    assert varied > 0


def test_constrained_deal_respects_counts_and_allowed_tiles() -> None:
    rng = np.random.default_rng(0)
    unseen = (1 << 12) - 1
    for deal in (constrained_deal, hall_deal):
        for _ in range(50):
            hands, rest = deal(unseen, [3, 4], [0b000000111111, unseen], rng)
            assert [h.bit_count() for h in hands] == [3, 4]
            assert not hands[0] & ~0b000000111111
            assert not hands[0] & hands[1]
            assert sorted(rest) == [i for i in range(12) if not (hands[0] | hands[1]) >> i & 1]


def test_constrained_deal_refuses_an_impossible_deal() -> None:
    with pytest.raises(ValueError, match="no deal exists"):
        constrained_deal(0b1111, [3, 2], [0b1111, 0b1111], np.random.default_rng(0))
