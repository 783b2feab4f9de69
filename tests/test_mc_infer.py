"""``mc_infer`` and its inference (:mod:`agents.mexican_train.inference`).

* the tracker attributes only true plays, with the end they were laid on;
* the batched scorer is the scalar model summed over the plays, and on a hand-built
  position it gives the known likelihoods (a world where the seat could follow its tile
  up is exp(beta) times likelier than one where it could only follow the other tile up);
* with a pool of one sample, ``mc_infer`` is ``mc`` decision for decision;
* the tournament CSV is the same on 1 and 2 workers.
(Leaks, determinism and legality: ``tests/test_agents.py``, which lists ``mc_infer``.)
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

import mtrain_env
from agents.mexican_train.base import decision_for
from agents.mexican_train.inference import OpponentModel, Play, PlayTracker, resample, train_ends
from agents.mexican_train.mc import MCAgent
from agents.mexican_train.mc_infer import MCInferAgent
from agents.mexican_train.planner import PlannerAgent
from agents.tournament import AgentSpec
from mtrain_env.mexican_train.core.public import sample_state
from mtrain_env.tilegame.tiles import bits_list
from tests.csv_workers import same_csv_on_one_and_two_workers


def _planner_game(seed: int, players: int = 4):  # type: ignore[no-untyped-def]
    """Yield (decision, move, true state before the move) of a planner game."""
    env = mtrain_env.raw_env(num_players=players)
    env.reset(seed=seed)
    planners = [PlannerAgent() for _ in range(players)]
    while not all(env.terminations.values()):
        decision = decision_for(env, env.agent_selection)
        action = planners[decision.seat].act(decision)
        yield decision, decision.to_move(action), env.state_obj.copy()
        env.step(action)


@pytest.mark.parametrize("seed", [1, 2])
def test_tracker_attributes_only_true_plays(seed: int) -> None:
    tracker = PlayTracker()
    truth: set[tuple[int, int, int]] = set()  # (seat, tile, end it was laid on)
    checked = 0
    for decision, move, state in _planner_game(seed):
        game = decision.game
        if decision.seat == 0:
            tracker.update(decision.view)
            assert {(p.seat, p.tile, p.end) for p in tracker.plays} <= truth
            assert all(p.seat != 0 for p in tracker.plays)
            checked = max(checked, len(tracker.plays))
        if move < game.draw:
            tile, train = divmod(move, game.width)
            truth.add((decision.seat, tile, state.ends[train]))
    assert checked >= 5  # the tracker found plays to check


def test_train_ends_walk_the_train() -> None:
    config = mtrain_env.raw_env(num_players=2, max_pips=6).config
    t = config.tiles
    train = (t.tile_id(6, 2), t.tile_id(2, 2), t.tile_id(2, 5))
    assert train_ends(config, 6, train) == [6, 2, 2]


def _view_and_model(beta: float):  # type: ignore[no-untyped-def]
    env = mtrain_env.raw_env(num_players=3, max_pips=6)
    env.reset(seed=0)
    return env, decision_for(env, env.agent_selection), OpponentModel(env.config, beta)


def test_scorer_matches_the_scalar_model() -> None:
    model = None
    tracker = PlayTracker()
    compared = 0
    for decision, _move, _state in _planner_game(9):
        if decision.seat != 0:
            continue
        tracker.update(decision.view)
        if not tracker.plays:
            continue
        view = decision.view
        model = model or OpponentModel(view.config, 3.0)
        unseen = bits_list(view.unseen)
        worlds = [sample_state(decision.game, view, np.random.default_rng(i)) for i in range(4)]
        owners = np.array(
            [[next((q for q in range(1, 4) if w.hands[q] >> t & 1), -1) for t in unseen] for w in worlds]
        )
        got = model.log_likelihoods(view, tracker.plays, owners)
        for w, world in enumerate(worlds):
            want = 0.0
            for k, play in enumerate(tracker.plays):
                then = sum(1 << p.tile for p in tracker.plays[k:] if p.seat == play.seat)
                want += model.play_log_likelihood(world.hands[play.seat] | then, play.tile, play.end)
            assert got[w] == pytest.approx(want, abs=1e-9)
        compared += 1
    assert compared >= 5


def test_weights_on_a_hand_built_position() -> None:
    """Seat 1 laid 3|5 on a 3. World A: it also holds 3|4 and 5|6 (it could follow 3|5 up,
    not 3|4): P = e^b / (e^b + 1). World B: 3|4 and 4|6 (it could follow 3|4 up instead):
    P = 1 / (1 + e^b). World C: neither tile matching 3 besides 3|5: P = 1."""
    beta = 3.0
    env, decision, model = _view_and_model(beta)
    t = env.config.tiles
    x, y, a, b = t.tile_id(3, 5), t.tile_id(3, 4), t.tile_id(5, 6), t.tile_id(4, 6)
    view = dataclasses.replace(decision.view, hand=0, table=1 << x)
    unseen = bits_list(view.unseen)

    def world(hand1: list[int]) -> list[int]:
        return [1 if u in hand1 else 2 for u in unseen]

    owners = np.array([world([y, a]), world([y, b]), world([a, b])])
    got = model.log_likelihoods(view, [Play(1, x, 3)], owners)
    e = math.exp(beta)
    assert got == pytest.approx([math.log(e / (e + 1)), math.log(1 / (1 + e)), 0.0])
    # a later play of the seat counts in its hand at the time: 5|6 laid after 3|5
    view2 = dataclasses.replace(view, table=1 << x | 1 << a)
    unseen2 = bits_list(view2.unseen)
    owners2 = np.array([[1 if u == y else 2 for u in unseen2]])
    got2 = model.log_likelihoods(view2, [Play(1, x, 3), Play(1, a, 5)], owners2)
    assert got2[0] == pytest.approx(math.log(e / (e + 1)))  # 5|6 alone on the 5: P = 1
    # beta = 0: uniform among the tiles matching the end
    uniform = OpponentModel(env.config, 0.0).log_likelihoods(view, [Play(1, x, 3)], owners)
    assert uniform == pytest.approx([math.log(1 / 2), math.log(1 / 2), 0.0])


def test_resample_follows_the_weights() -> None:
    rng = np.random.default_rng(0)
    picks = [resample(np.log([0.1, 0.9, 1e-12]), rng) for _ in range(2000)]
    assert 0.85 < picks.count(1) / 2000 < 0.95 and 2 not in picks


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_a_pool_of_one_is_mc(engine: str) -> None:
    if engine == "compiled":
        pytest.importorskip("numba")
    env = mtrain_env.raw_env(num_players=4)
    env.reset(seed=4)
    mc = MCAgent(seed=5, sims=24, engine=engine)
    infer = MCInferAgent(seed=5, sims=24, engine=engine, pool=1)
    searched = 0
    planners = [PlannerAgent() for _ in range(4)]
    while not all(env.terminations.values()):
        decision = decision_for(env, env.agent_selection)
        if decision.seat == 0:
            action = mc.act(decision)
            assert infer.act(decision) == action
            assert infer.last_values == mc.last_values
            searched += bool(mc.last_values)
        else:
            action = planners[decision.seat].act(decision)
        env.step(action)
    assert searched >= 3


def test_inference_changes_the_worlds() -> None:
    """With attributed plays, the pool's resampling moves the search's values."""
    pytest.importorskip("numba")
    env = mtrain_env.raw_env(num_players=4)
    env.reset(seed=4)
    plain = MCInferAgent(seed=5, sims=48, pool=1)
    infer = MCInferAgent(seed=5, sims=48)
    planners = [PlannerAgent() for _ in range(4)]
    differ = 0
    while not all(env.terminations.values()):
        decision = decision_for(env, env.agent_selection)
        if decision.seat == 0:
            action = plain.act(decision)
            infer.act(decision)
            differ += infer.tracker.plays != [] and infer.last_values != plain.last_values
        else:
            action = planners[decision.seat].act(decision)
        env.step(action)
    assert differ >= 1


def test_bad_parameters_name_themselves() -> None:
    with pytest.raises(ValueError, match="pool"):
        MCInferAgent(pool=0)
    with pytest.raises(ValueError, match="beta"):
        MCInferAgent(beta=-1.0)
    assert MCInferAgent(sims=8).params()["pool"] == 8


def test_same_csv_on_one_and_two_workers(tmp_path: Path) -> None:
    pytest.importorskip("numba")

    agents = [AgentSpec("mc_infer", {"sims": 24}), AgentSpec("planner")]
    first = same_csv_on_one_and_two_workers(
        tmp_path, agents, ["mc_infer[sims=24]", "planner", "planner", "planner"]
    )
    assert b"mc_infer" in first


def test_tracker_starts_afresh_on_views_of_another_game() -> None:
    """Views that cannot follow each other (another deal) reset the attributed plays."""
    tracker = PlayTracker()
    for decision, _move, _state in _planner_game(1):
        if decision.seat == 0:
            tracker.update(decision.view)
    assert tracker.plays
    other = next(d for d, _m, _s in _planner_game(2) if d.seat == 0 and d.view.table.bit_count() > 3)
    tracker.update(other.view)
    assert tracker.plays == []


def test_fit_and_placement_command(capsys: pytest.CaptureFixture[str]) -> None:
    from agents.mexican_train import inference

    assert inference.main(["--games", "2", "--betas", "0", "3", "--placement", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("planner plays of 2 games (seeds 100..101)")
    lls = [float(line.split()[1]) for line in out[2:4]]
    assert all(ll < 0 for ll in lls)
    assert out[-1].startswith("hidden tiles in the right hand (beta=3.0): prior ")


def test_determinizer_states_are_its_single_states() -> None:
    """``Determinizer.states`` (one compiled call for many worlds) deals exactly the worlds
    ``state`` deals one at a time, which ``mc_infer``'s pools are drawn from."""
    pytest.importorskip("numba")
    from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain
    from mtrain_env.mexican_train.compiled.rollout import Determinizer

    for decision, _move, _state in _planner_game(3):
        if decision.seat == 0 and decision.view.table.bit_count() > 12:
            game = CompiledMexicanTrain(decision.game.config)
            det = Determinizer(game, decision.view, np.random.default_rng(1))
            indices = np.arange(40, 80)
            many = det.states(77, indices)
            assert all((many[i] == det.state(77, int(j))).all() for i, j in enumerate(indices))
            assert len({row.tobytes() for row in many}) > 30  # different worlds
            return
    raise AssertionError("no decision of seat 0 after 12 tiles were laid")
