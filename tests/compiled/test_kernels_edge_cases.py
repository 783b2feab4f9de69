"""The batch, env-step and random-play kernels of the compiled engine
(``mtrain_env/mexican_train/compiled/engine.py``) that the other tests did not pin.

``tests/compiled/test_compiled_observation.py``, ``tests/compiled/test_batch.py`` and
``tests/compiled/test_backend.py`` compare the kernels' observations, masks, rewards and
trajectories with the Python encoder, the pure engine and the python-backend env in random
games, through the Python faces. What those faces do not show is pinned here:

- the codes the kernels return: ``engine.batch_check`` and ``engine.batch_step`` (-1 for
  "no bad game", the bad game's reason 0 or 1) and ``engine.env_step`` (-1 when the round
  ends), which ``BatchedMexicanTrain`` and the compiled env read only as ``bad >= 0`` and
  ``code < 0``;
- ``engine.xorshift32`` and ``engine.random_actions``, the move pickers of the benchmarks
  and of the batch termination test: any sequence of legal actions passes the tests that
  use them, so a broken generator or a pick that ignores it went unnoticed.

Expected values come from the pure engine, the action codec, Marsaglia's definition of
xorshift32 or the kernels' documented contracts, never from the compiled output.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from mtrain_env.mexican_train.codec import ActionCodec
from mtrain_env.mexican_train.compiled import CompiledMexicanTrain, engine
from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain
from mtrain_env.mexican_train.compiled.bench import deal_pool, pool_arrays
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import Phase
from tests.compiled.test_compiled_core import assert_same_state


def _legal_arrays(comp: CompiledMexicanTrain, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every game's legal core moves, as ``BatchedMexicanTrain`` keeps them for the kernels."""
    legal = np.zeros((len(states), engine.MAX_MOVES), np.int64)
    legal_len = np.zeros(len(states), np.int64)
    for i, s in enumerate(states):
        moves = comp.legal_moves(s)
        legal[i, : len(moves)] = moves
        legal_len[i] = len(moves)
    return legal, legal_len


def test_batch_check_returns_its_documented_codes() -> None:
    """``engine.batch_check``: ``(-1, -1)`` when every action is legal for its seat on turn
    (relative encoding, the codec's), else the first bad game with 0 (outside the action
    space) or 1 (not legal, R9-R22); it changes no state."""
    config = GameConfig.make(num_players=3, max_pips=6)
    comp, codec = CompiledMexicanTrain(config), ActionCodec(config)
    rng = np.random.default_rng(0)
    states = np.stack([comp.new_game(rng) for _ in range(4)])
    before = states.copy()
    legal, legal_len = _legal_arrays(comp, states)
    good = np.array([codec.abs_to_rel[s[engine.S_CURRENT]][m[0]] for s, m in zip(states, legal, strict=True)])
    tb = comp.tables
    assert engine.batch_check(states, tb, good, legal, legal_len) == (-1, -1)
    for game in (0, 2):
        seat, moves = states[game, engine.S_CURRENT], legal[game, : legal_len[game]].tolist()
        illegal = good.copy()
        illegal[game] = next(a for a in range(codec.num_actions) if codec.rel_to_abs[seat][a] not in moves)
        assert engine.batch_check(states, tb, illegal, legal, legal_len) == (game, 1)
        outside = good.copy()
        outside[game] = codec.num_actions
        assert engine.batch_check(states, tb, outside, legal, legal_len) == (game, 0)
    assert np.array_equal(states, before)


def test_batch_step_returns_minus_one_after_a_good_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """``engine.batch_step`` returns ``(-1, -1)`` after a step of legal actions (rounds and
    episodes ending on the way, R23) and the bad game's ``(game, 1)`` for an illegal one."""
    codes: list[tuple[int, int]] = []
    kernel = engine.batch_step

    def recorded(*args: Any) -> tuple[int, int]:
        code = kernel(*args)
        codes.append((int(code[0]), int(code[1])))
        return code

    monkeypatch.setattr(engine, "batch_step", recorded)
    batch = BatchedMexicanTrain(3, num_players=2, max_pips=6, rounds=2)
    _, mask, _, _ = batch.reset(seed=1)
    rounds = 0
    for _ in range(120):
        _, mask, _, _, _, info = batch.step(np.array([np.flatnonzero(m)[-1] for m in mask]))
        rounds += int(info["round_over"].sum())
    assert rounds > 0 and codes == [(-1, -1)] * 120
    illegal = np.array([np.flatnonzero(m)[0] for m in mask])
    illegal[1] = np.flatnonzero(mask[1] == 0)[0]
    with pytest.raises(ValueError, match="game 1"):
        batch.step(illegal)
    assert codes[-1] == (1, 1)


# -------------------------------------------------------------- the random-play kernels


def _xorshift32(x: int) -> int:
    """Marsaglia's xorshift32 (shifts 13, 17, 5 on a 32-bit word), from its definition."""
    x ^= (x << 13) % 2**32
    x ^= x >> 17
    return x ^ (x << 5) % 2**32


def test_xorshift32_is_marsaglias_generator() -> None:
    """``engine.xorshift32`` is Marsaglia's xorshift32 (13, 17, 5): from his example seed
    2463534242 the first value is 723471715, and 10,000 steps from a few seeds equal the
    definition's and stay in 1 .. 2**32 - 1 (the move pickers never reach the zero state)."""
    assert engine.xorshift32(2463534242) == 723471715 == _xorshift32(2463534242)
    for seed in (1, 12345, 2**32 - 1):
        x = y = seed
        for _ in range(10_000):
            x, y = engine.xorshift32(x), _xorshift32(y)
            assert x == y and 0 < x < 2**32


def test_random_actions_picks_among_the_legal_actions_by_xorshift32() -> None:
    """``engine.random_actions`` (the benchmarks' and tests' stand-in policy): row i's
    action is legal action number ``x % count`` of the row (in increasing order), ``x`` the
    next xorshift32 value, advanced once a row and stored back in ``rng[0]``; so every
    legal action can be picked, and no illegal one."""
    rng = np.random.default_rng(0)
    masks = (rng.random((60, 40)) < 0.3).astype(np.int8)
    masks[np.arange(60), rng.integers(0, 40, 60)] = 1  # at least one legal action a row
    state = np.array([99], np.int64)
    out = np.full(60, -1, np.int64)
    engine.random_actions(masks, state, out)
    x = 99
    for i, row in enumerate(masks):
        x = _xorshift32(x)
        legal = np.flatnonzero(row)
        assert out[i] == legal[x % len(legal)], i
    assert state[0] == x


def test_env_step_returns_the_next_decision_then_minus_one() -> None:
    """``engine.env_step`` (the compiled env's fused step, RELATIVE action in) returns
    ``count * ENV_STEP_SEATS + seat`` for the next decision, the pure engine's legal move
    count and seat on turn, and exactly -1 for the move that ends the round (R23)."""
    config = GameConfig.make(num_players=3, max_pips=6)
    pure, comp, codec = MexicanTrain(config), CompiledMexicanTrain(config), ActionCodec(config)
    ps = pure.new_game(np.random.default_rng(0))
    cs = comp.new_game(np.random.default_rng(0))
    moves = np.empty(engine.MAX_MOVES, np.int64)
    obs = np.empty(comp.tables[engine.K_OBS_SIZE], np.float32)
    masks = np.empty((1, config.num_actions), np.int8)
    rng = np.random.default_rng(1)
    while True:
        legal = pure.legal_moves(ps)
        move = legal[int(rng.integers(len(legal)))]
        code = engine.env_step(cs, comp.tables, codec.abs_to_rel[ps.current][move], moves, obs, masks, 0)
        pure.apply(ps, move)
        if ps.phase >= Phase.ROUND_OVER:
            assert code == -1
            return
        assert code == len(pure.legal_moves(ps)) * engine.ENV_STEP_SEATS + ps.current


def test_random_steps_plays_xorshift32_picks_and_deals_from_the_pool() -> None:
    """``engine.random_steps`` (the compiled core's benchmark loop): ``num_steps`` decisions,
    each the legal move number ``x % count`` of the pure engine's list (``x`` the next
    xorshift32 value), a finished round starting a new game from the next deal of the pool
    (cycling, R4-R6 as ``MexicanTrain.new_game`` deals it), in a session too (R25: the
    benchmark plays single rounds); afterwards ``rng`` holds the generator state and the
    next deal. The state equals the pure engine's after each call."""
    config = GameConfig.make(num_players=2, max_pips=6, rounds=2)
    pure, comp = MexicanTrain(config), CompiledMexicanTrain(config)
    deals = deal_pool(config, 3, seed=0)
    hands, boneyards, lens = pool_arrays(config, deals)
    cs = comp.new_state()
    cs[engine.S_PHASE] = engine.GAME_OVER  # the first step deals
    rng = np.array([7, 0], np.int64)
    moves = np.empty(engine.MAX_MOVES, np.int64)
    x, d, games = 7, 0, 0
    ps = pure.new_game(np.random.default_rng(0), deals[0])
    ps.phase = Phase.GAME_OVER
    for num_steps in (1, 37, 150, 150):  # games end inside and between calls
        steps = engine.random_steps(cs, comp.tables, hands, boneyards, lens, rng, moves, num_steps)
        assert steps == num_steps
        for _ in range(num_steps):
            if ps.phase >= Phase.ROUND_OVER:
                ps = pure.new_game(np.random.default_rng(0), deals[d])
                d, games = (d + 1) % len(deals), games + 1
            legal = pure.legal_moves(ps)
            x = _xorshift32(x)
            pure.apply(ps, legal[x % len(legal)])
        assert rng.tolist() == [x, d]
        assert_same_state(pure, comp, ps, cs)
    assert games > len(deals)  # the pool was used round and round
