"""Train orientation (R7) and the double to satisfy next (R20, R21) come from the rules core.

Rendering and serialization read both from :class:`MexicanTrain`, once (import cycles,
such as the one render and render_image had, are refused by the import-linter contracts
that ``tests/docs/test_layers.py`` runs).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import mtrain_env
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import Phase


@pytest.mark.parametrize("kwargs", [{}, {"satisfy_in_reverse_order": True, "num_players": 3, "max_pips": 9}])
def test_oriented_trains_chain_from_the_engine_r7_and_match_the_snapshot(kwargs: dict) -> None:
    env = mtrain_env.raw_env(**kwargs)
    env.reset(seed=11)
    game: MexicanTrain = env.game
    rng = np.random.default_rng(11)
    seen_head = 0
    while env.agents and env.state_obj.phase < Phase.ROUND_OVER:
        s = env.state_obj
        snap = json.loads(json.dumps(env.state_dict()))
        for t in range(game.width):
            tiles = game.oriented_train(s, t)
            assert len(tiles) == len(s.trains[t])
            end = s.engine
            for (a, b), i in zip(tiles, s.trains[t], strict=True):
                assert a == end and sorted((a, b)) == sorted(game.tiles.tiles[i])  # R7
                end = b
            assert end == s.ends[t]
            saved = snap["mexican_train"] if t == game.mexican else snap["trains"][t]
            assert saved == [list(p) for p in tiles]
        head = game.double_to_satisfy(s)
        if s.pending and s.phase == Phase.NORMAL:
            assert head == (s.pending[-1] if game.config.satisfy_in_reverse_order else s.pending[0])
            seen_head += 1
        else:
            assert head == -1
        env.step(int(rng.choice(env.legal_actions())))
    assert seen_head, "the game should have had a double to satisfy"
