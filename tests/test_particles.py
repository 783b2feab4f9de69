"""The particle filter of hidden hands (:mod:`agents.mexican_train.particles`) and the play
loop's public move log (:meth:`agents.base.BaseAgent.inform`).

* the loop tells listening agents every move, in order, and nobody else;
* the worlds keep the table's public part and the seat's true hand through a whole round;
* the true world is never contradicted by a planner's moves: its weight is exactly
  ``log(1 - eps)`` per opponent choice, and no sampled world ends heavier;
* ``champion[particles=N]`` plays legal moves from the filter's worlds and checks its knobs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import mtrain_env
from agents.base import BaseAgent
from agents.mexican_train.base import Agent, Decision, decision_for
from agents.mexican_train.champion import ChampionAgent
from agents.mexican_train.particles import HeardWorlds, ParticleFilter, _public_matches
from agents.mexican_train.planner import PlannerAgent
from agents.play import play_game


class _Listener(Agent):
    """Plays the lowest legal action and records what it hears."""

    listens = True

    def __init__(self) -> None:
        super().__init__()
        self.heard: list[tuple[int, int]] = []

    def act(self, decision: Decision) -> int:
        return decision.legal_actions[0]

    def inform(self, seat: int, action: int) -> None:
        self.heard.append((seat, action))


class _Deaf(_Listener):
    listens = False


def test_the_loop_tells_listeners_every_move_in_order() -> None:
    env = mtrain_env.raw_env(num_players=3)
    agents: list[BaseAgent[Any]] = [_Listener(), _Deaf(), _Listener()]
    moves: list[tuple[int, int]] = []
    play_game(env, agents, seed=5, observer=lambda step: moves.append((step.seat, step.action)))
    assert len(moves) > 10
    assert agents[0].heard == moves and agents[2].heard == moves  # type: ignore[attr-defined]
    assert agents[1].heard == []  # type: ignore[attr-defined]


def _planner_round(seed: int, players: int = 4) -> Any:
    """Yield ``(env, decision, move)`` for every step of a planner round, before the step."""
    env = mtrain_env.raw_env(num_players=players)
    env.reset(seed=seed)
    planners = [PlannerAgent() for _ in range(players)]
    while not all(env.terminations.values()):
        decision = decision_for(env, env.agent_selection)
        move = decision.to_move(planners[decision.seat].act(decision))
        yield env, decision, move
        env.step(decision.to_action(move))


@pytest.mark.parametrize("seed", [0, 1])
def test_worlds_keep_the_public_table_and_the_seats_hand(seed: int) -> None:
    f: ParticleFilter | None = None
    checked = 0
    for env, decision, move in _planner_round(seed):
        if decision.seat == 0:
            view = decision.view
            if f is None:
                f = ParticleFilter(env.game, env.codec, 0, 16, 0.1, np.random.default_rng(seed))
                f.start(view)
            else:
                f.sync(view)
            for w in f.worlds:
                assert _public_matches(w, view)
                assert w.hands[0] == view.hand and w.trains == [list(t) for t in view.trains]
                assert sorted(w.boneyard) == sorted(set(w.boneyard))
            checked += 1
        if f is not None:
            f.observe(move)
    assert checked > 5


def test_the_true_world_is_never_contradicted() -> None:
    """World 0 is the true state (a test's cheat): every opponent move is the planner model's
    own in it, so its log-weight is ``log(1 - eps)`` per choice and the heaviest."""
    eps = 0.1
    f: ParticleFilter | None = None
    choices = 0
    for env, decision, move in _planner_round(3):
        if f is None and decision.seat == 0:
            f = ParticleFilter(env.game, env.codec, 0, 8, eps, np.random.default_rng(1))
            f.start(decision.view)
            f.worlds[0] = env.state_obj.copy()
        elif f is not None:
            if decision.seat != 0 and len(decision.legal_actions) > 1 and not env.state_obj.has_drawn:
                choices += 1
            if decision.seat == 0:
                assert f.worlds[0].hands == env.state_obj.hands  # never repaired
        if f is not None:
            f.observe(move)
    assert f is not None and choices > 5
    assert f.log_weights[0] == pytest.approx(choices * math.log(1 - eps))
    assert f.log_weights[0] == f.log_weights.max() > f.log_weights.min()


def test_champion_with_particles_plays_from_the_filter() -> None:
    env = mtrain_env.raw_env(num_players=4)
    champion = ChampionAgent(seed=2, sims=24, particles=8)
    play_game(env, [champion, PlannerAgent(), PlannerAgent(), PlannerAgent()], seed=9)
    heard = champion._heard
    assert (
        isinstance(heard, HeardWorlds) and isinstance(heard.tracker, ParticleFilter) and heard.restarts == 0
    )
    assert heard.tracker.started and champion.params()["particles"] == 8


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"particles": -1}, "particles must be"),
        ({"particles": 4, "pool": 2}, "exclude pool"),
        ({"eps": 0.0}, "eps"),
    ],
)
def test_champion_refuses_bad_filter_knobs(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ChampionAgent(**params)
