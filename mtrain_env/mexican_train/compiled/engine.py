"""The compiled rules (RULES.md R5-R25): numba ``@njit(cache=True)`` functions on flat arrays.

A game state is ONE ``int64`` array of :data:`STATE_SIZE` entries; the static game is one
``int64`` array of :data:`TABLES_SIZE` entries (the config and the tile tables, built by
:func:`mtrain_env.mexican_train.compiled.game.build_tables`). Every function takes
``(s, tb, ...)`` and mutates ``s`` in place; nothing here allocates on the hot path, draws a
random number (deals come from Python, :mod:`~mtrain_env.mexican_train.core.dealing`) or
knows the config except through ``tb``: one compiled version serves every config.

The layout constants live in THIS module, next to the functions that use them, because
numba freezes globals at compile time and its on-disk cache only notices changes to the
file a function is defined in. For the same reason every jitted function of the rules core is
defined here; the search kernels beside it (rollout, ismcts, batched_planner) import these
constants and are watched by :mod:`.cache`.

The functions mirror :class:`mtrain_env.mexican_train.core.rules.MexicanTrain` one to one
(same names, same order of effects), so a difference in behaviour is a bug here; the
differential tests (``tests/compiled/test_compiled_core.py``) compare the two at every decision.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# ------------------------------------------------------------------ sizes (R1, R3)
MAX_SEATS = 17  #: double-18 seats N - 1 players (config.max_players)
MAX_TRAINS = MAX_SEATS + 1  #: a personal train per seat plus the Mexican train (R7)
MAX_VALUES = 19  #: pip values 0..18 (R1)
MAX_TILES = MAX_VALUES * (MAX_VALUES + 1) // 2  #: the double-18 set (R1)
MAX_ROUNDS = MAX_VALUES  #: a double-18 session (R25)
#: most legal moves at once: every matching tile on every train, or a PASS after a chain
MAX_MOVES = MAX_VALUES * MAX_TRAINS + 1

# phases, as :class:`mtrain_env.mexican_train.core.state.Phase`
SEEK_ENGINE = 0
OPENING = 1
NORMAL = 2
ROUND_OVER = 3
GAME_OVER = 4

# where a tile is (the ``loc`` field): a seat's hand, a train, the station, the boneyard
LOC_NOWHERE = -1  #: unused tile ids past the set's size
LOC_TRAIN = 32  #: + train index (0..n-1 personal, n Mexican)
LOC_STATION = 64  #: the engine in the station (R5)
LOC_BONEYARD = 65  #: face down (R8); the ``boneyard`` field holds the order

_size = 0


def _field(size: int) -> int:
    """Allocate ``size`` consecutive entries of the state layout; returns the offset."""
    global _size
    offset = _size
    _size += size
    return offset


# ------------------------------------------------------------- the state layout
# scalars (bools as 0/1)
S_ROUND = _field(1)  #: round index k of the session (R5, R25)
S_ENGINE = _field(1)  #: pip value v of the engine (v, v) (R5)
S_ENGINE_PLACED = _field(1)  #: 0 while seats seek the engine (engine_holder_opens)
S_PHASE = _field(1)  #: SEEK_ENGINE .. GAME_OVER
S_FIRST_PLAYER = _field(1)  #: who opens this round (R6)
S_SEAT_OFFSET = _field(1)  #: R6 rotation offset
S_FIRST_FORCED = _field(1)  #: a first player was given (overrides the engine holder)
S_CURRENT = _field(1)  #: seat on turn
S_TILES_TURN = _field(1)  #: tiles laid this turn (R9, R18)
S_DOUBLES_TURN = _field(1)  #: doubles among them (one_double_per_turn)
S_OWES = _field(1)  #: a tile is owed after a double (R18)
S_HAS_DRAWN = _field(1)  #: the draw for the owed tile is used (R16, R18)
S_OBLIGED = _field(1)  #: the turn began with a double to satisfy (R20)
S_BLOCKED = _field(1)  #: the round ended blocked (R23)
S_HISTORY = _field(1)  #: actions applied this episode
S_BONE_LEN = _field(1)  #: tiles in the boneyard (R8)
S_PENDING_LEN = _field(1)  #: entries of S_PENDING
S_TURN_DOUBLES_LEN = _field(1)  #: entries of S_TURN_DOUBLES
S_ROUNDS_SCORED = _field(1)  #: rows of S_ROUND_SCORES
# per tile
S_LOC = _field(MAX_TILES)  #: LOC_* code, or the seat holding it
S_POS = _field(MAX_TILES)  #: index of a train tile from the station outward, else -1
S_BONEYARD = _field(MAX_TILES)  #: tile ids, the top (next drawn) LAST, -1 past S_BONE_LEN
# per seat
S_HAND_COUNT = _field(MAX_SEATS)  #: tiles in each hand
S_HAND_PIPS = _field(MAX_SEATS * MAX_VALUES)  #: [seat, v]: tiles of the hand with a v half
S_MARKERS = _field(MAX_SEATS)  #: marker on each personal train (R10, R16, R17)
S_FIRST_TURN_DONE = _field(MAX_SEATS)  #: who has had their first turn (R9, R12)
S_VOIDS = _field(MAX_SEATS)  #: pip bitmask a seat has shown it lacks (public)
S_PRE_DRAW_VOIDS = _field(MAX_SEATS)  #: the voids of the hand before an unrevealed draw
# per train
S_ENDS = _field(MAX_TRAINS)  #: open-end pip value (the engine if empty), -1 past n + 1
S_TRAIN_LEN = _field(MAX_TRAINS)  #: tiles in each train
S_PENDING = _field(MAX_TRAINS)  #: trains with a binding unsatisfied double, play order (R20, R21)
S_TURN_DOUBLES = _field(MAX_TRAINS)  #: trains ending in a double laid this turn (R18)
# scores, float64 bit patterns (``s[a:b].view(np.float64)``): shared pots need not be whole
S_ROUND_SCORES = _field(MAX_ROUNDS * MAX_SEATS)  #: [round, seat] (R24)
S_SCORES = _field(MAX_SEATS)  #: cumulative per seat (R25)
STATE_SIZE = _size

# ------------------------------------------------------------ the tables layout
_size = 0
K_N = _field(1)  #: players (R3)
K_PIPS = _field(1)  #: N of the double-N set (R1)
K_TILES = _field(1)  #: tiles in the set
K_WIDTH = _field(1)  #: trains: n + 1 (R7)
K_DRAW = _field(1)  #: the DRAW move, T * (n + 1)
K_PASS = _field(1)  #: the PASS move, T * (n + 1) + 1
K_ROUNDS = _field(1)  #: rounds in the episode (R25)
# the variant flags (config.VARIANT_FLAGS) and the two derived ones
K_ONE_TILE_OPENING = _field(1)
K_OPENING_DRAW = _field(1)
K_DRAW_UNTIL_ENGINE_MATCH = _field(1)
K_ENGINE_HOLDER_OPENS = _field(1)
K_MARKER_OFF_BY_ANY_PLAY_ON_IT = _field(1)
K_MARKER_OFF_BY_OWNER_PLAY_ANYWHERE = _field(1)
K_NO_MARKER_WHEN_FORCED_TO_SATISFY = _field(1)
K_NO_DOUBLE_SATISFACTION = _field(1)
K_SATISFY_IN_REVERSE_ORDER = _field(1)
K_ONE_DOUBLE_PER_TURN = _field(1)
K_COVER_OWN_DOUBLE_ON_IT = _field(1)
K_BLANK_PENALTY = _field(1)
K_POSITIVE_SCORING = _field(1)
K_MULTI_OPENING = _field(1)  #: config.multi_tile_opening (R9)
K_OPENING_MAY_DRAW = _field(1)  #: config.opening_may_draw (R10 vs variants)
K_HAND_SIZE = _field(1)  #: tiles per dealt hand (R4)
K_ACTIONS = _field(1)  #: size of the action space, T * (n + 1) + 2
# the observation layout (:class:`~mtrain_env.mexican_train.observation.ObservationLayout`):
# its size and the first index of each view (-1 for the session views of a one-round game)
K_OBS_SIZE = _field(1)
K_O_HAND = _field(1)
K_O_TABLE = _field(1)
K_O_STARTED = _field(1)
K_O_END = _field(1)
K_O_MARKER = _field(1)
K_O_DOUBLE = _field(1)
K_O_PFIRST = _field(1)
K_O_PHASE = _field(1)
K_O_ENGINE = _field(1)
K_O_DONE = _field(1)
K_O_VOID = _field(1)
K_O_ROUND = _field(1)
K_O_LENGTH = _field(1)
K_O_PCOUNT = _field(1)
K_O_BONE = _field(1)
K_O_OPP_COUNT = _field(1)
K_O_SCORES = _field(1)
# tile tables
K_TILE_A = _field(MAX_TILES)  #: low half a of tile (a, b)
K_TILE_B = _field(MAX_TILES)  #: high half b
K_IS_DOUBLE = _field(MAX_TILES)  #: R2
K_TILE_VALUE = _field(MAX_TILES)  #: penalty of the tile (R24, blank_penalty aware)
K_DOUBLE_ID = _field(MAX_VALUES)  #: tile id of (v, v)
K_MATCH = _field(MAX_VALUES * MAX_VALUES)  #: [v, k]: the k-th tile with a v half, ids increasing
K_OTHER = _field(MAX_TILES * MAX_VALUES)  #: [tile, v]: the half left open against v, or -1 (R7)
TABLES_SIZE = _size

#: the flags in ``config.VARIANT_FLAGS`` order, as table offsets
FLAG_OFFSETS: tuple[int, ...] = (
    K_ONE_TILE_OPENING,
    K_OPENING_DRAW,
    K_DRAW_UNTIL_ENGINE_MATCH,
    K_ENGINE_HOLDER_OPENS,
    K_MARKER_OFF_BY_ANY_PLAY_ON_IT,
    K_MARKER_OFF_BY_OWNER_PLAY_ANYWHERE,
    K_NO_MARKER_WHEN_FORCED_TO_SATISFY,
    K_NO_DOUBLE_SATISFACTION,
    K_SATISFY_IN_REVERSE_ORDER,
    K_ONE_DOUBLE_PER_TURN,
    K_COVER_OWN_DOUBLE_ON_IT,
    K_BLANK_PENALTY,
    K_POSITIVE_SCORING,
)

#: observation view name -> table offset of its first index (``build_tables`` fills them)
OBS_VIEW_OFFSETS: tuple[tuple[str, int], ...] = (
    ("hand", K_O_HAND),
    ("table", K_O_TABLE),
    ("train_started", K_O_STARTED),
    ("train_end", K_O_END),
    ("train_marker", K_O_MARKER),
    ("train_double", K_O_DOUBLE),
    ("pending_first", K_O_PFIRST),
    ("phase", K_O_PHASE),
    ("engine", K_O_ENGINE),
    ("first_turn_done", K_O_DONE),
    ("opponent_void", K_O_VOID),
    ("round", K_O_ROUND),
    ("train_length", K_O_LENGTH),
    ("pending_count", K_O_PCOUNT),
    ("boneyard_count", K_O_BONE),
    ("opponent_hand_count", K_O_OPP_COUNT),
    ("scores", K_O_SCORES),
)

#: reward modes of the batched API (:mod:`mtrain_env.mexican_train.rewards`), by code
REWARD_ZERO_SUM = 0
REWARD_PENALTY = 1
REWARD_WIN = 2


# ================================================================== helpers
@njit(cache=True)
def clear_state(s: np.ndarray) -> None:
    """Every field at its canonical empty value (so equal games are equal arrays)."""
    s[:] = 0
    s[S_LOC : S_LOC + MAX_TILES] = LOC_NOWHERE
    s[S_POS : S_POS + MAX_TILES] = -1
    s[S_BONEYARD : S_BONEYARD + MAX_TILES] = -1
    s[S_ENDS : S_ENDS + MAX_TRAINS] = -1
    s[S_PENDING : S_PENDING + MAX_TRAINS] = -1
    s[S_TURN_DOUBLES : S_TURN_DOUBLES + MAX_TRAINS] = -1


@njit(cache=True)
def _add_to_hand(s: np.ndarray, tb: np.ndarray, p: int, tile: int) -> None:
    s[S_LOC + tile] = p
    s[S_HAND_COUNT + p] += 1
    a = tb[K_TILE_A + tile]
    b = tb[K_TILE_B + tile]
    s[S_HAND_PIPS + p * MAX_VALUES + a] += 1
    if b != a:
        s[S_HAND_PIPS + p * MAX_VALUES + b] += 1


@njit(cache=True)
def _remove_from_hand(s: np.ndarray, tb: np.ndarray, p: int, tile: int) -> None:
    s[S_HAND_COUNT + p] -= 1
    a = tb[K_TILE_A + tile]
    b = tb[K_TILE_B + tile]
    s[S_HAND_PIPS + p * MAX_VALUES + a] -= 1
    if b != a:
        s[S_HAND_PIPS + p * MAX_VALUES + b] -= 1


@njit(cache=True)
def _list_remove(s: np.ndarray, off: int, len_off: int, x: int) -> None:
    """Remove ``x`` from the ordered list at ``off`` (``list.remove``), if present."""
    k = s[len_off]
    for i in range(k):
        if s[off + i] == x:
            for j in range(i, k - 1):
                s[off + j] = s[off + j + 1]
            s[off + k - 1] = -1
            s[len_off] = k - 1
            return


@njit(cache=True)
def _on_table(s: np.ndarray, tile: int) -> bool:
    loc = s[S_LOC + tile]
    return LOC_TRAIN <= loc <= LOC_STATION


@njit(cache=True)
def _reset_turn(s: np.ndarray) -> None:
    s[S_TILES_TURN] = 0
    s[S_DOUBLES_TURN] = 0
    s[S_OWES] = 0
    s[S_HAS_DRAWN] = 0
    s[S_OBLIGED] = 0


# ================================================================== set-up
@njit(cache=True)
def start_round(s: np.ndarray, tb: np.ndarray, hand_of: np.ndarray, boneyard: np.ndarray) -> None:
    """Load a deal into round ``s[S_ROUND]`` and seat its first player (R4, R5, R6, R8).

    ``hand_of[tile]`` is the seat dealt the tile or -1; ``boneyard`` lists the rest, the top
    (next drawn) LAST. The engine is set aside (R5) unless ``engine_holder_opens`` dealt it.
    """
    n = tb[K_N]
    T = tb[K_TILES]
    v = tb[K_PIPS] - s[S_ROUND]  # R5: round k uses the double (N - k, N - k)
    engine_id = tb[K_DOUBLE_ID + v]
    s[S_ENGINE] = v
    s[S_LOC : S_LOC + MAX_TILES] = LOC_NOWHERE
    s[S_POS : S_POS + MAX_TILES] = -1
    s[S_HAND_COUNT : S_HAND_COUNT + MAX_SEATS] = 0
    s[S_HAND_PIPS : S_HAND_PIPS + MAX_SEATS * MAX_VALUES] = 0
    for tile in range(T):
        if hand_of[tile] >= 0:
            _add_to_hand(s, tb, hand_of[tile], tile)
    s[S_BONEYARD : S_BONEYARD + MAX_TILES] = -1
    for i in range(boneyard.shape[0]):
        s[S_BONEYARD + i] = boneyard[i]
        s[S_LOC + boneyard[i]] = LOC_BONEYARD
    s[S_BONE_LEN] = boneyard.shape[0]
    for t in range(n + 1):
        s[S_ENDS + t] = v
        s[S_TRAIN_LEN + t] = 0
    for p in range(n):
        s[S_MARKERS + p] = 0
        s[S_FIRST_TURN_DONE + p] = 0
        s[S_VOIDS + p] = 0
        s[S_PRE_DRAW_VOIDS + p] = 0
    s[S_PENDING : S_PENDING + MAX_TRAINS] = -1
    s[S_PENDING_LEN] = 0
    s[S_TURN_DOUBLES : S_TURN_DOUBLES + MAX_TRAINS] = -1
    s[S_TURN_DOUBLES_LEN] = 0
    s[S_BLOCKED] = 0
    _reset_turn(s)
    first = (s[S_SEAT_OFFSET] + s[S_ROUND]) % n  # R6
    s[S_ENGINE_PLACED] = 1
    if tb[K_ENGINE_HOLDER_OPENS]:
        holder = s[S_LOC + engine_id]
        if 0 <= holder < n:
            _remove_from_hand(s, tb, holder, engine_id)
            if not s[S_FIRST_FORCED]:
                first = holder
        else:
            s[S_ENGINE_PLACED] = 0
    s[S_FIRST_PLAYER] = first
    s[S_CURRENT] = first
    if s[S_ENGINE_PLACED]:
        s[S_LOC + engine_id] = LOC_STATION
        s[S_PHASE] = OPENING
        _skip_empty_openers(s, tb)
    else:
        s[S_PHASE] = SEEK_ENGINE


@njit(cache=True)
def new_game(
    s: np.ndarray, tb: np.ndarray, hand_of: np.ndarray, boneyard: np.ndarray, seat_offset: int, forced: bool
) -> None:
    """A fresh episode at round 0 from a deal (``MexicanTrain.new_game``)."""
    clear_state(s)
    s[S_SEAT_OFFSET] = seat_offset
    s[S_FIRST_FORCED] = 1 if forced else 0
    start_round(s, tb, hand_of, boneyard)


@njit(cache=True)
def next_round(s: np.ndarray, tb: np.ndarray, hand_of: np.ndarray, boneyard: np.ndarray) -> None:
    """Deal the next round of a session (R25) after a ``ROUND_OVER``."""
    if s[S_PHASE] != ROUND_OVER:
        raise ValueError("R25: next_round needs a finished round (phase ROUND_OVER)")
    s[S_ROUND] += 1
    start_round(s, tb, hand_of, boneyard)


# ================================================================ legal moves
@njit(cache=True)
def _first_pending(s: np.ndarray, tb: np.ndarray) -> int:
    """R21: the double played first (``satisfy_in_reverse_order``: the last). Needs pending."""
    if tb[K_SATISFY_IN_REVERSE_ORDER]:
        return s[S_PENDING + s[S_PENDING_LEN] - 1]
    return s[S_PENDING]


@njit(cache=True)
def double_to_satisfy(s: np.ndarray, tb: np.ndarray) -> int:
    """The train whose unsatisfied double the next tile must go on (R20, R21, R13), or -1."""
    if s[S_PENDING_LEN] > 0 and s[S_PHASE] == NORMAL:
        return _first_pending(s, tb)
    return -1


@njit(cache=True)
def _target_trains(s: np.ndarray, tb: np.ndarray, p: int) -> int:
    """Bitmask of the trains ``p`` may lay its next tile on, before matching (R9, R14, R18, R20)."""
    if s[S_PHASE] == OPENING:
        return 1 << p  # R9 / one_tile_opening: own train only
    if s[S_PENDING_LEN] > 0 and s[S_TILES_TURN] == 0:
        return 1 << _first_pending(s, tb)  # R20/R21: the first unsatisfied double
    if s[S_OWES] and tb[K_COVER_OWN_DOUBLE_ON_IT]:
        return 1 << s[S_TURN_DOUBLES + s[S_TURN_DOUBLES_LEN] - 1]  # variant: on the double
    # R14: own train, the Mexican train, marked trains once ours has left the station
    mask = (1 << p) | (1 << tb[K_N])
    if s[S_TRAIN_LEN + p] > 0:
        for q in range(tb[K_N]):
            if s[S_MARKERS + q]:
                mask |= 1 << q
    return mask


@njit(cache=True)
def _plays(s: np.ndarray, tb: np.ndarray, out: np.ndarray) -> int:
    """The tile plays of the seat on turn into ``out``, increasing; returns their count."""
    p = s[S_CURRENT]
    width = tb[K_WIDTH]
    values = tb[K_PIPS] + 1
    no_doubles = tb[K_ONE_DOUBLE_PER_TURN] != 0 and s[S_DOUBLES_TURN] > 0  # one_double_per_turn
    targets = _target_trains(s, tb, p)
    pips = S_HAND_PIPS + p * MAX_VALUES
    count = 0
    for t in range(width):
        if not (targets >> t) & 1:
            continue
        v = s[S_ENDS + t]
        if s[pips + v] == 0:
            continue
        row = K_MATCH + v * MAX_VALUES
        for k in range(values):
            tile = tb[row + k]
            if s[S_LOC + tile] == p and not (no_doubles and tb[K_IS_DOUBLE + tile] != 0):
                out[count] = tile * width + t
                count += 1
    # the trains were visited in order, each in increasing tile order: sort the merge
    for i in range(1, count):
        x = out[i]
        j = i - 1
        while j >= 0 and out[j] > x:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = x
    return count


@njit(cache=True)
def _may_draw(s: np.ndarray, tb: np.ndarray) -> bool:
    """R16: one draw per owed tile; ``draw_until_engine_match`` draws on without a train."""
    if s[S_BONE_LEN] == 0:
        return False
    if s[S_PHASE] == OPENING and not tb[K_OPENING_MAY_DRAW]:
        return False  # R10: no draw on the first turn
    if not s[S_HAS_DRAWN]:
        return True
    return tb[K_DRAW_UNTIL_ENGINE_MATCH] != 0 and s[S_TRAIN_LEN + s[S_CURRENT]] == 0


@njit(cache=True)
def legal_moves_into(s: np.ndarray, tb: np.ndarray, out: np.ndarray) -> int:
    """The legal moves of the seat on turn into ``out`` (>= MAX_MOVES long), in increasing
    order as ``MexicanTrain.legal_moves`` (R9-R22); returns their count (0 once over)."""
    phase = s[S_PHASE]
    if phase >= ROUND_OVER:
        return 0
    if phase == SEEK_ENGINE:
        out[0] = tb[K_DRAW]  # R5 variant: draw in turn until the engine appears
        return 1
    count = _plays(s, tb, out)
    if phase == NORMAL:
        if count:
            return count
    else:
        chain = tb[K_MULTI_OPENING] != 0 and s[S_TILES_TURN] > 0
        if count:
            if chain:
                out[count] = tb[K_PASS]  # R9: may stop after any tile
                count += 1
            return count
        if chain:
            out[0] = tb[K_PASS]  # R9: the chain cannot go on
            return 1
    out[0] = tb[K_DRAW] if _may_draw(s, tb) else tb[K_PASS]  # R15, R16, R10
    return 1


@njit(cache=True)
def legal_moves(s: np.ndarray, tb: np.ndarray) -> tuple[np.ndarray, int]:
    """A new array of the legal moves (``MAX_MOVES`` long) and their count."""
    out = np.empty(MAX_MOVES, np.int64)
    return out, legal_moves_into(s, tb, out)


@njit(cache=True)
def void_values(s: np.ndarray, tb: np.ndarray, p: int) -> int:
    """Pip bitmask v such that a v tile would be legal for ``p`` now (the public shown void)."""
    targets = _target_trains(s, tb, p)
    mask = 0
    for t in range(tb[K_WIDTH]):
        if (targets >> t) & 1:
            mask |= 1 << s[S_ENDS + t]
    if tb[K_ONE_DOUBLE_PER_TURN] and s[S_DOUBLES_TURN] > 0:
        # a v-v double would not have been legal: v is proven absent only if v-v is out
        for v in range(tb[K_PIPS] + 1):
            if (mask >> v) & 1 and not _on_table(s, tb[K_DOUBLE_ID + v]):
                mask &= ~(1 << v)
    return mask


# ===================================================================== apply
@njit(cache=True)
def apply(s: np.ndarray, tb: np.ndarray, move: int) -> None:
    """Apply a LEGAL move of the seat on turn (unchecked, as ``MexicanTrain.apply``)."""
    s[S_HISTORY] += 1
    if move == tb[K_DRAW]:
        _apply_draw(s, tb)
    elif move == tb[K_PASS]:
        _apply_pass(s, tb)
    else:
        _apply_play(s, tb, move)


@njit(cache=True)
def _apply_draw(s: np.ndarray, tb: np.ndarray) -> None:
    p = s[S_CURRENT]
    top = s[S_BONE_LEN] - 1
    tile = s[S_BONEYARD + top]  # R8: the top of the boneyard
    s[S_BONEYARD + top] = -1
    s[S_BONE_LEN] = top
    if s[S_PHASE] == SEEK_ENGINE:
        # R5 variant: seats draw in turn until the engine appears; its finder opens
        if tile == tb[K_DOUBLE_ID + s[S_ENGINE]]:
            s[S_ENGINE_PLACED] = 1
            s[S_LOC + tile] = LOC_STATION
            s[S_PHASE] = OPENING
            s[S_FIRST_PLAYER] = p
            _skip_empty_openers(s, tb)
        else:
            _add_to_hand(s, tb, p, tile)
            s[S_CURRENT] = (p + 1) % tb[K_N]
        return
    # public knowledge: the hand before this draw holds none of the legal values
    s[S_PRE_DRAW_VOIDS + p] = s[S_VOIDS + p] | void_values(s, tb, p)
    s[S_VOIDS + p] = 0  # the drawn tile is unknown to the others
    _add_to_hand(s, tb, p, tile)
    s[S_HAS_DRAWN] = 1


@njit(cache=True)
def _apply_pass(s: np.ndarray, tb: np.ndarray) -> None:
    p = s[S_CURRENT]
    voluntary_stop = s[S_PHASE] == OPENING and tb[K_MULTI_OPENING] != 0 and s[S_TILES_TURN] > 0
    if not voluntary_stop:
        s[S_VOIDS + p] |= void_values(s, tb, p)
        # R10 / R16 / R20: the passing seat marks its train, unless the variant spares it
        if not (tb[K_NO_MARKER_WHEN_FORCED_TO_SATISFY] and s[S_OBLIGED]):
            s[S_MARKERS + p] = 1
    _end_turn(s, tb)


@njit(cache=True)
def _apply_play(s: np.ndarray, tb: np.ndarray, move: int) -> None:
    p = s[S_CURRENT]
    n = tb[K_N]
    width = tb[K_WIDTH]
    tile = move // width
    t = move - tile * width
    _remove_from_hand(s, tb, p, tile)
    s[S_LOC + tile] = LOC_TRAIN + t
    s[S_POS + tile] = s[S_TRAIN_LEN + t]
    s[S_TRAIN_LEN + t] += 1
    s[S_ENDS + t] = tb[K_OTHER + tile * MAX_VALUES + s[S_ENDS + t]]  # R7
    if s[S_HAS_DRAWN]:
        # the tile laid after a draw is the drawn one: the old hand is known again
        s[S_VOIDS + p] = s[S_PRE_DRAW_VOIDS + p]
        s[S_HAS_DRAWN] = 0  # R18: each owed tile allows one draw
    # R17 markers
    if t < n and s[S_MARKERS + t] != 0 and (t == p or tb[K_MARKER_OFF_BY_ANY_PLAY_ON_IT] != 0):
        s[S_MARKERS + t] = 0
    if tb[K_MARKER_OFF_BY_OWNER_PLAY_ANYWHERE]:
        s[S_MARKERS + p] = 0
    # R20-R22: a tile on a double's train satisfies it (trains are lines; no branch)
    if s[S_PENDING_LEN]:
        _list_remove(s, S_PENDING, S_PENDING_LEN, t)
    if s[S_TURN_DOUBLES_LEN]:
        _list_remove(s, S_TURN_DOUBLES, S_TURN_DOUBLES_LEN, t)
    s[S_TILES_TURN] += 1
    is_double = tb[K_IS_DOUBLE + tile]
    if is_double:
        s[S_DOUBLES_TURN] += 1
        s[S_TURN_DOUBLES + s[S_TURN_DOUBLES_LEN]] = t
        s[S_TURN_DOUBLES_LEN] += 1
    if s[S_HAND_COUNT + p] == 0:
        if s[S_PHASE] == NORMAL:
            _finish_round(s, tb, False)  # R19: going out ends the round at once
        else:
            _end_turn(s, tb)  # R12: the opening goes round first
        return
    if s[S_PHASE] == OPENING:
        if not tb[K_MULTI_OPENING]:
            _end_turn(s, tb)  # one_tile_opening: one tile (never a double here)
        return  # R9: the chain may go on
    if is_double:
        s[S_OWES] = 1  # R18: one more tile is owed
    else:
        _end_turn(s, tb)


# ================================================================ turn order
@njit(cache=True)
def _end_turn(s: np.ndarray, tb: np.ndarray) -> None:
    p = s[S_CURRENT]
    n = tb[K_N]
    k = s[S_TURN_DOUBLES_LEN]
    if k:
        if not tb[K_NO_DOUBLE_SATISFACTION]:
            base = s[S_PENDING_LEN]  # R13, R20, R21: in the order played
            for i in range(k):
                s[S_PENDING + base + i] = s[S_TURN_DOUBLES + i]
            s[S_PENDING_LEN] = base + k
        for i in range(k):
            s[S_TURN_DOUBLES + i] = -1
        s[S_TURN_DOUBLES_LEN] = 0
    _reset_turn(s)
    if s[S_PHASE] == OPENING:
        s[S_FIRST_TURN_DONE + p] = 1
        s[S_CURRENT] = (p + 1) % n
        if _skip_empty_openers(s, tb):
            return
        # every seat has had its first turn (R12, R13)
        for q in range(n):
            if s[S_HAND_COUNT + q] == 0:
                _finish_round(s, tb, False)
                return
        s[S_PHASE] = NORMAL
    else:
        s[S_CURRENT] = (p + 1) % n
    if s[S_BONE_LEN] == 0 and is_blocked(s, tb):
        _finish_round(s, tb, True)
        return
    s[S_OBLIGED] = 1 if s[S_PENDING_LEN] > 0 else 0


@njit(cache=True)
def _skip_empty_openers(s: np.ndarray, tb: np.ndarray) -> bool:
    """Move the turn past seats with no tiles; True while someone still opens (R12, R15)."""
    n = tb[K_N]
    p = s[S_CURRENT]
    for _ in range(n):
        if s[S_FIRST_TURN_DONE + p]:
            return False
        if s[S_HAND_COUNT + p]:
            s[S_CURRENT] = p
            return True
        s[S_FIRST_TURN_DONE + p] = 1  # an empty hand takes no action (R15)
        p = (p + 1) % n
    return False


@njit(cache=True)
def is_blocked(s: np.ndarray, tb: np.ndarray) -> bool:
    """R23: nobody could lay a tile even if every train carried a marker.

    Meant for an empty boneyard, after a turn from the end of the opening on. A binding
    unsatisfied double restricts every seat to that double (R20).
    """
    n = tb[K_N]
    if s[S_PENDING_LEN]:
        v = s[S_ENDS + _first_pending(s, tb)]
        holders = 0
        for p in range(n):
            holders += s[S_HAND_PIPS + p * MAX_VALUES + v]
        return holders == 0
    any_end = 0
    for t in range(n + 1):
        any_end |= 1 << s[S_ENDS + t]
    for p in range(n):
        # R14: without its own train a seat reaches only its own train and the Mexican
        reach = any_end if s[S_TRAIN_LEN + p] else (1 << s[S_ENDS + p]) | (1 << s[S_ENDS + n])
        pips = S_HAND_PIPS + p * MAX_VALUES
        for v in range(tb[K_PIPS] + 1):
            if (reach >> v) & 1 and s[pips + v]:
                return False
    return True


@njit(cache=True)
def is_round_over(s: np.ndarray) -> bool:
    """The round (and so every decision of it) has ended (R23)."""
    return s[S_PHASE] >= ROUND_OVER


# =================================================================== scoring
@njit(cache=True)
def penalties_into(s: np.ndarray, tb: np.ndarray, out: np.ndarray) -> None:
    """Pips left in each hand into ``out[:n]`` (R24, ``blank_penalty`` aware)."""
    n = tb[K_N]
    for p in range(n):
        out[p] = 0
    for tile in range(tb[K_TILES]):
        loc = s[S_LOC + tile]
        if 0 <= loc < n:
            out[loc] += tb[K_TILE_VALUE + tile]


@njit(cache=True)
def _finish_round(s: np.ndarray, tb: np.ndarray, blocked: bool) -> None:
    """R23/R24: score the round; the episode ends after ``rounds`` rounds (R25)."""
    n = tb[K_N]
    s[S_BLOCKED] = 1 if blocked else 0
    pen = np.zeros(MAX_SEATS, np.int64)
    penalties_into(s, tb, pen)
    row = s[S_ROUNDS_SCORED]
    round_scores = s[S_ROUND_SCORES + row * MAX_SEATS : S_ROUND_SCORES + (row + 1) * MAX_SEATS].view(
        np.float64
    )
    scores = s[S_SCORES : S_SCORES + MAX_SEATS].view(np.float64)
    if tb[K_POSITIVE_SCORING]:
        # positive_scoring (R24 variant): the winner takes the others' pips; ties share
        winners = 0
        for p in range(n):
            if s[S_HAND_COUNT + p] == 0:
                winners |= 1 << p
        if winners == 0:
            low = pen[0]
            for p in range(1, n):
                low = min(low, pen[p])
            for p in range(n):
                if pen[p] == low:
                    winners |= 1 << p
        pot = 0
        k = 0
        for p in range(n):
            if (winners >> p) & 1:
                k += 1
            else:
                pot += pen[p]
        share = pot / k
        for p in range(n):
            round_scores[p] = share if (winners >> p) & 1 else 0.0
    else:
        for p in range(n):
            round_scores[p] = pen[p]  # R24: pips, whole numbers
    for p in range(n):
        scores[p] += round_scores[p]
    s[S_ROUNDS_SCORED] = row + 1
    s[S_PHASE] = GAME_OVER if s[S_ROUND] + 1 >= tb[K_ROUNDS] else ROUND_OVER


# ============================================================ random play
@njit(cache=True)
def xorshift32(x: int) -> int:
    """One step of Marsaglia's xorshift32 on a value in 1 .. 2**32 - 1 (a cheap move picker)."""
    x ^= (x << 13) & 0xFFFFFFFF
    x ^= x >> 17
    x ^= (x << 5) & 0xFFFFFFFF
    return x


@njit(cache=True)
def random_steps(
    s: np.ndarray,
    tb: np.ndarray,
    hands: np.ndarray,
    boneyards: np.ndarray,
    bone_lens: np.ndarray,
    rng: np.ndarray,
    moves: np.ndarray,
    num_steps: int,
) -> int:
    """``num_steps`` random legal decisions, dealing a new game from a pool when one ends.

    The pool holds round-0 deals: ``hands[d]`` is a ``hand_of`` array, ``boneyards[d,
    :bone_lens[d]]`` the boneyard. ``rng = [xorshift32 state, next deal index]``, advanced
    in place. A finished round always starts a new game (the benchmark plays single rounds).
    """
    x = rng[0]
    d = rng[1]
    pool = hands.shape[0]
    steps = 0
    while steps < num_steps:
        if s[S_PHASE] >= ROUND_OVER:
            new_game(s, tb, hands[d], boneyards[d, : bone_lens[d]], 0, False)
            d = (d + 1) % pool
        count = legal_moves_into(s, tb, moves)
        x = xorshift32(x)
        apply(s, tb, moves[x % count])
        steps += 1
    rng[0] = x
    rng[1] = d
    return steps


# =============================================================== observations
@njit(cache=True)
def _rel_train(t: int, seat: int, n: int) -> int:
    """Absolute train ``t`` as seen from ``seat``: 0 own, k seat + k, n the Mexican."""
    return n if t == n else (t - seat + n) % n


@njit(cache=True)
def encode_into(s: np.ndarray, tb: np.ndarray, seat: int, out: np.ndarray) -> None:
    """The float32 observation of ``seat`` into ``out[:K_OBS_SIZE]``, exactly as
    :meth:`mtrain_env.mexican_train.observation.ObservationEncoder.encode` writes it.

    Relative to ``seat`` (train/seat k is seat ``(seat + k) mod n``, train n the Mexican);
    only public fields and the observer's own hand are read (no hidden tile reaches it).
    Real values are computed in float64 as the Python encoder does, then stored as float32.
    """
    n = tb[K_N]
    T = tb[K_TILES]
    w = tb[K_WIDTH]
    pips = tb[K_PIPS] + 1
    hand_size = tb[K_HAND_SIZE]
    out[: tb[K_OBS_SIZE]] = 0.0
    o_hand = tb[K_O_HAND]
    o_table = tb[K_O_TABLE]
    for tile in range(T):
        loc = s[S_LOC + tile]
        if loc == seat:
            out[o_hand + tile] = 1.0
        elif LOC_TRAIN <= loc <= LOC_STATION:
            out[o_table + tile] = 1.0  # the engine in the station included (R5)
    o_started = tb[K_O_STARTED]
    o_end = tb[K_O_END]
    o_length = tb[K_O_LENGTH]
    o_marker = tb[K_O_MARKER]
    for k in range(w):
        t = n if k == n else (seat + k) % n
        length = s[S_TRAIN_LEN + t]
        if length:
            out[o_started + k] = 1.0
            out[o_length + k] = length / pips
        out[o_end + k * pips + s[S_ENDS + t]] = 1.0  # R7: the engine while empty
        if k < n and s[S_MARKERS + t]:
            out[o_marker + k] = 1.0  # R10, R16, R17
    o_double = tb[K_O_DOUBLE]
    for i in range(s[S_PENDING_LEN]):
        out[o_double + _rel_train(s[S_PENDING + i], seat, n)] = 1.0  # R13, R20
    for i in range(s[S_TURN_DOUBLES_LEN]):
        out[o_double + _rel_train(s[S_TURN_DOUBLES + i], seat, n)] = 1.0  # R18
    phase = s[S_PHASE]
    pending_count = 0
    if s[S_PENDING_LEN] > 0 and phase == NORMAL:  # binding from the end of the opening (R13, R21)
        out[tb[K_O_PFIRST] + _rel_train(_first_pending(s, tb), seat, n)] = 1.0
        pending_count = s[S_PENDING_LEN]
    out[tb[K_O_PCOUNT]] = pending_count
    o_phase = tb[K_O_PHASE]
    if phase <= NORMAL:
        out[o_phase + phase] = 1.0  # seek_engine / opening / normal
    if s[S_OWES]:
        out[o_phase + 3] = 1.0
    if s[S_HAS_DRAWN]:
        out[o_phase + 4] = 1.0
    out[tb[K_O_ENGINE] + s[S_ENGINE]] = 1.0
    out[tb[K_O_BONE]] = s[S_BONE_LEN] / T
    o_done = tb[K_O_DONE]
    o_void = tb[K_O_VOID]
    o_opp = tb[K_O_OPP_COUNT]
    for k in range(n):
        q = (seat + k) % n
        if s[S_FIRST_TURN_DONE + q]:
            out[o_done + k] = 1.0
        if k:
            void = s[S_VOIDS + q]
            base = o_void + (k - 1) * pips
            for v in range(pips):
                if (void >> v) & 1:
                    out[base + v] = 1.0
            out[o_opp + k - 1] = s[S_HAND_COUNT + q] / hand_size
    o_round = tb[K_O_ROUND]
    if o_round >= 0:  # a session (R25)
        out[o_round + s[S_ROUND]] = 1.0
        scores = s[S_SCORES : S_SCORES + MAX_SEATS].view(np.float64)
        scale = 1.0 / (hand_size * tb[K_PIPS])
        o_scores = tb[K_O_SCORES]
        for k in range(n):
            out[o_scores + k] = scores[(seat + k) % n] * scale


@njit(cache=True)
def to_absolute(tb: np.ndarray, seat: int, action: int) -> int:
    """A RELATIVE action of ``seat`` (:mod:`~mtrain_env.mexican_train.codec`) as a core move."""
    if action >= tb[K_DRAW]:
        return action
    w = tb[K_WIDTH]
    n = tb[K_N]
    tile = action // w
    k = action - tile * w
    return tile * w + (n if k == n else (k + seat) % n)


@njit(cache=True)
def to_relative(tb: np.ndarray, seat: int, move: int) -> int:
    """A core move as the RELATIVE action of ``seat`` (the inverse of :func:`to_absolute`)."""
    if move >= tb[K_DRAW]:
        return move
    w = tb[K_WIDTH]
    tile = move // w
    return tile * w + _rel_train(move - tile * w, seat, tb[K_N])


@njit(cache=True)
def mask_into(s: np.ndarray, tb: np.ndarray, moves: np.ndarray, out: np.ndarray) -> int:
    """The int8 action mask of the seat on turn, RELATIVE encoding, into ``out[:K_ACTIONS]``
    (all zero once the round is over); its legal core moves into ``moves``; returns their count."""
    out[: tb[K_ACTIONS]] = 0
    count = legal_moves_into(s, tb, moves)
    seat = s[S_CURRENT]
    for i in range(count):
        out[to_relative(tb, seat, moves[i])] = 1
    return count


#: :func:`env_step` packs its result as ``count * ENV_STEP_SEATS + seat``
ENV_STEP_SEATS = 64


@njit(cache=True)
def env_step(
    s: np.ndarray,
    tb: np.ndarray,
    action: int,
    moves: np.ndarray,
    obs: np.ndarray,
    masks: np.ndarray,
    row: int,
) -> int:
    """One step of the AEC env on the compiled backend, in one call: the seat on turn plays
    RELATIVE ``action`` (legal: the caller checked it against the mask), then the next
    decision is settled: the legal moves of the seat on turn into ``moves``, its relative
    mask into ``masks[row, :K_ACTIONS]`` (a row of a block the env hands out read-only) and
    its observation into ``obs[:K_OBS_SIZE]``.

    Returns ``count * ENV_STEP_SEATS + seat`` (``count`` legal moves), or -1 when the move
    ended the round (R23; then nothing but the state was written: the env scores it, deals
    the next round and settles through its general path).
    """
    apply(s, tb, to_absolute(tb, s[S_CURRENT], action))
    if s[S_PHASE] >= ROUND_OVER:
        return -1
    count = mask_into(s, tb, moves, masks[row])
    seat = s[S_CURRENT]
    encode_into(s, tb, seat, obs)
    return count * ENV_STEP_SEATS + seat


# ============================================================ batched play
@njit(cache=True)
def deal_from_permutation(
    tb: np.ndarray, round_index: int, perm: np.ndarray, hand_of: np.ndarray, boneyard: np.ndarray
) -> int:
    """The deal :func:`~mtrain_env.mexican_train.core.dealing.random_deal` makes from the
    permutation its ``rng.permutation(len(pool))`` call returns (R4, R5, R8).

    Writes ``hand_of[:T]`` and ``boneyard`` (top LAST); returns the boneyard's length. The
    pool is the set minus this round's engine (R5) unless ``engine_holder_opens``.
    """
    T = tb[K_TILES]
    n = tb[K_N]
    hand_size = tb[K_HAND_SIZE]
    aside = -1 if tb[K_ENGINE_HOLDER_OPENS] else tb[K_DOUBLE_ID + tb[K_PIPS] - round_index]
    size = T if aside < 0 else T - 1
    hand_of[:T] = -1
    dealt = n * hand_size
    for j in range(dealt):
        x = perm[j]
        hand_of[x + 1 if 0 <= aside <= x else x] = j // hand_size
    rest = size - dealt
    for j in range(rest):
        x = perm[dealt + j]
        boneyard[rest - 1 - j] = x + 1 if 0 <= aside <= x else x  # the first left is drawn first
    return rest


@njit(cache=True)
def round_rewards_into(s: np.ndarray, tb: np.ndarray, mode: int, out: np.ndarray) -> None:
    """Every seat's reward for the round just scored into ``out[:n]``, as
    :func:`mtrain_env.mexican_train.rewards.round_rewards` computes it (R24, R25)."""
    n = tb[K_N]
    row = s[S_ROUNDS_SCORED] - 1
    rows = s[S_ROUND_SCORES : S_ROUND_SCORES + MAX_ROUNDS * MAX_SEATS].view(np.float64)
    last = rows[row * MAX_SEATS : row * MAX_SEATS + n]
    positive = tb[K_POSITIVE_SCORING] != 0
    sign = 1.0 if positive else -1.0
    scale = float(tb[K_HAND_SIZE] * tb[K_PIPS])
    if mode == REWARD_ZERO_SUM:
        total = 0.0
        for p in range(n):
            total += last[p]
        mean = total / n
        for p in range(n):
            out[p] = sign * (last[p] - mean) / scale
        return
    if mode == REWARD_PENALTY:
        for p in range(n):
            out[p] = sign * last[p] / scale
        return
    # "win": once, at the episode's end; the R25 session winners share +1
    for p in range(n):
        out[p] = 0.0
    if s[S_PHASE] != GAME_OVER:
        return
    keys = np.empty((n, 3), np.float64)
    for p in range(n):
        total = 0.0
        count = 0
        best = 0.0
        seen = False
        for r in range(row + 1):
            x = rows[r * MAX_SEATS + p]
            total += x
            if positive:
                count += x > 0
                if not seen or x > best:
                    best = x
                    seen = True
            elif x == 0:
                count += 1
            elif not seen or x < best:  # the lowest round score other than zero
                best = x
                seen = True
        if positive:
            keys[p, 0], keys[p, 1], keys[p, 2] = -total, -count, -best
        else:
            keys[p, 0], keys[p, 1], keys[p, 2] = total, -count, best
    winners = 1  # the seats whose key is the smallest so far (seat b holds one)
    k = 1
    b = 0
    for p in range(1, n):
        c = 0  # keys[p] against keys[b], lexicographically
        for j in range(3):
            if keys[p, j] < keys[b, j]:
                c = -1
                break
            if keys[p, j] > keys[b, j]:
                c = 1
                break
        if c < 0:
            winners, k, b = 1 << p, 1, p
        elif c == 0:
            winners |= 1 << p
            k += 1
    if k == n:
        return
    for p in range(n):
        out[p] = 1.0 / k if (winners >> p) & 1 else -1.0 / (n - k)


@njit(cache=True)
def _observe_row(
    s: np.ndarray, tb: np.ndarray, obs: np.ndarray, mask: np.ndarray, legal: np.ndarray, legal_len: np.ndarray
) -> int:
    """Observation, mask and legal moves of the seat on turn of one game; returns the seat."""
    seat = s[S_CURRENT]
    encode_into(s, tb, seat, obs)
    legal_len[0] = mask_into(s, tb, legal, mask)
    return seat


@njit(cache=True)
def batch_reset(
    states: np.ndarray,
    tb: np.ndarray,
    perms: np.ndarray,
    obs: np.ndarray,
    masks: np.ndarray,
    seats: np.ndarray,
    legal: np.ndarray,
    legal_len: np.ndarray,
    hand_of: np.ndarray,
    boneyard: np.ndarray,
) -> None:
    """A fresh episode in every game, game ``i`` dealt from ``perms[i]``; its first decision."""
    for i in range(states.shape[0]):
        k = deal_from_permutation(tb, 0, perms[i], hand_of, boneyard)
        new_game(states[i], tb, hand_of, boneyard[:k], 0, False)
        seats[i] = _observe_row(states[i], tb, obs[i], masks[i], legal[i], legal_len[i : i + 1])


@njit(cache=True)
def batch_check(
    states: np.ndarray, tb: np.ndarray, actions: np.ndarray, legal: np.ndarray, legal_len: np.ndarray
) -> tuple[int, int]:
    """The first bad action of a batch as ``(game, 0)`` out of range or ``(game, 1)`` not
    legal (R9-R22) for the seat on turn, or ``(-1, -1)``; changes nothing."""
    A = tb[K_ACTIONS]
    for i in range(states.shape[0]):
        a = actions[i]
        if a < 0 or a >= A:
            return i, 0
        move = to_absolute(tb, states[i, S_CURRENT], a)
        found = False
        for j in range(legal_len[i]):
            if legal[i, j] == move:
                found = True
                break
        if not found:
            return i, 1
    return -1, -1


@njit(cache=True)
def batch_step(
    states: np.ndarray,
    tb: np.ndarray,
    actions: np.ndarray,
    mode: int,
    perms: np.ndarray,
    obs: np.ndarray,
    masks: np.ndarray,
    seats: np.ndarray,
    legal: np.ndarray,
    legal_len: np.ndarray,
    rewards: np.ndarray,
    terminated: np.ndarray,
    round_over: np.ndarray,
    final_obs: np.ndarray,
    hand_of: np.ndarray,
    boneyard: np.ndarray,
) -> tuple[int, int]:
    """One decision in every game of the batch, validated first (:func:`batch_check`: on a
    bad action nothing changes and its ``(game, reason)`` is returned, else ``(-1, -1)``).

    Game ``i``'s seat on turn plays RELATIVE ``actions[i]``. A round that ends gives every
    seat its reward (``rewards[i, :n]``, :func:`round_rewards_into`, else 0) and sets
    ``round_over[i]``; the next round of a session is dealt from ``perms[i]``. An episode
    that ends sets ``terminated[i]``, writes the final observation of the seat that moved
    into ``final_obs[i]`` (if ``final_obs`` has rows) and deals a new episode from
    ``perms[i]`` in the same step (autoreset). ``round_over[i]`` also says that
    ``perms[i]`` was used. Every game's next decision is then observed.
    """
    bad, reason = batch_check(states, tb, actions, legal, legal_len)
    if bad >= 0:
        return bad, reason
    keep_final = final_obs.shape[0] > 0
    for i in range(states.shape[0]):
        s = states[i]
        rewards[i, :] = 0.0
        terminated[i] = False
        round_over[i] = False
        p = s[S_CURRENT]
        apply(s, tb, to_absolute(tb, p, actions[i]))
        if s[S_PHASE] >= ROUND_OVER:
            round_over[i] = True
            round_rewards_into(s, tb, mode, rewards[i])
            if s[S_PHASE] == GAME_OVER:
                terminated[i] = True
                if keep_final:
                    encode_into(s, tb, p, final_obs[i])
                k = deal_from_permutation(tb, 0, perms[i], hand_of, boneyard)
                new_game(s, tb, hand_of, boneyard[:k], 0, False)
            else:
                k = deal_from_permutation(tb, s[S_ROUND] + 1, perms[i], hand_of, boneyard)
                next_round(s, tb, hand_of, boneyard[:k])
        seats[i] = _observe_row(s, tb, obs[i], masks[i], legal[i], legal_len[i : i + 1])
    return -1, -1


@njit(cache=True)
def random_actions(masks: np.ndarray, rng: np.ndarray, out: np.ndarray) -> None:
    """A uniformly random legal action per row of ``masks`` into ``out`` (for benchmarks and
    tests; ``rng[0]`` is an xorshift32 state, advanced in place)."""
    x = rng[0]
    for i in range(masks.shape[0]):
        row = masks[i]
        count = 0
        for a in range(row.shape[0]):
            count += row[a]
        x = xorshift32(x)
        pick = x % count
        for a in range(row.shape[0]):
            if row[a]:
                if pick == 0:
                    out[i] = a
                    break
                pick -= 1
    rng[0] = x
