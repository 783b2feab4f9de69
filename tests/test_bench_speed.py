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
