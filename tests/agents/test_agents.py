"""Baseline agents (``greedy``, ``planner``, ``mc``) on scripted deals, plus leak, determinism
and legality checks over random games.

Scripted deals use a double-6 set (engine 6-6 set aside, R5) and the helpers of
``tests/scripted.py``; moves are written with ABSOLUTE trains (``"3-6 @0"``, ``"@mex"``).
The agents are asked only at the decision under test; everything before it is scripted.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mtrain_env
from agents import REGISTRY, Agent, decision_for, make_agent
from agents.mexican_train.chains import ChainSolver, chain_ends
from agents.mexican_train.greedy import GreedyAgent
from agents.mexican_train.mc import MCAgent
from agents.mexican_train.planner import PlannerAgent
from agents.mexican_train.ppo import REFERENCE_POLICY
from agents.mexican_train.rollout_policies import round_result
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.public import _exact_deal, sample_state
from mtrain_env.mexican_train.core.state import GameState
from mtrain_env.tilegame.tiles import tile_set
from tests.scripted import act, deal_env, norm


def move_text(env: mtrain_env.raw_env, action: int) -> str:
    """A relative action of the seat on turn as text with absolute trains."""
    d = env.decode_action(action)
    if d.kind != "play":
        return d.kind.upper()
    assert d.tile is not None and d.train is not None
    n = env.config.num_players
    seat = env.agent_name_mapping[env.agent_selection]
    where = "mex" if d.train == n else str((seat + d.train) % n)
    return f"{norm(d.tile)} @{where}"


def choose(env: mtrain_env.raw_env, agent: Agent) -> str:
    """The agent's choice for the seat on turn (not applied), as text."""
    action = agent.act(decision_for(env, env.agent_selection))
    assert env.observe(env.agent_selection)["action_mask"][action] == 1
    return move_text(env, action)


def play(env: mtrain_env.raw_env, agent: Agent) -> str:
    """Let the agent act for the seat on turn; return its move as text."""
    action = agent.act(decision_for(env, env.agent_selection))
    text = move_text(env, action)
    env.step(action)
    return text


#: tiles for an opponent's hand that fit nothing in these scripts: they keep it above the
#: planner's ``danger`` threshold (an opponent with <= 2 tiles makes it shed pips)
FILLER = ["0-0", "1-1", "0-1"]


def on_turn(env: mtrain_env.raw_env) -> int:
    return env.agent_name_mapping[env.agent_selection]


# --------------------------------------------------------------------------- registry
def test_registry_builds_every_agent_by_name() -> None:
    assert {"random", "greedy", "planner", "mc"} <= set(REGISTRY)
    assert isinstance(make_agent("mc", seed=1, rollouts=8), MCAgent)
    assert make_agent("planner", seed=1, danger=3).params() == {"danger": 3}
    with pytest.raises(ValueError, match="rollouts"):
        make_agent("mc", rollouts=0)


# --------------------------------------------------------------------------- chains
def _brute_longest(tiles: Any, end: int, hand: list[int]) -> int:
    """Longest trail by plain exhaustive search (no memo, no bound)."""
    best = 0

    def go(v: int, left: list[int], n: int) -> None:
        nonlocal best
        best = max(best, n)
        for i, t in enumerate(left):
            a, b = tiles.tiles[t]
            if v in (a, b):
                go(b if a == v else a, left[:i] + left[i + 1 :], n + 1)

    go(end, hand, 0)
    return best


def test_longest_chain_matches_exhaustive_search_r7() -> None:
    """R7: the chain is a valid line from the open end, of the exhaustive maximum length."""
    tiles = tile_set(6)
    solver = ChainSolver(tiles)
    rng = np.random.default_rng(0)
    for _ in range(150):
        size = int(rng.integers(1, 10))
        hand = [int(t) for t in rng.choice(tiles.num_tiles, size=size, replace=False)]
        end = int(rng.integers(7))
        mask = tiles.mask_of(hand)
        chain = solver.longest(end, mask)
        chain_ends(tiles, end, chain)  # raises if a tile does not match
        assert len(set(chain)) == len(chain) and all(mask >> t & 1 for t in chain)
        assert len(chain) == _brute_longest(tiles, end, hand)


def test_longest_chain_prefers_pips_and_lays_doubles_on_the_way() -> None:
    """Two 2-tile chains from 6: 6-1 1-0 (8 pips) and 6-5 5-4 (20): the heavier wins; the
    double 5-5 on its way is laid (3 tiles beat 2)."""
    tiles = tile_set(6)
    t = tiles.tile_id
    solver = ChainSolver(tiles)
    hand = tiles.mask_of([t(6, 1), t(1, 0), t(6, 5), t(5, 4)])
    assert solver.longest(6, hand) == (t(6, 5), t(5, 4))
    hand |= 1 << t(1, 1)
    assert solver.longest(6, hand) == (t(6, 1), t(1, 1), t(1, 0))


def test_chain_search_is_fast_on_big_hands() -> None:
    """25 random double-12 tiles (a hand after many draws) stay well under a second."""
    tiles = tile_set(12)
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    for _ in range(5):
        hand = tiles.mask_of(int(i) for i in rng.choice(90, size=25, replace=False))
        ChainSolver(tiles).longest(12, hand)
    assert time.perf_counter() - start < 5.0


# --------------------------------------------------------------------------- greedy
def test_greedy_lays_the_highest_tile_r2() -> None:
    """R2: in the R9 opening every 6 fits the engine; greedy lays 5-6 (11 pips) first."""
    env = deal_env([["6-1", "6-5", "6-3", "0-0"], ["2-3"]])
    assert choose(env, GreedyAgent()) == "5-6 @0"


def test_greedy_never_stops_an_opening_chain_early_r9() -> None:
    """R9 allows PASS after one tile; greedy goes on while a tile fits, then passes."""
    env = deal_env([["6-1", "1-2", "0-0"], ["2-3"]])
    agent = GreedyAgent()
    assert [play(env, agent) for _ in range(3)] == ["1-6 @0", "1-2 @0", "PASS"]


def test_greedy_prefers_its_own_train_on_ties_r14() -> None:
    """3-6 fits both the own train (end 3) and the Mexican train (engine 6): same value,
    own train first."""
    env = deal_env([["6-1", "1-3", "3-6", "0-0"], ["6-2", "2-4"]])
    act(env, "1-6 @0", "1-3 @0", "PASS", "2-6 @1", "PASS")
    assert choose(env, GreedyAgent()) == "3-6 @0"


def test_greedy_blank_penalty_values_r2() -> None:
    """With ``blank_penalty`` a blank half is worth 25: 6-0 (31) beats 6-5 (11)."""
    env = deal_env([["6-5", "6-0", "1-1"], ["2-3"]], blank_penalty=True)
    assert choose(env, GreedyAgent()) == "0-6 @0"


# --------------------------------------------------------------------------- planner
def test_planner_lays_its_longest_chain_in_the_opening_r9() -> None:
    """From 6 the hand holds 6-1 1-3 3-4 4-0 (4 tiles) and 6-5 5-2 (2, heavier first tile):
    the planner lays the 4-tile chain, then stops (PASS); greedy would start with 6-5."""
    env = deal_env([["6-1", "1-3", "3-4", "4-0", "6-5", "5-2"], ["2-3"]])
    planner = PlannerAgent()
    moves = [play(env, planner) for _ in range(5)]
    assert moves == ["1-6 @0", "1-3 @0", "3-4 @0", "0-4 @0", "PASS"]
    assert on_turn(env) == 1


def test_planner_one_tile_opening_starts_the_chain() -> None:
    """one_tile_opening: one tile, the head of the longest chain (not the heaviest tile)."""
    env = deal_env([["6-1", "1-3", "3-4", "6-5"], ["2-3"]], one_tile_opening=True)
    assert choose(env, PlannerAgent()) == "1-6 @0"


def _mexican_four_position() -> mtrain_env.raw_env:
    """Seat 0: own end 2, hand 2-4 4-5 5-1 (its chain) + 4-0; Mexican train open end 4."""
    env = deal_env([["6-2", "6-4", "2-4", "4-5", "5-1", "4-0"], ["6-3", "3-5", *FILLER]])
    act(env, "2-6 @0", "PASS", "3-6 @1", "PASS", "4-6 @mex", "3-5 @1")
    return env


def test_planner_plays_an_extra_on_the_mexican_train_not_its_chain_r14() -> None:
    """Chain from 2: 2-4 4-5 5-1; 4-0 is an extra. 4-5 on the Mexican train (greedy's pick,
    9 pips) would cut the chain, 2-4 on the own train spends it: the extra 0-4 goes first."""
    env = _mexican_four_position()
    assert choose(env, GreedyAgent()) == "4-5 @mex"
    assert choose(env, PlannerAgent()) == "0-4 @mex"


def test_planner_follows_its_own_double_and_avoids_an_unfollowable_one_r18() -> None:
    """Own end 3, hand 3-3 3-1 5-5, Mexican end 5: it lays 3-3 (3-1 can follow, R18) and
    covers it with 3-1; 5-5 (no other 5) is never played though it is the heaviest."""
    env = deal_env([["6-3", "6-5", "3-3", "3-1", "5-5"], ["6-2", "2-4", *FILLER]])
    act(env, "3-6 @0", "PASS", "2-6 @1", "PASS", "5-6 @mex", "2-4 @1")
    planner = PlannerAgent()
    assert play(env, planner) == "3-3 @0"
    assert on_turn(env) == 0  # R18: one more tile is owed
    assert play(env, planner) == "1-3 @0"
    assert on_turn(env) == 1


def test_planner_does_not_lay_a_double_it_cannot_follow_r18() -> None:
    """Own end 2, hand 2-4 and 5-5, Mexican end 5: 5-5 would need another 5; 2-4 it is."""
    env = deal_env([["6-2", "6-5", "2-4", "5-5"], ["6-1", "1-3", *FILLER]])
    act(env, "2-6 @0", "PASS", "1-6 @1", "PASS", "5-6 @mex", "1-3 @1")
    assert choose(env, GreedyAgent()) == "5-5 @mex"
    assert choose(env, PlannerAgent()) == "2-4 @0"


def test_planner_satisfies_a_double_with_a_tile_off_its_chain_r20() -> None:
    """Seat 1 leaves 4-4 open on the Mexican train (R20). Seat 0 (own end 1; chain
    1-4 4-2 2-3; extra 4-0) must lay a 4 there: 4-0, which costs the chain nothing."""
    env = deal_env([["6-1", "6-4", "1-4", "4-2", "2-3", "4-0"], ["6-5", "4-4", "5-3", *FILLER]])
    act(env, "1-6 @0", "PASS", "5-6 @1", "PASS", "4-6 @mex", "4-4 @mex", "3-5 @1")
    assert choose(env, GreedyAgent()) == "2-4 @mex"
    assert choose(env, PlannerAgent()) == "0-4 @mex"


@pytest.mark.parametrize(
    ("seat1_extra", "expected"), [(["1-1", "0-0", "0-1"], "0-6 @mex"), (["0-0", "0-1"], "2-5 @0")]
)
def test_planner_sheds_pips_when_an_opponent_is_about_to_go_out(
    seat1_extra: list[str], expected: str
) -> None:
    """Own end 2, chain 2-5 5-3, extra 6-0. Normally the extra goes to the Mexican train;
    once seat 1 is down to 2 tiles (``danger=2``) the heaviest tile, 2-5, is shed."""
    env = deal_env([["6-2", "2-5", "5-3", "6-0"], ["6-4", "4-1", *seat1_extra]])
    act(env, "2-6 @0", "PASS", "4-6 @1", "4-1 @1", "PASS")
    assert choose(env, PlannerAgent()) == expected


# --------------------------------------------------------------------------- mc
def test_mc_goes_out_when_it_can_r18_r19() -> None:
    """Own end 2, hand 2-2 and 2-5: 2-2 then 2-5 goes out this turn (R18); greedy's 2-5
    first would leave 2-2 in hand. mc finds the win and ends the round at 0."""
    env = deal_env([["6-1", "1-2", "2-2", "2-5"], ["6-3", "3-4", *FILLER]], reward="penalty")
    act(env, "1-6 @0", "1-2 @0", "PASS", "3-6 @1", "PASS")
    assert choose(env, GreedyAgent()) == "2-5 @0"
    mc = MCAgent(seed=0, rollouts=20, prior=None)
    assert play(env, mc) == "2-2 @0"
    assert mc.last_values[max(mc.last_values, key=mc.last_values.__getitem__)] > 0
    assert play(env, mc) == "2-5 @0"
    assert all(env.terminations.values())
    assert env.state_obj.round_scores[-1][0] == 0


def test_mc_overrides_its_planner_prior_only_for_a_clear_gain_r19() -> None:
    """Own end 2, hand 2-2 2-5, Mexican end 5. The planner sends 2-5 off its train (its
    chain keeps 2-2) and stays in; 2-2 then 2-5 goes out at once (R18, R19). mc with the
    planner as prior leaves it for that clear gain; with an absurd ``z`` it never leaves it."""
    env = deal_env([["6-1", "1-2", "2-2", "2-5", "6-5"], ["6-3", "3-4", *FILLER]])
    act(env, "1-6 @0", "1-2 @0", "PASS", "3-6 @1", "PASS", "5-6 @mex", "3-4 @1")
    assert choose(env, PlannerAgent()) == "2-5 @mex"
    assert choose(env, MCAgent(seed=0, rollouts=40, prior="planner", z=1e9)) == "2-5 @mex"
    assert choose(env, MCAgent(seed=0, rollouts=40, prior="planner", z=1.0)) == "2-2 @0"


def test_mc_with_a_policy_prior_keeps_the_policys_move_unless_clearly_beaten() -> None:
    """``prior="policy"``: with an absurd ``z`` mc plays exactly the policy file's move (the
    ``ppo`` agent's), which is not always the planner's; ``path=`` needs that prior."""
    policy = str(REFERENCE_POLICY)
    env = mtrain_env.raw_env(num_players=4)
    env.reset(seed=8)
    net, planner = make_agent("ppo", path=policy), PlannerAgent()
    mc = MCAgent(seed=0, rollouts=12, prior="policy", path=policy, z=1e9)
    choices = unlike_planner = 0
    while not all(env.terminations.values()) and choices < 25:
        decision = decision_for(env, env.agent_selection)
        move = net.act(decision)
        if len(decision.legal_actions) > 1:
            assert mc.act(decision) == move
            choices += 1
            unlike_planner += move != planner.act(decision)
        env.step(move)
    assert choices >= 10 and unlike_planner >= 1
    with pytest.raises(ValueError, match="path= is the network of prior in"):
        MCAgent(path=policy)
    with pytest.raises(ValueError, match="prior must be one of"):
        MCAgent(prior="greedy")


def _busy_position() -> mtrain_env.raw_env:
    env = mtrain_env.raw_env(num_players=4)
    env.reset(seed=5)
    while len(env.legal_actions()) < 4:
        env.step(env.legal_actions()[0])
    return env


def test_mc_respects_its_rollout_budget() -> None:
    """``rollouts`` caps the rollouts of one decision; successive halving spends most of it."""
    env = _busy_position()
    k = len(env.legal_actions())
    for budget in (k, 5 * k, 40 * k):
        mc = MCAgent(seed=0, rollouts=budget)
        mc.act(decision_for(env, env.agent_selection))
        assert budget // 2 <= mc.last_rollouts <= budget
        assert mc.last_samples >= 1


def test_mc_respects_its_time_budget() -> None:
    env = _busy_position()
    mc = MCAgent(seed=0, ms=40)
    start = time.perf_counter()
    mc.act(decision_for(env, env.agent_selection))
    elapsed = time.perf_counter() - start
    assert mc.last_samples >= 1
    assert elapsed < 0.04 + 0.5  # one rollout past the deadline at most (slack for a loaded machine)


def test_mc_skips_search_when_one_action_is_legal() -> None:
    env = deal_env([["6-1", "0-0"], ["2-3"]])
    mc = MCAgent(seed=0, rollouts=50)
    assert play(env, mc) == "1-6 @0"
    assert play(env, mc) == "PASS"  # nothing else fits 1 (R9)
    assert mc.last_rollouts == 0


def test_mc_result_is_zero_sum_or_positive_scoring_r24() -> None:
    """The rollout outcome: mean penalty minus own (R24), own positive score minus mean."""
    s = GameState(3)
    s.round_scores = [[10.0, 0.0, 20.0]]
    assert round_result(GameConfig.make(3, 6), s, 1) == 10.0
    assert round_result(GameConfig.make(3, 6), s, 2) == -10.0
    assert round_result(GameConfig.make(3, 6, positive_scoring=True), s, 2) == 10.0


def _late_views(seed: int, num_players: int = 4) -> list[Any]:
    """Seat views of a planner game once the boneyard is nearly empty (tight determinizations)."""
    env = mtrain_env.raw_env(num_players=num_players)
    env.reset(seed=seed)
    planner = PlannerAgent()
    views = []
    while not all(env.terminations.values()):
        decision = decision_for(env, env.agent_selection)
        if decision.view.boneyard_count <= 3 and any(decision.view.voids):
            views.append(decision.view)
        env.step(planner.act(decision))
    return views


@pytest.mark.parametrize("dealer", ["greedy", "exact"])
def test_determinization_respects_counts_and_shown_voids(dealer: str) -> None:
    """Both dealers of ``sample_state`` deal every unseen tile once, give each opponent its
    hand count and never a pip it has shown it lacks, and keep the public table."""
    deal = sample_state if dealer == "greedy" else _exact_deal
    game = mtrain_env.raw_env(num_players=4).game
    tiles = game.tiles
    rng = np.random.default_rng(0)
    views = [v for seed in (120, 27, 3) for v in _late_views(seed)]
    assert views
    for view in views:
        for _ in range(5):
            s = deal(game, view, rng)
            assert s.hands[view.seat] == view.hand
            dealt = sum(s.hands[q] for q in range(game.n) if q != view.seat) + tiles.mask_of(s.boneyard)
            assert dealt == view.unseen and len(s.boneyard) == view.boneyard_count
            for q in range(game.n):
                assert s.hands[q].bit_count() == view.hand_counts[q]
                if q != view.seat:
                    for v in range(tiles.max_pips + 1):
                        assert not (view.voids[q] >> v & 1 and s.hands[q] & tiles.match[v])
            assert s.trains == [list(t) for t in view.trains] and s.current == view.current


def _tight_view() -> tuple[Any, Any]:
    """A consistent view where a valid deal is rare: 3 seats, boneyard empty, seat 1 void in
    0s and seat 2 void in 5s (seat 0 holds 0-5, so every other unseen tile fits someone);
    the counts are synthetic (38 and 37 tiles, as after long drawing), the constraint is
    the one met late in real rounds."""
    env = mtrain_env.raw_env(num_players=3, max_pips=12)
    env.reset(seed=0)
    decision = decision_for(env, "player_0")
    view = decision.view
    tiles = decision.game.tiles
    assert view.hand >> tiles.tile_id(0, 5) & 1
    unseen = view.unseen.bit_count()
    tight = dataclasses.replace(
        view,
        hand_counts=(15, unseen // 2 + 1, unseen - unseen // 2 - 1),
        boneyard_count=0,
        voids=(0, 1, 1 << 5),
    )
    return decision.game, tight


def test_sample_state_deals_a_tight_view() -> None:
    """Views where greedy dealing keeps failing still get a deal (the exact fallback)."""
    game, view = _tight_view()
    for seed in range(20):
        s = sample_state(game, view, np.random.default_rng(seed))
        assert not s.hands[1] & game.tiles.match[0] and not s.hands[2] & game.tiles.match[5]
        assert [h.bit_count() for h in s.hands] == list(view.hand_counts) and not s.boneyard


def test_sample_state_refuses_a_view_that_admits_no_deal() -> None:
    """Voids that contradict the hand counts: no opponent may hold the tiles it must hold."""
    game, view = _tight_view()
    everything = (1 << (game.tiles.max_pips + 1)) - 1
    impossible = dataclasses.replace(view, voids=(0, everything, view.voids[2]))
    with pytest.raises(ValueError, match="admits no deal"):
        sample_state(game, impossible, np.random.default_rng(0))


# --------------------------------------------------------------------------- leaks
AGENT_SPECS: list[tuple[str, dict[str, Any]]] = [
    ("greedy", {}),
    ("planner", {}),
    ("mc", {"rollouts": 12}),
    ("mc", {"rollouts": 12, "engine": "python"}),
    ("mc", {"rollouts": 12, "policy": "greedy", "prior": None}),
    ("ismcts", {"sims": 12}),
]


#: the env a seat-0 agent is acting in (only the deliberately leaky agent below reads it)
_TABLE: dict[str, mtrain_env.raw_env] = {}


class _PeekingAgent(Agent):
    """A cheat for the self-test: picks by an opponent's hidden hand."""

    name = "peek"

    def act(self, decision: Any) -> int:
        legal = decision.legal_actions
        return int(legal[_TABLE["env"].state_obj.hands[1] % len(legal)])


def _record(
    env: mtrain_env.raw_env, agent: Agent, opponent: Agent
) -> tuple[list[tuple[int, int]], list[Any]]:
    """Play to the end: seat 0 is ``agent``; returns every (seat, action) and seat 0's views."""
    history = []
    views = []
    _TABLE["env"] = env
    while not all(env.terminations.values()):
        seat = on_turn(env)
        decision = decision_for(env, env.agent_selection)
        if seat == 0:
            views.append(decision.view)
            action = agent.act(decision)
        else:
            action = opponent.act(decision)
        history.append((seat, action))
        env.step(action)
        if agent.listens:
            agent.inform(seat, action)  # as the play loop does
    return history, views


def _hidden_variant(env: mtrain_env.raw_env, deal: dict[str, Any]) -> dict[str, Any]:
    """The same deal with only hidden things changed: the never-drawn part of the
    boneyard reversed, and one tile seat 1 never played swapped with a never-drawn one."""
    end_state = env.state_dict()
    undrawn = len(end_state["boneyard"])
    hands = [list(h) for h in deal["hands"]]
    bone = [list(t) for t in deal["boneyard"]]
    top, bottom = bone[: len(bone) - undrawn], bone[len(bone) - undrawn :]
    bottom.reverse()
    kept = {tuple(sorted(t)) for t in end_state["hands"][1]}
    x = next((t for t in hands[1] if tuple(sorted(t)) in kept), None)
    if x is not None and bottom:
        i = hands[1].index(x)
        hands[1][i], bottom[0] = bottom[0], x
    return {"hands": hands, "boneyard": top + bottom}


def _leak_check(make: Any, pairs: int = 3) -> tuple[int, int]:
    """Play deal A, then deal B = A with only hidden things changed, replaying A's opponent
    actions. Returns (pairs compared, pairs where seat 0 acted differently). Seat 0's views
    must be equal all along (the env leaks nothing); a pair is dropped when the changed
    tile alters an opponent's legal actions (its public history could not be replayed)."""
    compared = differing = 0
    for seed in range(30):
        env_a = mtrain_env.raw_env(num_players=3, max_pips=6, hand_size=4)
        env_a.reset(seed=seed)
        first = env_a.state_dict()
        deal = {"hands": first["hands"], "boneyard": first["boneyard"]}
        history, views = _record(env_a, make(), make_agent("random", seed=4))
        deal_b = _hidden_variant(env_a, deal)
        if deal_b == deal:
            continue
        env_b = mtrain_env.raw_env(num_players=3, max_pips=6, hand_size=4)
        env_b.reset(seed=seed, options={"deal": deal_b})
        _TABLE["env"] = env_b
        agent_b = make()
        seen = 0
        outcome = "same"
        for seat, action in history:
            decision = decision_for(env_b, env_b.agent_selection)
            assert on_turn(env_b) == seat
            if seat == 0:
                assert decision.view == views[seen]
                seen += 1
                if agent_b.act(decision) != action:
                    outcome = "differ"
                    break
            elif not decision.action_mask[action]:
                outcome = "dropped"  # an opponent's options changed: not comparable
                break
            env_b.step(action)
            if agent_b.listens:
                agent_b.inform(seat, action)
        if outcome != "dropped":
            compared += 1
            differing += outcome == "differ"
        if compared >= pairs:
            break
    return compared, differing


@pytest.mark.parametrize(("name", "params"), AGENT_SPECS)
def test_agents_see_no_hidden_information(name: str, params: dict[str, Any]) -> None:
    """Two deals that differ only in what seat 0 cannot see (an opponent's unplayed tile,
    the order of the undrawn boneyard) give seat 0 the same views and the same actions,
    as long as the opponents' public actions stay the same (replayed)."""
    compared, differing = _leak_check(lambda: make_agent(name, seed=3, **params))
    assert compared >= 3
    assert differing == 0


def test_leak_check_catches_a_peeking_agent() -> None:
    """Self-test of the leak check: an agent that reads an opponent's hand is caught."""
    compared, differing = _leak_check(_PeekingAgent, pairs=6)
    assert compared >= 3
    assert differing >= 1


# --------------------------------------------------------------------------- determinism
@pytest.mark.parametrize(("name", "params"), AGENT_SPECS)
def test_same_seed_same_actions(name: str, params: dict[str, Any]) -> None:
    runs = []
    for _ in range(2):
        env = mtrain_env.raw_env(num_players=3, max_pips=9)
        env.reset(seed=11)
        agents = [make_agent(name, seed=21 + p, **params) for p in range(3)]
        actions = []
        while not all(env.terminations.values()):
            seat = on_turn(env)
            actions.append(agents[seat].act(decision_for(env, env.agent_selection)))
            env.step(actions[-1])
        runs.append(actions)
    assert runs[0] == runs[1]


def test_agent_reset_reseeds() -> None:
    """``reset(seed)`` restarts mc's generator: a replay after reset repeats the choices."""
    env = _busy_position()
    mc = MCAgent(rollouts=16)
    decision = decision_for(env, env.agent_selection)
    mc.reset(7)
    first = [mc.act(decision) for _ in range(3)]
    values = dict(mc.last_values)
    mc.reset(7)
    assert [mc.act(decision) for _ in range(3)] == first
    assert mc.last_values == values


# --------------------------------------------------------------------------- legality
LEGALITY_CONFIGS: list[dict[str, Any]] = [
    {"num_players": 2, "max_pips": 6},
    {"num_players": 3, "max_pips": 9, "rules": "wikipedia"},
    {"num_players": 4, "max_pips": 12},
    {"num_players": 8, "max_pips": 12, "rules": "cardinal"},
    {"num_players": 5, "max_pips": 15, "one_double_per_turn": True, "cover_own_double_on_it": True},
    {"num_players": 6, "max_pips": 18, "hand_size": 12, "blank_penalty": True, "opening_draw": True},
    {
        "num_players": 4,
        "max_pips": 9,
        "rounds": 3,
        "positive_scoring": True,
        "satisfy_in_reverse_order": True,
    },
    {"num_players": 3, "max_pips": 12, "no_double_satisfaction": True, "marker_off_by_any_play_on_it": True},
    {
        "num_players": 2,
        "max_pips": 12,
        "engine_holder_opens": True,
        "marker_off_by_owner_play_anywhere": True,
        "no_marker_when_forced_to_satisfy": True,
    },
]


@pytest.mark.parametrize("config", LEGALITY_CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_agents_only_play_legal_actions(config: dict[str, Any]) -> None:
    """Every agent, in every seat, returns a legal action at every step of whole games:
    two games with every agent (mc on a tiny budget), four more with greedy and planner."""
    everyone: list[tuple[str, dict[str, Any]]] = [
        ("greedy", {}),
        ("planner", {}),
        ("mc", {"rollouts": 4}),
        ("mc", {"rollouts": 4, "engine": "python"}),
        ("mc", {"rollouts": 4, "policy": "greedy", "prior": None}),
        ("oracle", {}),
        ("ismcts", {"sims": 4}),
    ]
    env = mtrain_env.raw_env(**config)
    n = env.config.num_players
    for game in range(6):
        names = everyone if game < 2 else everyone[:2]
        specs = list(
            itertools.islice(itertools.cycle(names[game % len(names) :] + names[: game % len(names)]), n)
        )
        agents = [make_agent(name, seed=p, **params) for p, (name, params) in enumerate(specs)]
        env.reset(seed=100 + game)
        steps = 0
        while not all(env.terminations.values()):
            agent = agents[on_turn(env)]
            decision = agent.decision_class(env, env.agent_selection)  # as the play loop builds it
            action = agent.act(decision)
            assert decision.action_mask[action] == 1
            env.step(action)
            steps += 1
        assert steps > 0


def test_check_params_reads_the_constructors_signature() -> None:
    """Spec parameters are checked against the constructor's names and annotations; an
    open ``**kwargs`` takes any name; unresolvable annotations are left to the constructor."""
    from agents.registry import check_params

    class Knobs(Agent):
        name = "knobs"

        def __init__(
            self,
            seed: int | None = None,
            n: int = 1,
            x: float = 0.5,
            on: bool = False,
            path: str | Path | None = None,
        ) -> None:
            super().__init__(seed)

        def act(self, decision: Any) -> int:
            return 0

    class Open(Knobs):
        def __init__(self, seed: int | None = None, **extra: Any) -> None:
            super().__init__(seed)

    check_params(Knobs, {"n": 3, "x": 2, "on": True, "path": "p.npz"})  # an int is a number
    check_params(Knobs, {"path": None})
    check_params(Knobs, {"n": np.int64(3), "x": np.float32(0.1), "path": Path("p.npz")})  # from Python
    check_params(Open, {"anything": [1, 2]})

    class Unresolved(Knobs):  # "Later" resolves nowhere at run time: that one is not checked
        def __init__(self, seed: int | None = None, n: int = 1, later: Later | None = None) -> None:  # noqa: F821
            super().__init__(seed)

    check_params(Unresolved, {"later": "anything"})
    with pytest.raises(ValueError, match="n must be an int"):
        check_params(Unresolved, {"n": "2"})
    for params, says in [
        ({"n": 2.5}, "knobs: n must be an int, got 2.5"),
        ({"n": True}, "knobs: n must be an int, got True"),
        ({"x": "fast"}, "knobs: x must be a number, got 'fast'"),
        ({"on": 1}, "knobs: on must be true or false, got 1"),
        ({"path": 5}, "knobs: path must be a string or None, got 5"),
        ({"m": 1}, "knobs has no parameter 'm'; its parameters: n, x, on, path"),
        ({"seed": 1}, "knobs: seed is set by the harness"),
    ]:
        with pytest.raises(ValueError, match=re.escape(says)):
            check_params(Knobs, params)


def test_agents_check_the_table_they_are_asked_to_play() -> None:
    """``check_game``: a network of another table is refused before any deal, in words."""
    from agents.mexican_train.champion import ChampionPolicyAgent

    four, three = GameConfig.make(num_players=4), GameConfig.make(num_players=3)
    PlannerAgent().check_game(three)  # reads nothing: any table
    make_agent("ppo").check_game(four)
    with pytest.raises(ValueError, match=r"another table \(338 inputs, 457 actions\); this game has 305"):
        make_agent("ppo").check_game(three)
    ChampionPolicyAgent().check_game(three)  # the table's own network
    with pytest.raises(ValueError, match=r"no policy file at nowhere\.npz"):
        make_agent("mc", prior="policy", path="nowhere.npz").check_game(four)
