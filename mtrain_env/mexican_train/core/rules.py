"""The rules of Mexican Train (RULES.md R5-R24): legal moves, applying a move, turn order.

Moves are ints in ABSOLUTE train terms::

    play(tile, train) = tile * (n + 1) + train     train: 0..n-1 personal, n Mexican
    DRAW = T * (n + 1)
    PASS = T * (n + 1) + 1

(the env re-expresses trains relative to the acting seat). :meth:`MexicanTrain.apply`
trusts its input; :meth:`MexicanTrain.checked_apply` validates it first and leaves the
state untouched on error. No framework imports here (pgx/OpenSpiel style core).
"""

from __future__ import annotations

import numpy as np

from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.dealing import Deal, random_deal
from mtrain_env.mexican_train.core.scoring import positive_scores, zero_scores
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.actions import IllegalMoveError
from mtrain_env.tilegame.tiles import bits_list

# IllegalMoveError is shared with the block core and the env (mtrain_env.tilegame.actions);
# it is re-exported here, where it was defined first
__all__ = ["GAME_OVER", "NORMAL", "OPENING", "ROUND_OVER", "SEEK_ENGINE", "IllegalMoveError", "MexicanTrain"]

SEEK_ENGINE = Phase.SEEK_ENGINE
OPENING = Phase.OPENING
NORMAL = Phase.NORMAL
ROUND_OVER = Phase.ROUND_OVER
GAME_OVER = Phase.GAME_OVER


class MexicanTrain:
    """The static game: a :class:`GameConfig` plus precomputed tables, and the rule logic.

    State lives in :class:`GameState`; every method takes the state explicitly.
    """

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.tiles = config.tiles
        self.n = config.num_players
        self.width = config.num_trains
        self.mexican = config.mexican
        self.draw = config.draw_action
        self.pass_ = config.pass_action
        self._match = self.tiles.match
        self._doubles = self.tiles.doubles
        self._other = self.tiles.other_end
        self._pip_width = config.max_pips + 1
        self._other_seats = [tuple(q for q in range(self.n) if q != p) for p in range(self.n)]
        c = config
        self._any_play_unmarks = c.marker_off_by_any_play_on_it
        self._owner_anywhere_unmarks = c.marker_off_by_owner_play_anywhere
        self._multi_opening = c.multi_tile_opening
        self._opening_may_draw = c.opening_may_draw
        self._draw_until = c.draw_until_engine_match
        self._satisfy = not c.no_double_satisfaction
        self._reverse = c.satisfy_in_reverse_order
        self._one_double = c.one_double_per_turn
        self._cover_own = c.cover_own_double_on_it

    # ------------------------------------------------------------------ set-up
    def new_game(
        self,
        rng: np.random.Generator,
        deal: Deal | None = None,
        first_player: int | None = None,
    ) -> GameState:
        """A fresh episode at round 0, dealt from ``rng`` (or from ``deal``)."""
        s = GameState(self.n)
        s.scores = zero_scores(self.config)
        s.seat_offset = 0 if first_player is None else first_player
        s.first_player_forced = first_player is not None
        self.start_round(s, rng, deal)
        return s

    def start_round(self, s: GameState, rng: np.random.Generator, deal: Deal | None = None) -> None:
        """Deal round ``s.round_index`` (R4, R5, R8) and seat its first player (R6)."""
        c = self.config
        n = self.n
        v = c.engine_value(s.round_index)
        engine_id = self.tiles.double_id(v)
        if deal is None:
            deal = random_deal(c, v, rng)
        s.engine = v
        s.hands = list(deal.hands)
        s.boneyard = list(deal.boneyard)
        s.trains = [[] for _ in range(n + 1)]
        s.ends = [v] * (n + 1)
        s.markers = [False] * n
        s.table = 0
        s.pending = []
        s.turn_doubles = []
        s.first_turn_done = [False] * n
        s.voids = [0] * n
        s.pre_draw_voids = [0] * n
        s.blocked = False
        self._reset_turn(s)
        first = (s.seat_offset + s.round_index) % n  # R6
        s.engine_placed = True
        if c.engine_holder_opens:
            holder = next((p for p in range(n) if s.hands[p] >> engine_id & 1), None)
            if holder is not None:
                s.hands[holder] ^= 1 << engine_id
                if not s.first_player_forced:
                    first = holder
            else:
                s.engine_placed = False
        if s.engine_placed:
            s.table = 1 << engine_id
            s.phase = OPENING
            s.first_player = first
            s.current = first
            self._skip_empty_openers(s)
        else:
            s.phase = SEEK_ENGINE
            s.first_player = first
            s.current = first

    # ----------------------------------------------------------- legal moves
    def legal_moves(self, s: GameState) -> list[int]:
        """The legal moves of the seat on turn, in increasing order (R9-R22)."""
        phase = s.phase
        if phase == NORMAL:  # the common case first
            moves = self._plays(s)
            if moves:
                return moves
            return [self.draw] if self._may_draw(s) else [self.pass_]
        if phase >= ROUND_OVER:
            return []
        if phase == SEEK_ENGINE:
            return [self.draw]
        moves = self._plays(s)
        if moves:
            if phase == OPENING and self._multi_opening and s.tiles_this_turn:
                moves.append(self.pass_)  # R9: may stop after any tile
            return moves
        if phase == OPENING and self._multi_opening and s.tiles_this_turn:
            return [self.pass_]  # R9: the chain cannot go on
        return [self.draw] if self._may_draw(s) else [self.pass_]

    def _plays(self, s: GameState) -> list[int]:
        p = s.current
        hand = s.hands[p]
        if self._one_double and s.doubles_this_turn:
            hand &= ~self._doubles  # variant one_double_per_turn
        match = self._match
        ends = s.ends
        width = self.width
        moves = []
        for t in self._target_trains(s, p):
            m = hand & match[ends[t]]
            while m:
                low = m & -m
                moves.append((low.bit_length() - 1) * width + t)
                m ^= low
        if len(moves) > 1:
            moves.sort()
        return moves

    def _target_trains(self, s: GameState, p: int) -> list[int]:
        """Trains seat ``p`` may lay its next tile on, before matching (R9, R14, R18, R20)."""
        if s.phase == OPENING:
            return [p]  # R9 / one_tile_opening: own train only
        if s.pending and not s.tiles_this_turn:
            # R20/R21: the next tile goes on the first unsatisfied double
            return [self.first_pending(s)]
        if s.owes and self._cover_own:
            return [s.turn_doubles[-1]]  # variant cover_own_double_on_it
        # R14: own train, the Mexican train, and marked trains once ours has left the station
        targets = [p, self.mexican]
        if s.trains[p]:
            markers = s.markers
            for q in self._other_seats[p]:
                if markers[q]:
                    targets.append(q)
        return targets

    def first_pending(self, s: GameState) -> int:
        """The train whose unsatisfied double is satisfied first (R21: in the order played;
        ``satisfy_in_reverse_order``: the last one first). Needs ``s.pending``."""
        return s.pending[-1] if self._reverse else s.pending[0]

    def double_to_satisfy(self, s: GameState) -> int:
        """The train whose unsatisfied double the next tile must go on (R20, R21), or -1.

        Pending doubles bind from the end of the opening (R13) until the round ends.
        """
        return self.first_pending(s) if s.pending and s.phase == NORMAL else -1

    def oriented_train(self, s: GameState, t: int) -> list[tuple[int, int]]:
        """The tiles of train ``t`` from the station outward, each as ``(inner, outer)`` pips:
        the inner half matches the open end before it (R7), the first one the engine."""
        tiles = self.tiles.tiles
        out = []
        end = s.engine
        for i in s.trains[t]:
            a, b = tiles[i]
            if a != end:
                a, b = b, a
            out.append((a, b))
            end = b
        return out

    def _may_draw(self, s: GameState) -> bool:
        """R16: one draw per owed tile; ``draw_until_engine_match`` draws on without a train."""
        if not s.boneyard:
            return False
        if s.phase == OPENING and not self._opening_may_draw:
            return False  # R10: no draw on the first turn
        if not s.has_drawn:
            return True
        return self._draw_until and not s.trains[s.current]

    def void_values(self, s: GameState, p: int) -> int:
        """Pip bitmask v such that a v tile would be legal for ``p`` now.

        When ``p`` is forced to draw or pass, its hand provably holds none of these
        (the public "shown void" knowledge of the observation).
        """
        ends = s.ends
        mask = 0
        for t in self._target_trains(s, p):
            mask |= 1 << ends[t]
        if self._one_double and s.doubles_this_turn:
            # a v-v double would not have been legal: v is proven absent only if v-v is out
            for v in bits_list(mask):
                if not s.table >> self.tiles.double_id(v) & 1:
                    mask &= ~(1 << v)
        return mask

    # ----------------------------------------------------------------- apply
    def apply(self, s: GameState, move: int) -> None:
        """Apply a LEGAL move of the seat on turn (unchecked; see :meth:`checked_apply`)."""
        s.history_len += 1
        if move == self.draw:
            self._apply_draw(s)
        elif move == self.pass_:
            self._apply_pass(s)
        else:
            self._apply_play(s, move)

    def checked_apply(self, s: GameState, move: int) -> None:
        """Apply ``move`` if legal, else raise :class:`IllegalMoveError` and change nothing."""
        legal = self.legal_moves(s)
        if move not in legal:
            raise IllegalMoveError(self.explain_illegal(s, move, legal))
        self.apply(s, move)

    def _apply_draw(self, s: GameState) -> None:
        p = s.current
        tile = s.boneyard.pop()
        if s.phase == SEEK_ENGINE:
            # R5 variant: seats draw in turn until the engine appears; its finder opens
            if tile == self.tiles.double_id(s.engine):
                s.engine_placed = True
                s.table = 1 << tile
                s.phase = OPENING
                s.first_player = p
                self._skip_empty_openers(s)
            else:
                s.hands[p] |= 1 << tile
                s.current = (p + 1) % self.n
            return
        # public knowledge: the hand before this draw holds none of the legal values
        s.pre_draw_voids[p] = s.voids[p] | self.void_values(s, p)
        s.voids[p] = 0  # the drawn tile is unknown to the others
        s.hands[p] |= 1 << tile
        s.has_drawn = True

    def _apply_pass(self, s: GameState) -> None:
        p = s.current
        voluntary_stop = s.phase == OPENING and self._multi_opening and s.tiles_this_turn
        if not voluntary_stop:
            s.voids[p] |= self.void_values(s, p)
            # R10 / R16 / R20: the passing seat marks its train, unless the variant spares it
            if not (self.config.no_marker_when_forced_to_satisfy and s.obliged_this_turn):
                s.markers[p] = True
        self._end_turn(s)

    def _apply_play(self, s: GameState, move: int) -> None:
        p = s.current
        tile, t = divmod(move, self.width)
        bit = 1 << tile
        s.hands[p] ^= bit
        s.table |= bit
        s.ends[t] = self._other[tile * self._pip_width + s.ends[t]]  # R7
        s.trains[t].append(tile)
        if s.has_drawn:
            # the tile laid after a draw is the drawn one: the old hand is known again
            s.voids[p] = s.pre_draw_voids[p]
            s.has_drawn = False  # R18: each owed tile allows one draw
        # R17 markers
        if t < self.n and s.markers[t] and (t == p or self._any_play_unmarks):
            s.markers[t] = False
        if self._owner_anywhere_unmarks:
            s.markers[p] = False
        # R20-R22: a tile on a double's train satisfies it (trains are lines; no branch)
        if s.pending and t in s.pending:
            s.pending.remove(t)
        if s.turn_doubles and t in s.turn_doubles:
            s.turn_doubles.remove(t)
        s.tiles_this_turn += 1
        is_double = self._doubles >> tile & 1
        if is_double:
            s.doubles_this_turn += 1
            s.turn_doubles.append(t)
        if not s.hands[p]:
            if s.phase == NORMAL:
                self._finish_round(s, blocked=False)  # R19: going out ends the round at once
            else:
                self._end_turn(s)  # R12: the opening goes round first
            return
        if s.phase == OPENING:
            if not self._multi_opening:
                self._end_turn(s)  # one_tile_opening: one tile (never a double here)
            return  # R9: the chain may go on
        if is_double:
            s.owes = True  # R18: one more tile is owed
        else:
            self._end_turn(s)

    # ------------------------------------------------------------ turn order
    def _reset_turn(self, s: GameState) -> None:
        s.tiles_this_turn = 0
        s.doubles_this_turn = 0
        s.owes = False
        s.has_drawn = False
        s.obliged_this_turn = False

    def _end_turn(self, s: GameState) -> None:
        p = s.current
        if s.turn_doubles:
            if self._satisfy:
                s.pending.extend(s.turn_doubles)  # R13, R20, R21: in the order played
            s.turn_doubles = []
        self._reset_turn(s)
        n = self.n
        if s.phase == OPENING:
            s.first_turn_done[p] = True
            s.current = (p + 1) % n
            if self._skip_empty_openers(s):
                return
            # every seat has had its first turn (R12, R13)
            if not all(s.hands):
                self._finish_round(s, blocked=False)
                return
            s.phase = NORMAL
        else:
            s.current = (p + 1) % n
        if not s.boneyard and self._is_blocked(s):
            self._finish_round(s, blocked=True)
            return
        s.obliged_this_turn = bool(s.pending)

    def _skip_empty_openers(self, s: GameState) -> bool:
        """Move ``current`` past seats with no tiles; True while someone still opens."""
        done = s.first_turn_done
        p = s.current
        for _ in range(self.n):
            if done[p]:
                return False
            if s.hands[p]:
                s.current = p
                return True
            done[p] = True  # an empty hand takes no action (R15)
            p = (p + 1) % self.n
        return False

    def _is_blocked(self, s: GameState) -> bool:
        """R23: nobody could lay a tile even if every train carried a marker.

        Called only with an empty boneyard, after a turn from the end of the opening on.
        A binding unsatisfied double restricts every seat to that double (R20).
        """
        match = self._match
        ends = s.ends
        if s.pending:
            v = ends[self.first_pending(s)]
            return not any(h & match[v] for h in s.hands)
        any_end = 0
        for e in ends:
            any_end |= match[e]
        for p in range(self.n):
            # R14: without its own train a seat reaches only its own train and the Mexican
            reach = any_end if s.trains[p] else match[ends[p]] | match[ends[self.mexican]]
            if s.hands[p] & reach:
                return False
        return True

    # --------------------------------------------------------------- scoring
    def _finish_round(self, s: GameState, blocked: bool) -> None:
        """R23/R24: score the round; the episode ends after ``config.rounds`` rounds (R25)."""
        c = self.config
        s.blocked = blocked
        penalties = [self.tiles.hand_value(h, c.blank_penalty) for h in s.hands]
        round_score: list[float]
        if c.positive_scoring:
            round_score = positive_scores(penalties, [not h for h in s.hands])
        else:
            round_score = list(penalties)  # R24: pips, whole numbers
        s.round_scores.append(round_score)
        s.scores = [a + b for a, b in zip(s.scores, round_score, strict=True)]
        s.phase = GAME_OVER if s.round_index + 1 >= c.rounds else ROUND_OVER

    def next_round(self, s: GameState, rng: np.random.Generator, deal: Deal | None = None) -> None:
        """Deal the next round of a session (R25) after a ``ROUND_OVER`` (from ``rng``, or ``deal``)."""
        if s.phase != ROUND_OVER:
            raise ValueError(f"R25: next_round needs a finished round, the phase is {s.phase.name}")
        s.round_index += 1
        self.start_round(s, rng, deal)

    def penalties(self, s: GameState) -> list[int]:
        """Pips left in each hand (R24, ``blank_penalty`` aware)."""
        return [self.tiles.hand_value(h, self.config.blank_penalty) for h in s.hands]

    # ------------------------------------------------------------- messages
    def describe_move(self, s: GameState, move: int) -> str:
        """Human-readable form of a move, trains named by owner (no encoding ambiguity)."""
        if move == self.draw:
            return "DRAW"
        if move == self.pass_:
            return "PASS"
        tile, t = divmod(move, self.width)
        return f"{self.tiles.tiles[tile]} on {self.train_name(s, t)}"

    def train_name(self, s: GameState, t: int) -> str:
        """``"its own train"``, ``"player_3's train"`` or ``"the Mexican train"``."""
        if t == self.mexican:
            return "the Mexican train"
        if t == s.current:
            return f"its own train (player_{t}'s)"
        return f"player_{t}'s train"

    def explain_illegal(self, s: GameState, move: int, legal: list[int]) -> str:
        """Why ``move`` is illegal, naming the rule, and what is legal."""
        legal_txt = ", ".join(self.describe_move(s, m) for m in legal[:20])
        if len(legal) > 20:
            legal_txt += f", ... ({len(legal)} in all)"
        if s.phase >= ROUND_OVER:
            return "the round is over; no move is legal"
        rule = self._rule_broken(s, move, legal)
        return f"illegal move {self.describe_move(s, move)}: {rule}. Legal: [{legal_txt}]"

    def _rule_broken(self, s: GameState, move: int, legal: list[int]) -> str:
        p = s.current
        if move == self.draw:
            if not s.boneyard:
                return "R16: the boneyard is empty"
            if s.phase == OPENING and not self._opening_may_draw:
                return "R10: no draw on the first turn (pass and mark the train)"
            if any(m < self.draw for m in legal):
                return "R15/R16: a seat that can play must play; it may not draw"
            return "R16: only one draw per owed tile"
        if move == self.pass_:
            return "R15: no voluntary pass while a tile can be played or drawn"
        tile, t = divmod(move, self.width)
        if not s.hands[p] >> tile & 1:
            return f"R14: a turn lays a tile from the seat's own hand; {self.tiles.tiles[tile]} is not in it"
        if s.phase == SEEK_ENGINE:
            return "R5: seats draw in turn until the engine appears"
        if self._other[tile * self._pip_width + s.ends[t]] < 0:
            return f"R7: {self.tiles.tiles[tile]} does not match the open end {s.ends[t]}"
        if s.phase == OPENING:
            return "R9: on the first turn a seat plays only on its own train"
        if s.pending and not s.tiles_this_turn:
            return "R20/R21: the next tile must satisfy the first unsatisfied double"
        if s.owes and self._cover_own:
            return "cover_own_double_on_it: the extra tile goes on the double just played"
        if self._one_double and s.doubles_this_turn and self._doubles >> tile & 1:
            return "one_double_per_turn: a second double in one turn"
        if t != p and t != self.mexican:
            if not s.markers[t]:
                return f"R14: {self.train_name(s, t)} carries no marker"
            return "R14: a seat plays on marked trains only once its own train has left the station"
        return "R14: not a legal placement in this position"
