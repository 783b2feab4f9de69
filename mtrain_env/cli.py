"""The ``mtrain`` command line.

``bench-speed`` lives here; the others (``demo``, ``bench``, ``train``, ...) are contributed by the
packages that own them: each module in ``SUBCOMMAND_MODULES`` has a
``register(subparsers)`` function that adds its parser and sets ``func``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: modules contributing subcommands (``register(subparsers)``), e.g. ``mtrain bench``, ``mtrain train``
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "agents.demo",
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
    p = sub.add_parser("bench-speed", help="steps/s of the env against OpenSpiel's python_team_dominoes")
    p.add_argument("--seconds", type=float, default=30.0, help="total CPU seconds per contender")
    p.add_argument("--slices", type=int, default=30, help="interleaved measurements per contender")
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
