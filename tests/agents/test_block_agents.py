"""Block-dominoes agents (random, greedy, classic): legal, deterministic, their principles, their order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from agents.block import REGISTRY, ClassicBlockAgent, decision_for, make_agent, new_ends
from mtrain_env.block import raw_env
from tests.core.test_block_rules import DEAL_A, act, deal_env, legal, position, rest_of

ZERO = dict.fromkeys(
    ("hold", "follow", "partner", "partner_void", "block", "opponent", "double", "pips"), 0.0
)


@pytest.mark.parametrize("kwargs", [{}, {"num_players": 2}, {"match": True, "counter_clockwise": True}])
def test_agents_play_legal_and_deterministic(kwargs: dict[str, Any]) -> None:
    """Every agent only plays legal actions, and a seeded agent replays the same game."""
    for name in REGISTRY:
        runs = []
        for _ in range(2):
            env = raw_env(**kwargs)
            env.reset(seed=5)
            agent = make_agent(name, seed=1)
            actions = []
            while not all(env.terminations.values()):
                d = decision_for(env, env.agent_selection)
                action = agent.act(d)
                assert d.action_mask[action] == 1
                actions.append(action)
                env.step(action)
            runs.append(actions)
        assert runs[0] == runs[1]
    with pytest.raises(ValueError, match=r"unknown agent 'minimax' \(block\)"):
        make_agent("minimax")
    with pytest.raises(ValueError, match="unknown weight"):
        ClassicBlockAgent(aggression=1.0)


def test_new_ends_matches_the_engine() -> None:
    """new_ends (what agents plan with) agrees with the line the engine builds (B8)."""
    env = raw_env(rules="openspiel")
    rng = np.random.default_rng(0)
    for seed in range(20):
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            action = int(rng.choice(env.legal_actions()))
            predicted = new_ends(env.public_view(env.agent_selection), action)
            env.step(action)
            if env.state_obj.line:
                assert tuple(env.state_obj.ends) == predicted


def test_greedy_lays_the_heaviest_tile() -> None:
    """greedy: most pips first (seat 0 at ends 5 | 6 holds 0-5 and 0-6 -> 0-6)."""
    env = deal_env(DEAL_A)
    act(env, "6-6 L", "5-6 L")
    action = make_agent("greedy").act(decision_for(env, "player_0"))
    assert env.decode_action(action).tile == (0, 6)


def _choice(env: raw_env, **weights: float) -> str:
    action = ClassicBlockAgent(None, **{**ZERO, **weights}).act(decision_for(env, env.agent_selection))
    d = env.decode_action(action)
    assert d.tile is not None and d.end is not None
    return f"{d.tile[0]}-{d.tile[1]} {'LR'[d.end]}"


def test_classic_principles_one_at_a_time() -> None:
    """classic, each principle alone: block the next player's void, respect the partner's void,
    hold, doubles, pips (ends 1 | 0 after the scripted start; seat 0 on turn)."""
    env = deal_env(DEAL_A)
    act(env, "6-6 L", "5-6 L", "0-6 R", "1-5 L", "PASS", "PASS")  # seats 2 and 3 pass on 1 and 0
    assert legal(env) == {"0-1 L", "0-0 R", "0-1 R", "0-2 R", "0-3 R", "0-4 R", "0-5 R"}
    # pips alone: the heaviest tile; double alone: the double
    assert _choice(env, pips=1.0) == "0-5 R"
    assert _choice(env, double=1.0) == "0-0 R"
    # new ends: 0-1 L -> 0|0, 0-0 R -> 1|0, 0-1 R -> 1|1, 0-k R -> 1|k (k = 2..5); ties go to the
    # lowest action id (0-0 R = 1, 0-1 L = 2, 0-1 R = 3, 0-2 R = 5, ...)
    # partner_void alone: seat 2 passed on 0 and 1 -> leave only one of them open: 0-2 R first
    assert _choice(env, partner_void=1.0) == "0-2 R"
    # block alone: seat 3 passed on 0 and 1 (seat 1, next, on nothing) -> both ends on them: 0-0 R first
    assert _choice(env, block=1.0) == "0-0 R"


def test_classic_blocks_the_next_player_first() -> None:
    """classic 'block': an end the NEXT opponent passed on counts double."""
    line = "2-3 3-3 3-4"
    mine = "2-5 4-6 1-1"
    rest = rest_of(line, mine).split()
    hands = [mine, " ".join(rest[0::3]), " ".join(rest[1::3]), " ".join(rest[2::3])]
    env = position(line, hands, current=0)
    d = env.state_dict()
    d["voids"][1] = [5]  # seat 1 (next) passed on 5 ...
    d["voids"][3] = [6]  # ... seat 3 (previous) on 6
    # a pass on 5 must not leave it holding a 5: move its 5s to seat 2 (legal position)
    fives = [t for t in d["hands"][1] if 5 in t]
    sixes = [t for t in d["hands"][3] if 6 in t]
    d["hands"][1] = [t for t in d["hands"][1] if 5 not in t]
    d["hands"][3] = [t for t in d["hands"][3] if 6 not in t]
    d["hands"][2] += fives + sixes
    env.load_state_dict(d)
    assert legal(env) == {"2-5 L", "4-6 R"}
    assert _choice(env, block=1.0) == "2-5 L"  # leaves 5 (next player's void) rather than 6


def test_classic_beats_greedy_and_random_in_the_harness(tmp_path: Any) -> None:
    """The shipped ordering, on duplicate deals with the pairs swapped (``mtrain bench --game
    block``): classic's pairs give up fewer points a hand than greedy's and random's (seeded)."""
    from agents.tournament import TournamentConfig, run_tournament
    from mtrain_env import block

    config = TournamentConfig(
        agents=["random", "greedy", "classic"],
        game=block.GameConfig.make(),
        deals=60,
        seed=3,
        out_dir=tmp_path / "run",
        progress=False,
        plots=False,
    )
    rows = run_tournament(config).rows
    points = {
        a: float(np.mean([r.penalty for r in rows if r.agent == a])) for a in ("random", "greedy", "classic")
    }
    assert points["classic"] < points["random"] and points["greedy"] < points["random"], points
