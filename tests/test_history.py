"""The history sampler of hidden hands (:mod:`agents.mexican_train.history`).

* its worlds keep the table's public part, the seat's true hand and the hand counts
  through whole rounds, at 2, 4 and 6 players;
* a tile an opponent played always sits in one of that opponent's slots from before the
  play (the walk never breaks it);
* the true history, planted in the sampler, is never contradicted by planner moves: its
  log-likelihood is exactly ``log(1 - eps)`` per opponent choice (so the past hands it
  rebuilds are the true ones, move by move);
* its worlds place more of the opponents' tiles right than worlds dealt from the view;
* ``champion[history=N]`` plays a whole game from it, and the knobs name themselves;
* :class:`HistoryChains`: independent walks sharing the proposals, each world as valid as
  one walk's, the walks apart from one another, the same worlds from the same seed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import mtrain_env
from agents.mexican_train.champion import ChampionAgent
from agents.mexican_train.history import HistoryChains, HistorySampler, history_factory
from agents.mexican_train.particles import HeardWorlds, _public_matches
from agents.mexican_train.planner import PlannerAgent
from agents.play import play_game
from mtrain_env.mexican_train.core.public import sample_state
from tests.test_particles import _planner_round


def _placed(hands: list[int], truth: list[int], seat: int) -> int:
    return sum((hands[q] & truth[q]).bit_count() for q in range(len(truth)) if q != seat)


@pytest.mark.parametrize("players", [2, 4, 6])
def test_worlds_keep_the_table_the_hand_and_the_counts(players: int) -> None:
    seat = 1
    sampler: HistorySampler | None = None
    checked = 0
    for env, decision, move in _planner_round(7, players):
        if decision.seat == seat:
            view = decision.view
            if sampler is None:
                sampler = HistorySampler(env.game, env.codec, seat, 60, 6, np.random.default_rng(1))
                sampler.start(view)
            sampler.sync(view)
            assert sampler.matches(view)
            assert len(sampler.worlds) == 10
            for w in sampler.worlds:
                assert _public_matches(w, view)
                assert [h.bit_count() for h in w.hands] == list(view.hand_counts)
                assert len(w.boneyard) == view.boneyard_count == len(set(w.boneyard))
            for tile, when in sampler.played.items():
                assert sampler.owner[tile] == sampler.played_by[tile] and sampler.since[tile] < when
            checked += 1
        if sampler is not None:
            sampler.observe(move)
    assert checked > 3
    assert sampler is not None and 0 < sampler.accepted < sampler.proposed


def test_the_true_history_is_never_contradicted() -> None:
    eps = 0.1
    seat = 0
    sampler: HistorySampler | None = None
    choices = 0
    last: tuple[int, int, int] | None = None  # the previous step: mover, its hand before, move

    def heard(env: Any) -> None:
        """Feed the previous step to the sampler; a draw's slot takes the tile truly drawn."""
        assert sampler is not None and last is not None
        mover, before, move = last
        sampler.observe(move)
        drawn = env.state_obj.hands[mover] & ~before
        if mover != seat and move == env.game.draw and drawn:
            sampler.drew(mover, drawn.bit_length() - 1)

    for env, decision, move in _planner_round(3, 4):
        state = env.state_obj
        if last is not None:
            heard(env)
        if decision.seat == seat:
            if sampler is None:
                sampler = HistorySampler(env.game, env.codec, seat, 1, 1, np.random.default_rng(0), eps)
                sampler.start(decision.view)
                sampler.plant(state)
            sampler.sync_hand(decision.view)
            assert sampler.hands() == state.hands
        elif sampler is not None and len(decision.legal_actions) > 1 and not state.has_drawn:
            choices += 1
        if sampler is not None:
            last = (decision.seat, state.hands[decision.seat], move)
    heard(env)
    assert sampler is not None and choices > 5
    total = sum(sampler._log_likelihood(q) for q in sampler.moves)
    assert total == pytest.approx(choices * math.log(1 - eps))


def test_the_walk_places_more_tiles_than_worlds_dealt_from_the_view() -> None:
    seat = 0
    walked = dealt = 0.0
    rng = np.random.default_rng(0)
    for seed in (11, 12):
        sampler: HistorySampler | None = None
        for env, decision, move in _planner_round(seed, 4):
            if decision.seat == seat:
                view = decision.view
                if sampler is None:
                    sampler = HistorySampler(env.game, env.codec, seat, 400, 10, np.random.default_rng(seed))
                    sampler.start(view)
                sampler.sync(view)
                truth = env.state_obj.hands
                walked += float(np.mean([_placed(h, truth, seat) for h in sampler.samples]))
                worlds = [sample_state(env.game, view, rng) for _ in range(40)]
                dealt += float(np.mean([_placed(w.hands, truth, seat) for w in worlds]))
            if sampler is not None:
                sampler.observe(move)
    assert walked > 1.1 * dealt


def test_champion_with_history_plays_a_whole_game() -> None:
    env = mtrain_env.raw_env(num_players=4)
    champion = ChampionAgent(seed=2, sims=24, history=30)
    play_game(env, [PlannerAgent(), champion, PlannerAgent(), PlannerAgent()], seed=9)
    heard = champion._heard
    assert isinstance(heard, HeardWorlds) and isinstance(heard.tracker, HistorySampler)
    assert heard.restarts == 0 and heard.tracker.proposed > 0
    assert champion.params()["history"] == 30


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"history": -1}, "history must be"),
        ({"history": 10, "particles": 4}, "give one"),
        ({"history": 10, "pool": 2}, "exclude pool"),
    ],
)
def test_champion_refuses_bad_history_knobs(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ChampionAgent(**params)


@pytest.mark.parametrize(("steps", "thin", "eps"), [(0, 1, 0.1), (5, 0, 0.1), (5, 1, 1.0)])
def test_sampler_refuses_bad_knobs(steps: int, thin: int, eps: float) -> None:
    env = mtrain_env.raw_env(num_players=2)
    with pytest.raises(ValueError, match=r"steps|eps"):
        HistorySampler(env.game, env.codec, 0, steps, thin, np.random.default_rng(0), eps)


def _chains_round(seed: int, count: int) -> list[list[list[int]]]:
    """Seat 1's worlds' hands at each of its decisions of a 4-player planner round, walked
    by ``count`` chains of 40 proposals each (every check of one walk's worlds made)."""
    seat = 1
    chains: HistoryChains | None = None
    seen: list[list[list[int]]] = []
    for env, decision, move in _planner_round(7, 4):
        if decision.seat == seat:
            view = decision.view
            if chains is None:
                rng = np.random.default_rng(seed)
                chains = HistoryChains(env.game, env.codec, seat, count, 40 * count, 4, rng)
                chains.start(view)
            chains.sync_hand(view)
            chains.settle(view)
            assert chains.matches(view)
            assert len(chains.worlds) == 10 * count
            assert chains.weights() == pytest.approx(np.full(10 * count, 1 / (10 * count)))
            for w in chains.worlds:
                assert _public_matches(w, view)
                assert [h.bit_count() for h in w.hands] == list(view.hand_counts)
                assert w.hands[seat] == view.hand
            seen.append([w.hands for w in chains.worlds])
        if chains is not None:
            chains.observe(move)
    assert chains is not None and all(0 < w.accepted < w.proposed for w in chains.walks)
    caches = {id(w.cache) for w in chains.walks}
    assert len(caches) == 1  # one memo of move likelihoods for every walk
    return seen


def test_chains_keep_the_table_and_walk_apart() -> None:
    seen = _chains_round(3, 3)
    assert len(seen) > 3
    last = seen[-1]
    firsts = [tuple(last[10 * c]) for c in range(3)]
    assert len(set(firsts)) == 3  # each walk its own start and stream
    assert _chains_round(3, 3) == seen  # deterministic given the seed
    assert _chains_round(4, 3) != seen


def test_history_factory_builds_chains_only_when_asked() -> None:
    env = mtrain_env.raw_env(num_players=4)
    rng = np.random.default_rng(0)
    assert isinstance(history_factory(100, 10, 0.1)(env.game, env.codec, 0, rng), HistorySampler)
    chains = history_factory(100, 10, 0.1, chains=4)(env.game, env.codec, 0, rng)
    assert isinstance(chains, HistoryChains)
    assert [w.steps for w in chains.walks] == [25] * 4
    with pytest.raises(ValueError, match="chains"):
        HistoryChains(env.game, env.codec, 0, 5, 4, 1, rng)
