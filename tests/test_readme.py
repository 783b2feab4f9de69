"""The README documents real behaviour: its layout table and its set-up commands."""

from __future__ import annotations

import re
from pathlib import Path

import mtrain_env

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _layout_rows() -> list[str]:
    layout = mtrain_env.raw_env(num_players=4, max_pips=12).layout
    return [f"| `{name}` | {a}:{b} | {shape} | {doc} |" for name, a, b, shape, doc in layout.as_table()]


def test_readme_layout_table_matches_the_code() -> None:
    block = README.split("<!-- layout-table:start")[1].split("<!-- layout-table:end -->")[0]
    rows = [line for line in block.splitlines() if line.startswith("| `")]
    assert rows == _layout_rows()


def test_readme_opens_with_the_two_make_targets_and_ci_runs_the_test_one() -> None:
    commands = re.findall(r"^make (\w+)", README, flags=re.MULTILINE)
    assert commands[:2] == ["demo", "test"]
    makefile = (ROOT / "Makefile").read_text()
    for target in commands[:2]:
        assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE)
    ci = (ROOT / ".ci" / "run").read_text()
    assert [line for line in ci.splitlines() if line and not line.startswith(("#", "set ", "cd "))] == [
        "make test"
    ]


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
    assert ROOT / "README.md" in files and ROOT / "docs" / "champion.md" in files
    for path in files:
        assert _fence_errors(path.read_text(encoding="utf-8")) == [], path
