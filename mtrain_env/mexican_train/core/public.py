"""What one seat may know: the public table plus its own hand, and determinization.

:func:`public_view` redacts a :class:`GameState` for one seat: the other hands become
counts and the boneyard a count; everything else on the table (trains, markers, pending
doubles, turn flags, shown voids, scores) is public. Agents see only this.

:func:`sample_state` turns a :class:`PublicView` back into a full :class:`GameState` by
dealing the unseen tiles at random among the opponents' hands (respecting their counts
and the pips each has shown it lacks) and the boneyard (random order) — the
determinization step of Monte Carlo search (a guess, never the truth).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.deal import hall_deal
from mtrain_env.tilegame.tiles import bits_list

#: deals :func:`_exact_deal` tries for one in which the round has not already ended (R23)
EXACT_ATTEMPTS = 64


@dataclass(frozen=True)
class PublicView:
    """A seat's leak-free view. Trains and seats are ABSOLUTE (train ``n`` = Mexican)."""

    config: GameConfig
    seat: int  #: the observing seat
    hand: int  #: its own hand (tile bitmask)
    hand_counts: tuple[int, ...]  #: tiles in each seat's hand
    boneyard_count: int
    round_index: int
    engine: int
    engine_placed: bool
    phase: Phase
    first_player: int
    seat_offset: int  #: R6 rotation offset: round k opens with (offset + k) mod n
    first_player_forced: bool  #: the episode's first player was given (overrides R5's engine holder)
    current: int  #: seat on turn
    trains: tuple[tuple[int, ...], ...]  #: tile ids from the station outward, per train
    ends: tuple[int, ...]  #: open-end pip value per train
    markers: tuple[bool, ...]
    table: int  #: bitmask of the tiles on the table
    pending: tuple[int, ...]  #: trains with a binding unsatisfied double, satisfaction order
    turn_doubles: tuple[int, ...]  #: trains ending in a double laid this turn
    first_turn_done: tuple[bool, ...]
    tiles_this_turn: int
    doubles_this_turn: int
    owes: bool
    has_drawn: bool
    obliged_this_turn: bool
    voids: tuple[int, ...]  #: per seat, pip bitmask it has shown it lacks
    pre_draw_voids: tuple[int, ...]  #: per seat, what its hand lacked before its last draw (R16)
    blocked: bool  #: the round ended blocked (R23)
    scores: tuple[float, ...]
    round_scores: tuple[tuple[float, ...], ...]
    history_len: int  #: actions applied this episode (each one was seen by every seat)

    @property
    def unseen(self) -> int:
        """Tiles this seat cannot see: the other hands and the boneyard (bitmask)."""
        mask = self.config.tiles.full & ~self.table & ~self.hand
        if not self.engine_placed:
            mask |= 1 << self.config.tiles.double_id(self.engine)
        return mask

    @property
    def on_turn(self) -> bool:
        """Whether the viewing seat is to move now (never once the round is over)."""
        return self.current == self.seat and self.phase < Phase.ROUND_OVER


def public_view(s: GameState, config: GameConfig, seat: int) -> PublicView:
    """The view of ``seat``: public state and its own hand, nothing hidden."""
    return PublicView(
        config=config,
        seat=seat,
        hand=s.hands[seat],
        hand_counts=tuple(h.bit_count() for h in s.hands),
        boneyard_count=len(s.boneyard),
        round_index=s.round_index,
        engine=s.engine,
        engine_placed=s.engine_placed,
        phase=s.phase,
        first_player=s.first_player,
        seat_offset=s.seat_offset,
        first_player_forced=s.first_player_forced,
        current=s.current,
        trains=tuple(tuple(t) for t in s.trains),
        ends=tuple(s.ends),
        markers=tuple(s.markers),
        table=s.table,
        pending=tuple(s.pending),
        turn_doubles=tuple(s.turn_doubles),
        first_turn_done=tuple(s.first_turn_done),
        tiles_this_turn=s.tiles_this_turn,
        doubles_this_turn=s.doubles_this_turn,
        owes=s.owes,
        has_drawn=s.has_drawn,
        obliged_this_turn=s.obliged_this_turn,
        # the seat on turn right after its own draw: its voids are reset, keep them so
        voids=tuple(s.voids),
        # public: the ends the drawing seat could not play (R16), not the tile it drew
        pre_draw_voids=tuple(s.pre_draw_voids),
        blocked=s.blocked,
        scores=tuple(s.scores),
        round_scores=tuple(tuple(r) for r in s.round_scores),
        history_len=s.history_len,
    )


def banned_tiles(view: PublicView, seat: int) -> int:
    """Tiles (bitmask) ``seat``'s hand cannot hold, as far as ``view`` shows: every tile with
    a pip the seat has shown it lacks (it drew or passed where a tile with that pip was
    playable, R15/R16), and the engine while it is still in the boneyard (R5 variant)."""
    tiles = view.config.tiles
    banned = 0 if view.engine_placed else 1 << tiles.double_id(view.engine)
    return banned | _tiles_with_pips(view.config, view.voids[seat])


def _tiles_with_pips(config: GameConfig, pips: int) -> int:
    """Every tile (bitmask) with a pip in the pip bitmask ``pips``."""
    tiles = 0
    for v in bits_list(pips):
        tiles |= config.tiles.match[v]
    return tiles


def sample_state(game: MexicanTrain, view: PublicView, rng: np.random.Generator) -> GameState:
    """A full state consistent with ``view``: unseen tiles dealt at random (determinization).

    Opponents get exactly their hand counts and never a tile with a pip they have shown
    they lack; the rest is the boneyard in random order. Seats are dealt most-constrained
    first; a dead end is retried with a fresh shuffle, and after 64 dead ends (late in a
    round, with a small boneyard and several shown voids, a valid deal can be that rare)
    :func:`_exact_deal` deals by Hall's condition, which cannot fail. An opponent on turn
    right after its draw (a view of another seat) is dealt as it drew: its hand before the
    draw lacks what it had shown (``pre_draw_voids``, R16), then it draws one tile of the
    rest. ``ValueError`` if the view admits no deal at all (its voids contradict its hand
    counts). The view of the sampled state is ``view`` itself.
    """
    n = game.n
    unseen = bits_list(view.unseen)
    needs, allowed = _dealt_hands(game, view)
    order = sorted(needs, key=lambda q: sum(1 for i in unseen if allowed[q] >> i & 1) - needs[q])
    for _attempt in range(64):
        pool = [unseen[int(j)] for j in rng.permutation(len(unseen))]
        hands = [0] * n
        hands[view.seat] = view.hand
        taken: set[int] = set()
        ok = True
        for q in order:
            need = needs[q]
            got = 0
            for i in pool:
                if got == need:
                    break
                if i not in taken and allowed[q] >> i & 1:
                    hands[q] |= 1 << i
                    taken.add(i)
                    got += 1
            if got < need:
                ok = False
                break
        if ok:
            s = _assemble(view, hands, [i for i in pool if i not in taken], rng)
            if not _would_have_ended(game, view, s):
                return s
    return _exact_deal(game, view, rng)


def _drawer(view: PublicView) -> int | None:
    """The opponent on turn right after its draw (R16), whose drawn tile is unseen; else None."""
    return view.current if view.has_drawn and view.current != view.seat else None


def _dealt_hands(game: MexicanTrain, view: PublicView) -> tuple[dict[int, int], dict[int, int]]:
    """Per opponent, the tiles to deal it and the tiles it may hold (bitmask). A drawing
    opponent is dealt its hand before the draw: one tile fewer, lacking its pre-draw voids."""
    opponents = [q for q in range(view.config.num_players) if q != view.seat]
    needs = {q: view.hand_counts[q] for q in opponents}
    allowed = {q: ~banned_tiles(view, q) for q in opponents}
    drawer = _drawer(view)
    if drawer is not None:
        needs[drawer] -= 1
        allowed[drawer] &= ~_tiles_with_pips(view.config, view.pre_draw_voids[drawer])
        allowed[drawer] &= ~_playable(game, view, drawer)
    return needs, allowed


def _playable(game: MexicanTrain, view: PublicView, seat: int) -> int:
    """The unseen tiles ``seat`` (on turn) could lay now (bitmask): the rules' own legal moves
    for a hand holding all of them. Exact where shown voids, pip masks, are not (under
    ``one_double_per_turn`` a v-v double may be held where no other v tile is)."""
    hands = [0] * game.n
    hands[seat] = view.unseen
    probe = _assemble(view, hands, [])
    tiles = 0
    for move in game.legal_moves(probe):
        if move < game.draw:
            tiles |= 1 << (move // game.width)
    return tiles


def _would_have_ended(game: MexicanTrain, view: PublicView, s: GameState) -> bool:
    """R23: the boneyard is empty and nobody could play, yet ``view`` shows the round going on."""
    return (
        view.phase == Phase.NORMAL
        and not view.boneyard_count
        and not view.tiles_this_turn
        and not view.has_drawn
        and game._is_blocked(s)
    )


def _exact_deal(game: MexicanTrain, view: PublicView, rng: np.random.Generator) -> GameState:
    """The fallback of :func:`sample_state` that cannot fail on a consistent view: the opponents'
    hands dealt by :func:`~mtrain_env.tilegame.deal.hall_deal` from the tiles their shown voids
    allow (R16: a seat that drew or passed lacked every tile matching the ends it could play);
    the boneyard gets the rest, in random order. Slower than the greedy dealer (used only after
    it fails)."""
    unseen = view.unseen
    needs, allowed = _dealt_hands(game, view)
    opponents = list(needs)
    for _attempt in range(EXACT_ATTEMPTS):
        dealt, boneyard = hall_deal(
            unseen, [needs[q] for q in opponents], [unseen & allowed[q] for q in opponents], rng
        )
        hands = [0] * game.n
        hands[view.seat] = view.hand
        for q, hand in zip(opponents, dealt, strict=True):
            hands[q] = hand
        s = _assemble(view, hands, boneyard, rng)
        if not _would_have_ended(game, view, s):
            break
    return s


def _assemble(
    view: PublicView, hands: list[int], boneyard: list[int], rng: np.random.Generator | None = None
) -> GameState:
    """The state of ``view`` with these hands and boneyard. With ``rng``, a drawing opponent
    (:func:`_drawer`), dealt its hand before the draw, draws its tile from the boneyard
    first (any of them: the order is random)."""
    drawer = _drawer(view)
    if drawer is not None and rng is not None:
        hands[drawer] |= 1 << boneyard.pop(int(rng.integers(len(boneyard))))
    n = len(hands)
    s = GameState(n)
    s.round_index = view.round_index
    s.engine = view.engine
    s.engine_placed = view.engine_placed
    s.phase = view.phase
    s.first_player = view.first_player
    s.seat_offset = view.seat_offset
    s.first_player_forced = view.first_player_forced
    s.current = view.current
    s.hands = hands
    s.boneyard = boneyard
    s.trains = [list(t) for t in view.trains]
    s.ends = list(view.ends)
    s.markers = list(view.markers)
    s.table = view.table
    s.pending = list(view.pending)
    s.turn_doubles = list(view.turn_doubles)
    s.first_turn_done = list(view.first_turn_done)
    s.tiles_this_turn = view.tiles_this_turn
    s.doubles_this_turn = view.doubles_this_turn
    s.owes = view.owes
    s.has_drawn = view.has_drawn
    s.obliged_this_turn = view.obliged_this_turn
    s.voids = list(view.voids)
    s.pre_draw_voids = list(view.pre_draw_voids)
    s.blocked = view.blocked
    s.scores = list(view.scores)
    s.round_scores = [list(r) for r in view.round_scores]
    s.history_len = view.history_len
    return s
