"""Behaviours of the compiled rules engine (``mtrain_env/mexican_train/compiled/engine.py``)
that mutation testing found unpinned, or pinned only by a rare random position.

The differential tests (``tests/compiled/test_compiled_core.py`` and friends) compare whole states
after every move of random games. What no existing test checks is pinned here:

- the kernels no Python face calls (``engine.legal_moves``, ``engine.double_to_satisfy``),
  nothing legal once the round is over, and R23's blocked test for a seat whose train
  never left the station (R14: it reaches only its own train and the Mexican), each
  against the pure engine at every decision of lockstep games;
- ``positive_scoring`` (R24) when two seats tie for the lowest hand of a blocked round or
  two seats are out at the end of the opening (R12, R15): the winners share the pot;
- the batched rewards (``engine.round_rewards_into``) against ``rewards.round_rewards``
  where R25's tie-breaks decide a session, or tied winners share the ``win`` reward;
- ``engine.next_round`` refusing an unfinished round (R25), ``engine.deal_from_permutation``
  writing -1 for the tiles it does not deal (R4, R5, R8), the state's documented empty values.

Also pinned, as scripted or fast cases, behaviours the default differential run reaches
only in a few of its ~64,000 decisions: a seat going out in its opening chain (R9, R12),
three pending opening doubles satisfied in order (R13, R21), blocked ``positive_scoring``
rounds, and Mexican-train plays with 17 seats under ``marker_off_by_any_play_on_it`` (R17).

Expected values come from the pure reference engine (``core/rules.py``, pinned to RULES.md
by the rule tests) or from the rule text itself, never from the compiled output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from mtrain_env.mexican_train.compiled import CompiledMexicanTrain, engine
from mtrain_env.mexican_train.compiled.game import deal_arrays
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.dealing import Deal, random_deal
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.mexican_train.rewards import round_rewards
from tests.compiled.test_compiled_core import assert_same_state

Chooser = Callable[[MexicanTrain, GameState, list[int], np.random.Generator], int]


def _random_move(pure: MexicanTrain, ps: GameState, legal: list[int], rng: np.random.Generator) -> int:
    return legal[int(rng.integers(len(legal)))]


def _lockstep(
    config: GameConfig,
    seed: int,
    deal: Deal | None = None,
    first: int | None = None,
    choose: Chooser = _random_move,
) -> Iterator[tuple[MexicanTrain, CompiledMexicanTrain, GameState, np.ndarray]]:
    """Play one episode on both engines with the same moves; yield before every decision
    and at every round's end, asserting the states equal after every move and every deal."""
    pure, comp = MexicanTrain(config), CompiledMexicanTrain(config)
    rng_p, rng_c = np.random.default_rng(seed), np.random.default_rng(seed)
    ps = pure.new_game(rng_p, deal, first)
    cs = comp.new_game(rng_c, deal, first)
    assert_same_state(pure, comp, ps, cs)
    moves = np.random.default_rng([seed, 1])
    while True:
        yield pure, comp, ps, cs
        if ps.phase == Phase.GAME_OVER:
            return
        if ps.phase == Phase.ROUND_OVER:
            pure.next_round(ps, rng_p)
            comp.next_round(cs, rng_c)
            assert_same_state(pure, comp, ps, cs)
            continue
        legal = pure.legal_moves(ps)
        assert comp.legal_moves(cs).tolist() == legal
        move = choose(pure, ps, legal, moves)
        pure.apply(ps, move)
        comp.apply(cs, move)
        assert_same_state(pure, comp, ps, cs)


# ------------------------------------------------------- the kernels against the reference

KERNEL_CONFIGS: tuple[dict[str, Any], ...] = (
    {"num_players": 3, "max_pips": 6, "rounds": 2},
    {"num_players": 4, "max_pips": 9, "satisfy_in_reverse_order": True},
    {"num_players": 3, "max_pips": 9, "one_double_per_turn": True},
    {"num_players": 2, "max_pips": 6, "cover_own_double_on_it": True, "rounds": 3},
    {"num_players": 5, "max_pips": 12, "rules": "cardinal"},
    {"num_players": 4, "max_pips": 9, "engine_holder_opens": True, "draw_until_engine_match": True},
    # two tiles a hand from a double-12 set: many seats cannot open and stay off the table (R10, R14)
    {"num_players": 4, "max_pips": 12, "hand_size": 2},
)


def test_kernels_agree_with_the_reference_at_every_decision() -> None:
    """``engine.legal_moves`` (R9-R22), ``engine.double_to_satisfy`` (R13, R20, R21),
    ``engine.void_values`` (the shown voids, R16) and, from the end of the opening on,
    ``engine.is_blocked`` (R23 with R14's reach and R20's binding double) equal the pure
    engine's answers at every decision, for every seat; once the round is over nothing is
    legal on either engine (R23)."""
    seen = {"pending": 0, "no own train": 0, "blocked": 0, "not blocked": 0, "ROUND_OVER": 0, "GAME_OVER": 0}
    for kwargs, seed in ((k, seed) for k in KERNEL_CONFIGS for seed in range(6)):
        config = GameConfig.make(**kwargs)
        for pure, comp, ps, cs in _lockstep(config, seed):
            tb = comp.tables
            if ps.phase >= Phase.ROUND_OVER:  # nothing is legal once the round is over (R23)
                assert pure.legal_moves(ps) == [] and comp.legal_moves(cs).size == 0
                assert engine.legal_moves(cs, tb)[1] == 0
                seen[ps.phase.name] = 1
                continue  # no decision left (the turn fields of the last move stay as they were)
            out, count = engine.legal_moves(cs, tb)
            assert out.dtype == np.int64 and out.shape == (engine.MAX_MOVES,)  # move ids (codec)
            assert out[:count].tolist() == pure.legal_moves(ps)
            assert engine.double_to_satisfy(cs, tb) == pure.double_to_satisfy(ps)
            for p in range(config.num_players):
                assert engine.void_values(cs, tb, p) == pure.void_values(ps, p), p
            if ps.phase == Phase.NORMAL:
                blocked = pure._is_blocked(ps)
                assert bool(engine.is_blocked(cs, tb)) == blocked
                seen["blocked" if blocked else "not blocked"] += 1
                seen["pending"] += bool(ps.pending)
                seen["no own train"] += any(not train for train in ps.trains[: config.num_players])
    assert all(seen.values()), seen  # every branch of the kernels was compared


# ------------------------------------------------------------------------- R9, R12 opening


def test_r12_going_out_during_the_opening_chain_lets_the_others_open() -> None:
    """R9/R12: seat 0 lays its only tile on its own train in its opening chain; the round
    does not end: seat 1 still has its first turn, and only then does the round end with
    seat 0 scoring 0 (R24). Both engines in lockstep at every step."""
    config = GameConfig.make(num_players=2, max_pips=6)
    tiles = config.tiles
    only = tiles.tile_id(5, 6)  # matches the engine (6, 6) of round 0 (R5)
    seat1 = [tiles.tile_id(4, 6), tiles.tile_id(1, 2)]
    rest = [i for i in range(tiles.num_tiles) if i not in (only, *seat1, tiles.double_id(6))]
    deal = Deal([tiles.mask_of([only]), tiles.mask_of(seat1)], rest)
    width = config.num_trains
    script = [only * width + 0, tiles.tile_id(4, 6) * width + 1, config.pass_action]

    def scripted(pure: MexicanTrain, ps: GameState, legal: list[int], rng: np.random.Generator) -> int:
        move = script.pop(0)
        assert move in legal, (move, legal)
        return move

    positions = []
    for _pure, comp, ps, cs in _lockstep(config, seed=0, deal=deal, first=0, choose=scripted):
        positions.append((ps.phase, ps.current, comp.phase(cs), comp.current(cs)))
        if ps.phase >= Phase.ROUND_OVER:
            assert ps.round_scores == [[0, 1 + 2]]  # seat 1 holds the 1-2 (R24)
            assert comp.round_scores(cs) == [[0, 3]] and not cs[engine.S_BLOCKED]
    # seat 0 went out and seat 1 still opened: the opening went round first (R12)
    assert [p[:2] for p in positions[:-1]] == [(Phase.OPENING, 0), (Phase.OPENING, 1), (Phase.OPENING, 1)]
    assert positions[-1][0] == Phase.GAME_OVER
    assert [p[2:] for p in positions] == [p[:2] for p in positions]
    assert script == []


# ---------------------------------------------------------------- R17 with every seat taken


def test_r17_plays_on_the_mexican_train_with_seventeen_seats() -> None:
    """R17 ``marker_off_by_any_play_on_it`` with 17 seats (a double-18 set's most, R3): a
    tile on the Mexican train (train n, R14) touches no seat's marker nor anything else;
    the states stay equal to the reference after every move, through several Mexican plays."""
    config = GameConfig.make(num_players=17, max_pips=18, marker_off_by_any_play_on_it=True)
    mexican = config.num_players
    for _pure, _comp, ps, _cs in _lockstep(config, seed=0):
        if len(ps.trains[mexican]) >= 3:  # checked against the reference after each of them
            break
    assert len(ps.trains[mexican]) >= 3
    assert all(ps.first_turn_done)  # the plays came after the opening (R14)


# --------------------------------------------------------------------------- R25 refusal


def test_r25_engine_next_round_refuses_an_unfinished_round() -> None:
    """``engine.next_round`` itself (not only its Python face) refuses a round that is not
    over, naming R25, and changes nothing."""
    config = GameConfig.make(num_players=3, rounds=2)
    comp = CompiledMexicanTrain(config)
    cs = comp.new_game(np.random.default_rng(0))
    before = cs.copy()
    hand_of = np.full(config.num_tiles, -1, np.int64)
    with pytest.raises(ValueError, match=r"^R25: next_round needs a finished round \(phase ROUND_OVER\)$"):
        engine.next_round(cs, comp.tables, hand_of, np.empty(0, np.int64))
    assert np.array_equal(cs, before)


# ------------------------------------------------------------------ R23, R24 positive scoring


def _positive_row(penalties: list[int], out: list[bool]) -> list[float]:
    """R24 ``positive_scoring`` from the rule text: the winners are the seats that went out,
    or, in a blocked round, the lowest hands; they share the others' pips equally."""
    low = min(penalties)
    winners = [p for p, o in enumerate(out) if o] or [p for p, x in enumerate(penalties) if x == low]
    pot = sum(x for p, x in enumerate(penalties) if p not in winners)
    return [pot / len(winners) if p in winners else 0.0 for p in range(len(penalties))]


def test_r24_positive_scoring_blocked_rounds_pay_the_lowest_hands() -> None:
    """R23/R24 ``positive_scoring``: a blocked round (nobody went out) pays the lowest hand
    the others' pips, ties sharing; a round someone went out of pays that seat. Checked on
    the compiled rows against the rule, over rounds of both kinds (large hands block often)."""
    config = GameConfig.make(num_players=3, max_pips=6, hand_size=8, positive_scoring=True, rounds=4)
    kinds = {True: 0, False: 0}
    for seed in range(4):
        for _pure, comp, ps, cs in _lockstep(config, seed):
            if ps.phase < Phase.ROUND_OVER:
                continue
            penalties = comp.penalties(cs)
            out = [cs[engine.S_HAND_COUNT + p] == 0 for p in range(config.num_players)]
            assert comp.round_scores(cs)[-1] == _positive_row(penalties, out)
            assert bool(cs[engine.S_BLOCKED]) == (not any(out))
            kinds[bool(cs[engine.S_BLOCKED])] += 1
    assert kinds[True] >= 3 and kinds[False] >= 3, kinds


def test_r24_positive_scoring_seats_out_at_the_end_of_the_opening_share() -> None:
    """R12/R24 ``positive_scoring``: seats 1 and 2 are dealt no tile (R15: they take no
    action); seat 0 opens with its 6-5 and stops (R9). The round ends after the opening with
    two seats out: they share seat 0's remaining pips (0 + 1) equally."""
    config = GameConfig.make(num_players=3, max_pips=6, positive_scoring=True)
    tiles = config.tiles
    hand = [tiles.tile_id(5, 6), tiles.tile_id(0, 1)]
    rest = [i for i in range(tiles.num_tiles) if i not in (*hand, tiles.double_id(6))]
    deal = Deal([tiles.mask_of(hand), 0, 0], rest)
    script = [tiles.tile_id(5, 6) * config.num_trains, config.pass_action]

    def scripted(pure: MexicanTrain, ps: GameState, legal: list[int], rng: np.random.Generator) -> int:
        assert script[0] in legal, (script[0], legal)
        return script.pop(0)

    *_, (_pure, comp, ps, cs) = _lockstep(config, seed=0, deal=deal, first=0, choose=scripted)
    assert ps.phase == Phase.GAME_OVER and not ps.blocked and script == []
    assert comp.round_scores(cs) == [[0.0, 0.5, 0.5]] == [_positive_row([1, 0, 0], [False, True, True])]


def test_r24_positive_scoring_a_blocked_round_with_two_lowest_hands() -> None:
    """R23/R24 ``positive_scoring``: two seats tie for the lowest hand in a blocked round and
    share the third seat's pips. (Seed 52 was found by searching the pure engine's random
    games for such a round; the test checks that the tie is there.)"""
    config = GameConfig.make(num_players=3, max_pips=6, hand_size=8, positive_scoring=True)
    *_, (_pure, comp, ps, cs) = _lockstep(config, seed=52)
    penalties = comp.penalties(cs)
    assert ps.blocked and penalties.count(min(penalties)) == 2, penalties
    row = comp.round_scores(cs)[-1]
    assert row == _positive_row(penalties, [False] * 3)
    assert sorted(row) == [0.0, max(penalties) / 2, max(penalties) / 2]


# ---------------------------------------------------------------------- the state layout


def test_empty_fields_hold_their_documented_values() -> None:
    """The layout's canonical empty values (``engine.clear_state``: equal games are equal
    arrays): no tile anywhere (-1), no train position, boneyard slot, open end past the
    ``n + 1`` trains (R7), pending double or turn double (-1); everything else 0."""
    config = GameConfig.make(num_players=3, max_pips=6)
    comp = CompiledMexicanTrain(config)
    blank = comp.new_state()
    minus_one = {
        (engine.S_LOC, engine.MAX_TILES),
        (engine.S_POS, engine.MAX_TILES),
        (engine.S_BONEYARD, engine.MAX_TILES),
        (engine.S_ENDS, engine.MAX_TRAINS),
        (engine.S_PENDING, engine.MAX_TRAINS),
        (engine.S_TURN_DOUBLES, engine.MAX_TRAINS),
    }
    expected = np.zeros(engine.STATE_SIZE, np.int64)
    for start, size in minus_one:
        expected[start : start + size] = -1
    assert np.array_equal(blank, expected)
    cs = comp.new_game(np.random.default_rng(0))
    n = config.num_players
    assert cs[engine.S_ENDS : engine.S_ENDS + n + 1].tolist() == [6] * (n + 1)  # the engine (R5, R7)
    assert (cs[engine.S_ENDS + n + 1 : engine.S_ENDS + engine.MAX_TRAINS] == -1).all()


# --------------------------------------------------------------------- R13, R21 doubles


def test_r13_r21_three_opening_doubles_are_satisfied_in_the_order_played() -> None:
    """R13: the three seats' opening chains each end in a double (5-5, 4-4, 3-3), so three
    doubles are pending after the opening, in seat order; R21: seat 0 satisfies the first
    one (its own 5-5), and the other two stay pending in their order. Both engines in
    lockstep at every step (a list of three or more pending doubles: random games reach
    at most two)."""
    config = GameConfig.make(num_players=3, max_pips=6)
    tiles = config.tiles
    t = tiles.tile_id
    hands = [[t(6, 5), t(5, 5), t(0, 5), t(1, 2)], [t(6, 4), t(4, 4), t(1, 3)], [t(6, 3), t(3, 3), t(0, 2)]]
    dealt = {i for hand in hands for i in hand}
    rest = [i for i in range(tiles.num_tiles) if i not in dealt and i != tiles.double_id(6)]
    deal = Deal([tiles.mask_of(hand) for hand in hands], rest)
    w, stop = config.num_trains, config.pass_action
    script = [t(6, 5) * w, t(5, 5) * w, stop, t(6, 4) * w + 1, t(4, 4) * w + 1, stop]
    script += [t(6, 3) * w + 2, t(3, 3) * w + 2, stop, t(0, 5) * w]

    def scripted(pure: MexicanTrain, ps: GameState, legal: list[int], rng: np.random.Generator) -> int:
        assert script[0] in legal, (script[0], legal)
        return script.pop(0)

    pending = []
    for _pure, comp, ps, cs in _lockstep(config, seed=0, deal=deal, first=0, choose=scripted):
        pending.append((ps.phase, list(ps.pending), comp.to_pure(cs).pending))
        if not script:
            break
    assert pending[9] == (Phase.NORMAL, [0, 1, 2], [0, 1, 2])  # after the opening (R13)
    assert pending[10] == (Phase.NORMAL, [1, 2], [1, 2])  # the first played is satisfied first (R21)


# ------------------------------------------------------------------------ R4, R5, R8 deals


@pytest.mark.parametrize("holder_opens", [False, True])
def test_deal_from_permutation_is_the_pure_deal_array_for_array(holder_opens: bool) -> None:
    """``engine.deal_from_permutation`` writes exactly ``deal_arrays`` of the pure
    ``random_deal`` from the same generator (R4 hands, R5 the engine set aside unless
    ``engine_holder_opens``, R8 the boneyard top last): -1 for every tile not dealt."""
    config = GameConfig.make(num_players=3, max_pips=6, rounds=3, engine_holder_opens=holder_opens)
    tiles = config.tiles
    pool = tiles.num_tiles - (0 if holder_opens else 1)
    tb = CompiledMexicanTrain(config).tables
    for round_index in range(3):
        for seed in range(3):
            want_hand_of, want_boneyard = deal_arrays(
                config, random_deal(config, config.engine_value(round_index), np.random.default_rng(seed))
            )
            hand_of = np.full(tiles.num_tiles, 99, np.int64)
            boneyard = np.full(tiles.num_tiles, 99, np.int64)
            perm = np.random.default_rng(seed).permutation(pool)
            k = engine.deal_from_permutation(tb, round_index, perm, hand_of, boneyard)
            assert hand_of.tolist() == want_hand_of.tolist()
            assert boneyard[:k].tolist() == want_boneyard.tolist()
            assert (hand_of == -1).sum() == tiles.num_tiles - config.num_players * config.hand_size


# ------------------------------------------------------------------------ R24, R25 rewards


def test_round_rewards_equal_the_reference_with_every_r25_tie_break() -> None:
    """``engine.round_rewards_into`` equals ``rewards.round_rewards`` in every mode on random
    score tables of 0-3 points a round (so totals, rounds scored 0 / won and the best single
    round all tie often: every R25 tie-break decides some sessions, and full ties share), with
    both scorings (R24), at the episode's end and before it."""
    rng = np.random.default_rng(7)
    modes = {"zero_sum": engine.REWARD_ZERO_SUM, "penalty": engine.REWARD_PENALTY, "win": engine.REWARD_WIN}
    shared = broken = 0
    games: dict[tuple[int, int, bool], CompiledMexicanTrain] = {}
    for _ in range(1500):
        n, rounds = int(rng.integers(2, 5)), int(rng.integers(1, 5))
        positive = bool(rng.random() < 0.5)
        key = (n, rounds, positive)
        if key not in games:
            games[key] = CompiledMexicanTrain(
                GameConfig.make(num_players=n, max_pips=6, rounds=rounds, positive_scoring=positive)
            )
        comp = games[key]
        config = comp.config
        played = int(rng.integers(1, rounds + 1))
        table = rng.integers(0, 4, size=(played, n)).astype(float).tolist()
        over = played == rounds
        s = comp.new_state()
        s[engine.S_ROUNDS_SCORED] = played
        s[engine.S_PHASE] = engine.GAME_OVER if over else engine.ROUND_OVER
        rows = s[engine.S_ROUND_SCORES : engine.S_ROUND_SCORES + engine.MAX_ROUNDS * engine.MAX_SEATS]
        for r, row in enumerate(table):
            rows.view(np.float64)[r * engine.MAX_SEATS : r * engine.MAX_SEATS + n] = row
        for mode, code in modes.items():
            out = np.full(engine.MAX_SEATS, 9.0)
            engine.round_rewards_into(s, comp.tables, code, out)
            want = round_rewards(mode, config, table, over)
            assert out[:n].tolist() == pytest.approx(want, rel=1e-12, abs=1e-12), (mode, table, positive)
            if mode == "win" and over:
                winners = sum(x > 0 for x in want)
                totals = [sum(col) for col in zip(*table, strict=True)]
                best = max(totals) if positive else min(totals)
                shared += 1 < winners < n
                broken += 0 < winners < totals.count(best)  # a tie-break decided (R25)
    assert shared > 10 and broken > 10, (shared, broken)
    # the last tie-break alone (R25): equal totals, equal rounds scored 0 (won), and seat 0
    # has the lowest non-zero round (penalty) or the highest round (positive_scoring)
    for positive in (False, True):
        config = GameConfig.make(num_players=2, max_pips=6, rounds=2, positive_scoring=positive)
        comp = CompiledMexicanTrain(config)
        s = comp.new_state()
        s[engine.S_ROUNDS_SCORED], s[engine.S_PHASE] = 2, engine.GAME_OVER
        rows = s[engine.S_ROUND_SCORES : engine.S_ROUND_SCORES + 2 * engine.MAX_SEATS].view(np.float64)
        table = [[1.0, 2.0], [3.0, 2.0]] if not positive else [[3.0, 2.0], [1.0, 2.0]]
        rows[0:2], rows[engine.MAX_SEATS : engine.MAX_SEATS + 2] = table
        out = np.zeros(engine.MAX_SEATS)
        engine.round_rewards_into(s, comp.tables, engine.REWARD_WIN, out)
        assert out[:2].tolist() == [1.0, -1.0] == round_rewards("win", config, table, True)
