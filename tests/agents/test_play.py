"""The one play loop (agents/play.py) and the env's public round results it reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import mtrain_env
from agents import make_agent
from agents.block import make_agent as make_block_agent
from agents.block.base import BlockAgent, BlockDecision
from agents.mexican_train.base import Agent, Decision
from agents.play import AgentError, Step, play_game, play_until
from mtrain_env import block
from mtrain_env.mexican_train.core.scoring import positive_scores
from mtrain_env.tilegame.actions import IllegalMoveError
from mtrain_env.tilegame.aec import ROUND_RESULT_KEY

MT_CONFIGS: list[dict[str, Any]] = [
    {"num_players": 2, "max_pips": 6},
    {"num_players": 4},
    {"num_players": 3, "max_pips": 9, "rounds": 3},
    {"num_players": 3, "max_pips": 9, "rounds": 2, "positive_scoring": True, "blank_penalty": True},
]


def _random_steps(env: Any, seed: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Play random legal moves; yield ``(agent that acted, its info after the step)`` after each."""
    rng = np.random.default_rng(seed)
    while not all(env.terminations.values()):
        agent = env.agent_selection
        env.step(int(rng.choice(env.legal_actions())))
        yield agent, env.infos[agent]


@pytest.mark.parametrize("kwargs", MT_CONFIGS)
def test_round_results_are_published_once_per_round_and_are_exact(kwargs: dict[str, Any]) -> None:
    """The step that ends a round puts its public result in every agent's info, and only
    that step: final hands (R24 pips of those very hands), who went out (R19), blocked
    (R23), the round's scores as added to the session's (R25)."""
    env = mtrain_env.raw_env(**kwargs)
    env.reset(seed=3)
    config = env.config
    results = []
    for seed in range(1):
        for _agent, info in _random_steps(env, seed):
            if ROUND_RESULT_KEY in info:
                result = info[ROUND_RESULT_KEY]
                assert all(env.infos[a][ROUND_RESULT_KEY] is result for a in env.agents)
                results.append(result)
            else:
                assert all(ROUND_RESULT_KEY not in env.infos[a] for a in env.agents)
    assert [r["round"] for r in results] == list(range(config.rounds))
    totals = [0.0] * config.num_players
    for r in results:
        json.dumps(r)  # plain JSON values
        pips = [
            sum(
                config.tiles.hand_value(1 << config.tiles.tile_id(a, b), config.blank_penalty)
                for a, b in hand
            )
            for hand in r["hands"]
        ]
        assert r["pips"] == pips
        assert r["went_out"] == [not hand for hand in r["hands"]]
        assert r["blocked"] == (not any(r["went_out"]))
        expected = positive_scores(pips, r["went_out"]) if config.positive_scoring else pips
        assert [float(x) for x in r["scores"]] == [float(x) for x in expected]
        totals = [t + s for t, s in zip(totals, r["scores"], strict=True)]
    assert [float(x) for x in env.state_obj.scores] == totals


def test_the_round_result_survives_a_snapshot() -> None:
    env = mtrain_env.raw_env(num_players=2, max_pips=6, rounds=2)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    while not env.state_obj.round_scores:
        env.step(int(rng.choice(env.legal_actions())))
    agent = env.agent_selection
    assert ROUND_RESULT_KEY in env.infos[agent]
    copy = mtrain_env.raw_env(num_players=2, max_pips=6, rounds=2)
    copy.load_state_dict(json.loads(json.dumps(env.state_dict())))
    assert copy.infos[agent][ROUND_RESULT_KEY] == env.infos[agent][ROUND_RESULT_KEY]
    action = int(rng.choice(env.legal_actions()))
    env.step(action)
    copy.step(action)
    assert ROUND_RESULT_KEY not in copy.infos[agent] and ROUND_RESULT_KEY not in env.infos[agent]


#: the env line of the documented loop (mtrain_env/mexican_train/env.py, "Round results")
DOC_ENV = "mtrain_env.env(num_players=4, max_pips=6, rounds=3)"


def _documented_loop() -> str:
    """The ``agent_iter`` loop of the env's docstring that collects the round results."""
    import importlib
    import textwrap

    doc = importlib.import_module("mtrain_env.mexican_train.env").__doc__
    assert doc is not None
    section = doc.split("### Round results\n", 1)[1].split("\n### ", 1)[0]
    code = textwrap.dedent(section.split("::\n", 1)[1])
    assert DOC_ENV in code and "env.agent_iter()" in code
    return code


@pytest.mark.parametrize(
    ("make", "rounds"),
    [
        (DOC_ENV, lambda env: 3),
        ("mtrain_env.env(num_players=2, max_pips=6)", lambda env: 1),
        ("mtrain_env.env(num_players=3, max_pips=9, rounds=10)", lambda env: 10),
        ("mtrain_env.block.env(match=True, target=30)", lambda env: len(env.unwrapped.state_obj.results)),
    ],
)
def test_the_documented_loop_collects_each_round_once(
    make: str, rounds: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every seat's info holds a round's result, so a loop counting the infos that hold it
    counts a round several times (each seat at the episode's end): the documented loop keys
    them by round and gets each round once, equal to what the env published."""
    import mtrain_env.block  # noqa: F401 - the block constructor of a case

    scope: dict[str, Any] = {}
    exec(_documented_loop().replace(DOC_ENV, make), scope)
    env, results = scope["env"], scope["results"]
    assert sorted(results) == list(range(rounds(env)))
    assert capsys.readouterr().out.startswith(f"{rounds(env)} ")
    naive = 0  # the loop that counts infos instead
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _agent in env.agent_iter():
        obs, _reward, termination, truncation, info = env.last()
        naive += ROUND_RESULT_KEY in info
        env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert naive == rounds(env) - 1 + env.unwrapped.config.num_players


def test_block_hand_results_name_the_winner_and_the_points() -> None:
    env = block.raw_env(match=True, target=30)
    env.reset(seed=5)
    results = [info[ROUND_RESULT_KEY] for _a, info in _random_steps(env, 2) if ROUND_RESULT_KEY in info]
    assert len(results) >= 1
    for r in results:
        assert sorted(r["points"])[0] == 0  # only the losing pair scores (points are penalties)
        assert r["scores"] == [r["points"][seat % 2] for seat in range(4)]
        assert r["went_out"].count(True) == (r["kind"] == "domino")
    assert results[-1]["match_loser"] in (0, 1)
    assert all(r["match_loser"] == -1 for r in results[:-1])


# --------------------------------------------------------------------- the loop
@pytest.mark.parametrize("wrapped", [False, True])
def test_play_game_plays_to_the_end_and_records_every_round(wrapped: bool) -> None:
    make = mtrain_env.env if wrapped else mtrain_env.raw_env
    env = make(num_players=3, max_pips=9, rounds=2, reward="penalty")
    agents = [make_agent(name) for name in ("planner", "greedy", "random")]
    seen: list[Step] = []
    record = play_game(env, agents, seed=4, agent_seeds=[1, 2, 3], observer=seen.append)
    assert record.episode_over and len(record.rounds) == 2
    assert record.steps == len(seen) == sum(sum(r.actions) for r in record.rounds)
    assert record.decisions == [sum(r.actions[s] for r in record.rounds) for s in range(3)]
    assert [s.round_result for s in seen if s.round_result] == [r.result for r in record.rounds]
    scale = env.unwrapped.config.hand_size * 9  # reward="penalty": -pips / (hand_size * max_pips)
    pips = [sum(r.result["pips"][s] for r in record.rounds) for s in range(3)]
    assert record.returns == pytest.approx([-p / scale for p in pips])
    again = play_game(
        make(num_players=3, max_pips=9, rounds=2, reward="penalty"), agents, seed=4, agent_seeds=[1, 2, 3]
    )
    assert [r.result for r in again.rounds] == [r.result for r in record.rounds]  # seeded: the same game


def test_play_until_returns_when_an_empty_seat_is_on_turn() -> None:
    env = mtrain_env.raw_env(num_players=4)
    env.reset(seed=0)
    seats: list[Agent | None] = [make_agent("random", seed=s) for s in range(4)]
    learner = env.agent_name_mapping[env.agent_selection]
    seats[learner] = None
    record = play_until(env, seats)
    assert record.steps == 0 and not record.episode_over  # the empty seat was already on turn
    env.step(env.legal_actions()[0])
    record = play_until(env, seats)
    assert env.agent_selection == env.possible_agents[learner] or record.episode_over


class Cheater(Agent):
    name = "cheater"

    def act(self, decision: Decision) -> int:
        return int(np.flatnonzero(decision.action_mask == 0)[0])


class BlockCheater(BlockAgent):
    name = "block-cheater"

    def act(self, decision: BlockDecision) -> int:
        return int(np.flatnonzero(decision.action_mask == 0)[0])


def test_an_illegal_action_raises_naming_the_seat_and_changes_nothing() -> None:
    env = mtrain_env.raw_env(num_players=2, max_pips=6)
    with pytest.raises(AgentError, match=r"Cheater\(\) at seat \d chose an illegal action") as err:
        play_game(env, [Cheater(), Cheater()], seed=0)
    assert env.state_obj.phase.name in ("OPENING", "SEEK_ENGINE", "NORMAL")
    assert isinstance(err.value.__cause__, IllegalMoveError) and err.value.illegal


def test_an_illegal_block_action_raises_naming_the_seat_and_changes_nothing() -> None:
    env = block.raw_env()
    env.reset(seed=0)
    before = env.state_dict()
    with pytest.raises(AgentError, match=r"BlockCheater\(\) at seat \d chose an illegal action") as err:
        play_until(env, [BlockCheater() for _ in range(4)])
    assert isinstance(err.value.__cause__, IllegalMoveError) and err.value.illegal
    assert env.state_dict() == before


#: (game, a fresh raw env, its agents)
ENGINES: dict[str, tuple[Any, Any]] = {
    "mexican": (
        lambda: mtrain_env.raw_env(num_players=2, max_pips=6, backend="python"),
        lambda: [make_agent("random", seed=s) for s in range(2)],
    ),
    "block": (block.raw_env, lambda: [make_block_agent("random", seed=s) for s in range(4)]),
}


@pytest.mark.parametrize("game", ENGINES)
@pytest.mark.parametrize("where", ["apply", "legal_moves"])
@pytest.mark.parametrize("error", [ValueError, TypeError])
def test_an_engine_error_after_the_legality_check_is_not_blamed_on_the_agent(
    game: str, where: str, error: type[Exception], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``ValueError``/``TypeError`` raised inside the engine once the env has accepted a
    legal move (applying it, or settling the next decision) is the engine's bug: the loop
    lets it through as it is, not as "agent X chose an illegal action"."""
    make_env, make_agents = ENGINES[game]
    env = make_env()
    env.reset(seed=1)
    agents = make_agents()

    def broken(*args: Any) -> None:
        raise error("engine bug")

    monkeypatch.setattr(env.game, where, broken)  # after reset: the deal is settled
    with pytest.raises(error, match="engine bug") as err:
        play_until(env, agents)
    assert not isinstance(err.value, AgentError)


class Raiser(Agent):
    name = "raiser"

    def act(self, decision: Decision) -> int:
        raise KeyError("no such tile")


def test_an_agent_that_raises_is_named_with_its_seat_and_its_exception_kept() -> None:
    """The loop re-raises an agent's own exception as AgentError naming the seat (the
    harness and the web table catch one class); the agent's exception is the cause."""
    env = mtrain_env.raw_env(num_players=2, max_pips=6)
    with pytest.raises(AgentError, match=r"Raiser\(\) at seat \d raised KeyError: 'no such tile'") as err:
        play_game(env, [Raiser(), Raiser()], seed=0)
    assert not err.value.illegal and isinstance(err.value.__cause__, KeyError)
    assert env.agent_selection == env.possible_agents[err.value.seat]  # still on turn, nothing stepped


def test_the_loop_plays_block_dominoes_with_block_agents() -> None:
    env = block.raw_env()
    agents = [make_block_agent(name) for name in ("classic", "random", "greedy", "random")]
    record = play_game(env, agents, seed=2, agent_seeds=[0, 1, 2, 3])
    (hand,) = record.rounds
    assert record.episode_over and hand.result["kind"] in ("domino", "cierre")
    assert record.returns[0] == record.returns[2] == -record.returns[1]  # partners share, zero-sum


def test_play_game_refuses_a_wrong_number_of_agents() -> None:
    with pytest.raises(ValueError, match="3 agents for 4 seats"):
        play_game(mtrain_env.raw_env(), [make_agent("random")] * 3)
