"""Tests written from a mutation-testing pass over the agents' heuristics.

Each test pins a behaviour that a mutant of ``agents/mexican_train/{chains, planner,
greedy, features}.py`` changed without any fast test noticing (mutation testing:
docs/contributing.md). Positions are scripted deals (``tests/scripted.py``: double-6, the
engine 6-6 set aside, moves with ABSOLUTE trains).
"""

from __future__ import annotations

import numpy as np
import pytest

import mtrain_env
from agents.mexican_train.base import decision_for
from agents.mexican_train.chains import ChainSolver, chain_ends
from agents.mexican_train.features import FeatureEncoder, feature_size
from agents.mexican_train.greedy import GreedyAgent
from agents.mexican_train.planner import PlannerAgent
from tests.scripted import act, deal_env

# --------------------------------------------------------------------------- greedy


def _choice(env: mtrain_env.raw_env, agent: GreedyAgent | PlannerAgent) -> str:
    """The agent's move for the seat on turn, as text with absolute trains."""
    action = agent.act(decision_for(env, env.agent_selection))
    d = env.decode_action(action)
    assert d.tile is not None and d.train is not None
    n = env.config.num_players
    where = "mex" if d.train == n else str((env.agent_name_mapping[env.agent_selection] + d.train) % n)
    return f"{min(d.tile)}-{max(d.tile)} @{where}"


def test_greedy_prefers_its_own_train_over_a_lower_action_id_of_equal_value() -> None:
    """Seat 1 could not open (R10: marker). Seat 0 (own end 4) holds 2-4 (own train) and
    0-6 (seat 1's marked train or the Mexican train), both worth 6: its own train first,
    though 0-6 has the lower action ids."""
    env = deal_env([["6-1", "1-4", "2-4", "0-6"], ["1-2", "3-5", "0-0"]], hand_size=4)
    act(env, "1-6 @0", "1-4 @0", "PASS", "PASS")
    assert env.encode_action((0, 6), 1) < env.encode_action((2, 4), 0)
    assert _choice(env, GreedyAgent()) == "2-4 @0"


def test_greedy_breaks_a_tie_off_its_train_by_the_lowest_action_id() -> None:
    """0-6 fits seat 1's marked empty train and the Mexican train (same value, neither the
    own train): the lowest relative action id, seat 1's train (relative train 1)."""
    env = deal_env([["6-1", "1-4", "0-6", "5-5"], ["1-2", "3-5", "0-0"]], hand_size=4)
    act(env, "1-6 @0", "1-4 @0", "PASS", "PASS")
    assert _choice(env, GreedyAgent()) == "0-6 @1"


# --------------------------------------------------------------------------- features


def test_the_env_feature_set_is_the_observation_as_is() -> None:
    env = deal_env([["6-1", "1-4"], ["1-2", "3-5"]])
    decision = decision_for(env, env.agent_selection)
    encoder = FeatureEncoder()
    assert encoder.name == "env"
    assert encoder(decision) is decision.observation
    assert feature_size("env", env.config, 17) == 17
    assert feature_size("planner", env.config, 17) == 17 + env.config.num_actions + env.config.num_tiles


def test_the_chain_feature_follows_each_tables_set_and_blank_values() -> None:
    """One encoder over two tables: the chain bits are the longest chain of each table's
    own set; with ``blank_penalty`` (a blank worth 25) 0-6 outweighs 5-6 as a one-tile chain."""
    encoder = FeatureEncoder("planner")

    def chain_bits(env: mtrain_env.raw_env) -> list[int]:
        decision = decision_for(env, env.agent_selection)
        x = encoder(decision)
        return np.flatnonzero(x[len(x) - env.config.num_tiles :]).tolist()

    plain = deal_env([["6-5", "6-0", "1-1"], ["2-3"]])
    assert chain_bits(plain) == [plain.config.tiles.tile_id(5, 6)]
    blanks = deal_env([["6-5", "6-0", "1-1"], ["2-3"]], blank_penalty=True)
    assert chain_bits(blanks) == [blanks.config.tiles.tile_id(0, 6)]
    nine = deal_env([["9-5", "5-8", "1-1"], ["2-3"]], max_pips=9)
    tiles9 = nine.config.tiles
    assert sorted(chain_bits(nine)) == sorted([tiles9.tile_id(5, 9), tiles9.tile_id(5, 8)])


# --------------------------------------------------------------------------- chains


def test_chain_ends_lists_the_open_end_after_each_tile_r7() -> None:
    tiles = mtrain_env.raw_env(num_players=2, max_pips=6).config.tiles
    chain = (tiles.tile_id(6, 1), tiles.tile_id(1, 1), tiles.tile_id(1, 4))
    assert chain_ends(tiles, 6, chain) == [1, 1, 4]
    with pytest.raises(ValueError, match=r"^R7: tile \(2, 3\) does not match the open end$"):
        chain_ends(tiles, 6, (tiles.tile_id(6, 1), tiles.tile_id(2, 3)))


def test_a_solve_reports_the_chains_tiles_and_pips() -> None:
    """``(tiles, pips, chain)``: no tile, nothing; 6-1 1-2 from 6 is two tiles, 10 pips."""
    tiles = mtrain_env.raw_env(num_players=2, max_pips=6).config.tiles
    solver = ChainSolver(tiles)
    assert solver.solve(6, 0) == (0, 0, ())
    a, b = tiles.tile_id(6, 1), tiles.tile_id(1, 2)
    assert solver.solve(6, 1 << a | 1 << b) == (2, 10, (a, b))
    assert solver.solve(6, 1 << a) == (1, 7, (a,))


@pytest.mark.parametrize(
    ("limit", "length", "exact"), [(1, 1, False), (2, 2, False), (3, 2, True), (4, 2, True)]
)
def test_the_node_limit_counts_expanded_states(limit: int, length: int, exact: bool) -> None:
    """From 6 over 6-1 1-2 the search expands three states (the start, after 6-1, after
    1-2); with fewer allowed it keeps its best chain so far and says it is not exact;
    asked again, it answers the same, still not exact (an exact answer stays exact)."""
    tiles = mtrain_env.raw_env(num_players=2, max_pips=6).config.tiles
    solver = ChainSolver(tiles, node_limit=limit)
    hand = 1 << tiles.tile_id(6, 1) | 1 << tiles.tile_id(1, 2)
    first = solver.solve(6, hand)
    assert (first[0], solver.exact, solver.nodes) == (length, exact, 3 if limit >= 3 else limit + 1)
    assert solver.solve(6, hand) == first and solver.exact is exact


# --------------------------------------------------------------------------- planner

#: tiles for seat 1 that fit nothing here (it keeps more than ``danger`` tiles)
_FILLER = ["0-0", "1-1", "0-1"]


def test_planner_lays_a_chain_tile_elsewhere_when_that_costs_no_more_than_its_head() -> None:
    """Own end 2, chain 2-4 4-5, Mexican end 5. 2-4 on the own train costs the chain one
    tile; so does 4-5 on the Mexican train (its last tile): equal damage, so the play off
    the own train (the ``off_own`` criterion) goes first."""
    env = deal_env([["6-2", "6-5", "2-4", "4-5"], ["6-3", "3-5", *_FILLER]])
    act(env, "2-6 @0", "PASS", "3-6 @1", "PASS", "5-6 @mex", "3-5 @1")
    assert _choice(env, PlannerAgent()) == "4-5 @mex"


@pytest.mark.parametrize(("blank_penalty", "expected"), [(False, "4-5 @mex"), (True, "0-5 @mex")])
def test_planner_sheds_the_heavier_extra_by_the_tables_values_r2(blank_penalty: bool, expected: str) -> None:
    """Extras 0-5 and 4-5 both fit the Mexican train (end 5), neither touches the chain
    (1-2 from the own end 2): the heavier goes, 4-5 (9 pips), or with ``blank_penalty``
    0-5 (a blank is worth 25)."""
    env = deal_env(
        [["6-2", "6-5", "2-1", "0-5", "4-5"], ["6-3", "3-3", "3-4", *_FILLER]],
        blank_penalty=blank_penalty,
    )
    act(env, "2-6 @0", "PASS", "3-6 @1", "PASS", "5-6 @mex", "3-3 @1", "3-4 @1")
    assert _choice(env, PlannerAgent()) == expected


def test_planner_params_name_the_node_limit_only_when_set() -> None:
    assert PlannerAgent().params() == {"danger": 2}
    assert PlannerAgent(danger=4, node_limit=500).params() == {"danger": 4, "node_limit": 500}


def test_planner_opens_with_the_chain_of_each_tables_set_and_values_r9() -> None:
    """One planner over three tables: the one-tile chains 5-6 and 0-6 weigh 11 and 6 pips,
    or 11 and 31 with ``blank_penalty``; on a double-9 table the chain is 9-5 5-8. Its
    node budget reaches the search."""
    planner = PlannerAgent(node_limit=7)
    plain = deal_env([["6-5", "6-0", "1-1"], ["2-3"]])
    assert _choice(plain, planner) == "5-6 @0"
    blanks = deal_env([["6-5", "6-0", "1-1"], ["2-3"]], blank_penalty=True)
    assert _choice(blanks, planner) == "0-6 @0"
    assert planner.solver(decision_for(blanks, blanks.agent_selection)).node_limit == 7
    nine = deal_env([["9-5", "5-8", "9-1", "1-1"], ["2-3"]], max_pips=9)
    assert _choice(nine, planner) == "5-9 @0"
