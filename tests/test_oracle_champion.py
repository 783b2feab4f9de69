"""``oracle_champion`` (cheats): the champion's search on the true hands, boneyard shuffled.

* its worlds are the true state but for the boneyard's order, which it never reads;
* it is the champion's search otherwise (the same values on the same worlds);
* it refuses a fair decision, and writes the same tournament CSV on 1 and 2 workers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mtrain_env
from agents.mexican_train.base import decision_for
from agents.mexican_train.oracle import CheatDecision
from agents.registry import agent_class
from agents.tournament import AgentSpec
from mtrain_env.mexican_train.core.public import PublicView, banned_tiles
from mtrain_env.mexican_train.core.state import GameState
from mtrain_env.tilegame.tiles import bits_list
from tests.csv_workers import same_csv_on_one_and_two_workers

pytest.importorskip("numba")

from agents.mexican_train.oracle_champion import OracleChampionAgent, partly_revealed
from agents.mexican_train.particles import shuffled_boneyards
from mtrain_env.mexican_train.compiled import engine as ce


def _decision_with_choices(seed: int, players: int = 4) -> tuple[object, CheatDecision]:
    env = mtrain_env.env(num_players=players)
    env.reset(seed=seed)
    while True:
        decision = CheatDecision(env, env.agent_selection)
        if len(decision.legal_actions) >= 3 and env.unwrapped.state_obj.boneyard:
            return env, decision
        env.step(decision.legal_actions[0])


def _truth(agent: OracleChampionAgent, decision: CheatDecision) -> np.ndarray:
    cgame = agent._compiled_game(decision.game.config)[0]
    return cgame.to_compiled(decision.true_state())


def test_it_is_a_declared_cheat() -> None:
    cls = agent_class("oracle_champion")
    assert cls is OracleChampionAgent and cls.cheats and cls.decision_class is CheatDecision


def test_worlds_are_the_truth_with_the_boneyard_shuffled() -> None:
    _env, decision = _decision_with_choices(3)
    agent = OracleChampionAgent(seed=1)
    truth = _truth(agent, decision)
    size = int(truth[ce.S_BONE_LEN])
    bone = slice(ce.S_BONEYARD, ce.S_BONEYARD + size)
    assert size > 1
    worlds = shuffled_boneyards(truth, base=9, first=2, count=6)
    for w in worlds:
        assert np.array_equal(
            np.delete(w, np.arange(bone.start, bone.stop)), np.delete(truth, np.arange(bone.start, bone.stop))
        )
        assert sorted(w[bone]) == sorted(truth[bone])
    assert len({tuple(w[bone]) for w in worlds}) > 1, "the shuffles should differ"
    # world first + d is a function of (base, first + d) only, never of the true order
    reordered = truth.copy()
    reordered[bone] = truth[bone][::-1]
    assert np.array_equal(shuffled_boneyards(reordered, base=9, first=4, count=2), worlds[2:4])


def test_values_are_the_champions_on_the_true_worlds() -> None:
    """``candidate_results`` equals the network leaves run on ``shuffled_boneyards`` by hand, and
    differs from the fair champion's, which re-deals the hands."""
    _env, decision = _decision_with_choices(5)
    agent = OracleChampionAgent(seed=2)
    results = agent.candidate_results(decision, worlds=4)
    config = decision.game.config
    cgame, sc, _ = agent._compiled_game(config)
    moves = [decision.to_move(a) for a in decision.legal_actions]
    base = int(np.random.default_rng(2).integers(1 << 62))  # the agent's first draw, as in candidate_results
    roots = shuffled_boneyards(_truth(agent, decision), base, 0, 4)
    expected = agent._network_leaves(config).results_on(roots, cgame.tables, decision.seat, moves, sc)
    assert np.array_equal(results, expected)
    fair = agent_class("champion")(seed=2).candidate_results(decision, worlds=4)
    assert not np.array_equal(results, fair)


def test_it_refuses_a_fair_decision() -> None:
    env, _ = _decision_with_choices(4)
    with pytest.raises(TypeError, match="CheatDecision"):
        OracleChampionAgent(sims=8).act(decision_for(env, env.agent_selection))


def test_same_csv_on_one_and_two_workers(tmp_path: Path) -> None:
    spec = AgentSpec.parse("oracle_champion[sims=16]")
    lineup = [spec.default_label(), "planner", "planner", "planner"]
    one = same_csv_on_one_and_two_workers(tmp_path, [spec, AgentSpec("planner")], lineup)
    assert b"oracle_champion" in one


def _placement(world: GameState, truth: GameState, view: PublicView) -> float:
    """Share of the hidden tiles a world puts where the truth has them (a hand or the boneyard)."""
    hidden = bits_list(view.unseen)

    def place(s: GameState, t: int) -> int:
        return next((q for q, h in enumerate(s.hands) if h >> t & 1), -1)

    return float(np.mean([place(world, t) == place(truth, t) for t in hidden]))


def test_partly_revealed_worlds_keep_counts_voids_and_the_revealed_share() -> None:
    _env, decision = _decision_with_choices(6)
    truth = decision.true_state()
    view = decision.view
    shares = {}
    for reveal in (0.0, 0.5, 1.0):
        worlds = [
            partly_revealed(truth, view, reveal, np.random.default_rng([int(reveal * 10), i]))
            for i in range(40)
        ]
        for w in worlds:
            assert [h.bit_count() for h in w.hands] == [h.bit_count() for h in truth.hands]
            assert w.hands[view.seat] == truth.hands[view.seat]
            assert sorted(w.boneyard) == sorted(set(w.boneyard))
            assert (sum(w.hands) | sum(1 << t for t in w.boneyard)) == (
                sum(truth.hands) | sum(1 << t for t in truth.boneyard)
            )
            for q in range(len(w.hands)):
                if q != view.seat:
                    assert not w.hands[q] & banned_tiles(view, q)
        shares[reveal] = np.mean([_placement(w, truth, view) for w in worlds])
    assert shares[1.0] == 1.0
    assert shares[0.0] < 0.6 < shares[0.5] < 1.0


def test_reveal_is_a_probability() -> None:
    for bad in (-0.1, 1.5, True):
        with pytest.raises(ValueError, match="reveal must be"):
            OracleChampionAgent(reveal=bad)  # type: ignore[arg-type]
    assert OracleChampionAgent(reveal=0.5).params()["reveal"] == 0.5
    assert "reveal" not in OracleChampionAgent().params()
