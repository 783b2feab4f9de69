"""The environment layer's ``mtrain`` commands: ``bench-speed``, ``block-crosscheck``, ``soak``
and ``backend-diff``.

The first two measure the envs against OpenSpiel (``open-spiel``, in the ``train`` extra),
which they import only when run; ``soak`` plays random games with every invariant checked
after every step (:mod:`mtrain_env.soak`); ``backend-diff`` compares the env's two rules
engines at every decision (:mod:`mtrain_env.mexican_train.backend_diff`, needs numba). The
``mtrain`` program itself is :mod:`training.app`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def int_at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type``: an int >= ``low`` (the error names the bound and the value)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an int >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an int >= {low}, got {value}")
        return value

    return parse


def positive_float(text: str) -> float:
    """An argparse ``type``: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text}")
    return value


def bench_speed(args: argparse.Namespace) -> int:
    """Run :mod:`mtrain_env.bench_speed` (steps/s against OpenSpiel)."""
    from mtrain_env import bench_speed as bench

    bench.main(["--seconds", str(args.seconds), "--slices", str(args.slices)])
    return 0


def block_crosscheck(args: argparse.Namespace) -> int:
    """Run :mod:`mtrain_env.block.crosscheck`; 1 when the engines disagree anywhere unexplained."""
    from mtrain_env.block import crosscheck

    argv = ["--hands", str(args.hands), "--seed", str(args.seed), "--players", str(args.players)]
    return crosscheck.main(argv)


def soak(args: argparse.Namespace) -> int:
    """Run :mod:`mtrain_env.soak`; 1 when any invariant broke."""
    from mtrain_env import soak as soak_module

    return soak_module.main(["--steps", str(args.steps), "--seed", str(args.seed), "--game", args.game])


def backend_diff(args: argparse.Namespace) -> int:
    """Run :mod:`mtrain_env.mexican_train.backend_diff`; 1 when the backends differ anywhere."""
    from mtrain_env.mexican_train import backend_diff as diff

    argv = ["--decisions", str(args.decisions), "--seed", str(args.seed), "--workers", str(args.workers)]
    return diff.main(argv + (["--quiet"] if args.quiet else []))


def register(subparsers: Any) -> None:
    """Add ``bench-speed``, ``block-crosscheck``, ``soak`` and ``backend-diff`` to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "bench-speed",
        help="steps per second of every path (env, cores, batched API) against OpenSpiel's "
        "python_team_dominoes",
        description="Random legal games through OpenSpiel, the env, its rules core and, with numba "
        "(the fast extra), the compiled core and the batched API at B = 1, 64, 1024, timed in "
        "interleaved slices; prints steps/s, the ratios and the targets.",
    )
    p.add_argument("--seconds", type=positive_float, default=30.0, help="total CPU seconds per contender")
    p.add_argument(
        "--slices", type=int_at_least(1), default=30, help="interleaved measurements per contender"
    )
    p.set_defaults(func=bench_speed)
    p = subparsers.add_parser(
        "block-crosscheck",
        help="play the same partnership-dominoes hands here and in OpenSpiel, compare every move",
        description="Same deals and same random moves in both engines; every legal-move set and "
        "final pip count is compared. Exit status 1 on an unexplained difference.",
    )
    p.add_argument("--hands", type=int_at_least(1), default=5000, help="hands to compare")
    p.add_argument("--seed", type=int_at_least(0), default=0)
    p.add_argument("--players", type=int, choices=(2, 4), default=4)
    p.set_defaults(func=block_crosscheck)
    p = subparsers.add_parser(
        "soak",
        help="random play over random configurations, every invariant checked after every step",
        description="Random legal games over random valid configurations of both games (seats, sets, "
        "presets, flags, sessions, reward modes); after every step the game state is checked against "
        "every invariant of its rules and the env's bookkeeping against the state, and at random "
        "steps a JSON round trip of state_dict() must give an identical env. Prints the totals; "
        "exit status 1 on any violation, with the command that replays the run up to it.",
    )
    p.add_argument("--steps", type=int, default=100_000, help="steps to play (dead steps included)")
    p.add_argument("--seed", type=int, default=0, help="seed of everything drawn (configurations, games)")
    p.add_argument("--game", choices=("mexican_train", "block", "both"), default="both")
    p.set_defaults(func=soak)
    p = subparsers.add_parser(
        "backend-diff",
        help="the AEC env on the python and the compiled backend, compared at every decision",
        description="Seeded random episodes (every preset, every flag alone and combined, 2-8 players, "
        "double-6 to double-18, sessions, every reward mode) through env(backend='python') and "
        "env(backend='compiled') with the same actions; at every step the observation, mask, reward, "
        "termination, truncation, infos and state_dict() must be identical. Prints the totals; exit "
        "status 1 on any difference, with the command that replays its episode. Needs numba.",
    )
    p.add_argument(
        "--decisions", type=int_at_least(1), default=100_000, help="decisions to compare (at least)"
    )
    p.add_argument("--seed", type=int_at_least(0), default=0, help="seed of every episode drawn")
    p.add_argument("--workers", type=int_at_least(1), default=1, help="processes")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=backend_diff)
