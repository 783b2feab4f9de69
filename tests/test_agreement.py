"""``python -m training.agreement``: two searches' deviations from a prior, position by position."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from training import agreement as tool
from training.agreement import Agreement

pytest.importorskip("numba")

#: a cheap search that deviates from its prior (the planner) often: few rollouts, no gate
SEARCH = "mc[sims=8,z=0]"


def test_summary_counts_the_deviations() -> None:
    moves = Agreement(prior=[1, 1, 1, 1, 2], a=[1, 3, 3, 4, 2], b=[1, 3, 1, 5, 7], gains=[None] * 5)
    s = moves.summary()
    assert s["positions"] == 5 and s["a_deviates"] == 3 and s["b_deviates"] == 3
    assert s["b_same_when_a_deviates"] == pytest.approx(1 / 3)  # the second position
    assert s["b_prior_when_a_deviates"] == pytest.approx(1 / 3)  # the third
    assert s["b_prior_when_a_keeps"] == pytest.approx(1 / 2)  # the first of two


def test_deviations_are_binned_by_the_estimated_gain() -> None:
    # deviations at positions 1-4 with gains 1.0, 3.0, 9.0 and unknown; B reproduces 1 and 3
    moves = Agreement(
        prior=[1, 1, 1, 1, 1, 2],
        a=[1, 3, 3, 4, 6, 2],
        b=[1, 3, 1, 4, 5, 2],
        gains=[None, 1.0, 3.0, 9.0, None, None],
    )
    bins = moves.by_gain()
    assert [(r["low"], r["high"]) for r in bins] == [(None, 2.0), (2.0, 4.0), (4.0, 8.0), (8.0, None)]
    assert [r["count"] for r in bins] == [1, 1, 0, 1]  # the unknown gain is in no bin
    assert [r["b_same"] for r in bins] == [1.0, 0.0, None, 1.0]


def test_the_same_search_on_the_same_worlds_agrees_everywhere() -> None:
    moves = tool.agreement(SEARCH, SEARCH, prior_spec="planner", games=3, b_seed_offset=0)
    s = moves.summary()
    assert s["positions"] > 20 and s["a_deviates"] > 0
    assert moves.a == moves.b
    deviated = [g for p, a, g in zip(moves.prior, moves.a, moves.gains, strict=True) if a != p]
    assert deviated and all(g is not None for g in deviated)  # mc reports its values
    assert all(g is None for p, a, g in zip(moves.prior, moves.a, moves.gains, strict=True) if a == p)
    assert s["b_same_when_a_deviates"] == 1.0 and s["b_prior_when_a_keeps"] == 1.0


def test_other_worlds_change_some_moves_and_the_cli_writes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "agreement.json"
    argv = [SEARCH, SEARCH, "--prior", "planner", "--games", "3", "--no-progress", "--out", str(out)]
    assert tool.main(argv) == 0
    saved = json.loads(out.read_text())
    assert saved["a"] != saved["b"]  # B's worlds differ from A's
    assert len(saved["a"]) == len(saved["prior"]) == saved["positions"]
    assert saved["a"] == tool.agreement(SEARCH, SEARCH, prior_spec="planner", games=3).a  # deterministic
    assert len(saved["gains"]) == saved["positions"] and sum(r["count"] for r in saved["by_gain"]) > 0
    printed = capsys.readouterr().out
    assert "where A deviates, B plays A's move" in printed and "estimated gain" in printed


@pytest.mark.parametrize(
    "argv, message",
    [
        (["plannr", "planner"], "unknown agent 'plannr'"),
        (["planner", "planner", "--games", "0"], "--games"),
        (["planner", "planner", "--out", "/nonexistent/dir/a.json"], "no directory /nonexistent/dir"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        tool.main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err
