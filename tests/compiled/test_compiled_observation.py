"""The compiled observation encoder and action mask against the Python ones, at every step.

Random games over the config mix of ``tests/compiled/test_compiled_core.py`` (every preset, every
flag alone and in random combinations, 2 to the most players a set allows, double-6 to
double-18, sessions, forced first players, odd fixed deals). At every decision, and once
more after each round ends, ``engine.encode_into`` must write, for EVERY seat, exactly the
float32 vector :meth:`ObservationEncoder.encode` returns (bit for bit), and
``engine.mask_into`` exactly the env's int8 mask of the seat on turn (relative encoding,
``codec.abs_to_rel`` of the pure core's legal moves; all zero once the round is over).

The default run checks ~40,000 decisions; the slow run 200,000::

    PYTHONPATH=$PWD python -m pytest -m slow -n 2 -rP tests/compiled/test_compiled_observation.py
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

pytest.importorskip("numba")

from mtrain_env.mexican_train.codec import ActionCodec
from mtrain_env.mexican_train.compiled import CompiledMexicanTrain, engine
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.mexican_train.observation import ObservationEncoder, ObservationLayout
from tests.compiled.test_compiled_core import _config_spec, _odd_deal


class Checker:
    """Compares the two encoders for one config (buffers allocated once)."""

    def __init__(self, config: GameConfig) -> None:
        self.pure = MexicanTrain(config)
        self.comp = CompiledMexicanTrain(config)
        self.encoder = ObservationEncoder(self.pure, ObservationLayout(config))
        self.codec = ActionCodec(config)
        self.out = np.full(self.encoder.layout.size, np.nan, np.float32)
        self.mask = np.full(config.num_actions, 7, np.int8)
        self.moves = np.empty(engine.MAX_MOVES, np.int64)

    def check(self, ps: GameState, cs: np.ndarray) -> None:
        tb = self.comp.tables
        for seat in range(self.comp.n):
            self.out[:] = np.nan  # every entry must be written
            engine.encode_into(cs, tb, seat, self.out)
            expected = self.encoder.encode(ps, seat)
            assert self.out.tobytes() == expected.tobytes(), (seat, np.flatnonzero(self.out != expected))
        self.mask[:] = 7
        count = engine.mask_into(cs, tb, self.moves, self.mask)
        legal = self.pure.legal_moves(ps)
        want = np.zeros(self.codec.num_actions, np.int8)
        want[[self.codec.abs_to_rel[ps.current][m] for m in legal]] = 1
        assert np.array_equal(self.mask, want)
        assert self.moves[:count].tolist() == legal


def play(seed: int, budget: int) -> Counter[str]:
    """Random games on both engines until ``budget`` decisions, checking every position."""
    rng = np.random.default_rng([seed, 11])
    events: Counter[str] = Counter()
    while events["decisions"] < budget:
        config = GameConfig.make(**_config_spec(rng, events["games"]))
        checker = Checker(config)
        pure, comp = checker.pure, checker.comp
        deal_seed = int(rng.integers(2**32))
        deal = _odd_deal(config, rng) if rng.random() < 0.08 else None
        first = int(rng.integers(config.num_players)) if rng.random() < 0.2 else None
        rng_p, rng_c = np.random.default_rng(deal_seed), np.random.default_rng(deal_seed)
        ps = pure.new_game(rng_p, deal, first)
        cs = comp.new_game(rng_c, deal, first)
        events["games"] += 1
        while True:
            checker.check(ps, cs)
            if ps.phase == Phase.ROUND_OVER:
                pure.next_round(ps, rng_p)
                comp.next_round(cs, rng_c)
                events["rounds"] += 1
                continue
            if ps.phase == Phase.GAME_OVER:
                break
            legal = pure.legal_moves(ps)
            move = legal[int(rng.integers(len(legal)))]
            events[ps.phase.name] += 1
            events["pending double"] += bool(ps.pending)
            events["turn double"] += bool(ps.turn_doubles)
            events["void shown"] += any(ps.voids)
            events["marker"] += any(ps.markers)
            events["session"] += config.rounds > 1
            pure.apply(ps, move)
            comp.apply(cs, move)
            events["decisions"] += 1
    return events


CHUNKS = 4
BUDGET = 10_000


def check_coverage(events: Counter[str], budget: int) -> None:
    """The random games played the whole budget and reached every phase and event compared."""
    assert events["decisions"] >= budget
    for event in ("SEEK_ENGINE", "OPENING", "NORMAL", "pending double", "turn double", "void shown"):
        assert events[event] > 0, (event, events)
    assert events["marker"] > 0 and events["session"] > 0 and events["rounds"] > 0, events


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_observation_and_mask_equal_the_python_encoder(chunk: int) -> None:
    check_coverage(play(seed=chunk, budget=BUDGET), BUDGET)


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(4))
def test_observation_and_mask_slow(chunk: int) -> None:
    events = play(seed=500 + chunk, budget=50_000)
    print(f"\nchunk {chunk}: " + ", ".join(f"{k} {v}" for k, v in sorted(events.items())))
    check_coverage(events, 50_000)


def test_the_comparison_detects_a_difference() -> None:
    """A changed public field (a marker, a void, a score) changes the compiled observation,
    and the checker fails on it."""
    config = GameConfig.make(num_players=3, rounds=2)
    checker = Checker(config)
    ps = checker.pure.new_game(np.random.default_rng(5))
    cs = checker.comp.new_game(np.random.default_rng(5))
    checker.check(ps, cs)
    for field, value in ((engine.S_MARKERS + 1, 1), (engine.S_VOIDS + 2, 0b100), (engine.S_ROUND, 1)):
        bad = cs.copy()
        bad[field] = value
        with pytest.raises(AssertionError):
            checker.check(ps, bad)


def test_relative_action_conversion_matches_the_codec() -> None:
    for players, pips in ((2, 6), (4, 12), (7, 15)):
        config = GameConfig.make(num_players=players, max_pips=pips)
        comp, codec = CompiledMexicanTrain(config), ActionCodec(config)
        for seat in range(players):
            for action in range(config.num_actions):
                move = engine.to_absolute(comp.tables, seat, action)
                assert move == codec.rel_to_abs[seat][action]
                assert engine.to_relative(comp.tables, seat, move) == action
