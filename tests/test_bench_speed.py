"""The speed benchmark's loops run and count steps (figures themselves are never asserted)."""

from __future__ import annotations

import pytest

from mtrain_env import bench_speed


@pytest.mark.parametrize("name", ["core", "raw_env", "env"])
def test_only_runs_one_contender_and_prints_its_steps(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    rates = bench_speed.main(["--only", name, "--seconds", "0.05"])
    assert list(rates) == [name] and rates[name] > 0
    out = capsys.readouterr().out
    assert out.startswith(f"{name}: ") and int(out.split()[1]) > 0


def test_zero_seconds_plays_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """The start-up run subtracted from a perf count plays no step."""
    bench_speed.main(["--only", "core", "--seconds", "0"])
    assert capsys.readouterr().out.split()[1] == "0"


def test_paired_ratio_divides_slice_by_slice() -> None:
    rates = {"openspiel": [10.0, 20.0, 5.0], "raw_env": [30.0, 80.0, 10.0]}
    assert bench_speed.paired_ratio(rates, "raw_env") == [3.0, 4.0, 2.0]


def test_full_run_reports_every_contender_and_both_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    """Two tiny slices of all four contenders: medians, per-slice ratios and the target lines."""
    results = bench_speed.main(["--seconds", "0.2", "--slices", "2"])
    assert {"openspiel", "env", "raw_env", "core", "env_ratio", "raw_env_ratio"} <= set(results)
    assert all(results[name] > 0 for name in ("openspiel", "env", "raw_env", "core"))
    out = capsys.readouterr().out
    assert "raw_env / OpenSpiel" in out and "(target >= 3x)" in out and "rules core alone" in out


def test_zero_slices_is_refused() -> None:
    with pytest.raises(SystemExit):
        bench_speed.main(["--slices", "0"])
