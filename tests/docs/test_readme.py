"""The README and the guide document real behaviour, in the form of a front page.

* the observation layout table (docs/env.md), the agent ladder (README.md and
  docs/benchmarks.md, from docs/ladder.csv) and the benchmark tasks' table (docs/evaluate.md,
  from agents/tournament/tasks_ladder.csv) are generated: ``python -m tests.docs.test_readme``
  rewrites them, and the tests fail when they drift;
* the README opens with the two make targets, and CI runs the test one;
* the README stays a front page (<= 400 lines), and no page but the research record
  carries development history (issue or step numbers, load averages);
* every markdown file closes its code blocks.
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import mtrain_env
from tests import REPO

ROOT = REPO
README = ROOT / "README.md"
DOCS = ROOT / "docs"
LADDER_CSV = DOCS / "ladder.csv"
#: the marked, generated blocks: (file, marker) -> the rows between the markers
LAYOUT = (DOCS / "env.md", "layout-table")
LADDERS = ((README, "ladder-table"), (DOCS / "benchmarks.md", "ladder-table"))
TASKS_TABLE = (DOCS / "evaluate.md", "tasks-table")
#: the one page allowed to tell the project's history
RESEARCH = DOCS / "research.md"
#: what a front page or a guide page never says
HISTORY = re.compile(
    r"\bissues?[- ]?#?\d+|(?<![-\w])steps? \(?\d+\b|\bload average|#step-"
    r"|\bsessions? \d+|\bwhere it stands\b",
    flags=re.IGNORECASE,
)


def layout_rows() -> list[str]:
    """The layout table's rows for 4 players, double-12, from the code."""
    layout = mtrain_env.raw_env(num_players=4, max_pips=12).layout
    return [f"| `{name}` | {a}:{b} | {shape} | {doc} |" for name, a, b, shape, doc in layout.as_table()]


def ladder_rows() -> list[str]:
    """The ladder table's rows, from docs/ladder.csv (the one place its figures live)."""
    with LADDER_CSV.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        ci = f" [{r['ci_low']}, {r['ci_high']}]" if r["ci_low"] else ""
        cheats = "**cheats**" if r["cheats"] == "yes" else ""
        out.append(
            f"| `{r['agent']}` | {r['idea']} | {r['ms_per_decision']} | {r['pips_vs_planner']}{ci} "
            f"| {r['measured']} | {cheats} |"
        )
    return out


def task_rows() -> list[str]:
    """The benchmark tasks' table: every shipped agent's pips a round on each full task, from
    agents/tournament/tasks_ladder.csv."""
    from agents.tournament.tasks import LADDER_AGENTS, TASKS, ladder

    full = [name for name in TASKS if "-quick-" not in name]
    cell = {
        (r["task"], r["agent"]): f"{r['pips']:.2f} [{r['pips_lo']:.2f}, {r['pips_hi']:.2f}]" for r in ladder()
    }
    return [f"| `{agent}` | " + " | ".join(cell[(t, agent)] for t in full) + " |" for agent in LADDER_AGENTS]


def _block(text: str, marker: str) -> str:
    return text.split(f"<!-- {marker}:start")[1].split(f"<!-- {marker}:end -->")[0]


def _table_rows(text: str, marker: str) -> list[str]:
    return [line for line in _block(text, marker).splitlines() if line.startswith("| `")]


def rewrite(path: Path, marker: str, rows: list[str]) -> None:
    """Replace the generated rows of ``path``'s ``marker`` block by ``rows``."""
    text = path.read_text(encoding="utf-8")
    old = _block(text, marker)
    kept = [line for line in old.splitlines() if not line.startswith("| `")]
    new = "\n".join([*kept, *rows]) + "\n"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_layout_table_matches_the_code() -> None:
    path, marker = LAYOUT
    assert _table_rows(path.read_text(encoding="utf-8"), marker) == layout_rows()


def test_the_ladder_tables_match_the_csv() -> None:
    rows = ladder_rows()
    assert [r.split("`")[1] for r in rows] == [
        "random", "greedy", "planner", "mc", "ismcts", "champion", "champion_policy", "ppo", "oracle",
        "openspiel_ismcts",
    ]  # fmt: skip
    for path, marker in LADDERS:
        assert _table_rows(path.read_text(encoding="utf-8"), marker) == rows, path


def test_the_task_table_matches_the_ladder_file() -> None:
    path, marker = TASKS_TABLE
    assert _table_rows(path.read_text(encoding="utf-8"), marker) == task_rows()


def test_the_readme_opens_with_the_two_make_targets_and_ci_runs_the_test_one() -> None:
    readme = README.read_text(encoding="utf-8")
    commands = re.findall(r"^make (\w+)", readme, flags=re.MULTILINE)
    assert commands[:2] == ["demo", "test"]
    makefile = (ROOT / "Makefile").read_text()
    for target in commands[:2]:
        assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE)
    ci = (ROOT / ".ci" / "run").read_text()
    assert [line for line in ci.splitlines() if line and not line.startswith(("#", "set ", "cd "))] == [
        "make test"
    ]


def test_the_readme_is_a_front_page() -> None:
    readme = README.read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 400
    for page in ("install", "env", "variants", "agents", "tournaments", "training", "replays", "ecosystem",
                 "benchmarks", "architecture", "contributing", "research"):  # fmt: skip
        assert f"](docs/{page}.md)" in readme, page


def _history_pages() -> list[Path]:
    return [README, *sorted(p for p in DOCS.rglob("*.md") if p != RESEARCH)]


def test_the_history_check_finds_what_it_looks_for() -> None:
    history = ["as issue 12 asks", "see step 21", "load average 1.5", "[x](champion.md#step-3)"]
    history += ["the issue-10 target", "in session 29", "where it stands", "Step (5): the network"]
    for line in history:
        assert HISTORY.search(line), line
    for line in (
        "every step of random play",
        "200 rollouts",
        "mtrain train --steps 1000",
        "64 steps a rollout",
    ):
        assert not HISTORY.search(line), line


def test_no_page_but_the_research_record_tells_history() -> None:
    found = []
    for path in _history_pages():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if HISTORY.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert found == []


def _fence_errors(text: str) -> list[str]:
    """Code fences that do not pair up: a fence with an info string (```bash) where a block
    is open can only be content, and a block left open swallows every heading after it."""
    errors: list[str] = []
    opened = 0
    for number, line in enumerate(text.splitlines(), 1):
        fence = line.strip()
        if not fence.startswith("```"):
            continue
        if opened and fence != "```":
            errors.append(f"line {number}: {fence!r} inside the block opened at line {opened}")
        opened = 0 if opened else number
    if opened:
        errors.append(f"the block opened at line {opened} is never closed")
    return errors


def test_fence_check_finds_a_block_left_open() -> None:
    assert _fence_errors("```bash\nx\n```\n") == []
    assert _fence_errors("```\nout\n\n## Heading\n\n```bash\ncmd\n```\n")[0].startswith("line 6")
    assert _fence_errors("text\n```\nout\n") == ["the block opened at line 2 is never closed"]


def test_every_markdown_file_closes_its_code_blocks() -> None:
    files = [p for p in ROOT.rglob("*.md") if not {".venv", "site", "node_modules"} & set(p.parts)]
    assert README in files and RESEARCH in files
    for path in files:
        assert _fence_errors(path.read_text(encoding="utf-8")) == [], path


if __name__ == "__main__":  # python -m tests.docs.test_readme: regenerate the generated tables
    rewrite(*LAYOUT, layout_rows())
    for path, marker in LADDERS:
        rewrite(path, marker, ladder_rows())
    rewrite(*TASKS_TABLE, task_rows())
    sys.exit(0)
