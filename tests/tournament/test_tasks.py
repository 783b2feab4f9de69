"""Named benchmark tasks (agents/tournament/tasks.py) and ``mtrain benchmark``."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from agents.tournament import tasks
from agents.tournament.tasks import LADDER_AGENTS, TASKS, get_task, ladder, ladder_row, rank_in_ladder
from training.app import main

QUICK = [name for name in TASKS if "-quick-" in name]
#: agents cheap enough to replay every quick task in the default run (all are deterministic)
REPLAYED = ["random", "greedy", "planner", "champion_policy"]
#: the search agents, seeded and so deterministic too, replayed in the slow run
SEARCHED = [pytest.param(a, marks=pytest.mark.slow) for a in ("mc[sims=200]", "champion")]


def test_tasks_are_versioned_and_each_quick_task_plays_the_first_deals_of_its_task() -> None:
    assert len(QUICK) == 4 and len(TASKS) == 8
    for name, task in TASKS.items():
        assert name == task.name and name.endswith("-v1")
        assert len(task.opponents) == task.players - 1
    for name in QUICK:
        quick, full = TASKS[name], TASKS[name.replace("-quick", "")]
        assert (quick.seed, quick.opponents, quick.players) == (full.seed, full.opponents, full.players)
        assert quick.deals < full.deals
    assert len({t.seed for t in TASKS.values()}) == 4  # one seed a table and lineup


def test_an_unknown_task_is_refused_listing_the_tasks() -> None:
    with pytest.raises(ValueError, match=r"unknown task 'mt4'; tasks: mt4-planner-v1, mt4-planner-quick-v1"):
        get_task("mt4")


def test_the_ladder_file_covers_every_task_and_shipped_agent_once() -> None:
    rows = [(r["task"], r["agent"]) for r in ladder()]
    assert sorted(rows) == sorted((t, a) for t in TASKS for a in LADDER_AGENTS)


def test_the_ladder_file_is_written_as_the_writer_writes_it(tmp_path: Path) -> None:
    """Counts as ints, other numbers to 4 decimals, rows in task order: rewriting the
    committed file from its own rows changes no byte."""
    rows = {(r["task"], r["agent"]): r for r in ladder()}
    tasks._write(tmp_path / "ladder.csv", rows)
    assert (tmp_path / "ladder.csv").read_bytes() == tasks.LADDER_FILE.read_bytes()
    assert ",500,2000," in tasks.LADDER_FILE.read_text() and "-0.0000" not in tasks.LADDER_FILE.read_text()


@pytest.mark.parametrize("name", QUICK)
@pytest.mark.parametrize("agent", [*REPLAYED, *SEARCHED])
def test_a_quick_task_replays_the_committed_ladder_exactly(name: str, agent: str) -> None:
    task = get_task(name)
    committed = next(r for r in ladder() if r["task"] == name and r["agent"] == agent)
    measured = ladder_row(task, agent, task.run(agent))
    for key, value in measured.items():
        expected = committed[key]
        assert (round(value, 4) if isinstance(value, float) else value) == expected or value == expected, key


def test_a_rank_places_you_among_the_shipped_agents() -> None:
    rows = [{"task": "t", "agent": "a", "pips": 20.0}, {"task": "t", "agent": "b", "pips": 30.0}]
    task = type("T", (), {"name": "t"})()
    assert rank_in_ladder(task, 25.0, rows) == ["1. a 20.00", "2. you 25.00", "3. b 30.00"]  # type: ignore[arg-type]


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_mtrain_benchmark_prints_the_score_and_its_rank(tmp_path: Path) -> None:
    argv = ["benchmark", "--agent", "greedy", "--task", "mt2-planner-quick-v1", "--workers", "1"]
    code, out, _ = _run([*argv, "--out", str(tmp_path / "g"), "--no-progress"])
    assert code == 0
    committed = next(r for r in ladder() if r["task"] == "mt2-planner-quick-v1" and r["agent"] == "greedy")
    assert f"penalty pips a round  {committed['pips']:.2f}" in out
    assert "ladder of mt2-planner-quick-v1" in out and f"you {committed['pips']:.2f}" in out
    code, out, _ = _run(["benchmark", "--list"])
    assert code == 0 and all(name in out for name in TASKS)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--agent", "greedy", "--task", "mt9"], "mtrain benchmark: --task: unknown task 'mt9'"),
        (
            ["--agent", "mc[sims=abc]", "--task", "mt4-planner-quick-v1"],
            "mtrain benchmark: --agent: mc: sims",
        ),
        (["--task", "mt4-planner-quick-v1"], "mtrain benchmark: --agent is required"),
    ],
)
def test_mtrain_benchmark_refuses_in_one_line(argv: list[str], says: str, tmp_path: Path) -> None:
    code, _, err = _run(["benchmark", *argv, "--out", str(tmp_path / "x")])
    assert code == 2 and err.startswith(says) and err.count("\n") == 1, err
    assert not (tmp_path / "x").exists()
