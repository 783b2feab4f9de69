"""``mc[leaf=policy]`` (the champion's rollouts): candidates valued by a self-play network,
the seat's later choices played by it to the round's end.

* :func:`rollout.advance_to_choice` plays exactly the chain rollout's moves up to the
  searching seat's first real choice (or the round's end) and stops there;
* :class:`ValueLeaves` results are, world by world, the exact result of the round with
  every later choice of the seat the network's argmax on its own observation;
* the agent: deterministic given its seed, its knobs refuse what they cannot do (no
  ``leaf=value`` and no ``depth=``: the value-head leaf was measured weaker than ``planner``).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

import mtrain_env
from agents.mexican_train.base import decision_for
from agents.mexican_train.mc import MCAgent
from agents.mexican_train.ppo import MASKABLE_PPO_POLICY, REFERENCE_POLICY
from agents.mexican_train.value_leaf import ValueLeaves, load_value_net
from mtrain_env.mexican_train.compiled import engine, rollout
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.public import public_view
from mtrain_env.mexican_train.observation import ObservationEncoder, ObservationLayout
from tests.compiled.test_rollout import _position


def _first_choice(start: np.ndarray, tb: np.ndarray, seat: int) -> tuple[np.ndarray, int]:
    """The chain rollout of ``start`` replayed up to ``seat``'s first real choice: that state
    and the number of moves played."""
    trace = np.empty(4000, np.int64)
    done = start.copy()
    steps = rollout.chain_rollout(done, tb, 2, rollout.scratch(), trace)
    s = start.copy()
    moves = np.empty(engine.MAX_MOVES, np.int64)
    for i in range(steps):
        count = engine.legal_moves_into(s, tb, moves)
        if count > 1 and s[engine.S_CURRENT] == seat:
            return s, i
        engine.apply(s, tb, int(trace[i]))
    return s, steps


@pytest.mark.parametrize("seed", range(6))
def test_advance_stops_at_the_seats_first_choice_of_the_chain_rollout(seed: int) -> None:
    _game, comp, s = _position(seed, 10 + 3 * seed, num_players=2 + seed % 4)
    tb = comp.tables
    start = comp.to_compiled(s)
    seat = (int(start[engine.S_CURRENT]) + 1) % comp.n  # the next seat: others move first
    want, played = _first_choice(start, tb, seat)
    got = start.copy()
    rollout.advance_to_choice(got, tb, seat, 2, rollout.scratch())
    assert got.tolist() == want.tolist()
    moves = np.empty(engine.MAX_MOVES, np.int64)
    over = got[engine.S_PHASE] >= engine.ROUND_OVER
    assert over or (got[engine.S_CURRENT] == seat and engine.legal_moves_into(got, tb, moves) > 1)
    assert played > 0


def _decision_position(seed: int) -> tuple[object, object, rollout.Determinizer, list[int]]:
    game, comp, s = _position(seed, 20, num_players=4)
    while len(game.legal_moves(s)) < 2:
        game.apply(s, game.legal_moves(s)[0])
    view = public_view(s, game.config, s.current)
    det = rollout.Determinizer(comp, view, np.random.default_rng(1))
    return game, comp, det, [int(m) for m in game.legal_moves(s)]


def test_policy_leaves_are_the_rounds_played_out_by_the_network() -> None:
    game, comp, det, candidates = _decision_position(3)
    tb = comp.tables
    net = load_value_net(REFERENCE_POLICY)
    leaves = ValueLeaves(net, game.config)
    got = leaves.results(det, 5, 2, 3, candidates, rollout.scratch())
    seat = det.view.seat
    encoder = ObservationEncoder(game, ObservationLayout(game.config))
    for d in range(3):
        for c, move in enumerate(candidates):
            s = det.state(5, 2 + d)
            engine.apply(s, tb, move)
            rollout.advance_to_choice(s, tb, seat, 2, rollout.scratch())
            while s[engine.S_PHASE] < engine.ROUND_OVER:
                obs = encoder.encode(comp.to_pure(s), seat)
                mask = np.zeros(game.config.num_actions, np.int8)
                engine.mask_into(s, tb, np.empty(engine.MAX_MOVES, np.int64), mask)
                logits, _ = net(obs[None], mask[None])
                engine.apply(s, tb, engine.to_absolute(tb, seat, int(logits[0].argmax())))
                rollout.advance_to_choice(s, tb, seat, 2, rollout.scratch())
            assert got[d, c] == rollout.round_result(s, tb, seat)


def _decision(num_players: int = 4, seed: int = 5, legal: int = 3) -> object:
    env = mtrain_env.env(num_players=num_players)
    env.reset(seed=seed)
    decision = decision_for(env, env.agent_selection)
    while len(decision.legal_actions) < legal:
        env.step(decision.legal_actions[0])
        decision = decision_for(env, env.agent_selection)
    return decision


def test_policy_leaf_mc_is_deterministic_given_its_seed() -> None:
    decision = _decision(seed=7)
    runs = []
    for _ in range(2):
        agent = MCAgent(seed=4, sims=60, leaf="policy", prior=None)
        runs.append((agent.act(decision), agent.last_values, agent.last_rollouts))
    assert runs[0] == runs[1]
    assert 30 <= runs[0][2] <= 60
    assert len(set(runs[0][1].values())) > 1  # the candidates were told apart
    again = [MCAgent(seed=4, sims=60, leaf="policy").act(decision) for _ in range(2)]
    assert again[0] == again[1] and again[0] in decision.legal_actions


def test_policy_leaf_knobs_refuse_what_they_cannot_do() -> None:
    params = MCAgent(leaf="policy").params()
    assert params["leaf"] == "policy" and params["path"] == str(REFERENCE_POLICY)
    assert "leaf" not in MCAgent().params()
    for leaf in ("oracle", "value"):  # leaf=value (the value head at the seat's next choice): retired
        with pytest.raises(ValueError, match="leaf must be one of"):
            MCAgent(leaf=leaf)
    with pytest.raises(TypeError, match="depth"):
        MCAgent(leaf="policy", depth=1)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="runs on the compiled engine"):
        MCAgent(leaf="policy", engine="python")
    with pytest.raises(ValueError, match="path= is the network"):
        MCAgent(path=str(REFERENCE_POLICY))


def test_policy_leaf_refuses_a_file_of_another_format_and_another_table() -> None:
    with pytest.raises(ValueError, match="needs a self-play policy file"):
        load_value_net(MASKABLE_PPO_POLICY)
    net = load_value_net(REFERENCE_POLICY)
    with pytest.raises(ValueError, match="another table"):
        ValueLeaves(net, GameConfig.make(num_players=3))
    with pytest.raises(ValueError, match="another table"):
        MCAgent(leaf="policy", sims=8).act(_decision(num_players=3))
