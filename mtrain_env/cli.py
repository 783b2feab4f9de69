"""The ``mtrain`` command line.

``demo`` and ``bench-speed`` live here; other subcommands are contributed by the
packages that own them: each module in ``SUBCOMMAND_MODULES`` has a
``register(subparsers)`` function that adds its parser and sets ``func``.
"""

from __future__ import annotations

import argparse
import importlib
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


#: modules contributing subcommands (``register(subparsers)``), e.g. ``mtrain bench``, ``mtrain train``
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "agents.tournament.cli",
    "training.cli",
    "mtrain_env.block.cli",
)


def bench_speed(args: argparse.Namespace) -> int:
    """Run :mod:`mtrain_env.bench_speed` (steps/s against OpenSpiel)."""
    from mtrain_env import bench_speed as bench

    bench.main(["--seconds", str(args.seconds), "--slices", str(args.slices)])
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
    p = sub.add_parser("bench-speed", help="steps/s of the env against OpenSpiel's python_team_dominoes")
    p.add_argument("--seconds", type=float, default=30.0, help="total CPU seconds per contender")
    p.add_argument("--slices", type=int, default=10)
    p.set_defaults(func=bench_speed)
    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name is not None and module_name.startswith(err.name):
                continue  # that package has not been built yet
            raise
        module.register(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
