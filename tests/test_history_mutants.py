"""Tests written from a mutation-testing pass over ``agents/mexican_train/history.py``.

docs/mutation.md, session 30: 446 mutants, 28 survived the fast tests, 21 of them
equivalent. These tests kill the other 7 and pin directly what the rest of the suite
checked only through whole-round statistics:

* how :meth:`~agents.mexican_train.history.HistorySampler.observe` and ``_record_play``
  write an opponent's draw and play into the history (R16: the tile laid right after a
  draw is the drawn one, its slot pinned; a play the history did not hold is moved into
  that player's hand from before the play); the seat's own drawn tile leaves the history
  when it is laid, even with no ``sync_hand`` in between (a survivor);
* the log-likelihood of a history against the rules: forced moves score exactly 0, a
  draw while the hand held a play is impossible (R15/R16), the drawn tile is not in the
  hand its draw is judged with;
* ``eps = 0`` refused (a survivor), a sampler not started before ``start`` and with no
  world before its first walk (two survivors), :class:`HistoryChains` carrying its game
  for ``HeardWorlds`` and weighing a single world 1 (two survivors).

Positions are scripted deals (``tests/scripted.py``: double-6, the engine 6-6 set aside,
moves with ABSOLUTE trains). Seat 0 observes; seat 1 is its only opponent.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import mtrain_env
from agents.mexican_train.base import decision_for
from agents.mexican_train.history import HistoryChains, HistorySampler, history_factory
from agents.mexican_train.particles import IMPOSSIBLE, HeardWorlds
from tests.scripted import act, deal_env, encode, seat_on_turn

#: seat 0 opens 6-0, seat 1 opens 6-1 and stops; seat 0 plays 0-1; seat 1 has no play,
#: draws 1-2 (the boneyard's top) and must lay it (R16); seat 0 has no play (3-3), draws
#: 6-3 and must lay it, on the Mexican train (R14, R16). Every move of seat 1 is forced.
HANDS = [["6-0", "0-1", "3-3"], ["6-1", "5-5", "4-4"]]
BONEYARD_TOP = ["1-2", "6-3"]
MOVES = ["0-6 @0", "PASS", "1-6 @1", "PASS", "0-1 @0", "DRAW", "1-2 @1", "DRAW", "3-6 @mex"]


def _sampler(seed: int, *, planted: bool) -> tuple[mtrain_env.raw_env, HistorySampler]:
    """Seat 0's sampler started at its first decision (``planted``: on the true history)."""
    env = deal_env(HANDS, BONEYARD_TOP)
    sampler = HistorySampler(env.game, env.codec, 0, 10, 1, np.random.default_rng(seed))
    sampler.start(decision_for(env, env.agent_selection).view)
    if planted:
        sampler.plant(env.state_obj.copy())
    return env, sampler


def _play(env: mtrain_env.raw_env, sampler: HistorySampler, moves: list[str]) -> list[int]:
    """Play ``moves``, feeding the sampler each absolute core move (no ``sync_hand`` in
    between); the sampler's clock just before each move."""
    clock = []
    for move in moves:
        seat = seat_on_turn(env)
        action = encode(env, move)
        act(env, move)
        clock.append(sampler.time)
        sampler.observe(int(env.codec.rel_to_abs[seat][action]))
    return clock


def _tid(env: mtrain_env.raw_env, text: str) -> int:
    a, b = text.split("-")
    return env.config.tiles.tile_id(int(a), int(b))


@pytest.mark.parametrize("seed", range(4))
def test_a_tile_played_right_after_a_draw_takes_the_draws_slot_and_is_pinned_r16(seed: int) -> None:
    """Seat 1 draws and lays 1-2 at once: the history must say 1-2 is what it drew, whatever
    tile the history first put in that draw's slot (a random face-down one). So 1-2 sits in
    seat 1's slot of that draw, it is pinned (the walk never moves it), and it is recorded as
    played by seat 1 at that move. The opponent holds 5-5 from the start, the highest hidden
    tile id, so taking the highest tile instead of the newest slot shows."""
    env, sampler = _sampler(seed, planted=False)
    clock = _play(env, sampler, MOVES[:7])
    draw_time, play_time = clock[5], clock[6]
    t12 = _tid(env, "1-2")
    assert (sampler.owner[t12], sampler.since[t12]) == (1, draw_time)
    assert sampler.pinned == {t12}
    assert (sampler.played[t12], sampler.played_by[t12]) == (play_time, 1)
    # the drawn slot is the only one of seat 1 from that draw: 1-2 moved in, nothing else
    assert [t for t, q in sampler.owner.items() if q == 1 and sampler.since[t] == draw_time] == [t12]
    # seat 1 holds its two tiles (3 dealt + 1 drawn - 2 laid), and no more
    assert len(sampler._holding(1)) == 2


@pytest.mark.parametrize("seed", range(4))
def test_a_play_the_history_did_not_hold_moves_into_the_players_starting_hand(seed: int) -> None:
    """Seat 1 opens 6-1. Whatever starting hand the history dealt it, afterwards 6-1 is in
    one of seat 1's slots from before the play (its starting hand: no draw yet), played by
    seat 1 at that move; seat 1 still holds 3 - 1 = 2 tiles; the played tile may take any
    of seat 1's slots from before its play, and no other seat's."""
    env, sampler = _sampler(seed, planted=False)
    clock = _play(env, sampler, MOVES[:3])
    t61 = _tid(env, "6-1")
    assert sampler.owner[t61] == 1 and sampler.since[t61] < 0  # a slot from before the first move
    assert (sampler.played[t61], sampler.played_by[t61]) == (clock[2], 1)
    assert len(sampler._holding(1)) == 2 and t61 not in sampler._holding(1)
    assert sampler.pinned == set()  # a play from the hand says nothing of a slot
    assert sampler._fits(t61, 1, -1) and not sampler._fits(t61, -1, -1)


def test_every_history_the_sampler_starts_from_holds_seat_ones_opening_tile() -> None:
    """Over seeds, some random starting history did not deal 6-1 to seat 1 (the repair is
    exercised), and every one of them holds it once seat 1 has laid it."""
    repaired = 0
    for seed in range(12):
        env, sampler = _sampler(seed, planted=False)
        t61 = _tid(env, "6-1")
        repaired += sampler.owner[t61] != 1
        _play(env, sampler, MOVES[:3])
        assert sampler.owner[t61] == 1
    assert repaired > 0


def test_the_seats_own_drawn_tile_leaves_the_history_when_it_is_laid() -> None:
    """Seat 0 draws 6-3 and lays it on the Mexican train (an absolute move whose train is
    not 0) before any ``sync_hand``: the history, which had 6-3 face down (one more face-down
    tile than the table's boneyard), forgets it when it is laid; its face-down tiles are
    then the table's boneyard count."""
    env, sampler = _sampler(0, planted=True)
    t63 = _tid(env, "6-3")

    def face_down() -> int:
        return sum(q == -1 for q in sampler.owner.values())

    _play(env, sampler, MOVES[:8])
    assert sampler.owner[t63] == -1
    assert face_down() == len(env.state_obj.boneyard) + 1
    _play(env, sampler, MOVES[8:])
    assert t63 not in sampler.owner and t63 not in sampler.since
    assert face_down() == len(env.state_obj.boneyard)


def test_the_true_history_of_forced_moves_scores_zero_and_a_drawn_tile_is_not_held_at_its_draw() -> None:
    """Planted on the truth, every move of seat 1 is forced (one legal move each), so its
    log-likelihood is exactly 0: no move scored, the play right after the draw included.
    The draw stays possible: the drawn 1-2 (playable on seat 1's train) is not in the hand
    the draw is judged with. Moving 1-2 into seat 1's starting hand instead (and the tile
    there into the draw's slot) makes that draw one the hand could not make (R15/R16):
    exactly one impossible move, scored ``3 * IMPOSSIBLE``; with 1-2 in hand seat 1's stop
    after 6-1 in its opening becomes a choice of two (stop, or lay 1-2), and the model
    (``planner``) would lay 1-2: the stop scores ``log(eps / (2 - 1))``."""
    env, sampler = _sampler(0, planted=True)
    clock = _play(env, sampler, MOVES[:7])
    assert sampler._log_likelihood(1) == 0.0
    t12, t55 = _tid(env, "1-2"), _tid(env, "5-5")
    assert sampler.since[t12] == clock[5]
    sampler._swap(t12, t55)  # 1-2 dealt to seat 1, 5-5 drawn at that move
    assert sampler._log_likelihood(1) == pytest.approx(3 * IMPOSSIBLE + math.log(sampler.eps / (2 - 1)))
    draw = next(m for m in sampler.moves[1] if m.time == clock[5])
    held_at_draw = 1 << _tid(env, "4-4") | 1 << t12
    assert sampler._move_log_likelihood(draw, held_at_draw) == 3 * IMPOSSIBLE


@pytest.mark.parametrize(("count", "steps", "thin"), [(1, 1, 1), (2, 4, 1), (2, 6, 3)])
def test_chains_weigh_their_worlds_equally_summing_to_one(count: int, steps: int, thin: int) -> None:
    """``count`` walks of ``steps // count`` proposals keep ``(steps // count) // thin``
    states each; every kept state weighs ``1 / worlds`` (one world alone weighs 1)."""
    env = deal_env(HANDS, BONEYARD_TOP)
    view = decision_for(env, env.agent_selection).view
    chains = HistoryChains(env.game, env.codec, 0, count, steps, thin, np.random.default_rng(5))
    chains.start(view)
    chains.sync_hand(view)
    chains.settle(view)
    kept = count * ((steps // count) // thin)
    assert len(chains.worlds) == kept
    assert chains.weights().tolist() == [1.0 / kept] * kept


def test_heard_worlds_keep_one_set_of_chains_through_a_round() -> None:
    """``HeardWorlds`` reads the tracker's ``game`` to tell a new table from the same one: at
    seat 0's next decision of the same round it feeds the heard moves to the SAME chains (no
    restart), so the chains must carry their game."""
    env = deal_env(HANDS, BONEYARD_TOP)
    steps, thin, walks = 20, 2, 2
    heard = HeardWorlds(history_factory(steps, thin, 0.1, chains=walks))
    view = decision_for(env, env.agent_selection).view
    first = heard.update(env.game, env.codec, view, np.random.default_rng(1))
    assert isinstance(first, HistoryChains) and first.game is env.game
    for move in MOVES[:5]:
        if move == "0-1 @0":
            assert seat_on_turn(env) == 0
            view = decision_for(env, env.agent_selection).view
            assert heard.update(env.game, env.codec, view, np.random.default_rng(2)) is first
        seat = seat_on_turn(env)
        action = encode(env, move)
        act(env, move)
        heard.hear(seat, action)
    assert heard.restarts == 0 and len(first.worlds) == walks * ((steps // walks) // thin)


def test_a_sampler_refuses_eps_zero_which_would_score_a_move_the_model_would_not_make_log_0() -> None:
    """``eps`` is the share of probability left to the moves the model would not make; at 0
    such a move scores ``log(0 / (legal - 1))``, not a number: refused, as 1 is."""
    env = deal_env(HANDS, BONEYARD_TOP)
    for eps in (0.0, 1.0):
        with pytest.raises(ValueError, match=r"^eps must be in \(0, 1\), got "):
            HistorySampler(env.game, env.codec, 0, 10, 1, np.random.default_rng(0), eps=eps)
    assert HistorySampler(env.game, env.codec, 0, 10, 1, np.random.default_rng(0), eps=1e-9).eps == 1e-9


def test_a_sampler_hears_nothing_before_its_start_and_has_no_world_before_its_first_walk() -> None:
    """Before :meth:`start` the sampler is not started and ignores moves; right after it,
    before any walk, it has no world (an empty list) and zero total weight."""
    env = deal_env(HANDS, BONEYARD_TOP)
    sampler = HistorySampler(env.game, env.codec, 0, 10, 1, np.random.default_rng(0))
    assert not sampler.started
    sampler.observe(int(env.codec.rel_to_abs[0][encode(env, "0-6 @0")]))  # ignored: no history yet
    assert not sampler.started
    sampler.start(decision_for(env, env.agent_selection).view)
    assert sampler.started
    assert sampler.worlds == [] and sampler.weights().tolist() == []
