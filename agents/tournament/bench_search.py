"""``python -m agents.tournament.bench_search``: ms a decision of the search agents, in one run.

Positions are collected once (the seat-0 decisions with more than one legal action of
games played by four ``planner`` seats, 4 players, double-12 unless told otherwise), then
every agent spec decides each of them, the agents taking turns position by position; the
table gives the mean and median milliseconds a decision and the speed-up over the first
spec, measured in the same run (the machine is shared: read the ratio, not the absolute
figure). The issue-10 target is ``mc`` at 200
rollouts on the compiled rollouts at <= 10 ms a decision (pure ``mc``: ~100 ms).

    python -m agents.tournament.bench_search --games 4 \\
        --agents 'mc[engine=python]' 'mc[engine=compiled]'
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

from agents.mexican_train.base import Decision, decision_for
from agents.mexican_train.planner import PlannerAgent
from agents.registry import make_agent
from agents.tournament.harness import AgentSpec, checked_agent
from mtrain_env.cli import int_at_least
from mtrain_env.mexican_train import GameConfig
from mtrain_env.mexican_train import env as make_env
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.interrupts import run_main

#: specs timed by default: the pure reference first (the ratio's denominator)
DEFAULT_AGENTS = ("mc[engine=python]", "mc[engine=compiled]")


def planner_turns(games: int, seed: int, players: int) -> Iterator[tuple[int, Any, str]]:
    """``(game index, env, agent id)`` at every live turn of ``games`` games (seeds ``seed +
    g``) of ``planner`` seats; the planner moves once the caller has looked."""
    planner = PlannerAgent()
    for g in range(games):
        e = make_env(num_players=players)
        e.reset(seed=seed + g)
        for agent_id in e.agent_iter():
            _obs, _r, term, trunc, _info = e.last()
            if term or trunc:
                e.step(None)
                continue
            yield g, e, agent_id
            e.step(planner.act(decision_for(e, agent_id)))


def positions(games: int, seed: int, players: int) -> list[tuple[Any, str]]:
    """``(env snapshot, agent id)`` of every seat-0 decision with a choice in ``games`` games
    of ``planner`` seats (each env is restored from its ``state_dict`` to decide)."""
    out = []
    for _g, e, agent_id in planner_turns(games, seed, players):
        decision = decision_for(e, agent_id)
        if decision.seat == 0 and len(decision.legal_actions) > 1:
            out.append((e.unwrapped.state_dict(), agent_id))
    return out


def time_agents(
    specs: Sequence[AgentSpec], snapshots: Sequence[tuple[Any, str]], players: int, seed: int
) -> list[list[float]]:
    """Milliseconds of each decision, per spec (:func:`time_and_count`'s times)."""
    return [[ms for ms, _ in spec_runs] for spec_runs in time_and_count(specs, snapshots, players, seed)]


def time_and_count(
    specs: Sequence[AgentSpec], snapshots: Sequence[tuple[Any, str]], players: int, seed: int
) -> list[list[tuple[float, int]]]:
    """``(milliseconds, rollouts)`` of each decision, per spec: the agent's ``last_rollouts``
    (0 for an agent that runs none), what a budget such as ``extend=`` spends. The agents
    take turns on each position (the order reversed every other one), so a load swing of the
    shared machine hits them alike."""
    agents = [make_agent(spec.name, seed=seed, **spec.params) for spec in specs]
    e = make_env(num_players=players)
    e.reset(seed=0)
    raw = e.unwrapped
    raw.load_state_dict(snapshots[0][0])
    for agent in agents:  # the first call compiles or loads caches: not timed
        agent.act(agent.decision_class(e, snapshots[0][1]))
    out: list[list[tuple[float, int]]] = [[] for _ in specs]
    for k, (state, agent_id) in enumerate(snapshots):
        turns = list(range(len(agents)))
        for i in turns if k % 2 == 0 else reversed(turns):
            raw.load_state_dict(state)
            decision: Decision = agents[i].decision_class(e, agent_id)  # as the play loop builds it
            t = time.perf_counter()
            agents[i].act(decision)
            ms = (time.perf_counter() - t) * 1000.0
            out[i].append((ms, int(getattr(agents[i], "last_rollouts", 0))))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineErrorParser(prog="bench_search", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--agents", nargs="+", default=list(DEFAULT_AGENTS), help="agent specs, the reference first"
    )
    parser.add_argument("--games", type=int_at_least(1), default=4)
    parser.add_argument("--players", type=int_at_least(2), default=4)
    parser.add_argument("--seed", type=int_at_least(0), default=0)
    parser.add_argument(
        "--rollouts", action="store_true", help="also print the mean rollouts a decision (search agents)"
    )
    args = parser.parse_args(argv)
    try:
        specs = [AgentSpec.parse(text) for text in args.agents]
        game = GameConfig.make(num_players=args.players)
        for spec in specs:
            checked_agent(spec, game)
    except ValueError as err:
        parser.error(f"--agents: {err}")
    snaps = positions(args.games, args.seed, args.players)
    print(
        f"{len(snaps)} decisions (seat 0, more than one legal action) of {args.games} planner games, "
        f"{args.players} players, double-12"
    )
    extra = f" {'rollouts':>9s}" if args.rollouts else ""
    print(f"{'agent':28s} {'mean ms':>9s} {'median ms':>10s} {'speed-up':>9s}{extra}")
    ref = None
    for spec, spec_runs in zip(specs, time_and_count(specs, snaps, args.players, args.seed), strict=True):
        times = [ms for ms, _ in spec_runs]
        mean = statistics.fmean(times)
        ref = mean if ref is None else ref
        extra = f" {statistics.fmean(n for _, n in spec_runs):9.1f}" if args.rollouts else ""
        line = f"{spec.default_label():28s} {mean:9.2f} {statistics.median(times):10.2f} {ref / mean:8.1f}x"
        print(line + extra)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m agents.tournament.bench_search"))
