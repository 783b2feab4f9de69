"""Compiled rollouts (``compiled/rollout.py``) against the pure reference.

* the chain search equals :class:`agents.mexican_train.chains.ChainSolver` (length, pips and
  the chain itself) on random hands of every set;
* the compiled chain policy plays exactly the moves of the pure
  :class:`agents.mexican_train.rollout_policies.ChainPolicy` (move for move, and the same final state),
  from random positions of games over presets, flags alone and combined, 2-8+ seats,
  double-6..18 and sessions (the games of ``test_compiled_core``'s mix);
* the compiled dealer keeps every public fact of the view (hand counts, shown voids, the
  table) and moves only unseen tiles; it is a function of ``(base, index)``;
* ``mc`` on the compiled rollouts: deterministic, the budget knobs, the fallback note.

The full differential run (more positions) is ``slow``::

    PYTHONPATH=$PWD python -m pytest -m slow -rP tests/compiled/test_rollout.py
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from agents.mexican_train import mc as mc_module
from agents.mexican_train.chains import ChainSolver
from agents.mexican_train.mc import MAX_THREADS, MCAgent
from agents.mexican_train.rollout_policies import ChainPolicy
from mtrain_env.mexican_train.compiled import CompiledMexicanTrain, engine, rollout
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.public import public_view
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import Phase
from mtrain_env.tilegame.tiles import bits_list
from tests.compiled.test_compiled_core import _config_spec

#: node limit under which neither search is ever cut on these hands (results are then exact)
EXACT = 10**9
#: positions are compared when no hand holds more tiles than this (an exact longest-chain
#: search over a 90-tile hand, dealt by a big ``hand_size``, would not finish)
MAX_HAND = 16


# ------------------------------------------------------------------- chain search
@pytest.mark.parametrize("pips,blank", [(6, False), (9, True), (12, False), (15, False), (18, True)])
def test_longest_chain_equals_the_pure_solver(pips: int, blank: bool) -> None:
    config = GameConfig.make(max_pips=pips, blank_penalty=blank, num_players=2)
    tiles = config.tiles
    comp = CompiledMexicanTrain(config)
    solver = ChainSolver(tiles, blank, node_limit=EXACT)
    sc = rollout.scratch(EXACT)
    _moves, _res, hand, used, chains, frames, counter, _memo, _z, _limit, _work = sc
    rng = np.random.default_rng(pips)
    long_chains = 0
    for _ in range(300):
        size = int(rng.integers(1, 16))
        ids = sorted(rng.choice(tiles.num_tiles, size, replace=False).tolist())
        end = int(rng.integers(0, pips + 1))
        hand[:size] = ids
        count, value = rollout.longest_chain(
            comp.tables, end, hand, size, used, chains, frames, counter, EXACT
        )
        mask = tiles.mask_of(ids)
        want = solver.solve(end, mask)
        assert (count, value, tuple(chains[0, :count].tolist())) == want
        long_chains += count >= 3
    assert long_chains > 20  # the hands were not all trivial


# ---------------------------------------------------------------- rollout policy
def _pure_rollout(game: MexicanTrain, policy: ChainPolicy, s: object) -> list[int]:
    """The pure policy's rollout of ``s`` (in place), recording the moves it applies."""
    moves: list[int] = []
    apply = game.apply

    def recording(state: object, move: int) -> None:
        moves.append(move)
        apply(state, move)  # type: ignore[arg-type]

    game.apply = recording  # type: ignore[method-assign]
    try:
        policy.rollout(s)  # type: ignore[arg-type]
    finally:
        del game.apply
    return moves


def play_rollout_differential(seed: int, positions: int) -> int:
    """Compiled vs pure chain rollouts from ``positions`` random positions; returns the
    moves compared."""
    rng = np.random.default_rng([seed, 12])
    compared = 0
    done = 0
    games = 0
    while done < positions:
        config = GameConfig.make(**_config_spec(rng, games))
        games += 1
        game = MexicanTrain(config)
        comp = CompiledMexicanTrain(config)
        policy = ChainPolicy(game)
        policy.solver = ChainSolver(config.tiles, config.blank_penalty, node_limit=EXACT)
        sc = rollout.scratch(EXACT)
        trace = np.empty(4000, np.int64)
        s = game.new_game(rng)
        while s.phase < Phase.GAME_OVER and done < positions:
            if s.phase == Phase.ROUND_OVER:
                game.next_round(s, rng)
                continue
            if rng.random() < 0.15 and max(h.bit_count() for h in s.hands) <= MAX_HAND:
                pure = s.copy()
                want = _pure_rollout(game, policy, pure)
                cs = comp.to_compiled(s)
                steps = rollout.chain_rollout(cs, comp.tables, 2, sc, trace)
                assert trace[:steps].tolist() == want
                assert np.array_equal(cs, comp.to_compiled(pure))
                compared += steps
                done += 1
            moves = game.legal_moves(s)
            game.apply(s, moves[int(rng.integers(len(moves)))])
    return compared


def test_compiled_chain_policy_plays_the_pure_policys_moves() -> None:
    assert play_rollout_differential(seed=0, positions=150) > 3000


@pytest.mark.slow
def test_compiled_chain_policy_long_run() -> None:
    compared = play_rollout_differential(seed=1, positions=3000)
    print(f"compiled chain rollouts: {compared} moves identical to the pure policy")
    assert compared > 100_000


# ---------------------------------------------------------------- determinization
def _position(seed: int, steps: int, **spec: object) -> tuple[MexicanTrain, CompiledMexicanTrain, object]:
    config = GameConfig.make(**spec)
    game = MexicanTrain(config)
    rng = np.random.default_rng(seed)
    s = game.new_game(rng)
    for _ in range(steps):
        if s.phase >= Phase.ROUND_OVER:
            break
        moves = game.legal_moves(s)
        game.apply(s, moves[int(rng.integers(len(moves)))])
    return game, CompiledMexicanTrain(config), s


def test_the_dealer_deals_for_the_seat_on_turn_only() -> None:
    """Re-dealing from the voids is exact for the seat on turn only (no opponent just drew
    unseen, no world would have ended, R23): another seat's view is refused."""
    game, comp, s = _position(0, 25, num_players=4)
    other = (s.current + 1) % game.n
    with pytest.raises(ValueError, match=f"seat on turn; seat {other} is not"):
        rollout.Determinizer(comp, public_view(s, game.config, other), np.random.default_rng(0))


@pytest.mark.parametrize("seed", range(6))
def test_dealer_keeps_every_public_fact(seed: int) -> None:
    game, comp, s = _position(seed, 25 + 5 * seed, num_players=4 + seed % 3)
    seat = s.current
    view = public_view(s, game.config, seat)
    det = rollout.Determinizer(comp, view, np.random.default_rng(seed))
    tiles = game.tiles
    seen = []
    for index in range(20):
        ps = comp.to_pure(det.state(99, index))
        again = comp.to_pure(det.state(99, index))
        assert ps.hands == again.hands and ps.boneyard == again.boneyard  # (base, index) decides
        assert public_view(ps, game.config, seat) == view  # every public fact kept
        for q in range(game.n):
            for v in bits_list(view.voids[q]):
                assert not ps.hands[q] & tiles.match[v], f"seat {q} got a tile with a shown void {v}"
        seen.append((tuple(ps.hands), tuple(ps.boneyard)))
        assert np.array_equal(comp.to_compiled(ps), det.state(99, index))  # a canonical state
    assert len(set(seen)) > 10  # the worlds differ


def test_voids_bind_the_dealer() -> None:
    """Find positions where opponents have shown voids; no dealt world breaks them."""
    checked = 0
    for seed in range(40):
        game, comp, s = _position(seed, 60, num_players=3, max_pips=9)
        if s.phase >= Phase.ROUND_OVER:
            continue
        seat = s.current
        view = public_view(s, game.config, seat)
        if not any(view.voids[q] for q in range(game.n) if q != seat):
            continue
        det = rollout.Determinizer(comp, view, np.random.default_rng(seed))
        for index in range(30):
            ps = comp.to_pure(det.state(5, index))
            for q in range(game.n):
                for v in bits_list(view.voids[q]):
                    assert not ps.hands[q] & game.tiles.match[v]
        checked += 1
    assert checked >= 5


def test_a_failed_greedy_deal_falls_back_to_the_pure_sampler() -> None:
    game, comp, s = _position(3, 30, num_players=4)
    view = public_view(s, game.config, s.current)
    det = rollout.Determinizer(comp, view, np.random.default_rng(0))
    det.allowed[:] = False  # the greedy dealer can place nothing: every deal fails
    candidates = [int(m) for m in game.legal_moves(s)]
    sc = rollout.scratch()
    out = rollout.run_rollouts(det, 7, 0, 3, candidates, sc=sc)
    for d in range(3):
        want = np.zeros(len(candidates))
        rollout.rollout_root(det.fallback(7, d), comp.tables, np.array(candidates), view.seat, 2, want, sc)
        assert out[d].tolist() == want.tolist()
        assert public_view(comp.to_pure(det.fallback(7, d)), game.config, view.seat) == view


@pytest.mark.parametrize("positive", [False, True])
def test_rollout_matrix_results_are_the_rollouts_of_each_world(positive: bool) -> None:
    game, comp, s = _position(11, 20, num_players=4, positive_scoring=positive)
    view = public_view(s, game.config, s.current)
    det = rollout.Determinizer(comp, view, np.random.default_rng(1))
    candidates = [int(m) for m in game.legal_moves(s)]
    out = rollout.run_rollouts(det, 3, 10, 4, candidates)
    for d in range(4):
        for c, move in enumerate(candidates):
            st = det.state(3, 10 + d)
            engine.apply(st, comp.tables, move)
            rollout.chain_rollout(st, comp.tables, 2, rollout.scratch(), np.empty(0, np.int64))
            scores = comp.round_scores(st)[-1]
            margin = sum(scores) / len(scores) - scores[view.seat]  # penalties: fewer is better
            assert out[d, c] == pytest.approx(-margin if positive else margin)


def test_threaded_rollouts_are_the_one_thread_array() -> None:
    game, comp, s = _position(11, 20, num_players=4)
    view = public_view(s, game.config, s.current)
    det = rollout.Determinizer(comp, view, np.random.default_rng(1))
    candidates = [int(m) for m in game.legal_moves(s)]
    one = rollout.run_rollouts(det, 3, 10, 9, candidates)
    pool = rollout.ThreadPool(3)
    try:
        for count in (9, 2, 1):  # blocks of 3, fewer worlds than threads, one world
            threaded = rollout.run_rollouts(det, 3, 10, count, candidates, pool=pool)
            assert threaded.tolist() == one[:count].tolist()
    finally:
        pool.close()
    with pytest.raises(ValueError, match=">= 2 threads"):
        rollout.ThreadPool(1)


# --------------------------------------------------------------------- the agent
def test_mc_engine_knobs() -> None:
    assert MCAgent(rollouts=8).params()["engine"] == "compiled"
    assert MCAgent(rollouts=8, engine="python").params()["engine"] == "python"
    assert MCAgent(rollouts=8, policy="greedy").params()["engine"] == "python"  # chain only compiled
    assert MCAgent(sims=30).rollouts == 30
    with pytest.raises(ValueError, match="policy"):
        MCAgent(engine="compiled", policy="greedy")
    with pytest.raises(ValueError, match="engine must be one of"):
        MCAgent(engine="gpu")
    with pytest.raises(ValueError, match="not both"):
        MCAgent(rollouts=3, sims=3)


def test_mc_without_numba_falls_back_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mc_module, "compiled_rollouts", lambda: None)
    with pytest.warns(RuntimeWarning, match="numba is not installed"):
        agent = MCAgent(rollouts=8)
    assert agent.engine == "python"
    with pytest.raises(ValueError, match="needs numba"):
        MCAgent(rollouts=8, engine="compiled")


def test_compiled_mc_is_deterministic_given_its_seed() -> None:
    import mtrain_env
    from agents.mexican_train.base import decision_for

    env = mtrain_env.env(num_players=4)
    env.reset(seed=5)
    decision = decision_for(env, env.agent_selection)
    while len(decision.legal_actions) < 3:
        env.step(decision.legal_actions[0])
        decision = decision_for(env, env.agent_selection)
    runs = []
    for _ in range(2):
        agent = MCAgent(seed=4, rollouts=60, engine="compiled", prior=None)
        runs.append((agent.act(decision), agent.last_values, agent.last_rollouts))
    assert runs[0] == runs[1]
    assert 30 <= runs[0][2] <= 60


class _Recording(MCAgent):
    """mc that keeps what it decided and saw at every decision."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen: list[tuple[int, dict[int, float], int]] = []

    def act(self, decision: Any) -> int:
        move = super().act(decision)
        self.seen.append((move, self.last_values, self.last_rollouts))
        return move


@pytest.mark.parametrize("budget", [{"rollouts": 90}, {"ms": 1e6, "rollouts": 90}])
def test_mc_on_threads_decides_as_on_one(budget: dict[str, float]) -> None:
    """threads= only spreads the same rollouts: same moves, values and rollout counts."""
    import mtrain_env
    from agents.play import play_game

    env = mtrain_env.env(num_players=3)
    runs = []
    for threads in (1, 2):
        agent = _Recording(seed=4, engine="compiled", prior=None, threads=threads, **budget)
        play_game(env, [agent, mc_module.PlannerAgent(), mc_module.PlannerAgent()], seed=8)
        runs.append(agent.seen)
    assert len(runs[0]) > 5
    assert runs[0] == runs[1]


@pytest.mark.parametrize("policy", ["lookahead", "planner"])
def test_mc_has_no_lookahead_or_planner_rollouts(policy: str) -> None:
    """``policy=lookahead`` (the seat's later choices a one-ply oracle of each world) and
    ``policy=planner`` (every seat the planner's exact moves) were measured as no gain over
    the chain policy's rollouts: not policies of ``mc``, on either engine."""
    for engine_name in ("compiled", "python"):
        with pytest.raises(ValueError, match="policy must be one of"):
            MCAgent(rollouts=8, policy=policy, engine=engine_name)


def test_mc_threads_knob() -> None:
    assert MCAgent(rollouts=8, threads=2).params()["threads"] == 2
    for threads in (0, MAX_THREADS + 1):  # each thread holds its own scratch states
        with pytest.raises(ValueError, match=rf"threads must be an int in 1\.\.{MAX_THREADS}, got {threads}"):
            MCAgent(threads=threads)
    with pytest.raises(ValueError, match="splits the compiled rollouts"):
        MCAgent(engine="python", threads=2)
