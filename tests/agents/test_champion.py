"""``champion``: ``mc`` with the table's self-play network as its prior and its rollouts.

* it is exactly ``mc[prior=policy,leaf=policy]`` on the table's shipped network (same
  moves, values and rollouts), 400 rollouts by default;
* the network follows the table (2 to 8 players, double-12); another table needs ``path=``;
* ``champion_policy`` is the network alone (the ``ppo`` agent on the same file);
* it sees no hidden information (the leak check of ``tests/agents/test_agents.py``) and writes
  the same tournament CSV on 1 and 2 workers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mtrain_env
from agents.mexican_train.base import decision_for
from agents.mexican_train.ppo import REFERENCE_POLICY, PPOAgent
from agents.registry import make_agent
from agents.tournament import AgentSpec
from mtrain_env.mexican_train import GameConfig
from tests.csv_workers import same_csv_on_one_and_two_workers

pytest.importorskip("numba")

from agents.mexican_train.champion import (
    DEFAULT_SIMS,
    TABLE_POLICIES,
    ChampionAgent,
    ChampionPolicyAgent,
    table_policy,
)
from agents.mexican_train.mc import MCAgent


def _decisions(players: int, count: int, seed: int = 5, max_pips: int = 12) -> Iterator[tuple[Any, Any]]:
    """``count`` decisions with a choice, of one game, with its env: a decision reads the
    env lazily, so act on each before asking for the next."""
    env = mtrain_env.raw_env(num_players=players, max_pips=max_pips)
    env.reset(seed=seed)
    given = 0
    while given < count and not all(env.terminations.values()):
        decision = decision_for(env, env.agent_selection)
        legal = decision.legal_actions
        if len(legal) > 1:
            given += 1
            yield decision, env
        env.step(int(legal[0]))


def test_champion_is_mc_with_the_network_as_prior_and_leaf() -> None:
    champion = ChampionAgent(seed=1, sims=40)
    mc = MCAgent(seed=1, sims=40, prior="policy", leaf="policy", path=str(REFERENCE_POLICY))
    seen = 0
    for decision, _env in _decisions(4, 6):
        assert champion.act(decision) == mc.act(decision)
        assert champion.last_values == mc.last_values and champion.last_rollouts == mc.last_rollouts
        seen += 1
    assert seen == 6
    assert ChampionAgent().params() == {"sims": DEFAULT_SIMS, "ms": None, "z": 1.0, "path": None}
    assert make_agent("champion", seed=0).name == "champion"


@pytest.mark.parametrize("players", [2, 3, 5, 6, 7, 8])
def test_the_network_follows_the_table(players: int) -> None:
    config = GameConfig.make(num_players=players)
    path = table_policy(config)
    assert path == TABLE_POLICIES[(players, 12)] and path.is_file()
    fast = ChampionPolicyAgent()
    ppo = PPOAgent(path=path)
    champion = ChampionAgent(seed=2, sims=16)
    for decision, _env in _decisions(players, 4):
        assert fast.act(decision) == ppo.act(decision)
        assert champion.act(decision) in decision.legal_actions
    assert champion._network_path(config) == str(path)


def test_another_table_needs_a_path() -> None:
    with pytest.raises(ValueError, match="champion's networks ship for"):
        table_policy(GameConfig.make(num_players=4, max_pips=9))
    decision, _env = next(_decisions(4, 1, max_pips=9))
    with pytest.raises(ValueError, match="give path="):
        ChampionAgent(sims=8).act(decision)


def test_the_champion_takes_only_the_knobs_that_changed_a_measured_result() -> None:
    """The knobs measured as no gain (inference pools, particle filters, history walks,
    planner rollouts for the other seats, searched later choices) are not the champion's:
    a spec naming one is refused before play, naming the knob."""
    import inspect

    knobs = set(inspect.signature(ChampionAgent).parameters) - {"seed"}
    assert knobs == {"sims", "ms", "z", "path", "extend", "threads"}
    retired_knobs = ("pool", "beta", "model", "alpha", "hands")
    retired_knobs += ("particles", "eps", "history", "policy", "levels")
    for retired in retired_knobs:
        with pytest.raises(ValueError, match=retired):
            make_agent(f"champion[{retired}=1]")
    with pytest.raises(ValueError, match="for the other seats"):
        MCAgent(leaf="policy", policy="greedy")
    assert AgentSpec.parse("champion[threads=2]").params == {"threads": 2}


def test_extend_adds_worlds_to_close_decisions_only() -> None:
    """``extend=``: a decision whose gate is clear is the plain champion's, move, values and
    rollouts; a close one is played on more worlds, the default and the close challengers."""
    plain = ChampionAgent(seed=1, sims=40)
    extended = ChampionAgent(seed=1, sims=40, extend=40)
    kept = grown = 0
    for decision, _env in _decisions(4, 14, seed=11):
        move = plain.act(decision)
        if extended.act(decision) == move and extended.last_rollouts == plain.last_rollouts:
            assert extended.last_values == plain.last_values
            kept += 1
        else:
            assert extended.last_samples > plain.last_samples
            assert extended.last_rollouts >= plain.last_rollouts + 40 - 2  # 40 // race size a candidate
            assert set(extended.last_values) <= set(plain.last_values)
            grown += 1
    assert kept > 0 and grown > 0
    assert extended.params()["extend"] == 40 and "extend" not in plain.params()
    assert AgentSpec.parse("champion[extend=40]").params == {"extend": 40}


@pytest.mark.parametrize("budget", [{"sims": 40}, {"sims": 40, "extend": 40}])
def test_threads_split_the_same_worlds(budget: dict[str, Any]) -> None:
    """``threads=2``: the network's rollouts of one decision run on two threads, one block of
    worlds each, and every move, value and rollout count is the one-thread champion's."""
    one = ChampionAgent(seed=1, **budget)
    two = ChampionAgent(seed=1, threads=2, **budget)
    for decision, _env in _decisions(4, 6, seed=11):
        assert two.act(decision) == one.act(decision)
        assert two.last_values == one.last_values and two.last_rollouts == one.last_rollouts
    assert two.params()["threads"] == 2 and "threads" not in one.params()
    assert AgentSpec.parse("champion[threads=2]").params == {"threads": 2}


def test_threads_are_checked() -> None:
    with pytest.raises(ValueError, match=r"threads must be an int in 1\.\.64"):
        ChampionAgent(threads=0)


def test_a_decision_is_close_when_the_challengers_t_is_near_the_gate() -> None:
    """``_close_race`` on made-up scores (default: candidate 0, ``z = 1``, ``CLOSE_BAND = 1``):
    the paired t of each challenger is ``mean / (sd / sqrt(n))`` of its differences."""
    agent = MCAgent(seed=0, sims=8, prior="planner", extend=8)
    zero = [0.0] * 4
    spread = [1.0, -1.0, 1.0, -1.0]  # sd 1.155, se 0.577

    def shifted(t: float) -> list[float]:
        return [x + t * 0.57735 for x in spread]

    assert agent._close_race([0, 1], 0, [zero, shifted(1.5)]) == [0, 1]  # close override
    assert agent._close_race([0, 1], 0, [zero, shifted(0.5)]) == [0, 1]  # close keep
    assert agent._close_race([0, 1], 0, [zero, shifted(2.5)]) == []  # clear override
    assert agent._close_race([0, 1], 0, [zero, shifted(-0.5)]) == []  # the default clearly holds
    assert agent._close_race([0, 1, 2], 0, [zero, shifted(1.2), shifted(-3.0)]) == [0, 1]
    assert agent._close_race([0, 1], 0, [zero, [2.0] * 4]) == []  # always better: t = +inf
    assert agent._close_race([0], 0, [zero]) == []
    for bad in (-1, True, 2.5):
        with pytest.raises(ValueError, match="extend must be an int >= 0"):
            ChampionAgent(extend=bad)  # type: ignore[arg-type]
    for budget in ({"ms": 50.0}, {"ms": 50.0, "sims": 400}):
        with pytest.raises(ValueError, match="needs a prior and a rollouts=/sims= budget without ms="):
            ChampionAgent(extend=100, **budget)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a prior"):
        MCAgent(prior=None, extend=100)


@pytest.mark.parametrize("params", [{}, {"extend": 24}])
def test_champion_sees_no_hidden_information(tmp_path: Path, params: dict[str, int]) -> None:
    """The leak check of ``tests/agents/test_agents.py`` on the champion, with an untrained network
    of that test's table (3 players, double-6) as ``path=``."""
    pytest.importorskip("torch")
    from agents.mexican_train.tilenet import NetSpec, build_net, save_selfplay_policy
    from tests.agents.test_agents import _leak_check

    config = GameConfig.make(num_players=3, max_pips=6)
    net = build_net(NetSpec.make("graph", config, hidden=16, pair_hidden=8), seed=2)
    path = save_selfplay_policy(net, tmp_path / "net3.npz")
    compared, differing = _leak_check(lambda: ChampionAgent(seed=3, sims=12, path=path, **params))
    assert compared >= 3
    assert differing == 0


@pytest.mark.parametrize(
    "params",
    [
        {"sims": 12},
        {"sims": 12, "extend": 24},
        {"sims": 12, "threads": 2},
    ],
)
def test_champion_same_csv_on_one_and_two_workers(tmp_path: Path, params: dict[str, Any]) -> None:
    champion = AgentSpec("champion", params)
    lineup = [champion.default_label(), "planner", "planner", "planner"]
    one = same_csv_on_one_and_two_workers(tmp_path, [champion, AgentSpec("planner")], lineup)
    assert b"champion" in one
