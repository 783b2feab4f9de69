"""One flat float32 observation filled through named views, with a published layout.

Everything is RELATIVE to the observing seat ``s``: train/seat index 0 is ``s`` itself,
index k is seat ``(s + k) mod n``, and train index ``n`` is the Mexican train. Opponent
views (``opponent_*``) list seats ``s+1 .. s+n-1`` in that order. Only public information
and the observer's own hand are encoded (no hidden tile ever reaches a vector).

``ObservationLayout.views`` maps each name to ``(slice, shape)`` so research code can
slice by name: ``obs[layout["hand"].slice].reshape(layout["hand"].shape)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mtrain_env.core.config import GameConfig
from mtrain_env.core.rules import MexicanTrain
from mtrain_env.core.state import GameState, Phase

#: The phase flags, in order (several may be set at once).
PHASE_FLAGS: tuple[str, ...] = ("seek_engine", "opening", "normal", "owes_tile", "has_drawn")


class View(NamedTuple):
    """Where one named part lives in the flat observation: ``obs[slice].reshape(shape)``."""

    slice: slice
    shape: tuple[int, ...]


class ObservationLayout:
    """The names, offsets and shapes of the observation vector for one config."""

    def __init__(self, config: GameConfig) -> None:
        n, t, w, pips = config.num_players, config.num_tiles, config.num_trains, config.max_pips + 1
        specs: list[tuple[str, tuple[int, ...], float, str]] = [
            ("hand", (t,), 1.0, "1 for each tile id in the observer's hand"),
            ("table", (t,), 1.0, "1 for each tile id on the table (the engine included)"),
            ("train_started", (w,), 1.0, "the train has left the station (own, next seats, Mexican)"),
            ("train_end", (w, pips), 1.0, "one-hot open-end pip value of each train (engine if empty)"),
            ("train_marker", (w,), 1.0, "a marker is on the train (R10, R16, R17); 0 for the Mexican"),
            ("train_double", (w,), 1.0, "the train ends in an unsatisfied double (R18, R20)"),
            ("train_length", (w,), np.inf, "tiles in the train / (max_pips + 1)"),
            ("pending_first", (w,), 1.0, "one-hot: the train whose double must be satisfied next (R21)"),
            ("pending_count", (1,), np.inf, "binding unsatisfied doubles, in satisfaction order (R21)"),
            ("phase", (len(PHASE_FLAGS),), 1.0, "flags " + "/".join(PHASE_FLAGS)),
            ("engine", (pips,), 1.0, "one-hot pip value of this round's engine (R5)"),
            ("boneyard_count", (1,), 1.0, "tiles in the boneyard / tiles in the set"),
            ("first_turn_done", (n,), 1.0, "the seat has had its first turn (R9-R13), relative seats"),
            ("opponent_hand_count", (n - 1,), np.inf, "tiles in each opponent's hand / hand_size"),
            (
                "opponent_void",
                (n - 1, pips),
                1.0,
                "the opponent has shown it holds no tile of that pip (drew or passed where it was legal)",
            ),
        ]
        if config.rounds > 1:
            specs += [
                ("round", (config.rounds,), 1.0, "one-hot round index of the session (R25)"),
                (
                    "scores",
                    (n,),
                    np.inf,
                    "cumulative session scores / (hand_size * max_pips), relative seats",
                ),
            ]
        self.views: dict[str, View] = {}
        self.docs: dict[str, str] = {}
        self.high = np.empty(sum(int(np.prod(shape)) for _, shape, _, _ in specs), dtype=np.float32)
        offset = 0
        for name, shape, high, doc in specs:
            size = int(np.prod(shape))
            self.views[name] = View(slice(offset, offset + size), shape)
            self.docs[name] = doc
            self.high[offset : offset + size] = high
            offset += size
        self.size = offset

    def __getitem__(self, name: str) -> View:
        return self.views[name]

    def split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """The observation as a dict of named, reshaped views (numpy views, no copy)."""
        lead = obs.shape[:-1]
        return {name: obs[..., v.slice].reshape(lead + v.shape) for name, v in self.views.items()}

    def as_table(self) -> list[tuple[str, int, int, tuple[int, ...], str]]:
        """``(name, start, stop, shape, doc)`` rows, for docs and the README."""
        return [(k, v.slice.start, v.slice.stop, v.shape, self.docs[k]) for k, v in self.views.items()]


def _bits(mask: int, nbits: int) -> np.ndarray:
    """The low ``nbits`` bits of ``mask`` as a uint8 0/1 array (fast via unpackbits)."""
    raw = np.frombuffer(mask.to_bytes((nbits + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little", count=nbits)


class ObservationEncoder:
    """Fills observation vectors for one game; precomputes every offset once."""

    def __init__(self, game: MexicanTrain, layout: ObservationLayout) -> None:
        self.game = game
        self.layout = layout
        c = game.config
        self.n = c.num_players
        self.pips = c.max_pips + 1
        self.num_tiles = c.num_tiles
        self.w = c.num_trains
        L = layout.views
        self._hand = L["hand"].slice
        self._table = L["table"].slice
        self._started = L["train_started"].slice
        self._end0 = L["train_end"].slice.start
        self._marker = L["train_marker"].slice
        self._double = L["train_double"].slice
        self._length = L["train_length"].slice
        self._pfirst0 = L["pending_first"].slice.start
        self._pcount = L["pending_count"].slice.start
        self._phase0 = L["phase"].slice.start
        self._engine0 = L["engine"].slice.start
        self._bone = L["boneyard_count"].slice.start
        self._ftd = L["first_turn_done"].slice
        self._ohc = L["opponent_hand_count"].slice
        self._void = L["opponent_void"].slice
        self._session = "round" in L
        if self._session:
            self._round0 = L["round"].slice.start
            self._scores = L["scores"].slice
        self._end_rows = np.arange(self.w) * self.pips + self._end0
        self._hand_scale = 1.0 / c.hand_size
        self._len_scale = 1.0 / self.pips
        self._score_scale = 1.0 / (c.hand_size * c.max_pips)
        # relative order of trains/seats for each observer
        self._train_order = [[(s + k) % self.n for k in range(self.n)] + [self.n] for s in range(self.n)]
        self._seat_order = [[(s + k) % self.n for k in range(self.n)] for s in range(self.n)]

    def encode(self, s: GameState, seat: int) -> np.ndarray:
        """The observation vector of ``seat`` (public state + its own hand only)."""
        obs = np.zeros(self.layout.size, dtype=np.float32)
        order = self._train_order[seat]
        seats = self._seat_order[seat]
        trains = s.trains
        obs[self._hand] = _bits(s.hands[seat], self.num_tiles)
        obs[self._table] = _bits(s.table, self.num_tiles)
        lengths = [len(trains[t]) for t in order]
        obs[self._started] = [1.0 if x else 0.0 for x in lengths]
        obs[self._length] = lengths
        obs[self._length] *= self._len_scale
        ends = s.ends
        obs[self._end_rows + [ends[t] for t in order]] = 1.0
        markers = s.markers
        obs[self._marker] = [markers[t] for t in seats] + [False]
        unsat = s.pending + s.turn_doubles
        if unsat:
            rel = {t: k for k, t in enumerate(order)}
            for t in unsat:
                obs[self._double.start + rel[t]] = 1.0
            if s.pending and s.phase == Phase.NORMAL:
                head = s.pending[-1] if self.game._reverse else s.pending[0]
                obs[self._pfirst0 + rel[head]] = 1.0
                obs[self._pcount] = len(s.pending)
        phase = s.phase
        if phase == Phase.SEEK_ENGINE:
            obs[self._phase0] = 1.0
        elif phase == Phase.OPENING:
            obs[self._phase0 + 1] = 1.0
        elif phase == Phase.NORMAL:
            obs[self._phase0 + 2] = 1.0
        if s.owes:
            obs[self._phase0 + 3] = 1.0
        if s.has_drawn:
            obs[self._phase0 + 4] = 1.0
        obs[self._engine0 + s.engine] = 1.0
        obs[self._bone] = len(s.boneyard) / self.num_tiles
        done = s.first_turn_done
        obs[self._ftd] = [done[q] for q in seats]
        hands = s.hands
        opp = seats[1:]
        obs[self._ohc] = [hands[q].bit_count() * self._hand_scale for q in opp]
        voids = s.voids
        packed = 0
        for k, q in enumerate(opp):
            packed |= voids[q] << (k * self.pips)
        if packed:
            obs[self._void] = _bits(packed, (self.n - 1) * self.pips)
        if self._session:
            obs[self._round0 + s.round_index] = 1.0
            scores = s.scores
            obs[self._scores] = [scores[q] * self._score_scale for q in seats]
        return obs
