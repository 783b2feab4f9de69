"""The block-dominoes observation: one flat float32 vector through named views.

Seats are RELATIVE to the observer, in PLAY order (B7): index 0 is the observer, 1 the
next player, ... With 4 players index 2 is always the partner and 1 and 3 the opponents,
whichever direction play goes. Pairs are relative too: 0 the observer's, 1 the other.
Only public information and the observer's own hand are encoded.

``ObservationLayout(config).views`` maps each name to ``(slice, shape)``:

====================  ==========  =====================================================
name                  shape       meaning
====================  ==========  =====================================================
hand                  (T,)        1 for each tile id in the observer's hand
played                (T,)        1 for each tile id in the line
played_by             (n, T)      tiles each relative seat laid this hand
ends                  (2, P)      one-hot open pip of end 0 and end 1 (zero when empty)
voids                 (n - 1, P)  pips relative seats 1.. n-1 have passed on this hand
opener                (n,)        one-hot relative seat that opened the hand
turn                  (n,)        one-hot relative seat on turn (zero once the hand ended)
hand_counts           (n,)        tiles in each relative seat's hand / 7
scores                (2,)        match points of own pair, other pair / target
====================  ==========  =====================================================

(``T = 28`` tiles, ``P = 7`` pip values; the first seven views are 0/1, the last two real.)

This is observation version :data:`OBSERVATION_VERSION` (``layout.version``; what a
version means and when it is bumped: :mod:`mtrain_env.tilegame.layout`).
"""

from __future__ import annotations

import numpy as np

from mtrain_env.block.core.config import GameConfig
from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.block.core.state import GameState, Phase
from mtrain_env.tilegame.layout import FlatLayout

__all__ = ["OBSERVATION_VERSION", "ObservationEncoder", "ObservationLayout"]

#: the version of the layout above (1: the table of the module docstring)
OBSERVATION_VERSION = 1


class ObservationLayout(FlatLayout):
    """Names, offsets and shapes of the observation for one config."""

    def __init__(self, config: GameConfig) -> None:
        n, t, p = config.num_players, config.num_tiles, config.max_pips + 1
        super().__init__(
            binary=[
                ("hand", (t,), "1 for each tile id in the observer's hand"),
                ("played", (t,), "1 for each tile id in the line"),
                ("played_by", (n, t), "tiles laid this hand by each seat (relative, play order)"),
                ("ends", (2, p), "one-hot open pip of end 0 (left) and end 1 (right); zero while empty"),
                ("voids", (n - 1, p), "pips each other seat passed on this hand (relative seats 1..n-1)"),
                ("opener", (n,), "one-hot relative seat that opened this hand (B5, B6)"),
                ("turn", (n,), "one-hot relative seat on turn; zero once the hand is over"),
            ],
            real=[
                ("hand_counts", (n,), 1.0, "tiles in each relative seat's hand / 7"),
                ("scores", (2,), np.inf, "match points (penalties) of own pair, other pair / target (B13)"),
            ],
            version=OBSERVATION_VERSION,
        )


class ObservationEncoder:
    """Fills observation vectors; every offset is precomputed once."""

    def __init__(self, game: BlockDominoes, layout: ObservationLayout) -> None:
        c = game.config
        self.layout = layout
        self.n = n = c.num_players
        t, self.p = c.num_tiles, c.max_pips + 1
        start = {name: v.slice.start for name, v in layout.views.items()}
        self._o_hand = start["hand"]
        self._o_played = start["played"]
        self._o_end0 = start["ends"]
        self._o_end1 = start["ends"] + self.p
        self._hand_scale = 1.0 / c.hand_size
        self._score_scale = 1.0 / c.target
        order = game.order
        self._order = order
        # per observer: [(seat, played_by shift)], [(seat, void shift)], {seat: opener bit}, {seat: turn bit}
        self._pb = [[(q, start["played_by"] + k * t) for k, q in enumerate(order[s])] for s in range(n)]
        self._void = [
            [(q, start["voids"] + (k - 1) * self.p) for k, q in enumerate(order[s]) if k] for s in range(n)
        ]
        self._opener_bit = [{q: 1 << (start["opener"] + k) for k, q in enumerate(order[s])} for s in range(n)]
        self._turn_bit = [{q: 1 << (start["turn"] + k) for k, q in enumerate(order[s])} for s in range(n)]

    def encode(self, s: GameState, seat: int) -> np.ndarray:
        """The observation of ``seat`` (public state + its own hand only)."""
        bits = s.hands[seat] << self._o_hand | s.table << self._o_played
        played_by = s.played_by
        for q, shift in self._pb[seat]:
            bits |= played_by[q] << shift
        left, right = s.ends
        if left >= 0:
            bits |= 1 << (self._o_end0 + left) | 1 << (self._o_end1 + right)
        voids = s.voids
        for q, shift in self._void[seat]:
            bits |= voids[q] << shift
        bits |= self._opener_bit[seat][s.opener]
        if s.phase == Phase.PLAYING:
            bits |= self._turn_bit[seat][s.current]
        hands = s.hands
        scale = self._hand_scale
        real = [hands[q].bit_count() * scale for q in self._order[seat]]
        own = seat % 2
        real.append(s.scores[own] * self._score_scale)
        real.append(s.scores[1 - own] * self._score_scale)
        return self.layout.fill(bits, real)
