"""Hypothesis property tests of the block-dominoes rules core over random configs, deals and play.

Invariants checked after EVERY move: the 28 tiles are conserved (hands, line, sleeping tiles
partition the set, B1/B3), the line is a chain whose ends are the state's ends (B8), the seat
on turn always has a move and PASS only when no tile fits (B9), shown voids are never held
(B9, no boneyard), every hand ends within its move bound, and each hand's points follow an
oracle written here from B10-B12 (and 001's remark that a 4-player cierre needs the same
number at both ends with all seven of its tiles played).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mtrain_env.block.core.config import GameConfig
from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.block.core.state import GameState, Phase

TILES = [(a, b) for a in range(7) for b in range(a, 7)]

configs = st.fixed_dictionaries(
    {
        "num_players": st.sampled_from([4, 2]),
        "rules": st.sampled_from(["001", "openspiel"]),
        "double_opening": st.booleans(),
        "redeal_doubles": st.sampled_from([4, 5, 6, 7, None]),
        "closed_scoring": st.sampled_from(["loser", "both"]),
        "closed_tie": st.sampled_from(["closer", "closer_loses", "opener"]),
        "scoring": st.sampled_from(["pips", "ten"]),
        "target": st.sampled_from([None, 20, 50]),
        "counter_clockwise": st.booleans(),
        "match": st.booleans(),
    }
).flatmap(
    lambda d: st.sampled_from(["winner", "double_six", *(["partner"] if d["num_players"] == 4 else [])]).map(
        lambda o: {**d, "opener": o}
    )
)


def _bits(mask: int) -> set[int]:
    return {i for i in range(28) if mask >> i & 1}


def _oracle(config: GameConfig, kind: str, seat: int, opener: int, hands: list[set[int]]) -> dict[str, Any]:
    """B10-B12 from the rule text, independent of the engine's scoring module."""
    pips = [sum(sum(TILES[t]) for t in h) for h in hands]
    pair = [sum(pips[0::2]), sum(pips[1::2])]
    if kind == "domino":
        winner = seat % 2
    elif pair[0] != pair[1]:
        winner = int(pair[1] < pair[0])
    else:
        winner = {"closer": seat % 2, "closer_loses": 1 - seat % 2, "opener": opener % 2}[config.closed_tie]

    def pts(p: int) -> int:
        return math.ceil(p / 10) if config.scoring == "ten" else p

    if kind == "cierre" and config.closed_scoring == "both":
        points = [pts(pair[0]), pts(pair[1])]
    else:
        points = [0, 0]
        points[1 - winner] = pts(pair[1 - winner])
    return {"winner": winner, "points": points, "pair_pips": pair, "pips": pips}


def _check_invariants(game: BlockDominoes, s: GameState) -> None:
    full = (1 << 28) - 1
    parts = [*s.hands, s.table, s.sleeping]
    assert sum(parts) == full and all(a & b == 0 for i, a in enumerate(parts) for b in parts[i + 1 :])
    assert len(s.line) == s.table.bit_count() == sum(m.bit_count() for m in s.played_by)
    for (_, b), (c, _) in zip(s.line, s.line[1:], strict=False):
        assert b == c
    if s.line:
        assert s.ends == [s.line[0][0], s.line[-1][1]]
    for q, v in enumerate(s.voids):
        for pip in range(7):
            if v >> pip & 1:
                assert not s.hands[q] & game.tiles.match[pip]
    if s.phase == Phase.PLAYING:
        legal = game.legal_moves(s)
        assert legal
        fits = bool(s.line) and game.can_play(s, s.current)
        assert (legal == [game.PASS]) == (bool(s.line) and not fits)


@settings(max_examples=120, deadline=None)
@given(config=configs, seed=st.integers(0, 2**32 - 1))
def test_random_episodes_keep_every_invariant(config: dict[str, Any], seed: int) -> None:
    c = GameConfig.make(**config)
    game = BlockDominoes(c)
    rng = np.random.default_rng(seed)
    s = game.new_game(rng)
    n = c.num_players
    dealt = 7 * n
    hands_played = 0
    while True:
        _check_invariants(game, s)
        if s.phase == Phase.GAME_OVER:
            break
        if s.phase == Phase.HAND_OVER:
            game.next_hand(s, rng)
            continue
        start_hands = [_bits(h) for h in s.hands]
        opener = s.opener
        before = len(s.results)
        while s.phase == Phase.PLAYING:
            legal = game.legal_moves(s)
            mover = s.current
            game.checked_apply(s, legal[int(rng.integers(len(legal)))])
            _check_invariants(game, s)
            # every hand ends: at most one tile and n - 1 passes per dealt tile
            assert s.moves <= dealt * n
        hands_played += 1
        assert len(s.results) == before + 1
        r = s.results[-1]
        final = [_bits(h) for h in s.hands]
        assert all(f <= h for f, h in zip(final, start_hands, strict=True))
        assert r.seat == mover == s.last_player and r.opener == opener
        if r.kind == "domino":
            assert not final[mover]
        else:
            assert all(final) or n == 2
            assert not any(game.can_play(s, q) for q in range(n))
            if n == 4:  # 001: only the same number at both ends, all seven of its tiles played
                v = s.ends[0]
                assert s.ends[1] == v and all(s.table >> t & 1 for t, tt in enumerate(TILES) if v in tt)
        want = _oracle(c, r.kind, r.seat, r.opener, final)
        assert r.winner == want["winner"] and list(r.points) == want["points"]
        assert list(r.pair_pips) == want["pair_pips"] and list(r.pips) == want["pips"]
        assert r.lead % 2 == r.winner
    assert s.scores == [sum(r.points[p] for r in s.results) for p in (0, 1)]
    if c.match:
        loser = s.match_loser
        assert loser in (0, 1)
        last = s.results[-1]
        decided_by_tiebreak = len(s.results) >= 2 and all(
            sum(r.points[p] for r in s.results[:-1]) >= c.target for p in (0, 1)
        )
        if decided_by_tiebreak:
            assert loser == 1 - last.winner
        else:
            assert s.scores[loser] >= c.target > s.scores[1 - loser]
    else:
        assert hands_played == 1 and s.match_loser == -1


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.sampled_from([2, 4]))
def test_legal_moves_are_exactly_the_fitting_placements(seed: int, players: int) -> None:
    """B8/B9: the legal set is every (tile, end) that fits, with one placement when ends are equal."""
    c = GameConfig.make(num_players=players, rules="openspiel")
    game = BlockDominoes(c)
    rng = np.random.default_rng(seed)
    s = game.new_game(rng)
    while s.phase == Phase.PLAYING:
        legal = game.legal_moves(s)
        if s.line:
            left, right = s.ends
            want = set()
            for t in _bits(s.hands[s.current]):
                if left in TILES[t]:
                    want.add(2 * t)
                if right in TILES[t] and right != left:
                    want.add(2 * t + 1)
            assert set(legal) == (want or {game.PASS})
        else:
            assert set(legal) == {2 * t for t in _bits(s.hands[s.current])}
        game.apply(s, legal[int(rng.integers(len(legal)))])
