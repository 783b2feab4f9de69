"""Partnership block dominoes: the rules core (legal moves, apply, hand end, match).

No PettingZoo, Gymnasium or framework import. Rule ids, mapped to ``reference/001`` (the
Latin-American rules, Spanish) and the last section of ``RULES.md``:

* **B1** Set: double six, 28 tiles; a tile is worth its pips (001 "Las fichas").
* **B2** Players: 4 in two pairs sitting opposite, seats 0&2 against 1&3 (001 "Los
  jugadores"). ``num_players=2``: two players alone (001 says nothing about two players;
  this mode is the classic two-handed block game, see B3).
* **B3** Deal: 7 tiles each, no boneyard: with 4 players the whole set is dealt; with 2
  the 14 other tiles stay face down and out of play all hand ("duermen"; the choice for
  the mode 001 does not describe, and OpenSpiel's ``python_block_dominoes`` rule).
* **B4** Redeal: a player holding 5 or more doubles shows them and everyone redeals,
  repeatedly (001 "Inicio del juego"); ``redeal_doubles`` 4/6/7 (001 "Variantes") or
  ``None`` (no redeal). The redeal is part of the seeded deal.
* **B5** First hand: the holder of the double six opens by laying it (001 "Inicio").
  With 2 players it may sleep: then the highest double dealt opens, and if nobody holds a
  double the heaviest tile dealt (our choice). ``first_opener="seat0"``: seat 0 opens with
  any tile (OpenSpiel's rule).
* **B6** Later hands: a member of the pair that won the last hand opens, with ANY tile
  (001 "Partidas siguientes"; the pair chooses, so the env fixes the choice by flag):
  ``opener="winner"`` the player who won it (who went out; in a cierre the winning pair's
  member with fewer pips, ties to the first in play order from the closer),
  ``"partner"`` that player's partner, ``"double_six"`` always the double-six holder with it
  (001 "Variantes", "no muy recomendable"). ``double_opening`` (001 "Variantes"): the
  opening tile must be a double when the opener holds one.
* **B7** Order: play goes clockwise, seat ``i`` then ``i + 1``; ``counter_clockwise``: ``i - 1``
  (001 "Nota"), the same for every hand.
* **B8** Line: one line with two open ends; a tile goes on either end, matching it; its
  other half becomes that end (001 "Flujo del juego"). A double is laid across but makes
  no branch. When both ends show the same pip, the two placements are mirror images and
  only end 0 is offered (one action per distinct position, as OpenSpiel's (tile, pip)).
* **B9** Forced play: a player who can lay a tile must (001 "Pase en falso"); one who cannot
  says "paso" (an explicit PASS action: the env never acts for a seat). A pass shows the
  player lacks both open pips (the public "voids").
* **B10** Dominó: a player who lays their last tile ends the hand; their pair wins and the
  losing pair scores the pips left in its own hands (001 "Dominó").
* **B11** Cierre: the hand ends as soon as nobody can lay a tile (checked after every tile,
  so no useless passes follow). The pair with fewer pips wins; the losing pair scores its
  own pips (``closed_scoring="loser"``) or each pair scores its own (``"both"``, 001
  "Partida cerrada"). Equal pips: the closer's pair wins (``closed_tie="closer"``), or
  loses (``"closer_loses"``), or the pair that opened wins (``"opener"``).
* **B12** Points: the pips (``scoring="pips"``), or the pips divided by ten rounded up
  (``"ten"``, 001 "Puntos"), where the default target is 40.
* **B13** Match: points add up; the pair that reaches or passes ``target`` (100; 50/200 in
  001 "Puntos") loses. Both at once (``"both"`` scoring only) -> a tie-break hand, whose
  losing pair loses the match ("partida extra de desempate").

001's penalties for irregularities (a misplaced tile or a false pass: 25 points) cannot
arise: the env refuses illegal actions (``raw_env`` raises, the wrapped env ends the game
with the illegal-move penalty).
"""

from __future__ import annotations

import numpy as np

from mtrain_env.block.core.config import GameConfig
from mtrain_env.block.core.dealing import Deal, random_deal
from mtrain_env.block.core.scoring import score_hand, settle_match
from mtrain_env.block.core.state import CIERRE, DOMINO, GameState, Phase
from mtrain_env.tilegame.actions import IllegalMoveError
from mtrain_env.tilegame.tiles import bits_list

__all__ = ["BlockDominoes"]


class BlockDominoes:
    """The static rules of one config; every method takes the state explicitly.

    Moves are the env's action ids (absolute, seats play the same ends)::

        move = tile_id * 2 + end      (end 0 = left, 1 = right; 0 when opening)
        PASS = 2 * T
    """

    def __init__(self, config: GameConfig) -> None:
        self.config = c = config
        self.tiles = t = c.tiles
        self.n = n = c.num_players
        self.PASS = c.pass_action
        self._match = t.match
        self._other = t.other_end
        self._width = c.max_pips + 1
        self._doubles = t.doubles
        d = c.direction
        #: next seat in play order (B7)
        self.next_seat = [(p + d) % n for p in range(n)]
        #: seats in play order starting from each seat
        self.order = [[(p + k * d) % n for k in range(n)] for p in range(n)]

    # ------------------------------------------------------------------ seats
    def partner(self, seat: int) -> int:
        """B2: the seat opposite (itself with 2 players)."""
        return (seat + 2) % self.n

    @staticmethod
    def pair(seat: int) -> int:
        """B2: the pair of a seat (0: seats 0&2, 1: seats 1&3; the seat itself with 2 players)."""
        return seat % 2

    # ------------------------------------------------------------------ hands
    def new_game(
        self, rng: np.random.Generator, deal: Deal | None = None, opener: int | None = None
    ) -> GameState:
        """The first hand of an episode (B3-B5), dealt with ``rng`` unless ``deal`` is given.

        ``opener`` overrides B5/B6: that seat opens with any tile (``double_opening`` still applies).
        """
        s = GameState(self.n)
        self._start_hand(s, deal if deal is not None else random_deal(self.config, rng), opener)
        return s

    def next_hand(
        self,
        s: GameState,
        rng: np.random.Generator,
        deal: Deal | None = None,
        opener: int | None = None,
    ) -> None:
        """Deal the next hand of a match (after ``HAND_OVER``); the opener follows B6."""
        if s.phase != Phase.HAND_OVER:
            raise ValueError(f"B13: the next hand starts only after a hand ended, phase is {s.phase.name}")
        s.hand_index += 1
        self._start_hand(s, deal if deal is not None else random_deal(self.config, rng), opener)

    def _start_hand(self, s: GameState, deal: Deal, opener: int | None) -> None:
        n = self.n
        s.phase = Phase.PLAYING
        s.hands = list(deal.hands)
        s.sleeping = deal.sleeping
        s.redeals = deal.redeals
        s.line = []
        s.ends = [-1, -1]
        s.table = 0
        s.played_by = [0] * n
        s.voids = [0] * n
        s.last_player = -1
        s.moves = 0
        s.forced_opening = -1
        if opener is not None:
            s.opener = opener
        else:
            s.opener, s.forced_opening = self._opener(s)
        s.current = s.opener

    def _opener(self, s: GameState) -> tuple[int, int]:
        """B5/B6: (opening seat, forced opening tile or -1)."""
        c = self.config
        first = s.hand_index == 0
        if first and c.first_opener == "seat0":
            return 0, -1
        if first or c.opener == "double_six":
            return self._heaviest_opening(s.hands)
        lead = s.results[-1].lead
        return (lead if c.opener == "winner" else self.partner(lead)), -1

    def _heaviest_opening(self, hands: list[int]) -> tuple[int, int]:
        """B5: the holder of the double six lays it; failing it (2 players) the highest double,
        failing any double the heaviest tile dealt."""
        dealt = 0
        for h in hands:
            dealt |= h
        doubles = dealt & self._doubles
        pool = doubles or dealt
        tile = max(bits_list(pool), key=lambda i: (self.tiles.pips[i], i))
        holder = next(p for p, h in enumerate(hands) if h >> tile & 1)
        return holder, tile

    # ------------------------------------------------------------------- play
    def legal_moves(self, s: GameState) -> list[int]:
        """Legal moves of the seat on turn, increasing (B5, B6, B8, B9); ``[]`` once the hand is over."""
        if s.phase != Phase.PLAYING:
            return []
        hand = s.hands[s.current]
        left, right = s.ends
        if left < 0:  # opening the hand
            if s.forced_opening >= 0:
                return [s.forced_opening * 2]
            if self.config.double_opening and hand & self._doubles:
                hand &= self._doubles
            return [i * 2 for i in bits_list(hand)]
        match = self._match
        out = [i * 2 for i in bits_list(hand & match[left])]
        if right != left:
            rights = [i * 2 + 1 for i in bits_list(hand & match[right])]
            out = sorted(out + rights) if out and rights else out or rights
        return out or [self.PASS]

    def can_play(self, s: GameState, seat: int) -> bool:
        """Whether ``seat`` holds a tile that fits an open end (the line is not empty)."""
        left, right = s.ends
        return bool(s.hands[seat] & (self._match[left] | self._match[right]))

    def apply(self, s: GameState, move: int) -> None:
        """Apply a LEGAL move of the seat on turn (unchecked; see :meth:`checked_apply`)."""
        seat = s.current
        s.moves += 1
        ends = s.ends
        if move == self.PASS:  # B9: a pass shows both open pips are missing
            s.voids[seat] |= (1 << ends[0]) | (1 << ends[1])
            s.current = self.next_seat[seat]
            return
        t = move >> 1
        bit = 1 << t
        s.hands[seat] ^= bit
        s.table |= bit
        s.played_by[seat] |= bit
        s.last_player = seat
        if ends[0] < 0:
            a, b = self.tiles.tiles[t]
            s.line.append((a, b))
            ends[0], ends[1] = a, b
            s.forced_opening = -1
        elif move & 1:
            v = ends[1]
            o = self._other[t * self._width + v]
            s.line.append((v, o))
            ends[1] = o
        else:
            v = ends[0]
            o = self._other[t * self._width + v]
            s.line.insert(0, (o, v))
            ends[0] = o
        if not s.hands[seat]:  # B10
            self._end_hand(s, DOMINO, seat)
            return
        reach = self._match[ends[0]] | self._match[ends[1]]
        for h in s.hands:
            if h & reach:
                break
        else:  # B11: nobody can lay a tile
            self._end_hand(s, CIERRE, seat)
            return
        s.current = self.next_seat[seat]

    def checked_apply(self, s: GameState, move: int) -> None:
        """:meth:`apply` after checking legality; otherwise
        :class:`~mtrain_env.tilegame.actions.IllegalMoveError` (a ``ValueError``) naming the
        rule, and nothing changed."""
        legal = self.legal_moves(s)
        if move not in legal:
            raise IllegalMoveError(self.explain_illegal(s, move, legal))
        self.apply(s, move)

    def explain_illegal(self, s: GameState, move: int, legal: list[int] | None = None) -> str:
        """Why ``move`` is not legal now (rule id first). ``legal`` (the shared signature's
        legal moves) is not needed: every refusal follows from the state and the move."""
        if s.phase != Phase.PLAYING:
            return f"the hand is over (phase {s.phase.name}); no move is legal"
        if not 0 <= move <= self.PASS:
            return f"move {move} is outside 0..{self.PASS}"
        seat = s.current
        if move == self.PASS:
            return f"B9: player_{seat} can lay a tile, so it may not pass"
        t, end = divmod(move, 2)
        tile = self.tiles.tiles[t]
        if not s.hands[seat] >> t & 1:
            return f"B8: player_{seat} does not hold {tile}"
        left, right = s.ends
        if left < 0:
            if s.forced_opening >= 0:
                return f"B5: this hand opens with {self.tiles.tiles[s.forced_opening]}"
            if end:
                return "B8: the opening tile is action end 0"
            return "B6: the opening tile must be a double (double_opening)"
        if left == right and end == 1:
            return f"B8: both ends show {left}; the mirror placement is end 0"
        pip = s.ends[end]
        return f"B8: {tile} does not match end {end}, which shows {pip}"

    def _end_hand(self, s: GameState, kind: str, seat: int) -> None:
        c = self.config
        pips_table = self.tiles.pips
        pips = [sum(pips_table[i] for i in bits_list(h)) for h in s.hands]
        result = score_hand(c, kind, seat, s.opener, pips, self.order[seat])
        s.results.append(result)
        s.scores[0] += result.points[0]
        s.scores[1] += result.points[1]
        loser, tiebreak = settle_match(c, s.scores, result, s.tiebreak)
        s.tiebreak = tiebreak
        if not c.match:
            s.phase = Phase.GAME_OVER
        elif loser >= 0:
            s.match_loser = loser
            s.phase = Phase.GAME_OVER
        else:
            s.phase = Phase.HAND_OVER

    def hand_pips(self, s: GameState) -> list[int]:
        """Pips left in each seat's hand (B1)."""
        pips_table = self.tiles.pips
        return [sum(pips_table[i] for i in bits_list(h)) for h in s.hands]
