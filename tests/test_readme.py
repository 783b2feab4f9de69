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
