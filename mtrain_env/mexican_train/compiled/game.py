"""The Python face of the compiled core: tables from a config, deals, and state converters.

:class:`CompiledMexicanTrain` mirrors :class:`~mtrain_env.mexican_train.core.rules.MexicanTrain`
method for method, with a state that is one ``int64`` array (:mod:`.engine`). Deals are made
by the pure core's dealing code from the same ``numpy`` Generator, so a seed gives the same
deal on both engines; :meth:`~CompiledMexicanTrain.to_compiled` and
:meth:`~CompiledMexicanTrain.to_pure` convert a state either way, exactly.
"""

from __future__ import annotations

import numpy as np

from mtrain_env.mexican_train.compiled import engine
from mtrain_env.mexican_train.core.config import VARIANT_FLAGS, GameConfig
from mtrain_env.mexican_train.core.dealing import Deal
from mtrain_env.mexican_train.core.rules import IllegalMoveError, MexicanTrain
from mtrain_env.mexican_train.core.scoring import score_type
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.mexican_train.observation import ObservationLayout
from mtrain_env.tilegame.tiles import bits_list

__all__ = ["CompiledMexicanTrain", "build_tables", "deal_arrays"]


def build_tables(config: GameConfig) -> np.ndarray:
    """The static game as one ``int64`` array (layout ``engine.K_*``): sizes, flags, tile tables."""
    tiles = config.tiles
    tb = np.zeros(engine.TABLES_SIZE, np.int64)
    tb[engine.K_N] = config.num_players
    tb[engine.K_PIPS] = config.max_pips
    tb[engine.K_TILES] = config.num_tiles
    tb[engine.K_WIDTH] = config.num_trains
    tb[engine.K_DRAW] = config.draw_action
    tb[engine.K_PASS] = config.pass_action
    tb[engine.K_ROUNDS] = config.rounds
    for name, offset in zip(VARIANT_FLAGS, engine.FLAG_OFFSETS, strict=True):
        tb[offset] = getattr(config, name)
    tb[engine.K_MULTI_OPENING] = config.multi_tile_opening
    tb[engine.K_OPENING_MAY_DRAW] = config.opening_may_draw
    tb[engine.K_HAND_SIZE] = config.hand_size
    tb[engine.K_ACTIONS] = config.num_actions
    # the published observation layout, read from its one definition
    layout = ObservationLayout(config)
    tb[engine.K_OBS_SIZE] = layout.size
    for name, offset in engine.OBS_VIEW_OFFSETS:
        tb[offset] = layout.offset(name) if name in layout else -1
    tb[engine.K_DOUBLE_ID : engine.K_DOUBLE_ID + engine.MAX_VALUES] = -1
    tb[engine.K_MATCH : engine.K_MATCH + engine.MAX_VALUES**2] = -1
    tb[engine.K_OTHER : engine.K_OTHER + engine.MAX_TILES * engine.MAX_VALUES] = -1
    for i, (a, b) in enumerate(tiles.tiles):
        tb[engine.K_TILE_A + i] = a
        tb[engine.K_TILE_B + i] = b
        tb[engine.K_IS_DOUBLE + i] = a == b
        tb[engine.K_TILE_VALUE + i] = tiles.tile_value(i, config.blank_penalty)  # R24
        tb[engine.K_OTHER + i * engine.MAX_VALUES + a] = b  # R7
        tb[engine.K_OTHER + i * engine.MAX_VALUES + b] = a
    for v in range(config.max_pips + 1):
        tb[engine.K_DOUBLE_ID + v] = tiles.double_id(v)
        row = bits_list(tiles.match[v])  # increasing ids
        tb[engine.K_MATCH + v * engine.MAX_VALUES : engine.K_MATCH + v * engine.MAX_VALUES + len(row)] = row
    return tb


def deal_arrays(config: GameConfig, deal: Deal) -> tuple[np.ndarray, np.ndarray]:
    """A pure :class:`Deal` as ``(hand_of, boneyard)``: the seat of each dealt tile (-1 for
    the rest) and the boneyard tile ids, top LAST (the arguments of ``engine.start_round``)."""
    hand_of = np.full(config.num_tiles, -1, np.int64)
    for p, hand in enumerate(deal.hands):
        hand_of[bits_list(hand)] = p
    return hand_of, np.array(deal.boneyard, np.int64)


class CompiledMexicanTrain:
    """The static game on the compiled engine: a config, its tables, and the rule calls.

    States are ``int64`` arrays of ``engine.STATE_SIZE`` (:meth:`new_state`); every method
    takes the state explicitly, as :class:`MexicanTrain` does. ``reference`` is the pure
    game of the same config (dealing, move descriptions and error messages come from it).
    """

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.reference = MexicanTrain(config)
        self.tables = build_tables(config)
        self.n = config.num_players
        self.draw = config.draw_action
        self.pass_ = config.pass_action
        self._moves = np.empty(engine.MAX_MOVES, np.int64)
        self._blank = np.empty(engine.STATE_SIZE, np.int64)
        engine.clear_state(self._blank)
        # the pool random_deal shuffles: the set minus the engine (R5) unless the holder opens
        self._pool = config.num_tiles - (0 if config.engine_holder_opens else 1)
        self._hand_of = np.empty(engine.MAX_TILES, np.int64)
        self._boneyard = np.empty(engine.MAX_TILES, np.int64)

    # ------------------------------------------------------------------ set-up
    def new_state(self) -> np.ndarray:
        """An empty state array (every field canonical; not a playable position)."""
        return self._blank.copy()

    def new_game(
        self, rng: np.random.Generator, deal: Deal | None = None, first_player: int | None = None
    ) -> np.ndarray:
        """A fresh episode at round 0, dealt from ``rng`` (or ``deal``) by the pure core's
        dealing code, so a seed gives the same deal as ``MexicanTrain.new_game`` (R4, R5, R6)."""
        if deal is None:
            hand_of, boneyard = self._random_deal(0, rng)
        else:
            hand_of, boneyard = deal_arrays(self.config, deal)
        s = self.new_state()
        offset = 0 if first_player is None else first_player
        engine.new_game(s, self.tables, hand_of, boneyard, offset, first_player is not None)
        return s

    def next_round(self, s: np.ndarray, rng: np.random.Generator) -> None:
        """Deal the next round of a session (R25) after a ``ROUND_OVER``."""
        self._check(s)
        if s[engine.S_PHASE] != engine.ROUND_OVER:
            phase = Phase(int(s[engine.S_PHASE])).name
            raise ValueError(f"R25: next_round needs a finished round, the phase is {phase}")
        hand_of, boneyard = self._random_deal(int(s[engine.S_ROUND]) + 1, rng)
        engine.next_round(s, self.tables, hand_of, boneyard)

    def _random_deal(self, round_index: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The deal of :func:`~mtrain_env.mexican_train.core.dealing.random_deal` for round
        ``round_index``, from the same single ``rng.permutation`` call, made compiled
        (``engine.deal_from_permutation``): ``(hand_of, boneyard)`` in reused buffers."""
        perm = rng.permutation(self._pool)
        k = engine.deal_from_permutation(self.tables, round_index, perm, self._hand_of, self._boneyard)
        return self._hand_of, self._boneyard[:k]

    # ------------------------------------------------------------- the rules
    def legal_moves(self, s: np.ndarray) -> np.ndarray:
        """The legal moves of the seat on turn, increasing (a new array; R9-R22)."""
        self._check(s)
        count = engine.legal_moves_into(s, self.tables, self._moves)
        return self._moves[:count].copy()

    def apply(self, s: np.ndarray, move: int) -> None:
        """Apply a LEGAL move (unchecked, as ``MexicanTrain.apply``)."""
        engine.apply(s, self.tables, move)

    def checked_apply(self, s: np.ndarray, move: int) -> None:
        """Apply ``move`` if legal, else raise :class:`IllegalMoveError` naming the rule and
        change nothing."""
        if isinstance(move, bool) or not isinstance(move, (int, np.integer)):
            raise TypeError(f"a move must be an int, got {type(move).__name__}")
        legal = self.legal_moves(s)
        if int(move) not in legal:
            ps = self.to_pure(s)
            raise IllegalMoveError(self.reference.explain_illegal(ps, int(move), legal.tolist()))
        engine.apply(s, self.tables, int(move))

    def is_round_over(self, s: np.ndarray) -> bool:
        """The round has ended (phase ``ROUND_OVER`` or ``GAME_OVER``, R23)."""
        return bool(engine.is_round_over(s))

    def phase(self, s: np.ndarray) -> Phase:
        return Phase(int(s[engine.S_PHASE]))

    def current(self, s: np.ndarray) -> int:
        """The seat on turn."""
        return int(s[engine.S_CURRENT])

    def penalties(self, s: np.ndarray) -> list[int]:
        """Pips left in each hand (R24, ``blank_penalty`` aware)."""
        out = np.zeros(engine.MAX_SEATS, np.int64)
        engine.penalties_into(s, self.tables, out)
        return out[: self.n].tolist()

    def scores(self, s: np.ndarray) -> list[float]:
        """Cumulative session scores (R25), typed as the pure core's."""
        cast = score_type(self.config)
        return [cast(x) for x in s[engine.S_SCORES : engine.S_SCORES + self.n].view(np.float64).tolist()]

    def round_scores(self, s: np.ndarray) -> list[list[float]]:
        """Per finished round, the score of each seat, typed as the pure core's (R24)."""
        cast = score_type(self.config)
        rows = s[engine.S_ROUND_SCORES : engine.S_ROUND_SCORES + engine.MAX_ROUNDS * engine.MAX_SEATS].view(
            np.float64
        )
        rows = rows.reshape(engine.MAX_ROUNDS, engine.MAX_SEATS)
        return [[cast(x) for x in rows[r, : self.n].tolist()] for r in range(int(s[engine.S_ROUNDS_SCORED]))]

    def _check(self, s: np.ndarray) -> None:
        if not isinstance(s, np.ndarray):
            raise TypeError(f"a compiled state is a numpy array, got {type(s).__name__}")
        if s.dtype != np.int64 or s.shape != (engine.STATE_SIZE,):
            raise ValueError(
                f"a compiled state is an int64 array of shape ({engine.STATE_SIZE},), got {s.dtype} {s.shape}"
            )

    # -------------------------------------------------------------- converters
    def to_compiled(self, ps: GameState) -> np.ndarray:
        """The compiled state of a pure :class:`GameState` (exact; the inverse of :meth:`to_pure`)."""
        c = self.config
        n = self.n
        if len(ps.round_scores) > c.rounds or len(ps.hands) != n:
            raise ValueError(f"the state does not fit the config ({n} seats, {c.rounds} rounds; R3, R25)")
        s = self.new_state()
        s[engine.S_ROUND] = ps.round_index
        s[engine.S_ENGINE] = ps.engine
        s[engine.S_ENGINE_PLACED] = ps.engine_placed
        s[engine.S_PHASE] = int(ps.phase)
        s[engine.S_FIRST_PLAYER] = ps.first_player
        s[engine.S_SEAT_OFFSET] = ps.seat_offset
        s[engine.S_FIRST_FORCED] = ps.first_player_forced
        s[engine.S_CURRENT] = ps.current
        s[engine.S_TILES_TURN] = ps.tiles_this_turn
        s[engine.S_DOUBLES_TURN] = ps.doubles_this_turn
        s[engine.S_OWES] = ps.owes
        s[engine.S_HAS_DRAWN] = ps.has_drawn
        s[engine.S_OBLIGED] = ps.obliged_this_turn
        s[engine.S_BLOCKED] = ps.blocked
        s[engine.S_HISTORY] = ps.history_len
        loc = s[engine.S_LOC : engine.S_LOC + engine.MAX_TILES]
        if ps.engine_placed:  # R5: in the station (the table's only tile outside the trains)
            loc[self.config.tiles.double_id(ps.engine)] = engine.LOC_STATION
        for p, hand in enumerate(ps.hands):
            loc[bits_list(hand)] = p
        for t, train in enumerate(ps.trains):
            loc[train] = engine.LOC_TRAIN + t
            s[engine.S_POS + np.array(train, np.int64)] = np.arange(len(train))
            s[engine.S_TRAIN_LEN + t] = len(train)
        loc[ps.boneyard] = engine.LOC_BONEYARD
        s[engine.S_BONE_LEN] = len(ps.boneyard)
        s[engine.S_BONEYARD : engine.S_BONEYARD + len(ps.boneyard)] = ps.boneyard
        # hand counts and hand_pips[seat, v] (R2: a double counts once for its value)
        held = np.flatnonzero((loc >= 0) & (loc < n))
        seats = loc[held]
        low = self.tables[engine.K_TILE_A + held]
        high = self.tables[engine.K_TILE_B + held]
        s[engine.S_HAND_COUNT : engine.S_HAND_COUNT + engine.MAX_SEATS] = np.bincount(
            seats, minlength=engine.MAX_SEATS
        )
        pips = s[engine.S_HAND_PIPS : engine.S_HAND_PIPS + engine.MAX_SEATS * engine.MAX_VALUES]
        np.add.at(pips, seats * engine.MAX_VALUES + low, 1)
        single = high != low
        np.add.at(pips, seats[single] * engine.MAX_VALUES + high[single], 1)
        s[engine.S_ENDS : engine.S_ENDS + n + 1] = ps.ends
        s[engine.S_MARKERS : engine.S_MARKERS + n] = ps.markers
        s[engine.S_FIRST_TURN_DONE : engine.S_FIRST_TURN_DONE + n] = ps.first_turn_done
        s[engine.S_VOIDS : engine.S_VOIDS + n] = ps.voids
        s[engine.S_PRE_DRAW_VOIDS : engine.S_PRE_DRAW_VOIDS + n] = ps.pre_draw_voids
        s[engine.S_PENDING_LEN] = len(ps.pending)
        s[engine.S_PENDING : engine.S_PENDING + len(ps.pending)] = ps.pending
        s[engine.S_TURN_DOUBLES_LEN] = len(ps.turn_doubles)
        s[engine.S_TURN_DOUBLES : engine.S_TURN_DOUBLES + len(ps.turn_doubles)] = ps.turn_doubles
        s[engine.S_ROUNDS_SCORED] = len(ps.round_scores)
        rows = s[engine.S_ROUND_SCORES : engine.S_ROUND_SCORES + engine.MAX_ROUNDS * engine.MAX_SEATS].view(
            np.float64
        )
        for r, row in enumerate(ps.round_scores):
            rows[r * engine.MAX_SEATS : r * engine.MAX_SEATS + n] = row
        s[engine.S_SCORES : engine.S_SCORES + engine.MAX_SEATS].view(np.float64)[:n] = ps.scores
        return s

    def to_pure(self, s: np.ndarray) -> GameState:
        """The pure :class:`GameState` of a compiled state (exact; Python ints, bools and
        the score types of :func:`~mtrain_env.mexican_train.core.scoring.score_type`)."""
        self._check(s)
        n = self.n
        T = self.config.num_tiles
        ps = GameState(n)
        ps.round_index = int(s[engine.S_ROUND])
        ps.engine = int(s[engine.S_ENGINE])
        ps.engine_placed = bool(s[engine.S_ENGINE_PLACED])
        ps.phase = Phase(int(s[engine.S_PHASE]))
        ps.first_player = int(s[engine.S_FIRST_PLAYER])
        ps.seat_offset = int(s[engine.S_SEAT_OFFSET])
        ps.first_player_forced = bool(s[engine.S_FIRST_FORCED])
        ps.current = int(s[engine.S_CURRENT])
        loc = s[engine.S_LOC : engine.S_LOC + T].tolist()
        pos = s[engine.S_POS : engine.S_POS + T].tolist()
        hands = [0] * n
        table = 0
        trains: list[list[tuple[int, int]]] = [[] for _ in range(n + 1)]
        for tile, where in enumerate(loc):
            if 0 <= where < n:
                hands[where] |= 1 << tile
            elif engine.LOC_TRAIN <= where <= engine.LOC_STATION:
                table |= 1 << tile
                if where < engine.LOC_STATION:
                    trains[where - engine.LOC_TRAIN].append((pos[tile], tile))
        ps.hands = hands
        ps.table = table
        ps.trains = [[tile for _, tile in sorted(train)] for train in trains]
        ps.boneyard = s[engine.S_BONEYARD : engine.S_BONEYARD + int(s[engine.S_BONE_LEN])].tolist()
        ps.ends = s[engine.S_ENDS : engine.S_ENDS + n + 1].tolist()
        ps.markers = [bool(x) for x in s[engine.S_MARKERS : engine.S_MARKERS + n]]
        ps.pending = s[engine.S_PENDING : engine.S_PENDING + int(s[engine.S_PENDING_LEN])].tolist()
        ps.turn_doubles = s[
            engine.S_TURN_DOUBLES : engine.S_TURN_DOUBLES + int(s[engine.S_TURN_DOUBLES_LEN])
        ].tolist()
        ps.first_turn_done = [bool(x) for x in s[engine.S_FIRST_TURN_DONE : engine.S_FIRST_TURN_DONE + n]]
        ps.tiles_this_turn = int(s[engine.S_TILES_TURN])
        ps.doubles_this_turn = int(s[engine.S_DOUBLES_TURN])
        ps.owes = bool(s[engine.S_OWES])
        ps.has_drawn = bool(s[engine.S_HAS_DRAWN])
        ps.obliged_this_turn = bool(s[engine.S_OBLIGED])
        ps.voids = s[engine.S_VOIDS : engine.S_VOIDS + n].tolist()
        ps.pre_draw_voids = s[engine.S_PRE_DRAW_VOIDS : engine.S_PRE_DRAW_VOIDS + n].tolist()
        ps.blocked = bool(s[engine.S_BLOCKED])
        ps.round_scores = self.round_scores(s)
        ps.scores = self.scores(s)
        ps.history_len = int(s[engine.S_HISTORY])
        return ps
