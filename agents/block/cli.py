"""``mtrain block-demo`` and ``mtrain block-bench``: partnership dominoes from the command line.

``block-demo`` plays one seeded hand (or match) between random players and prints the
table after every move; ``block-bench`` runs :mod:`agents.block.bench`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from agents.block import make_agent
from agents.play import Step, play_until
from agents.registry import agent_names
from mtrain_env.block.core.config import PRESETS
from mtrain_env.cli import int_at_least


def demo(args: argparse.Namespace) -> int:
    """Play a seeded hand between random agents, printing the table after every move."""
    from mtrain_env.block import raw_env

    env = raw_env(num_players=args.players, match=args.match, render_mode="ansi", rules=args.rules)
    seats = [make_agent("random", seed=args.seed + k) for k in range(args.players)]
    steps = 0

    def show(step: Step) -> None:
        nonlocal steps
        steps += 1
        print(f"\n-- step {steps}: {env.possible_agents[step.seat]} plays {env.codec.describe(step.action)}")
        print(env.render())

    env.reset(seed=args.seed)
    print(env.render())
    play_until(env, seats, observer=show)
    return 0


def bench(args: argparse.Namespace) -> int:
    """Run the pair-rated mini tournament of :mod:`agents.block.bench`."""
    from agents.block.bench import main as bench_main

    if args.agents is not None and len(args.agents) < 2:
        print(
            f"mtrain block-bench: --agents: every two agents meet: name two or more, got {args.agents[0]}",
            file=sys.stderr,
        )
        return 2
    argv = ["--hands", str(args.hands), "--seed", str(args.seed), "--players", str(args.players)]
    if args.agents:
        argv += ["--agents", *args.agents]
    return bench_main(argv)


def register(subparsers: Any) -> None:
    """Add ``block-demo`` and ``block-bench`` to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "block-demo",
        help="a seeded partnership-dominoes hand between random players, printed move by move",
        description="Play one seeded hand (or a whole match) of partnership block dominoes between "
        "random players and print the table after every move.",
    )
    p.add_argument("--seed", type=int_at_least(0), default=7)
    p.add_argument("--players", type=int, choices=(2, 4), default=4)
    p.add_argument(
        "--rules", choices=sorted(PRESETS), default="001", help="preset: 001 (default) or openspiel"
    )
    p.add_argument("--match", action="store_true", help="play a whole match to 100 (B13)")
    p.set_defaults(func=demo)
    p = subparsers.add_parser(
        "block-bench",
        help="pair-rated mini tournament between the partnership-dominoes agents",
        description="Every two agents meet in duplicate matches, each playing both seats of a pair; "
        "prints net points per hand and match win rates with 95% intervals.",
    )
    p.add_argument("--hands", type=int_at_least(1), default=2000, help="hands per meeting")
    p.add_argument("--seed", type=int_at_least(0), default=0)
    p.add_argument("--players", type=int, choices=(2, 4), default=4)
    p.add_argument(
        "--agents",
        nargs="+",
        choices=agent_names("block"),
        default=None,
        metavar="AGENT",
        help=f"two or more of {', '.join(agent_names('block'))} (default: all three)",
    )
    p.set_defaults(func=bench)
