"""Every invariant of a partnership-dominoes state, in one place (B1-B13 of :mod:`.rules`).

:func:`check_state` is what ``load_state_dict`` checks after reading a snapshot's types, and
what the soak (``python -m tests.env.soak``) checks after every step of random play. The first broken
invariant is raised as a ``ValueError`` in the snapshot's words,
``state dict 'KEY': RULE: what is wrong`` (keys as in
:func:`~mtrain_env.block.core.serialize.state_to_dict`).

What holds, by rule:

* B1, B3 (tiles): hands, sleeping tiles and the line are exactly the set, each tile once;
  nothing sleeps with 4 players.
* B4: no redeal without the rule; a hand not yet opened holds no redeal-worthy doubles.
* B5, B6 (openers): an empty line means the opener is on turn and nothing happened yet; a
  forced opening tile is in the opener's hand; later hands open per B6.
* B8 (the line): consecutive tiles match; the open ends are its outer halves; who laid what
  is exactly the line; the last player is set exactly when the line is not empty; every
  action of the hand is a tile or a pass, at most ``n - 1`` passes after each tile.
* B9: a seat never shows a void in a pip it holds, and shows none before the first tile.
* B10, B11 (a hand under way): nobody's hand is empty and someone can still play.
* B10-B12 (results): each result is what scoring its hand's end gives (winner, lead,
  points, tie), a domino's seat has no pips left; the last result is the hands left now.
* B13 (the match): one result per finished hand; scores are the results' points; the match
  did not end before its last hand; the loser, the tie-break flag and the phase follow.

Pure: no framework import.
"""

from __future__ import annotations

import functools

from mtrain_env.block.core.dealing import too_many_doubles
from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.block.core.scoring import score_hand, settle_match
from mtrain_env.block.core.state import DOMINO, GameState, HandResult, Phase
from mtrain_env.tilegame.snapshot import bad_value
from mtrain_env.tilegame.tiles import bits_list

__all__ = ["check_state"]


def check_state(game: BlockDominoes, s: GameState) -> None:
    """Raise ``ValueError`` naming the key and the rule of the first invariant ``s`` breaks."""
    if type(s.phase) is not Phase:
        raise bad_value("phase", "B13", f"not a phase: {s.phase!r}")
    _check_tiles(game, s)
    _check_line(game, s)
    _check_voids(game, s)
    loser = _check_results(game, s)
    if s.phase == Phase.PLAYING:
        _check_playing(game, s)
    else:
        _check_hand_end(game, s, loser)


def _check_tiles(game: BlockDominoes, s: GameState) -> None:
    """B1, B3, B4: the set, each tile once; the deal's rules."""
    tiles = game.tiles
    n = game.n
    if len(s.hands) != n:
        raise bad_value("hands", "B3", f"must hold {n} hands")
    seen = 0
    for p, h in enumerate(s.hands):
        if h < 0 or h & ~tiles.full:
            raise bad_value(f"hands[{p}]", "B1", "holds tiles outside the set")
        if h & seen:
            raise bad_value(
                f"hands[{p}]", "B1", f"{list(tiles.tiles[(h & seen).bit_length() - 1])} appears twice"
            )
        seen |= h
    if s.sleeping < 0 or s.sleeping & ~tiles.full or s.sleeping & seen:
        raise bad_value("sleeping", "B1", "sleeping tiles are set tiles in no hand")
    if n == 4 and s.sleeping:
        raise bad_value("sleeping", "B3", "with 4 players the whole set is dealt")
    seen |= s.sleeping
    if s.table & seen or seen | s.table != tiles.full:
        raise bad_value("hands", "B1", "hands, sleeping tiles and the line are not exactly the set")
    if s.redeals < 0 or (s.redeals and game.config.redeal_doubles is None):
        raise bad_value("redeals", "B4", "no redeal without the rule")


def _check_line(game: BlockDominoes, s: GameState) -> None:
    """B8: one connected line, its ends, who laid it, how many actions it took."""
    tiles = game.tiles
    n = game.n
    table = 0
    for k, (a, b) in enumerate(s.line):
        i = tiles.tile_id(a, b)
        if table >> i & 1:
            raise bad_value(f"line[{k}]", "B1", f"{[a, b]} appears twice")
        table |= 1 << i
        if k and s.line[k - 1][1] != a:
            raise bad_value(f"line[{k}]", "B8", f"{[a, b]} does not match {list(s.line[k - 1])}")
    if table != s.table:
        raise bad_value("line", "B8", "the table is not the line")
    ends = [s.line[0][0], s.line[-1][1]] if s.line else [-1, -1]
    if s.ends != ends:
        raise bad_value("line", "B8", f"the open ends are {ends}, not {s.ends}")
    laid = 0
    for p, m in enumerate(s.played_by):
        if m & laid:
            raise bad_value(f"played_by[{p}]", "B8", "a tile is listed as laid twice")
        laid |= m
    if len(s.played_by) != n or laid != s.table:
        raise bad_value("played_by", "B8", "who laid what must list exactly the tiles of the line")
    if not -1 <= s.last_player < n or (s.last_player < 0) != (not s.line):
        raise bad_value("last_player", "B8", "a seat exactly while the line is not empty (-1 before)")
    if not 0 <= s.current < n:
        raise bad_value("current_player", "B7", f"must be a seat 0..{n - 1}")
    if not 0 <= s.opener < n:
        raise bad_value("opener", "B5", f"must be a seat 0..{n - 1}")
    if not len(s.line) <= s.moves <= n * len(s.line):
        raise bad_value(
            "moves", "B9", f"{len(s.line)} tiles take {len(s.line)}..{n * len(s.line)} actions, not {s.moves}"
        )
    if s.forced_opening >= 0:
        if s.line or not s.hands[s.opener] >> s.forced_opening & 1:
            raise bad_value(
                "forced_opening", "B5", "a forced opening tile is in the opener's hand, the line empty"
            )
    elif s.forced_opening != -1:
        raise bad_value("forced_opening", "B5", "a tile or none (-1)")


def _check_voids(game: BlockDominoes, s: GameState) -> None:
    """B9: a pass shows the open pips are missing; the hand then holds none of them."""
    top = 1 << (game.config.max_pips + 1)
    if len(s.voids) != game.n:
        raise bad_value("voids", "B9", f"one pip set per seat ({game.n})")
    for p, v in enumerate(s.voids):
        if v < 0 or v >= top:
            raise bad_value(f"voids[{p}]", "B9", "holds a value that is not a pip")
        if v and not s.line:
            raise bad_value(f"voids[{p}]", "B9", "nobody passes before the first tile")
        for pip in bits_list(v):
            if s.hands[p] & game.tiles.match[pip]:
                raise bad_value(f"voids[{p}]", "B9", f"seat {p} passed on {pip} but holds a {pip}")


def _check_results(game: BlockDominoes, s: GameState) -> int:
    """B10-B13: each result scores its hand's end; the match replays to the saved outcome.

    Returns the match loser after the last result (-1: none).
    """
    c = game.config
    if s.hand_index < 0:
        raise bad_value("hand_index", "B13", "must be >= 0")
    if not c.match and (s.hand_index or len(s.results) > 1):
        raise bad_value("results", "B13", "an episode of one hand (match=False) has one result at most")
    cum, loser, tiebreak = _replay(game, tuple(s.results))
    if s.scores != list(cum):
        raise bad_value("scores", "B13", f"the results' points add up to {list(cum)}, not {s.scores}")
    expected_loser = loser if c.match else -1
    if s.match_loser != expected_loser:
        raise bad_value("match_loser", "B13", f"the results decide {expected_loser}, not {s.match_loser}")
    if s.tiebreak != tiebreak:
        raise bad_value("tiebreak", "B13", f"the results give {tiebreak}")
    return expected_loser


@functools.lru_cache(maxsize=256)
def _replay(game: BlockDominoes, results: tuple[HandResult, ...]) -> tuple[tuple[int, int], int, bool]:
    """Check every result and replay the match: (points per pair, loser or -1, tie-break next).

    Cached: a match's results only grow, so the soak replays each prefix once.
    """
    c = game.config
    cum = [0, 0]
    loser, tiebreak = -1, False
    for k, r in enumerate(results):
        key = f"results[{k}]"
        if not (0 <= r.seat < game.n and 0 <= r.opener < game.n) or len(r.pips) != game.n:
            raise bad_value(key, "B10", "seats and pips by seat")
        if min(r.pips) < 0:
            raise bad_value(f"{key}.pips", "B10", "pips left are >= 0")
        if r.kind == DOMINO and r.pips[r.seat]:
            raise bad_value(f"{key}.pips", "B10", f"seat {r.seat} went out with pips left")
        expected = score_hand(c, r.kind, r.seat, r.opener, r.pips, game.order[r.seat])
        if r != expected:
            raise bad_value(key, "B10-B12", f"the hand's end scores {_describe(expected)}")
        if loser >= 0:
            raise bad_value(key, "B13", f"the match was decided by results[{k - 1}]")
        cum[0] += r.points[0]
        cum[1] += r.points[1]
        loser, tiebreak = settle_match(c, cum, r, tiebreak)
    return (cum[0], cum[1]), loser, tiebreak


def _describe(r: HandResult) -> str:
    pips = list(r.pair_pips)
    return f"winner {r.winner}, lead {r.lead}, pair pips {pips}, points {list(r.points)}, tie {r.tie}"


def _check_playing(game: BlockDominoes, s: GameState) -> None:
    """B4-B6, B10, B11: a hand under way."""
    c = game.config
    if len(s.results) != s.hand_index:
        raise bad_value("results", "B13", f"hand {s.hand_index} under way follows {s.hand_index} results")
    if s.match_loser >= 0:
        raise bad_value("phase", "B13", "the match is decided: no hand is under way")
    for p, h in enumerate(s.hands):
        if not h:
            raise bad_value(f"hands[{p}]", "B10", "an empty hand ends the hand (domino)")
    if s.line:
        if not any(game.can_play(s, p) for p in range(game.n)):
            raise bad_value("line", "B11", "nobody can play: the hand is closed (cierre)")
    else:
        if s.current != s.opener or s.moves:
            raise bad_value("current_player", "B5", "the opener acts first, before anything else happens")
        if too_many_doubles(c, s.hands) >= 0:
            raise bad_value("hands", "B4", f"a hand of {c.redeal_doubles} or more doubles is redealt")
    if s.hand_index and c.opener != "double_six":
        lead = s.results[s.hand_index - 1].lead
        opener = lead if c.opener == "winner" else game.partner(lead)
        if s.opener != opener:
            raise bad_value("opener", "B6", f"the last hand's result makes seat {opener} open")
        if s.forced_opening >= 0:
            raise bad_value("forced_opening", "B6", "later hands open with any tile")
    if not game.legal_moves(s):
        raise bad_value("current_player", "B9", f"seat {s.current} has no legal action")


def _check_hand_end(game: BlockDominoes, s: GameState, loser: int) -> None:
    """B10-B13: the hand that just ended is the last result, and the phase follows the match."""
    c = game.config
    if len(s.results) != s.hand_index + 1:
        raise bad_value("results", "B13", "a finished hand has its result")
    over = not c.match or loser >= 0
    if (s.phase == Phase.GAME_OVER) != over:
        raise bad_value("phase", "B13", "HAND_OVER means a match goes on; GAME_OVER that the episode ended")
    r = s.results[-1]
    if list(r.pips) != game.hand_pips(s):
        raise bad_value(f"results[{len(s.results) - 1}].pips", "B10", "the pips left in the hands")
    if r.opener != s.opener or r.seat != s.last_player:
        raise bad_value(f"results[{len(s.results) - 1}]", "B10", "the hand's opener and last player")
    empty = [p for p, h in enumerate(s.hands) if not h]
    if r.kind == DOMINO:
        if empty != [r.seat]:
            raise bad_value("hands", "B10", f"seat {r.seat} went out and nobody else")
    elif empty or any(game.can_play(s, p) for p in range(game.n)):
        raise bad_value("hands", "B11", "a closed hand: every seat holds tiles and none can play")
