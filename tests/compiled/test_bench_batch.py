"""The batched benchmark runs end to end and reports a rate for every contender."""

from __future__ import annotations

import pytest

pytest.importorskip("numba")

from mtrain_env.mexican_train import bench_batch


def test_bench_batch_reports_every_contender(capsys: pytest.CaptureFixture[str]) -> None:
    results = bench_batch.main(
        ["--seconds", "0.4", "--slices", "2", "--batch", "1", "16", "--players", "3", "--processes", "0"]
    )
    assert set(results) == {"batch B=1", "batch B=16", "raw_env"}
    assert all(rate > 0 for rate in results.values())
    out = capsys.readouterr().out
    assert "3-player double-12" in out and "x raw_env" in out and "target" in out
