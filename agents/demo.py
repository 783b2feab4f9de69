"""``mtrain demo``: the README's main job.

1. One seeded 4-player round between the reference policy and the baselines
   (``ppo planner greedy random`` by default), one line per turn (``--verbose``: the
   table rendered after every step, showing only the hand of the seat on turn, R15
   hidden information), then every hand as scored (R24).
2. A short duplicate-deal tournament between the same agents (:mod:`agents.tournament`),
   its table printed and its CSV / JSON / PNG plots written to ``--out``.

``mtrain demo --agents random random random random --deals 0`` is the plain game of
random players.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from agents.play import AgentError, Step, play_game
from agents.registry import make_agent
from agents.tournament.harness import AgentSpec, checked_agent
from mtrain_env.cli import int_at_least, output_problem
from mtrain_env.mexican_train import GameConfig, raw_env

DEFAULT_AGENTS = ("ppo", "planner", "greedy", "random")


def register(subparsers: Any) -> None:
    """Add the ``demo`` subcommand to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "demo",
        help="a game between the reference policy and the baselines, then a short tournament",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--agents",
        nargs="+",
        default=list(DEFAULT_AGENTS),
        help="one agent per seat: a registered name or a spec, e.g. 'mc[sims=100]'",
    )
    p.add_argument("--rules", default="pagat", help="preset: pagat (default), wikipedia, cardinal")
    p.add_argument("--seed", type=int_at_least(0), default=7)
    p.add_argument("--verbose", action="store_true", help="render the whole table after every step")
    p.add_argument("--deals", type=int, default=25, help="duplicate deals of the tournament (0: none)")
    p.add_argument("--workers", type=int, default=1, help="tournament processes (0 = every core)")
    p.add_argument("--out", default="results/demo", help="tournament output directory (overwritten)")
    p.set_defaults(func=demo)


def play_shown_game(names: list[str], config: GameConfig, seed: int, verbose: bool = False) -> list[int]:
    """Play and print one round between agents ``names`` (seat order); returns the penalty pips."""
    env = raw_env(**config.to_dict(), render_mode="ansi" if verbose else None)
    specs = [AgentSpec.parse(text) for text in names]
    players = [make_agent(spec.name, **spec.params) for spec in specs]
    agent_ids = env.possible_agents
    print("Seats: " + ", ".join(f"{a} = {name}" for a, name in zip(agent_ids, names, strict=True)))
    print(f"{config.num_players} players, double-{config.max_pips}, {config.rules} rules, seed {seed}")
    steps = 0

    def show(step: Step) -> None:
        nonlocal steps
        steps += 1
        seat_text = f"{agent_ids[step.seat]} ({names[step.seat]})"
        print(f"{steps:4d}  {seat_text:22s} {env.codec.describe(step.action)}")
        if verbose:
            print(env.render())

    record = play_game(
        env, players, seed=seed, agent_seeds=[seed + i for i in range(len(names))], observer=show
    )
    result = record.rounds[-1].result
    out = [agent_ids[s] for s, gone in enumerate(result["went_out"]) if gone]
    how = "blocked (R23)" if result["blocked"] else f"{', '.join(out)} went out (R19)"
    print(f"\nRound over after {record.steps} steps: {how}.")
    for seat, pips in enumerate(result["pips"]):
        hand = " ".join(f"[{a}|{b}]" for a, b in result["hands"][seat]) or "-"
        print(f"  {agent_ids[seat] + ' (' + names[seat] + '):':24s}{pips:4d} penalty pips  {hand}")
    return [int(x) for x in result["pips"]]


def check_args(args: argparse.Namespace) -> GameConfig:
    """Validate every option before anything is played or written (``ValueError``/``TypeError``)."""
    if not 2 <= len(args.agents) <= 8:
        raise ValueError(f"--agents: one agent per seat, 2 to 8 (R3), got {len(args.agents)}")
    for flag, value in (("--deals", args.deals), ("--workers", args.workers)):
        if value < 0:
            raise ValueError(f"{flag} must be >= 0, got {value}")
    problem = output_problem(args.out, "directory") if args.deals > 0 else None
    if problem is not None:
        raise ValueError(f"--out: {problem}")
    try:
        config = GameConfig.make(num_players=len(args.agents), rules=args.rules)
    except (ValueError, TypeError) as err:
        raise ValueError(f"--rules/--agents: {err}") from None
    for text in args.agents:  # names and parameters, then what each reads against the table
        try:
            checked_agent(AgentSpec.parse(text), config)
        except ValueError as err:
            raise ValueError(f"--agents: {err}") from None
    return config


def demo(args: argparse.Namespace) -> int:
    """The game, then the tournament (exit 1 with the agent's traceback if one fails in play)."""
    from agents.tournament import AgentFailedError

    try:
        config = check_args(args)
    except (ValueError, TypeError) as err:
        print(f"mtrain demo: {err}", file=sys.stderr)
        return 2
    try:
        return _play_demo(args, config)
    except AgentError as err:
        print(err.agent_traceback() + f"mtrain demo: {err}", file=sys.stderr)
    except AgentFailedError as err:
        print(err.details + f"mtrain demo: {err}", file=sys.stderr)
    return 1


def _play_demo(args: argparse.Namespace, config: GameConfig) -> int:
    from agents.tournament import TournamentConfig, run_tournament

    names = list(args.agents)
    play_shown_game(names, config, args.seed, args.verbose)
    if args.deals <= 0:
        return 0
    specs = [AgentSpec.parse(text) for text in names]
    labels = [spec.default_label() for spec in specs]
    distinct = list(dict(zip(labels, specs, strict=True)).values())
    print(f"\nTournament: {args.deals} duplicate deals, each played from every seat rotation ...")
    result = run_tournament(
        TournamentConfig(
            agents=distinct,
            game=config,
            deals=args.deals,
            seed=args.seed,
            lineup=labels,
            workers=args.workers,
            out_dir=args.out,
            overwrite=True,
        )
    )
    print(result.table)
    print()
    for name, path in result.files.items():
        print(f"  {name}: {path}")
    return 0
