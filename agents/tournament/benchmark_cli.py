"""``mtrain benchmark --agent SPEC --task NAME``: an agent's score on a named benchmark task.

A task (:mod:`agents.tournament.tasks`) fixes the table, the opponents and the duplicate
deals, so the score can be compared with anyone else's on the same task. Prints the
agent's penalty pips a round, going-out and lowest rates and its gain over each opponent
(95% intervals over deals), then where it ranks among the shipped agents on that task.
Results go to ``--out`` (default ``results/benchmark/TASK/AGENT``), resumed when rerun.

    mtrain benchmark --agent "mc[sims=50]" --task mt4-planner-quick-v1
    mtrain benchmark --agent "ppo[path=runs/sp/policy.npz]" --task mt4-planner-v1
    mtrain benchmark --list
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agents.tournament.harness import dir_slug
from mtrain_env.cli import int_at_least, output_problem


def register(subparsers: Any) -> None:
    """Add ``mtrain benchmark`` to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "benchmark",
        help="an agent's score on a named benchmark task (fixed table, opponents and deals)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--agent", metavar="SPEC", help="the agent under test: a spec (mc[sims=50]) or module:factory"
    )
    p.add_argument("--task", metavar="NAME", help="the task (see --list)")
    p.add_argument("--list", action="store_true", help="list the tasks and exit")
    p.add_argument(
        "--workers",
        type=int_at_least(0),
        default=0,
        help="processes (default 0: one per usable CPU); the results are the same for any count",
    )
    p.add_argument("--out", default=None, help="results directory (default results/benchmark/TASK/AGENT)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=benchmark)


def benchmark(args: argparse.Namespace) -> int:
    """Run the task for the agent; print the evaluation and the ladder."""
    from agents.tournament.tasks import TASKS, get_task, rank_in_ladder

    if args.list:
        for task in TASKS.values():
            print(f"{task.name:22s} {task.description}, {task.deals} duplicate deals")
        return 0
    for option, value in (("--agent", args.agent), ("--task", args.task)):
        if value is None:
            print(f"mtrain benchmark: {option} is required (or --list)", file=sys.stderr)
            return 2
    try:
        task = get_task(args.task)
    except ValueError as err:
        print(f"mtrain benchmark: --task: {err}", file=sys.stderr)
        return 2
    out = args.out or str(Path("results") / "benchmark" / task.name / (dir_slug(args.agent) or "agent"))
    problem = output_problem(out, "directory")
    if problem is not None:
        print(f"mtrain benchmark: --out: {problem}", file=sys.stderr)
        return 2
    from agents.tournament.evaluate import evaluation_config
    from agents.tournament.harness import make_plan

    try:  # every agent checked before anything is written
        make_plan(
            evaluation_config(
                args.agent, list(task.opponents), task.players, task.deals, task.seed, task.game()
            )
        )
    except ValueError as err:
        print(f"mtrain benchmark: --agent: {err}", file=sys.stderr)
        return 2
    try:
        result = task.run(args.agent, workers=args.workers, progress=not args.no_progress, out_dir=out)
    except KeyboardInterrupt:
        print("\nmtrain benchmark: interrupted; finished deals are saved, rerun the same command to resume.")
        return 130
    print(f"{task.name}: {task.description}")
    print(result.table())
    print(f"\nladder of {task.name} (penalty pips a round, lower is better):")
    for line in rank_in_ladder(task, result.pips.mean):
        print(f"  {line}")
    print(f"\n  results: {out}")
    return 0
