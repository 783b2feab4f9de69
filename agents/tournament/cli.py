"""``mtrain bench``: a duplicate-deal tournament from the command line.

Example::

    mtrain bench --agents planner greedy random --players 4 --deals 500 --seed 0 \\
        --workers 2 --out results/x --rules pagat --flag one_tile_opening \\
        --agent-param mc.rollouts=64 [--session] [--lineup planner random random random]

Rerunning the same command after an interruption resumes it; a larger ``--deals``
extends a finished run; any other change is refused unless ``--overwrite``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from agents.tournament.harness import AgentSpec, ConfigMismatchError, TournamentConfig, make_plan, parse_param


def register(subparsers: Any) -> None:
    """Add the ``bench`` subcommand to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "bench",
        help="duplicate-deal tournament between agents (CSV, JSON summary, plots; resumable)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="AGENT",
        help="registered names (or module:Class), optionally with params: mc[rollouts=64,depth=2]",
    )
    p.add_argument(
        "--agent-param",
        action="append",
        default=[],
        metavar="AGENT.KEY=VALUE",
        help="constructor parameter for every agent with that name or label (repeatable; JSON values)",
    )
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--max-pips", type=int, default=12, help="N of the double-N set (R1)")
    p.add_argument("--hand-size", type=int, default=None, help="default: the preset's table (R4)")
    p.add_argument("--rules", default="pagat", help="preset: pagat, wikipedia, cardinal")
    p.add_argument(
        "--flag",
        action="append",
        default=[],
        metavar="NAME[=true|false]",
        help="RULES.md variant flag (repeatable), e.g. --flag one_tile_opening",
    )
    rounds = p.add_mutually_exclusive_group()
    rounds.add_argument("--rounds", type=int, default=1, help="rounds per game (default 1)")
    rounds.add_argument("--session", action="store_true", help="full sessions: max_pips + 1 rounds (R25)")
    p.add_argument("--deals", type=int, default=100, help="duplicate deals (each played P times)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=1, help="processes (0 = every core)")
    p.add_argument("--out", required=True, help="output directory (resumed when it holds this run)")
    p.add_argument("--lineup", nargs="+", default=None, metavar="LABEL", help="agent label for each seat")
    p.add_argument(
        "--no-duplicate", action="store_true", help="play each deal once (independent deals, for comparison)"
    )
    p.add_argument("--overwrite", action="store_true", help="discard earlier results in --out")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--no-plots", action="store_true")
    p.set_defaults(func=bench)


def config_from_args(args: argparse.Namespace) -> TournamentConfig:
    """The :class:`TournamentConfig` of parsed ``bench`` arguments."""
    specs = [AgentSpec.parse(text) for text in args.agents]
    for item in args.agent_param:
        target, dot, rest = item.partition(".")
        if not dot:
            raise ValueError(f"--agent-param must be AGENT.KEY=VALUE, got {item!r}")
        key, value = parse_param(rest)
        hits = [i for i, s in enumerate(specs) if target in (s.name, s.label, s.default_label())]
        if not hits:
            raise ValueError(f"--agent-param {item!r}: no agent named {target!r} in --agents")
        for i in hits:
            specs[i] = AgentSpec(specs[i].name, {**specs[i].params, key: value}, specs[i].label)
    flags: dict[str, bool] = {}
    for item in args.flag:
        name, eq, value = item.partition("=")
        if eq and value.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"--flag {item!r}: the value must be true or false")
        flags[name] = not eq or value.lower() in ("true", "1")
    return TournamentConfig(
        agents=specs,
        num_players=args.players,
        max_pips=args.max_pips,
        hand_size=args.hand_size,
        rules=args.rules,
        flags=flags,
        rounds_per_game=args.max_pips + 1 if args.session else args.rounds,
        deals=args.deals,
        seed=args.seed,
        lineup=args.lineup,
        duplicate=not args.no_duplicate,
        workers=args.workers,
        out_dir=args.out,
        overwrite=args.overwrite,
        progress=not args.no_progress,
        plots=not args.no_plots,
    )


def bench(args: argparse.Namespace) -> int:
    """Run the tournament, print the table and where the files are."""
    from agents.tournament import run_tournament

    try:
        config = config_from_args(args)
        make_plan(config)  # validates rules, agents and params before any file is touched
    except (ValueError, TypeError) as err:
        print(f"mtrain bench: invalid configuration: {err}", file=sys.stderr)
        return 2
    try:
        result = run_tournament(config)
    except ConfigMismatchError as err:
        print(f"mtrain bench: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nmtrain bench: interrupted; finished deals are saved, rerun the same command to resume.")
        return 130
    print(result.table)
    print()
    for name, path in result.files.items():
        print(f"  {name}: {path}")
    return 0
