"""One flat float32 observation filled through named views, with a published layout.

Everything is RELATIVE to the observing seat ``s``: train/seat index 0 is ``s`` itself,
index k is seat ``(s + k) mod n``, and train index ``n`` is the Mexican train. Opponent
views (``opponent_*``) list seats ``s+1 .. s+n-1`` in that order. Only public information
and the observer's own hand are encoded (no hidden tile ever reaches a vector).

``ObservationLayout.views`` maps each name to ``(slice, shape)`` so research code can
slice by name: ``obs[layout["hand"].slice].reshape(layout["hand"].shape)``.
"""

from __future__ import annotations

import numpy as np

from mtrain_env.core.config import GameConfig
from mtrain_env.core.rules import MexicanTrain
from mtrain_env.core.state import GameState, Phase
from mtrain_env.layout import FlatLayout, View

__all__ = ["PHASE_FLAGS", "ObservationEncoder", "ObservationLayout", "View"]

#: The phase flags, in order (several may be set at once).
PHASE_FLAGS: tuple[str, ...] = ("seek_engine", "opening", "normal", "owes_tile", "has_drawn")


class ObservationLayout(FlatLayout):
    """The names, offsets and shapes of the Mexican Train observation for one config.

    The 0/1 views come first and the real-valued ones last (``binary_size`` marks the
    border), which lets the encoder fill every 0/1 view with one bit-unpacking call.
    """

    def __init__(self, config: GameConfig) -> None:
        n, t, w, pips = config.num_players, config.num_tiles, config.num_trains, config.max_pips + 1
        binary: list[tuple[str, tuple[int, ...], str]] = [
            ("hand", (t,), "1 for each tile id in the observer's hand"),
            ("table", (t,), "1 for each tile id on the table (the engine included)"),
            ("train_started", (w,), "the train has left the station (own, next seats, Mexican)"),
            ("train_end", (w, pips), "one-hot open-end pip value of each train (engine if empty)"),
            ("train_marker", (w,), "a marker is on the train (R10, R16, R17); 0 for the Mexican"),
            ("train_double", (w,), "the train ends in an unsatisfied double (R13, R18, R20)"),
            ("pending_first", (w,), "one-hot: the train whose double must be satisfied next (R20, R21)"),
            ("phase", (len(PHASE_FLAGS),), "flags " + "/".join(PHASE_FLAGS)),
            ("engine", (pips,), "one-hot pip value of this round's engine (R5)"),
            ("first_turn_done", (n,), "the seat has had its first turn (R9-R13), relative seats"),
            (
                "opponent_void",
                (n - 1, pips),
                "the opponent has shown it holds no tile of that pip (drew or passed where it was legal)",
            ),
        ]
        real: list[tuple[str, tuple[int, ...], float, str]] = [
            ("train_length", (w,), np.inf, "tiles in the train / (max_pips + 1)"),
            ("pending_count", (1,), np.inf, "binding unsatisfied doubles (R21)"),
            ("boneyard_count", (1,), 1.0, "tiles in the boneyard / tiles in the set"),
            ("opponent_hand_count", (n - 1,), np.inf, "tiles in each opponent's hand / hand_size"),
        ]
        if config.rounds > 1:
            binary.append(("round", (config.rounds,), "one-hot round index of the session (R25)"))
            real.append(
                ("scores", (n,), np.inf, "cumulative session scores / (hand_size * max_pips), relative seats")
            )
        super().__init__(binary, real)


class ObservationEncoder:
    """Fills observation vectors for one game; precomputes every offset once.

    All 0/1 features are OR-ed into one Python int at their bit offsets and unpacked in
    a single numpy call; the few real-valued features are written as one list.
    """

    def __init__(self, game: MexicanTrain, layout: ObservationLayout) -> None:
        self.game = game
        self.layout = layout
        c = game.config
        self.n = n = c.num_players
        self.pips = c.max_pips + 1
        self.num_tiles = c.num_tiles
        self.w = c.num_trains
        views = layout.views
        start = {name: v.slice.start for name, v in views.items()}
        self._o_hand = start["hand"]
        self._o_table = start["table"]
        self._o_started = start["train_started"]
        self._o_end = start["train_end"]
        self._o_marker = start["train_marker"]
        self._o_double = start["train_double"]
        self._o_pfirst = start["pending_first"]
        self._o_phase = start["phase"]
        self._o_engine = start["engine"]
        self._o_ftd = start["first_turn_done"]
        self._o_void = start["opponent_void"]
        self._session = "round" in views
        self._o_round = start.get("round", 0)
        self._hand_scale = 1.0 / c.hand_size
        self._len_scale = 1.0 / self.pips
        self._tile_scale = 1.0 / c.num_tiles
        self._score_scale = 1.0 / (c.hand_size * c.max_pips)
        # per observer: absolute trains / seats in relative order
        self._train_order = [[(s + k) % n for k in range(n)] + [n] for s in range(n)]
        self._seat_order = [[(s + k) % n for k in range(n)] for s in range(n)]
        self._opponents = [order[1:] for order in self._seat_order]
        self._fill = layout.fill
        self._rel_train = [{t: k for k, t in enumerate(order)} for order in self._train_order]
        # per observer, per relative train k: (absolute train, started bit, one-hot end base bit)
        self._train_bits = [
            [(t, 1 << (self._o_started + k), 1 << (self._o_end + k * self.pips)) for k, t in enumerate(order)]
            for order in self._train_order
        ]
        # per observer, per relative seat k: (absolute seat, marker bit, first-turn bit)
        self._seat_bits = [
            [(q, 1 << (self._o_marker + k), 1 << (self._o_ftd + k)) for k, q in enumerate(seats)]
            for seats in self._seat_order
        ]
        self._void_shift = [
            [(q, self._o_void + (k - 1) * self.pips) for k, q in enumerate(seats) if k]
            for seats in self._seat_order
        ]
        self._phase_bits = {
            Phase.SEEK_ENGINE: 1 << self._o_phase,
            Phase.OPENING: 1 << (self._o_phase + 1),
            Phase.NORMAL: 1 << (self._o_phase + 2),
        }
        self._owes_bit = 1 << (self._o_phase + 3)
        self._drawn_bit = 1 << (self._o_phase + 4)

    def encode(self, s: GameState, seat: int) -> np.ndarray:
        """The observation vector of ``seat`` (public state + its own hand only)."""
        trains = s.trains
        ends = s.ends
        bits = s.hands[seat] << self._o_hand | s.table << self._o_table
        for t, started_bit, end_base in self._train_bits[seat]:
            if trains[t]:
                bits |= started_bit
            bits |= end_base << ends[t]
        markers = s.markers
        done = s.first_turn_done
        for q, marker_bit, done_bit in self._seat_bits[seat]:
            if markers[q]:
                bits |= marker_bit
            if done[q]:
                bits |= done_bit
        pending_count = 0
        if s.pending or s.turn_doubles:
            rel = self._rel_train[seat]
            o_double = self._o_double
            for t in s.pending:
                bits |= 1 << (o_double + rel[t])
            for t in s.turn_doubles:
                bits |= 1 << (o_double + rel[t])
            if s.pending and s.phase == Phase.NORMAL:
                head = s.pending[-1] if self.game._reverse else s.pending[0]
                bits |= 1 << (self._o_pfirst + rel[head])
                pending_count = len(s.pending)
        bits |= self._phase_bits.get(s.phase, 0)
        if s.owes:
            bits |= self._owes_bit
        if s.has_drawn:
            bits |= self._drawn_bit
        bits |= 1 << (self._o_engine + s.engine)
        voids = s.voids
        for q, shift in self._void_shift[seat]:
            if voids[q]:
                bits |= voids[q] << shift
        if self._session:
            bits |= 1 << (self._o_round + s.round_index)
        hands = s.hands
        len_scale = self._len_scale
        hand_scale = self._hand_scale
        real = [
            *[len(trains[t]) * len_scale for t in self._train_order[seat]],
            pending_count,
            len(s.boneyard) * self._tile_scale,
            *[hands[q].bit_count() * hand_scale for q in self._opponents[seat]],
        ]
        if self._session:
            score_scale = self._score_scale
            real += [s.scores[q] * score_scale for q in self._seat_order[seat]]
        return self._fill(bits, real)
