"""The compiled rules core (numba) against the pure reference, decision by decision.

Random games over every preset, every variant flag alone and in random combinations, 2 to
the most players a set allows, double-6/9/12/15/18, sessions of several rounds, forced first
players and odd fixed deals. At every decision both engines must give the same legal moves
in the same order; the same random legal move is applied to both; after every step the
compiled state converted back (``to_pure``) must equal the pure state slot by slot (types
included) and through ``serialize.state_to_dict``, and the pure state converted forward
(``to_compiled``) must equal the compiled array. Round scores and session totals are part
of the state, so they are compared at every step too.

The default run plays ~70,000 decisions; the >= 1,000,000-decision run is ``slow``::

    PYTHONPATH=$PWD python -m pytest -m slow -n 2 -rP tests/compiled/test_compiled_core.py
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from mtrain_env.mexican_train.compiled import CompiledMexicanTrain, engine
from mtrain_env.mexican_train.core.config import (
    CONTRADICTORY_FLAGS,
    PRESETS,
    VARIANT_FLAGS,
    GameConfig,
    max_players,
)
from mtrain_env.mexican_train.core.dealing import Deal
from mtrain_env.mexican_train.core.rules import IllegalMoveError, MexicanTrain
from mtrain_env.mexican_train.core.serialize import state_to_dict
from mtrain_env.mexican_train.core.state import GameState, Phase

SETS = (6, 9, 12, 15, 18)

# --------------------------------------------------------------------------- the game mix


def _config_spec(rng: np.random.Generator, game_index: int) -> dict[str, Any]:
    """The keywords of the ``game_index``-th game: cycles through the presets, each flag
    alone, and random flag combinations; the set, the seats and the rounds are random."""
    pips = int(rng.choice(SETS))
    top = max_players(pips)
    # mostly 2-8 seats, sometimes every seat a big set allows (R3)
    players = int(rng.integers(2, min(8, top) + 1)) if rng.random() < 0.8 else int(rng.integers(2, top + 1))
    kind = game_index % (len(PRESETS) + len(VARIANT_FLAGS) + 4)
    spec: dict[str, Any] = {"num_players": players, "max_pips": pips}
    if kind < len(PRESETS):
        spec["rules"] = sorted(PRESETS)[kind]
    elif kind < len(PRESETS) + len(VARIANT_FLAGS):
        spec[VARIANT_FLAGS[kind - len(PRESETS)]] = True
    else:  # a random combination on a random preset
        spec["rules"] = str(rng.choice(sorted(PRESETS)))
        for flag in VARIANT_FLAGS:
            if rng.random() < 0.35:
                spec[flag] = bool(rng.random() < 0.7)
    roll = rng.random()
    if roll < 0.45:
        spec["rounds"] = int(rng.integers(2, min(pips + 1, 5) + 1))  # a few rounds (R25)
    elif roll < 0.5:
        spec["rounds"] = pips + 1  # a whole session
    if rng.random() < 0.15:  # an explicit hand size (R4), small or as big as the deal allows
        dealable = (pips + 1) * (pips + 2) // 2 - 1
        spec["hand_size"] = int(rng.integers(1, dealable // players + 1))
    preset = PRESETS[spec.get("rules", "pagat")].flags
    for flag, other, _why in CONTRADICTORY_FLAGS:  # refused together by GameConfig: keep `other`
        if spec.get(flag, preset.get(flag, False)) and spec.get(other, preset.get(other, False)):
            spec[flag] = False
    return spec


def _odd_deal(config: GameConfig, rng: np.random.Generator) -> Deal:
    """A fixed deal with uneven hands, some possibly empty (R12, R15), the rest the boneyard."""
    tiles = config.tiles
    pool = list(range(tiles.num_tiles))
    if not config.engine_holder_opens:
        pool.remove(tiles.double_id(config.engine_value(0)))
    order = [pool[i] for i in rng.permutation(len(pool)).tolist()]
    hands = []
    for p in range(config.num_players):
        size = int(rng.integers(0 if p else 1, min(8, len(order) - 1) + 1))  # seat 0 holds a tile
        hands.append(tiles.mask_of(order[:size]))
        order = order[size:]
    return Deal(hands, order)


# ------------------------------------------------------------------------- comparison


def _slots(s: GameState) -> list[str]:
    """Every slot of a pure state, by ``repr``: values and types (1 vs 1.0 vs True)."""
    return [f"{name}={getattr(s, name)!r}" for name in GameState.__slots__]


def assert_same_state(pure: MexicanTrain, comp: CompiledMexicanTrain, ps: GameState, cs: np.ndarray) -> None:
    """The two states are the same game: both conversions, every slot, the snapshot dict."""
    back = comp.to_pure(cs)
    assert _slots(back) == _slots(ps)
    assert state_to_dict(pure, back) == state_to_dict(pure, ps)  # types: by the slots above
    assert np.array_equal(comp.to_compiled(ps), cs), "to_compiled(pure) differs from the compiled state"


@dataclass
class Stats:
    """What a differential run covered (so a run that skipped something shows it)."""

    decisions: int = 0
    games: int = 0
    rounds: int = 0
    events: Counter[str] = field(default_factory=Counter)


def play_differential(seed: int, budget: int) -> Stats:
    """Random games on both engines until ``budget`` decisions; asserts at every step."""
    rng = np.random.default_rng([seed, 10])
    stats = Stats()
    while stats.decisions < budget:
        spec = _config_spec(rng, stats.games)
        config = GameConfig.make(**spec)
        pure = MexicanTrain(config)
        comp = CompiledMexicanTrain(config)
        deal_seed = int(rng.integers(2**32))
        deal = _odd_deal(config, rng) if rng.random() < 0.08 else None
        first = int(rng.integers(config.num_players)) if rng.random() < 0.2 else None
        rng_p = np.random.default_rng(deal_seed)
        rng_c = np.random.default_rng(deal_seed)
        ps = pure.new_game(rng_p, deal, first)
        cs = comp.new_game(rng_c, deal, first)
        stats.games += 1
        stats.events[f"rules={config.rules}"] += 1
        stats.events[f"pips={config.max_pips}"] += 1
        stats.events[f"players={config.num_players}"] += 1
        assert_same_state(pure, comp, ps, cs)
        while True:
            if ps.phase == Phase.ROUND_OVER:
                pure.next_round(ps, rng_p)
                comp.next_round(cs, rng_c)
                assert_same_state(pure, comp, ps, cs)
            assert comp.is_round_over(cs) == (ps.phase >= Phase.ROUND_OVER)
            if ps.phase == Phase.GAME_OVER:
                break
            legal = pure.legal_moves(ps)
            assert comp.legal_moves(cs).tolist() == legal
            move = legal[int(rng.integers(len(legal)))]
            stats.events[ps.phase.name] += 1
            if move == pure.draw:
                stats.events["draw"] += 1
            elif move == pure.pass_:
                stats.events["pass"] += 1
            if ps.pending:
                stats.events["pending double"] += 1
            if ps.owes:
                stats.events["owes a tile"] += 1
            pure.apply(ps, move)
            comp.apply(cs, move)
            stats.decisions += 1
            assert_same_state(pure, comp, ps, cs)
            if ps.phase >= Phase.ROUND_OVER:
                stats.rounds += 1
                stats.events["blocked" if ps.blocked else "went out"] += 1
                assert comp.penalties(cs) == pure.penalties(ps)
    return stats


# ---------------------------------------------------------------------------- the runs

DEFAULT_CHUNKS = 8
DEFAULT_BUDGET = 8_000  # decisions per chunk


@pytest.mark.parametrize("chunk", range(DEFAULT_CHUNKS))
def test_differential_random_games(chunk: int) -> None:
    stats = play_differential(seed=chunk, budget=DEFAULT_BUDGET)
    assert stats.decisions >= DEFAULT_BUDGET
    # every kind of position was reached (the mix above is not vacuous)
    for event in ("SEEK_ENGINE", "OPENING", "NORMAL", "draw", "pass", "pending double", "owes a tile"):
        assert stats.events[event] > 0, (event, stats.events)
    assert stats.events["blocked"] > 0 and stats.events["went out"] > 0, stats.events


SLOW_CHUNKS = 10
SLOW_BUDGET = 100_000


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(SLOW_CHUNKS))
def test_differential_a_million_decisions(chunk: int) -> None:
    """>= 1,000,000 decisions over the chunks (seeds disjoint from the default run's)."""
    stats = play_differential(seed=1000 + chunk, budget=SLOW_BUDGET)
    assert stats.decisions >= SLOW_BUDGET
    print(
        f"\nchunk {chunk}: {stats.decisions} decisions, {stats.games} games, {stats.rounds} rounds; "
        + ", ".join(f"{k} {v}" for k, v in sorted(stats.events.items()))
    )


def test_every_preset_set_and_flag_is_in_the_mix() -> None:
    """The config mix of one chunk spans every preset, set size and flag (alone)."""
    rng = np.random.default_rng([0, 10])
    specs = [_config_spec(rng, i) for i in range(400)]
    assert {s.get("rules", "pagat") for s in specs} == set(PRESETS)
    assert {s["max_pips"] for s in specs} == set(SETS)
    assert {s["num_players"] for s in specs} >= set(range(2, 9))
    alone = {
        next(iter(k for k in s if k in VARIANT_FLAGS)) for s in specs if len(set(s) & set(VARIANT_FLAGS)) == 1
    }
    assert alone == set(VARIANT_FLAGS)
    assert any(s.get("rounds", 1) > 1 for s in specs)


# ------------------------------------------------------------------- the comparison bites


def test_the_comparison_detects_a_difference() -> None:
    """One changed field (a marker, a boneyard tile, a score) fails the comparison."""
    config = GameConfig.make(num_players=3, rounds=2)
    pure, comp = MexicanTrain(config), CompiledMexicanTrain(config)
    ps = pure.new_game(np.random.default_rng(3))
    cs = comp.new_game(np.random.default_rng(3))
    assert_same_state(pure, comp, ps, cs)
    marker, swapped, history, score = (cs.copy() for _ in range(4))
    marker[engine.S_MARKERS + 1] = 1
    swapped[engine.S_BONEYARD : engine.S_BONEYARD + 2] = cs[engine.S_BONEYARD : engine.S_BONEYARD + 2][
        ::-1
    ]  # R8 order
    history[engine.S_HISTORY] = 7
    score[engine.S_SCORES : engine.S_SCORES + 1].view(np.float64)[0] = 0.5
    for bad in (marker, swapped, history, score):
        with pytest.raises(AssertionError):
            assert_same_state(pure, comp, ps, bad)


# ---------------------------------------------------------------- the Python face


def test_same_seed_same_deal_and_round_trip() -> None:
    """A seed deals the same game on both engines (the pure dealing code); the converters
    are inverse to each other."""
    for pips in SETS:
        config = GameConfig.make(num_players=4, max_pips=pips, engine_holder_opens=pips == 9)
        pure, comp = MexicanTrain(config), CompiledMexicanTrain(config)
        for seed in range(5):
            ps = pure.new_game(np.random.default_rng(seed))
            cs = comp.new_game(np.random.default_rng(seed))
            assert_same_state(pure, comp, ps, cs)
            assert np.array_equal(comp.to_compiled(comp.to_pure(cs)), cs)


def test_checked_apply_names_the_rule_and_changes_nothing() -> None:
    config = GameConfig.make(num_players=4)
    pure, comp = MexicanTrain(config), CompiledMexicanTrain(config)
    ps = pure.new_game(np.random.default_rng(1))
    cs = comp.new_game(np.random.default_rng(1))
    before = cs.copy()
    for move in (pure.draw, 0, config.num_actions - 1):
        if move in pure.legal_moves(ps):
            continue
        with pytest.raises(IllegalMoveError) as compiled_error:
            comp.checked_apply(cs, move)
        with pytest.raises(IllegalMoveError) as pure_error:
            pure.checked_apply(ps, move)
        assert str(compiled_error.value) == str(pure_error.value)
        assert "R" in str(compiled_error.value)
        assert np.array_equal(cs, before)
    with pytest.raises(TypeError):
        comp.checked_apply(cs, 1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="R25"):
        comp.next_round(cs, np.random.default_rng(0))
    with pytest.raises(ValueError, match="int64"):
        comp.legal_moves(cs.astype(np.int32))
    legal = comp.legal_moves(cs)
    comp.checked_apply(cs, int(legal[0]))
    pure.apply(ps, int(legal[0]))
    assert_same_state(pure, comp, ps, cs)


def test_importing_mtrain_env_does_not_import_numba() -> None:
    code = "import sys, mtrain_env, mtrain_env.mexican_train; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
