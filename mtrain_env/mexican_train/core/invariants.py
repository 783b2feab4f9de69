"""Every invariant of a Mexican Train state, in one place (RULES.md R1-R25).

:func:`check_state` is what ``load_state_dict`` checks after reading a snapshot's types, and
what the soak (``python -m tests.env.soak``) checks after every step of random play: a state either
satisfies all of it or the first broken invariant is raised as a ``ValueError`` in the
snapshot's words, ``state dict 'KEY': RULE: what is wrong`` (keys as in
:func:`~mtrain_env.mexican_train.core.serialize.state_to_dict`).

What holds, by rule:

* R1, R2, R5, R7, R8 (tiles): hands, boneyard, trains and the engine are exactly the set,
  each tile once; the engine is the round's double, in the station except while seats seek
  it (``engine_holder_opens`` only); every train is a chain from the engine and its open end
  is its last tile's outer half; the table is the trains plus the placed engine.
* R24, R25 (rounds and scores): the round index fits the session; ``ROUND_OVER`` only before
  the last round and ``GAME_OVER`` only in it; one scored row per finished round; scores are
  finite, non-negative, of the config's type (:func:`~.scoring.score_type`) and the sum of
  the rows; a finished round's row is the score of the hands left (R24); R6's first player.
* R9-R13 (the opening): the seats that had their first turn are those from the first player
  up to the seat on turn; nothing on the Mexican train; only those seats' trains started
  (the seat on turn's with the tiles of this turn); a marker only on an empty train of a seat
  that passed; an empty hand only after its first turn (R12); no tile owed.
* R15, R19 (turns): mid-round, every seat on turn holds tiles and has a legal move, and no
  hand is empty after the opening (going out ends the round).
* R16 (voids, draws): a seat never shows a void in a pip it holds; right after a draw it
  shows none, and one tile at most (the drawn one) has a pip the hand lacked before the
  draw or can be played.
* R18, R20-R22 (doubles): a turn goes on only after doubles (tiles laid = doubles laid,
  a tile owed exactly when one was laid); the trains ending in a double are the pending ones
  and this turn's (when doubles must be satisfied); a turn that started under a pending
  double is obliged, and its first tile satisfies it; none pending under
  ``no_double_satisfaction``; at most one double a turn under ``one_double_per_turn``, and
  after the opening under ``cover_own_double_on_it`` (the tile owed covers it).
* R23: a round with an empty boneyard that nobody can play on has ended; a blocked round has
  an empty boneyard and nobody who can play; a round that ended otherwise has a seat out.

Pure: no framework import.
"""

from __future__ import annotations

import math

from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.scoring import positive_scores, score_type
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.snapshot import bad_value
from mtrain_env.tilegame.tiles import bits_list

__all__ = ["check_state"]


def _train_key(game: MexicanTrain, t: int) -> str:
    return "mexican_train" if t == game.mexican else f"trains[{t}]"


def check_state(game: MexicanTrain, s: GameState) -> None:
    """Raise ``ValueError`` naming the key and the rule of the first invariant ``s`` breaks."""
    _check_round(game, s)
    _check_tiles(game, s)
    _check_voids(game, s)
    if s.phase >= Phase.ROUND_OVER:
        _check_round_end(game, s)
    else:
        _check_doubles(game, s)
        if s.phase == Phase.SEEK_ENGINE:
            _check_seek(game, s)
        elif s.phase == Phase.OPENING:
            _check_opening(game, s)
        else:
            _check_normal(game, s)
        _check_draw(game, s)
        _check_on_turn(game, s)


# ------------------------------------------------------------------ rounds, scores
def _check_round(game: MexicanTrain, s: GameState) -> None:
    """R5, R6, R24, R25: the round fits the session, its engine and opener; the scores add up."""
    c = game.config
    n = game.n
    if type(s.phase) is not Phase:
        raise bad_value("phase", "R25", f"not a phase: {s.phase!r}")
    if not 0 <= s.round_index < c.rounds:
        raise bad_value("round", "R25", f"must be in 0..{c.rounds - 1}, got {s.round_index}")
    if s.engine != c.engine_value(s.round_index):
        raise bad_value(
            "engine", "R5", f"round {s.round_index} uses the double {c.engine_value(s.round_index)}"
        )
    if s.phase == Phase.SEEK_ENGINE and not c.engine_holder_opens:
        raise bad_value("phase", "R5", "SEEK_ENGINE happens only under engine_holder_opens")
    if s.engine_placed != (s.phase != Phase.SEEK_ENGINE):
        raise bad_value("engine_placed", "R5", "the engine is placed in every phase but SEEK_ENGINE")
    last = s.round_index == c.rounds - 1
    if s.phase == Phase.ROUND_OVER and last:
        raise bad_value(
            "phase", "R25", f"round {s.round_index} is the last of {c.rounds}: it ends in GAME_OVER"
        )
    if s.phase == Phase.GAME_OVER and not last:
        raise bad_value(
            "phase", "R25", f"GAME_OVER in round {s.round_index} of {c.rounds}: a session plays every round"
        )
    kind = score_type(c)
    for r, row in enumerate(s.round_scores):
        if type(row) is not list or len(row) != n:
            raise bad_value(f"round_scores[{r}]", "R24", f"must hold {n} scores")
        for p, x in enumerate(row):
            _score(x, kind, f"round_scores[{r}][{p}]")
    finished = s.round_index + (1 if s.phase >= Phase.ROUND_OVER else 0)
    if len(s.round_scores) != finished:
        raise bad_value(
            "round_scores",
            "R25",
            f"{len(s.round_scores)} scored rounds do not fit round {s.round_index} in phase {s.phase.name}",
        )
    if type(s.scores) is not list or len(s.scores) != n:
        raise bad_value("scores", "R25", f"must hold {n} scores")
    for p, x in enumerate(s.scores):
        _score(x, kind, f"scores[{p}]")
        total = sum(row[p] for row in s.round_scores)
        if not math.isclose(x, total, rel_tol=1e-9, abs_tol=1e-9):
            raise bad_value(f"scores[{p}]", "R25", f"{x!r} is not the sum of its round scores ({total!r})")
    for key, seat in (
        ("first_player", s.first_player),
        ("seat_offset", s.seat_offset),
        ("current_player", s.current),
    ):
        if not 0 <= seat < n:
            raise bad_value(key, "R6", f"must be a seat 0..{n - 1}, got {seat}")
    if not s.first_player_forced and s.seat_offset:
        raise bad_value("seat_offset", "R6", "only a forced first player shifts the rotation")
    if not c.engine_holder_opens and s.first_player != (s.seat_offset + s.round_index) % n:
        raise bad_value(
            "first_player",
            "R6",
            f"round {s.round_index} opens with seat {(s.seat_offset + s.round_index) % n}",
        )
    if s.history_len < 0:
        raise bad_value("history_len", "R15", "must be >= 0")
    if s.blocked and s.phase < Phase.ROUND_OVER:
        raise bad_value("blocked", "R23", "only a finished round is blocked")


def _score(x: float, kind: type, key: str) -> None:
    if type(x) is not kind:
        raise bad_value(
            key, "R24", f"scores of this config are {kind.__name__}s, got {type(x).__name__} {x!r}"
        )
    if not math.isfinite(x) or x < 0:
        raise bad_value(key, "R24", f"must be a finite score >= 0, got {x!r}")


# --------------------------------------------------------------------------- tiles
def _check_tiles(game: MexicanTrain, s: GameState) -> None:
    """R1, R5, R7, R8: the set, each tile once; trains are chains from the engine."""
    tiles = game.tiles
    n = game.n
    full = tiles.full
    engine_id = tiles.double_id(s.engine)
    seen = 0
    if len(s.hands) != n:
        raise bad_value("hands", "R1", f"must hold {n} hands")
    for p, h in enumerate(s.hands):
        if h < 0 or h & ~full:
            raise bad_value(f"hands[{p}]", "R1", "holds tiles outside the set")
        if h & seen:
            dup = tiles.tiles[(h & seen).bit_length() - 1]
            raise bad_value(f"hands[{p}]", "R1", f"{list(dup)} is also in another hand")
        seen |= h
    for k, i in enumerate(s.boneyard):
        if not 0 <= i < tiles.num_tiles:
            raise bad_value("boneyard", "R1", f"tile id {i} is outside the set")
        if seen >> i & 1:
            raise bad_value(
                f"boneyard[{len(s.boneyard) - 1 - k}]", "R1", f"{list(tiles.tiles[i])} appears twice"
            )
        seen |= 1 << i
    if len(s.trains) != n + 1 or len(s.ends) != n + 1:
        raise bad_value("trains", "R7", f"{n} personal trains and the Mexican train")
    table = 0
    width = game.config.max_pips + 1
    for t, train in enumerate(s.trains):
        key = _train_key(game, t)
        end = s.engine
        for i in train:
            if not 0 <= i < tiles.num_tiles:
                raise bad_value(key, "R1", f"tile id {i} is outside the set")
            if (seen | table) >> i & 1 or i == engine_id:
                raise bad_value(key, "R1", f"{list(tiles.tiles[i])} appears twice")
            table |= 1 << i
            other = tiles.other_end[i * width + end]
            if other < 0:
                raise bad_value(key, "R7", f"{list(tiles.tiles[i])} does not continue the open end {end}")
            end = other
        if s.ends[t] != end:
            raise bad_value(key, "R7", f"its open end is {end}, not {s.ends[t]}")
    if s.engine_placed:
        if seen >> engine_id & 1:
            raise bad_value("engine", "R5", "the engine is in the station, not in a hand or the boneyard")
        table |= 1 << engine_id
    elif engine_id not in s.boneyard:
        raise bad_value("boneyard", "R5", "while seats seek the engine it is in the boneyard")
    if s.table != table:
        raise bad_value("trains", "R1", "the table is not the trains plus the engine")
    if seen | table != full:
        missing = [list(tiles.tiles[i]) for i in bits_list(full & ~(seen | table))]
        raise bad_value("boneyard", "R1", f"hands, boneyard, trains and engine miss {missing[:6]}")
    if len(s.markers) != n or len(s.first_turn_done) != n:
        raise bad_value("markers", "R17", f"one marker and one first-turn flag per seat ({n})")


def _check_voids(game: MexicanTrain, s: GameState) -> None:
    """R16: shown voids are pips the seat provably lacks, so its hand has none of them."""
    match = game.tiles.match
    top = 1 << (game.config.max_pips + 1)
    for key, values in (("voids", s.voids), ("pre_draw_voids", s.pre_draw_voids)):
        if len(values) != game.n:
            raise bad_value(key, "R16", f"one pip set per seat ({game.n})")
        for p, v in enumerate(values):
            if v < 0 or v >= top:
                raise bad_value(f"{key}[{p}]", "R16", "holds a value that is not a pip")
            if s.phase == Phase.SEEK_ENGINE and v:
                raise bad_value(f"{key}[{p}]", "R16", "nobody has shown a void before the engine is found")
    for p, v in enumerate(s.voids):
        for pip in bits_list(v):
            if s.hands[p] & match[pip]:
                raise bad_value(f"voids[{p}]", "R16", f"seat {p} has shown it lacks {pip} but holds a {pip}")


# ----------------------------------------------------------------------- mid-round
def _check_doubles(game: MexicanTrain, s: GameState) -> None:
    """R18, R20-R22 bookkeeping shared by the phases of a round under way."""
    c = game.config
    doubles = game.tiles.doubles
    ended_on_double = {t for t, tr in enumerate(s.trains) if tr and doubles >> tr[-1] & 1}
    listed: set[int] = set()
    for key, trains in (("pending_doubles", s.pending), ("turn_doubles", s.turn_doubles)):
        for t in trains:
            if not 0 <= t <= game.mexican:
                raise bad_value(key, "R20", f"{t!r} is not a train")
            if t not in ended_on_double:
                raise bad_value(key, "R20", f"train {game.config.train_ref(t)!r} does not end in a double")
            if t in listed:
                raise bad_value(key, "R22", f"train {game.config.train_ref(t)!r} is listed twice")
            listed.add(t)
    if c.no_double_satisfaction and s.pending:
        raise bad_value("pending_doubles", "R20", "no_double_satisfaction: no double is ever pending")
    if not c.no_double_satisfaction and listed != ended_on_double:
        unlisted = [game.config.train_ref(t) for t in sorted(ended_on_double - listed)]
        raise bad_value(
            "pending_doubles",
            "R20",
            f"trains {unlisted} end in a double that is neither pending nor this turn's",
        )
    if not 0 <= s.doubles_this_turn <= s.tiles_this_turn:
        raise bad_value("turn.doubles", "R18", "0 <= doubles laid this turn <= tiles laid this turn")
    if c.one_double_per_turn and s.doubles_this_turn > 1:
        raise bad_value("turn.doubles", "R18", "one_double_per_turn: at most one double a turn")
    if c.cover_own_double_on_it and s.phase == Phase.NORMAL and s.doubles_this_turn > 1:
        raise bad_value("turn.doubles", "R18", "cover_own_double_on_it: the tile owed covers the double")
    if len(s.turn_doubles) > s.doubles_this_turn:
        raise bad_value("turn_doubles", "R18", "more doubles listed than laid this turn")


def _check_seek(game: MexicanTrain, s: GameState) -> None:
    """R5 (``engine_holder_opens``): while seats draw for the engine, nothing is played."""
    if any(s.trains):
        raise bad_value("trains", "R5", "no tile is played before the engine is found")
    if any(s.first_turn_done) or any(s.markers):
        raise bad_value("first_turn_done", "R5", "no first turn before the engine is found")
    if s.tiles_this_turn or s.owes or s.has_drawn or s.obliged_this_turn:
        raise bad_value("turn", "R5", "seats only draw while seeking the engine")
    for p, h in enumerate(s.hands):
        if not h:
            raise bad_value(f"hands[{p}]", "R4", "every seat is dealt tiles and only draws before the engine")


def _check_opening(game: MexicanTrain, s: GameState) -> None:
    """R9-R13: first turns go round from the first player; only own trains are started."""
    c = game.config
    n = game.n
    cur = s.current
    if s.trains[game.mexican]:
        raise bad_value("mexican_train", "R9", "nobody starts the Mexican train during the opening")
    turns_taken = (cur - s.first_player) % n
    for p in range(n):
        done = (p - s.first_player) % n < turns_taken
        if s.first_turn_done[p] != done:
            raise bad_value(
                f"first_turn_done[{p}]",
                "R9",
                f"first turns go from seat {s.first_player} to the seat on turn ({cur}): it must be {done}",
            )
        if not s.hands[p] and not done:
            raise bad_value(f"hands[{p}]", "R12", "an empty hand before its first turn")
        if s.trains[p] and not done and p != cur:
            raise bad_value(f"trains[{p}]", "R9", "started before its owner's first turn")
        if s.markers[p] and (not done or s.trains[p]):
            raise bad_value(f"markers[{p}]", "R10", "a marker goes on the empty train of a seat that passed")
        if done and not s.trains[p] and not s.markers[p] and s.hands[p]:
            raise bad_value(f"markers[{p}]", "R10", "a seat that could not start its train marks it")
    if s.owes:
        raise bad_value("turn.owes", "R18", "no tile is owed during the opening")
    if s.obliged_this_turn:
        raise bad_value("turn.obliged", "R13", "doubles bind from the end of the opening on")
    if s.tiles_this_turn != len(s.trains[cur]):
        raise bad_value("turn.tiles", "R9", f"seat {cur}'s train holds the tiles of this, its first, turn")
    if s.tiles_this_turn and not c.multi_tile_opening:
        raise bad_value("turn.tiles", "R9", "one_tile_opening: the first turn ends with its tile")
    if s.has_drawn and (not c.opening_may_draw or s.tiles_this_turn):
        raise bad_value("turn.has_drawn", "R10", "no draw on this first turn")
    own = [cur] if s.trains[cur] and game.tiles.doubles >> s.trains[cur][-1] & 1 else []
    if s.turn_doubles != own:
        raise bad_value("turn_doubles", "R13", f"this turn's unsatisfied double is on train {own or 'none'}")


def _check_normal(game: MexicanTrain, s: GameState) -> None:
    """R14-R23 from every seat's second turn on."""
    if not all(s.first_turn_done):
        raise bad_value("first_turn_done", "R9", "every seat has had its first turn after the opening")
    for p, h in enumerate(s.hands):
        if not h:
            raise bad_value(f"hands[{p}]", "R19", "an empty hand ends the round")
    if s.tiles_this_turn != s.doubles_this_turn:
        raise bad_value("turn.tiles", "R18", "a turn goes on only after a double")
    if s.owes != bool(s.tiles_this_turn):
        raise bad_value("turn.owes", "R18", "a tile is owed exactly when this turn laid a double")
    if len(s.turn_doubles) != s.doubles_this_turn:
        raise bad_value("turn_doubles", "R18", "every double laid this turn is still open")
    if s.tiles_this_turn:
        if s.pending or s.obliged_this_turn:
            raise bad_value(
                "turn.tiles",
                "R20",
                "a turn under a pending double satisfies it with its first tile, ending it",
            )
    elif s.obliged_this_turn != bool(s.pending):
        raise bad_value(
            "turn.obliged", "R20", "a turn is obliged exactly when it starts under a pending double"
        )
    if not s.boneyard and not s.tiles_this_turn and not s.has_drawn and game._is_blocked(s):
        raise bad_value("boneyard", "R23", "the boneyard is empty and nobody can play: the round has ended")


def _check_draw(game: MexicanTrain, s: GameState) -> None:
    """R16: right after a draw, the hand before it lacked what the seat was shown to lack then
    (``pre_draw_voids``) and could not play: the drawn tile is the only one that may have
    such a pip, and the only one that can be played (``voids`` comes back from
    ``pre_draw_voids`` when it is)."""
    if not s.has_drawn:
        return
    p = s.current
    if s.voids[p]:
        raise bad_value(f"voids[{p}]", "R16", "the drawn tile is unseen: no void is shown right after a draw")
    shown = 0
    for pip in bits_list(s.pre_draw_voids[p]):
        shown |= game.tiles.match[pip]
    candidates = s.hands[p] & shown
    for move in game.legal_moves(s):
        if move < game.draw:
            candidates |= 1 << (move // game.width)
    if candidates & (candidates - 1):
        raise bad_value(
            f"pre_draw_voids[{p}]",
            "R16",
            "right after a draw one tile, the drawn one, may be playable or have a pip the hand lacked",
        )


def _check_on_turn(game: MexicanTrain, s: GameState) -> None:
    """R15: the seat on turn holds tiles and has a legal move."""
    if not s.hands[s.current]:
        raise bad_value("current_player", "R15", f"seat {s.current} has no tiles")
    if not game.legal_moves(s):
        raise bad_value("current_player", "R15", f"seat {s.current} has no legal move")
    if sum(map(len, s.trains)) > s.history_len:
        raise bad_value("history_len", "R15", "fewer actions than tiles laid this round")


# ---------------------------------------------------------------------- round over
def _check_round_end(game: MexicanTrain, s: GameState) -> None:
    """R19, R23, R24: how the round ended, and its score."""
    c = game.config
    if not all(s.first_turn_done):
        raise bad_value("first_turn_done", "R12", "a round ends only after every first turn")
    if s.blocked:
        if s.boneyard:
            raise bad_value("blocked", "R23", "a blocked round has an empty boneyard")
        if not game._is_blocked(s):
            raise bad_value("blocked", "R23", "a seat can still play")
    elif all(s.hands):
        raise bad_value("blocked", "R19", "a round that is not blocked ends with a seat out")
    penalties = game.penalties(s)
    expected = positive_scores(penalties, [not h for h in s.hands]) if c.positive_scoring else penalties
    if s.round_scores[-1] != expected:
        raise bad_value(f"round_scores[{len(s.round_scores) - 1}]", "R24", f"the hands left score {expected}")
