"""One flat float32 observation filled through named views, with a published layout.

Everything is RELATIVE to the observing seat ``s``: train/seat index 0 is ``s`` itself,
index k is seat ``(s + k) mod n``, and train index ``n`` is the Mexican train. Opponent
views (``opponent_*``) list seats ``s+1 .. s+n-1`` in that order. Only public information
and the observer's own hand are encoded (no hidden tile ever reaches a vector).

``ObservationLayout.views`` maps each name to ``(slice, shape)`` so research code can
slice by name: ``obs[layout["hand"].slice].reshape(layout["hand"].shape)``.

**Versions** (``layout.version``, the env's ``observation_version``; what a version means
and when to bump it: :mod:`mtrain_env.tilegame.layout`). Every policy file records the
version its network was trained on and is refused by an env writing another one:

* 1 (:data:`OBSERVATION_VERSION`, the default; every shipped network): the views of
  :class:`ObservationLayout` below, ``round`` and ``scores`` only in a session (``rounds > 1``).
* 2 (opt-in, ``raw_env(observation_version=2)``): version 1 followed by ``hand_pips``.

A new view is added as a new version here (:data:`OBSERVATION_VERSIONS`, its views in
:data:`_ADDED_VIEWS`, filled by the encoder); the default stays, so trained networks keep
working until one is retrained on the new layout and the default is moved on purpose.
"""

from __future__ import annotations

import numpy as np

from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.rules import NORMAL, MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.layout import FlatLayout, View

__all__ = [
    "OBSERVATION_VERSION",
    "OBSERVATION_VERSIONS",
    "PHASE_FLAGS",
    "ObservationEncoder",
    "ObservationLayout",
    "View",
    "check_observation_version",
]

#: The phase flags, in order (several may be set at once).
PHASE_FLAGS: tuple[str, ...] = ("seek_engine", "opening", "normal", "owes_tile", "has_drawn")
#: the layout version envs write unless told otherwise (the module docstring lists them)
OBSERVATION_VERSION = 1
#: every version this code writes
OBSERVATION_VERSIONS: tuple[int, ...] = (1, 2)
#: the real-valued views each version appends to the one before it (version 1: the base layout)
_ADDED_VIEWS: dict[int, tuple[str, ...]] = {1: (), 2: ("hand_pips",)}


def check_observation_version(version: object) -> int:
    """``version`` if it is one of :data:`OBSERVATION_VERSIONS`, else ``ValueError`` naming them."""
    if type(version) is not int or version not in OBSERVATION_VERSIONS:  # not True, not 1.0
        raise ValueError(
            f"observation_version must be one of {', '.join(map(str, OBSERVATION_VERSIONS))}, got {version!r}"
        )
    return version


class ObservationLayout(FlatLayout):
    """The names, offsets and shapes of the Mexican Train observation for one config.

    The 0/1 views come first and the real-valued ones last (``binary_size`` marks the
    border), which lets the encoder fill every 0/1 view with one bit-unpacking call.
    ``version`` picks the layout (module docstring; ``ValueError`` for an unknown one).
    """

    def __init__(self, config: GameConfig, version: int = OBSERVATION_VERSION) -> None:
        check_observation_version(version)
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
        added = {
            "hand_pips": (
                (pips,),
                np.inf,
                "tiles in the observer's hand showing each pip value / hand_size (a double counts once)",
            )
        }
        for v in OBSERVATION_VERSIONS[1 : OBSERVATION_VERSIONS.index(version) + 1]:
            real.extend((name, *added[name]) for name in _ADDED_VIEWS[v])
        super().__init__(binary, real, version=version)


class ObservationEncoder:
    """Fills observation vectors for one game; precomputes every offset once.

    All 0/1 features are OR-ed into one Python int at their bit offsets and unpacked in
    a single pass; the real-valued features are collected in one list on the way (by
    table lookup, not arithmetic). The features after ``table`` are OR-ed at offsets
    relative to ``train_started``, so the many small ORs work on shorter ints and only the
    final combination touches the full width. Building the observation is the largest
    part of a ``raw_env`` step, so the code is written for CPython's specializing
    interpreter: plain loops over precomputed tuples rather than ``map``/``compress``/``sum``.
    """

    def __init__(self, game: MexicanTrain, layout: ObservationLayout) -> None:
        self.game = game
        self.layout = layout
        c = game.config
        n, pips, w = c.num_players, c.max_pips + 1, c.num_trains
        views = layout.views
        start = {name: v.slice.start for name, v in views.items()}
        self._o_hand = start["hand"]
        self._o_table = start["table"]
        self._o_rest = base = start["train_started"]  # every view after "table" is OR-ed relative to it
        if min(o for name, o in start.items() if name not in ("hand", "table")) != base:
            raise AssertionError("the views after hand and table must start at train_started")
        rel = {name: o - base for name, o in start.items()}
        self._o_double = rel["train_double"]
        self._o_pfirst = rel["pending_first"]
        self._session = "round" in views
        self._o_round = rel.get("round", 0)
        self._first_pending = game.first_pending
        self._fill = layout.fill
        # per observer: absolute trains / seats in relative order
        train_order = [[(s + k) % n for k in range(n)] + [n] for s in range(n)]
        seat_order = [[(s + k) % n for k in range(n)] for s in range(n)]
        self._seat_order = seat_order
        self._rel_train = [{t: k for k, t in enumerate(order)} for order in train_order]
        # per observer, per relative train k: (absolute train, bits by open end when the train
        # has left the station, bits by open end when it has not): one lookup, one OR a train
        o_started, o_end = rel["train_started"], rel["train_end"]
        started_end = [
            [1 << (o_started + k) | 1 << (o_end + k * pips + v) for v in range(pips)] for k in range(w)
        ]
        station_end = [[1 << (o_end + k * pips + v) for v in range(pips)] for k in range(w)]
        self._train_bits = [
            tuple((t, started_end[k], station_end[k]) for k, t in enumerate(order)) for order in train_order
        ]
        # the observer's own marker / first-turn bits (relative seat 0), then per opponent k:
        # (absolute seat, marker bit, first-turn bit, void shift)
        self._own_marker_bit = 1 << rel["train_marker"]
        self._own_done_bit = 1 << rel["first_turn_done"]
        o_marker, o_done, o_void = rel["train_marker"], rel["first_turn_done"], rel["opponent_void"]
        self._opponent_bits = [
            tuple(
                (q, 1 << (o_marker + k), 1 << (o_done + k), o_void + (k - 1) * pips)
                for k, q in enumerate(seats)
                if k
            )
            for seats in seat_order
        ]
        self._engine_bits = [1 << (rel["engine"] + v) for v in range(pips)]
        o_phase = rel["phase"]
        # indexed by Phase (an IntEnum: list indexing is C-level, hashing a member is not)
        self._phase_bits = [0] * (max(Phase) + 1)
        self._phase_bits[Phase.SEEK_ENGINE] = 1 << o_phase
        self._phase_bits[Phase.OPENING] = 1 << (o_phase + 1)
        self._phase_bits[Phase.NORMAL] = 1 << (o_phase + 2)
        self._owes_bit = 1 << (o_phase + 3)
        self._drawn_bit = 1 << (o_phase + 4)
        # real-valued features by count: the documented quotients, looked up
        self._scaled_length = [k / pips for k in range(c.num_tiles + 1)]
        self._scaled_hand = [k / c.hand_size for k in range(c.num_tiles + 1)]
        self._scaled_boneyard = [k / c.num_tiles for k in range(c.num_tiles + 1)]
        self._score_scale = 1.0 / (c.hand_size * c.max_pips)
        # version 2's hand_pips: per tile id, the pip values it shows (a double once)
        self._hand_pips = "hand_pips" in views
        self._tile_pips = [(a,) if a == b else (a, b) for a, b in c.tiles.tiles]
        self._pips = pips
        self._pip_scale = 1.0 / c.hand_size

    def encode(self, s: GameState, seat: int) -> np.ndarray:
        """The observation vector of ``seat`` (public state + its own hand only)."""
        trains = s.trains
        ends = s.ends
        rest = self._phase_bits[s.phase] | self._engine_bits[s.engine]
        real: list[float] = []
        scaled_length = self._scaled_length
        for t, started_end, station_end in self._train_bits[seat]:
            train = trains[t]
            if train:
                rest |= started_end[ends[t]]
                real.append(scaled_length[len(train)])
            else:
                rest |= station_end[ends[t]]
                real.append(0.0)
        if s.owes:
            rest |= self._owes_bit
        if s.has_drawn:
            rest |= self._drawn_bit
        pending_count = 0
        if s.pending or s.turn_doubles:
            rel = self._rel_train[seat]
            o_double = self._o_double
            for t in s.pending:
                rest |= 1 << (o_double + rel[t])
            for t in s.turn_doubles:
                rest |= 1 << (o_double + rel[t])
            # MexicanTrain.double_to_satisfy inline (this runs on every observation; the
            # reference encoder in tests/env/test_observation_reference.py checks it): binding
            # from the end of the opening (R13, R20)
            if s.pending and s.phase == NORMAL:
                rest |= 1 << (self._o_pfirst + rel[self._first_pending(s)])
                pending_count = len(s.pending)
        real.append(pending_count)
        real.append(self._scaled_boneyard[len(s.boneyard)])
        markers = s.markers
        done = s.first_turn_done
        voids = s.voids
        hands = s.hands
        if markers[seat]:
            rest |= self._own_marker_bit
        if done[seat]:
            rest |= self._own_done_bit
        scaled_hand = self._scaled_hand
        for q, marker_bit, done_bit, void_shift in self._opponent_bits[seat]:
            if markers[q]:
                rest |= marker_bit
            if done[q]:
                rest |= done_bit
            void = voids[q]
            if void:
                rest |= void << void_shift
            real.append(scaled_hand[hands[q].bit_count()])
        if self._session:
            rest |= 1 << (self._o_round + s.round_index)
            scores = s.scores
            score_scale = self._score_scale
            for q in self._seat_order[seat]:
                real.append(scores[q] * score_scale)
        if self._hand_pips:
            real.extend(self._pip_counts(hands[seat]))
        return self._fill(hands[seat] << self._o_hand | s.table << self._o_table | rest << self._o_rest, real)

    def _pip_counts(self, hand: int) -> list[float]:
        """``hand_pips`` of a hand bitmask: tiles showing each pip value / hand_size."""
        counts = [0] * self._pips
        tile_pips = self._tile_pips
        while hand:
            low = hand & -hand
            for v in tile_pips[low.bit_length() - 1]:
                counts[v] += 1
            hand ^= low
        scale = self._pip_scale
        return [k * scale for k in counts]
