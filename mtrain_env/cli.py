"""The ``mtrain`` command line: ``demo``, ``bench-speed`` (more subcommands join with later work)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np


def demo(args: argparse.Namespace) -> int:
    """Play one seeded game between random legal players, printing the table as it goes."""
    import mtrain_env

    env = mtrain_env.env(num_players=args.players, rules=args.rules, render_mode="ansi")
    env.reset(seed=args.seed)
    rng = np.random.default_rng(args.seed)
    codec = env.unwrapped.codec
    print(env.render())
    steps = 0
    for agent in env.agent_iter():
        obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(rng.choice(legal))
        env.step(action)
        steps += 1
        if args.verbose or steps % args.every == 0:
            print(f"\n-- step {steps}: {agent} plays {codec.describe(action)}")
            print(env.render())
    state = env.unwrapped.state_obj
    print(f"\nGame over after {steps} steps ({'blocked' if state.blocked else 'a player went out'}).")
    for p, score in enumerate(state.scores):
        print(f"  player_{p}: {score:g} penalty pips")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mtrain", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="play a seeded game between random players and print it")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--rules", default="pagat")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--every", type=int, default=1, help="print the table every N steps")
    p.add_argument("--verbose", action="store_true")
    p.set_defaults(func=demo)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
