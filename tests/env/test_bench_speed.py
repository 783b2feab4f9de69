"""The speed benchmark's loops run and count steps (figures themselves are never asserted)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from mtrain_env import bench_speed

HAS_NUMBA = importlib.util.find_spec("numba") is not None
needs_numba = pytest.mark.skipif(not HAS_NUMBA, reason="numba (the fast extra) is not installed")

PURE = ["core", "raw_env", "env"]
COMPILED = ["env_compiled", "compiled_core", "batch_1", "batch_64", "batch_1024"]


@pytest.mark.parametrize("name", PURE + [pytest.param(c, marks=needs_numba) for c in COMPILED])
def test_only_runs_one_contender_and_prints_its_steps(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    rates = bench_speed.main(["--only", name, "--seconds", "0.05"])
    assert list(rates) == [name] and rates[name] > 0
    out = capsys.readouterr().out
    assert out.startswith(f"{name}: ") and int(out.split()[1]) > 0


def test_compiled_contenders_are_named_for_every_batch_size() -> None:
    assert list(bench_speed.COMPILED) == COMPILED


@pytest.mark.parametrize("name", ["core", *(pytest.param(c, marks=needs_numba) for c in COMPILED[:2])])
def test_zero_seconds_plays_nothing(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The start-up run subtracted from a perf count plays no step (warm-up is not counted)."""
    bench_speed.main(["--only", name, "--seconds", "0"])
    assert capsys.readouterr().out.split()[1] == "0"


def test_paired_ratio_divides_slice_by_slice() -> None:
    rates = {"openspiel": [10.0, 20.0, 5.0], "raw_env": [30.0, 80.0, 10.0], "batch_1": [60.0, 40.0, 30.0]}
    assert bench_speed.paired_ratio(rates, "raw_env") == [3.0, 4.0, 2.0]
    assert bench_speed.paired_ratio(rates, "batch_1", "raw_env") == [2.0, 0.5, 3.0]


def test_verdict_says_met_only_at_or_above_the_target() -> None:
    assert bench_speed._verdict(3_000_000, bench_speed.TARGET_COMPILED_CORE) == "met"
    assert bench_speed._verdict(2_999_999, bench_speed.TARGET_COMPILED_CORE) == "MISSED"


@needs_numba
def test_full_run_reports_every_contender_ratios_and_targets(capsys: pytest.CaptureFixture[str]) -> None:
    """Two tiny slices of all nine contenders: medians, both ratios each, every target line."""
    results = bench_speed.main(["--seconds", "0.2", "--slices", "2"])
    contenders = ["openspiel", "env", "raw_env", "core", *COMPILED]
    assert all(results[name] > 0 for name in contenders)
    for name in ["core", *COMPILED]:
        assert results[f"{name}_ratio"] > 0 and results[f"{name}_raw_env_ratio"] > 0
    assert results["env_ratio"] > 0 and results["raw_env_ratio"] > 0
    out = capsys.readouterr().out
    assert "compiled contenders ready in" in out and "skipped" not in out
    for name in contenders:
        assert f"\n  {name} " in out
    assert "raw_env / OpenSpiel" in out and "(target >= 3x)" in out and "(target >= 2x)" in out
    assert "rules core alone" in out and "(target >= 100,000)" in out
    assert "compiled core alone" in out and "(target >= 3,000,000)" in out
    assert results["env_compiled_env_ratio"] > 0 and "env(backend='compiled') / env()" in out
    assert "batched API, one core" in out and "(target >= 500,000)" in out


def _without_numba(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import numba`` fail as on an install without the fast extra."""
    monkeypatch.setitem(sys.modules, "numba", None)

    def refuse(*_args: object, **_kw: object) -> None:
        raise AssertionError("compiled contenders built without numba")

    monkeypatch.setattr(bench_speed, "compiled_contenders", refuse)


def test_numba_missing_names_the_fast_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    if HAS_NUMBA:
        assert bench_speed.numba_missing() is None
    _without_numba(monkeypatch)
    reason = bench_speed.numba_missing()
    assert reason is not None and "fast" in reason


def test_without_numba_the_compiled_contenders_are_skipped_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _without_numba(monkeypatch)
    results = bench_speed.main(["--seconds", "0.08", "--slices", "2"])
    assert {"openspiel", "env", "raw_env", "core"} <= set(results)
    assert not any(key.startswith(("compiled_core", "batch_")) for key in results)
    out = capsys.readouterr().out
    skipped = [line for line in out.splitlines() if "skipped" in line]
    assert len(skipped) == 1 and "numba" in skipped[0] and "fast" in skipped[0]
    assert "rules core alone" in out and "compiled core alone" not in out and "batched API" not in out


@pytest.mark.parametrize("name", COMPILED)
def test_without_numba_only_a_compiled_contender_is_refused(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _without_numba(monkeypatch)
    with pytest.raises(SystemExit):
        bench_speed.main(["--only", name, "--seconds", "0"])
    assert "fast" in capsys.readouterr().err


def test_only_a_pure_contender_does_not_build_the_compiled_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench_speed, "compiled_contenders", lambda *_a: pytest.fail("built"))
    assert bench_speed.main(["--only", "core", "--seconds", "0"]) == {"core": 0.0}


def test_zero_slices_is_refused() -> None:
    with pytest.raises(SystemExit):
        bench_speed.main(["--slices", "0"])


def test_the_order_of_the_contenders_is_reversed_every_other_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drifting load hits every contender alike: openspiel first, then last, and so on."""
    order: list[str] = []

    def recorded(name: str):  # type: ignore[no-untyped-def]
        def run(seconds: float) -> tuple[float, int]:
            order.append(name)
            return 1.0, 1

        return run

    monkeypatch.setattr(bench_speed, "missing_extra", lambda *_: None)
    monkeypatch.setattr(bench_speed, "numba_missing", lambda: "not for this test")
    monkeypatch.setattr(bench_speed, "bench_openspiel", recorded("openspiel"))
    monkeypatch.setattr(bench_speed, "bench_core", lambda _n, sec: recorded("core")(sec))
    monkeypatch.setattr(bench_speed, "bench_aec", lambda make, sec: recorded(type(make()).__name__)(sec))
    bench_speed.main(["--seconds", "0.3", "--slices", "3"])
    first = order[:4]
    assert len(set(first)) == 4 and first[0] == "openspiel" and first[-1] == "core"
    assert order == first + first[::-1] + first
