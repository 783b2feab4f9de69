"""``mtrain block-demo`` and ``mtrain block-bench``: partnership dominoes from the command line.

``block-demo`` plays one seeded hand (or match) between random players and prints the
table after every move; ``block-bench`` runs :mod:`agents.block.bench`.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np


def demo(args: argparse.Namespace) -> int:
    """Play a seeded hand between random legal players, printing the table as it goes."""
    from mtrain_env.block import raw_env

    env = raw_env(num_players=args.players, match=args.match, render_mode="ansi", rules=args.rules)
    env.reset(seed=args.seed)
    rng = np.random.default_rng(args.seed)
    print(env.render())
    steps = 0
    while not all(env.terminations.values()):
        agent = env.agent_selection
        action = int(rng.choice(env.legal_actions()))
        env.step(action)
        steps += 1
        print(f"\n-- step {steps}: {agent} plays {env.codec.describe(action)}")
        print(env.render())
    return 0


def bench(args: argparse.Namespace) -> int:
    """Run the pair-rated mini tournament of :mod:`agents.block.bench`."""
    from agents.block.bench import main as bench_main

    argv = ["--hands", str(args.hands), "--seed", str(args.seed), "--players", str(args.players)]
    if args.agents:
        argv += ["--agents", *args.agents]
    return bench_main(argv)


def register(subparsers: Any) -> None:
    """Add ``block-demo`` and ``block-bench`` to the ``mtrain`` parser."""
    p = subparsers.add_parser("block-demo", help="play a seeded partnership-dominoes hand and print it")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--players", type=int, choices=(2, 4), default=4)
    p.add_argument("--rules", default="001", help="preset: 001 (default) or openspiel")
    p.add_argument("--match", action="store_true", help="play a whole match to 100 (B13)")
    p.set_defaults(func=demo)
    p = subparsers.add_parser("block-bench", help="pair-rated mini tournament of the block-dominoes agents")
    p.add_argument("--hands", type=int, default=2000, help="hands per meeting")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--players", type=int, choices=(2, 4), default=4)
    p.add_argument("--agents", nargs="+", default=None, help="default: random greedy classic")
    p.set_defaults(func=bench)
