"""Named benchmark tasks: fixed tables, lineups and duplicate deals, so scores are comparable.

A task fixes everything but the agent under test: the table (players, set, rules, one round
a game), the opponents in the other seats, the number of duplicate deals and the seed that
deals them (the user's seed plays no part). Two runs of a task, anywhere, play the same
deals from the same seats; a score is quoted as "pips a round on ``mt4-planner-v1``".
A task never changes: a different definition is a new name (the ``-vN`` suffix). Each
``-quick`` task plays the first deals of its full task, for smoke runs.

The shipped agents' scores on every task are in ``tasks_ladder.csv`` beside this module
(:func:`ladder`), written by ``python -m agents.tournament.tasks --write-ladder``.
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.tournament.evaluate import Evaluation, evaluate
from agents.tournament.harness import dir_slug
from mtrain_env.mexican_train import GameConfig
from mtrain_env.tilegame.files import atomic_write

__all__ = ["LADDER_AGENTS", "LADDER_FILE", "TASKS", "Task", "get_task", "ladder", "rank_in_ladder"]

#: the committed scores of the shipped agents on every task
LADDER_FILE = Path(__file__).with_name("tasks_ladder.csv")
#: the agents whose scores the ladder file holds (``champion_policy``: ``ppo`` on the table's
#: shipped network, which every task's table has)
LADDER_AGENTS: tuple[str, ...] = (
    "random",
    "greedy",
    "planner",
    "mc[sims=200]",
    "champion_policy",
    "champion",
)
#: the ladder file's columns: the task, the agent, the baseline its gain is over, the counts,
#: its penalty pips a round and its gain over the baseline (pips a round), each with its 95% interval
LADDER_FIELDS: tuple[str, ...] = tuple(
    [
        "task",
        "agent",
        "baseline",
        "deals",
        "rounds",
        "pips",
        "pips_lo",
        "pips_hi",
        "gain",
        "gain_lo",
        "gain_hi",
    ]
)
#: the ladder file's columns that hold numbers
_NUMBERS = LADDER_FIELDS[3:]


@dataclass(frozen=True)
class Task:
    """One benchmark task: the agent under test in seat 0's lineup slot, ``opponents`` in
    the others, every rotation of ``deals`` duplicate deals dealt from ``seed``."""

    name: str
    description: str
    players: int
    opponents: tuple[str, ...]  #: one spec per other seat
    deals: int
    seed: int
    max_pips: int = 12
    rules: str = "pagat"

    def game(self) -> GameConfig:
        """The task's table."""
        return GameConfig.make(num_players=self.players, max_pips=self.max_pips, rules=self.rules)

    def run(self, agent: Any, workers: int = 1, progress: bool = False, out_dir: Any = None) -> Evaluation:
        """Score ``agent`` (anything :func:`~agents.tournament.evaluate.evaluate` takes) on this task."""
        return evaluate(
            agent,
            opponents=list(self.opponents),
            players=self.players,
            deals=self.deals,
            seed=self.seed,
            workers=workers,
            game=self.game(),
            out_dir=out_dir,
            progress=progress,
        )


def _with_quick(task: Task, deals: int = 10) -> list[Task]:
    quick = Task(
        task.name.replace("-v", "-quick-v"),
        f"the first {deals} deals of {task.name}",
        task.players,
        task.opponents,
        deals,
        task.seed,
        task.max_pips,
        task.rules,
    )
    return [task, quick]


#: every task by name (the seeds were used by no tuning run)
TASKS: dict[str, Task] = {
    t.name: t
    for full in (
        Task("mt4-planner-v1", "you + 3 planners, 4 players, double-12", 4, ("planner",) * 3, 500, 7919),
        Task("mt4-mixed-v1", "you + mc + planner + greedy, 4 players, double-12", 4,
             ("mc", "planner", "greedy"), 250, 3571),
        Task("mt2-planner-v1", "you against planner, 2 players, double-12", 2, ("planner",), 1000, 6007),
        Task("mt6-planner-v1", "you + 5 planners, 6 players, double-12", 6, ("planner",) * 5, 400, 8861),
    )
    for t in _with_quick(full)
}  # fmt: skip


def get_task(name: str) -> Task:
    """The task called ``name``; ``ValueError`` listing the tasks for any other name."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; tasks: {', '.join(TASKS)}")
    return TASKS[name]


def ladder_row(task: Task, agent: str, evaluation: Evaluation) -> dict[str, Any]:
    """One row of the ladder file: the agent's pips a round and its gain over the task's
    first opponent (the baseline), with their 95% intervals."""
    baseline, g = next(iter(evaluation.gains.items()))
    p = evaluation.pips
    values = (evaluation.deals, evaluation.rounds, p.mean, p.lo, p.hi, g.mean, g.lo, g.hi)
    return {
        "task": task.name,
        "agent": agent,
        "baseline": baseline,
        **dict(zip(_NUMBERS, values, strict=True)),
    }


def ladder(path: Path = LADDER_FILE) -> list[dict[str, Any]]:
    """The committed scores: one row per task and shipped agent (numbers as floats)."""
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    for row in rows:
        for key in _NUMBERS:
            row[key] = float(row[key])
    return rows


def rank_in_ladder(task: Task, pips: float, rows: Sequence[dict[str, Any]] | None = None) -> list[str]:
    """The task's ladder from best to worst (lowest pips a round first), with ``you`` placed
    by ``pips``: lines such as ``"2. you 24.10"``."""
    entries = [
        (r["pips"], r["agent"]) for r in (rows if rows is not None else ladder()) if r["task"] == task.name
    ]
    entries.append((pips, "you"))
    entries.sort(key=lambda e: (e[0], e[1] != "you"))
    return [f"{i}. {name} {value:.2f}" for i, (value, name) in enumerate(entries, 1)]


def write_ladder(
    names: Sequence[str],
    agents: Sequence[str],
    workers: int,
    path: Path = LADDER_FILE,
    runs: Path | None = None,
) -> None:
    """Measure ``agents`` on the tasks ``names`` and write (or update) the ladder file; with
    ``runs``, each run's results go to ``runs/TASK/AGENT`` (an interrupted ladder resumes)."""
    rows = {(r["task"], r["agent"]): r for r in ladder(path)} if path.exists() else {}
    for name in names:
        task = get_task(name)
        for agent in agents:
            print(f"{task.name}: {agent}", file=sys.stderr, flush=True)
            out = None if runs is None else runs / task.name / dir_slug(agent)
            rows[(task.name, agent)] = ladder_row(task, agent, task.run(agent, workers, True, out))
            _write(path, rows)


def _write(path: Path, rows: dict[tuple[str, str], dict[str, Any]]) -> None:
    order = {name: i for i, name in enumerate(TASKS)}
    out = io.StringIO()
    writer = csv.DictWriter(out, LADDER_FIELDS, lineterminator="\n")
    writer.writeheader()
    for key in sorted(rows, key=lambda k: (order.get(k[0], len(order)), k[1])):
        row = rows[key]
        writer.writerow({k: _cell(k, row[k]) for k in LADDER_FIELDS})
    atomic_write(path, out.getvalue().encode())


def _cell(key: str, value: Any) -> str:
    """A ladder file's cell: the counts (deals, rounds) as ints, other numbers to 4 decimals
    (no "-0.0000")."""
    if key in ("deals", "rounds"):
        return str(int(value))
    return f"{round(value, 4) + 0.0:.4f}" if isinstance(value, float) else str(value)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agents.tournament.tasks --write-ladder [--tasks ...] [--agents ...]``."""
    from mtrain_env.tilegame.argtypes import OneLineErrorParser, int_at_least

    parser = OneLineErrorParser(prog="python -m agents.tournament.tasks", description=__doc__)
    parser.add_argument("--write-ladder", action="store_true", help="measure and write tasks_ladder.csv")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--agents", nargs="+", default=list(LADDER_AGENTS))
    parser.add_argument("--workers", type=int_at_least(0), default=1)
    parser.add_argument("--out", type=Path, default=LADDER_FILE, help="the ladder file to write")
    parser.add_argument(
        "--runs", type=Path, default=None, help="keep each run's results under RUNS/TASK/AGENT"
    )
    args = parser.parse_args(argv)
    if not args.write_ladder:
        for task in TASKS.values():
            print(f"{task.name:22s} {task.description} ({task.deals} deals)")
        return 0
    write_ladder(args.tasks, args.agents, args.workers, args.out, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
