"""One-call evaluation (agents/tournament/evaluate.py): the same numbers as ``mtrain bench``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.custom import from_policy
from agents.tournament import evaluate
from training.app import main


def test_evaluate_and_mtrain_bench_give_the_same_results(tmp_path: Path) -> None:
    result = evaluate("greedy", opponents="planner", players=4, deals=4, seed=11, out_dir=tmp_path / "e")
    argv = ["bench", "--agents", "greedy", "planner", "--lineup", "greedy", "planner", "planner", "planner"]
    argv += ["--deals", "4", "--seed", "11", "--out", str(tmp_path / "b"), "--no-progress", "--workers", "1"]
    assert main(argv) == 0
    for name in ("results.csv", "results.sha256"):
        assert (tmp_path / "e" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    summary = result.result.summary
    greedy = next(a for a in summary["agents"] if a["agent"] == "greedy")
    assert result.pips.mean == greedy["mean_penalty"]["mean"]
    assert result.rounds == 16 and result.deals == 4
    pair = summary["pairwise"][0]
    diff = pair["mean_diff"]["mean"] if pair["b"] == "greedy" else -pair["mean_diff"]["mean"]
    assert result.gains["planner"].mean == pytest.approx(diff)
    assert result.gains["planner"].lo <= result.gains["planner"].mean <= result.gains["planner"].hi
    text = str(result)
    assert "greedy in 4-player games, 4 duplicate deals (16 rounds)" in text and "better than planner" in text


def test_mixed_opponents_and_a_callable() -> None:
    result = evaluate(
        lambda obs, mask: int(np.flatnonzero(mask)[-1]),
        opponents=["greedy", "planner", "planner"],
        deals=2,
        seed=3,
    )
    assert result.agent == "<lambda>"
    assert set(result.gains) == {"greedy", "planner"}
    assert result.result.plan.labels == ("<lambda>", "greedy", "planner")
    same = evaluate("planner", opponents="planner", deals=2, seed=3)
    assert set(same.gains) == {"planner (opponent)"} and same.gains[
        "planner (opponent)"
    ].mean == pytest.approx(0.0, abs=1e-9)


def test_bad_arguments_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="opponents names 2 seats; 4 players leave 3"):
        evaluate("greedy", opponents=["planner", "planner"], deals=1)
    with pytest.raises(ValueError, match="mc: sims must be an int"):
        evaluate("mc[sims=abc]", deals=1)
    with pytest.raises(ValueError, match="only the evaluated agent is an object"):
        evaluate("greedy", opponents=[from_policy(lambda o, m: 0, "x")] * 3, deals=1)  # type: ignore[list-item]
