"""The differential run of the two backends (``python -m tests.compiled.backend_diff``): a small
part of it, and proof that it catches a difference in what an agent sees, in the legal moves and in the
hidden state alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mtrain_env.mexican_train.core.config import PRESETS, VARIANT_FLAGS
from tests.compiled import backend_diff

pytest.importorskip("numba")
from mtrain_env.mexican_train.compiled import engine


def test_a_small_run_finds_no_difference() -> None:
    result = backend_diff.run(1500, seed=3, progress=False)
    assert result.differences == []
    assert result.decisions >= 1500 and result.episodes >= backend_diff.CHUNK
    assert result.steps >= result.decisions


def test_coverage_configs_span_the_issue() -> None:
    """Every preset, every flag alone, 2-8 players, every set size, sessions, reward modes."""
    configs = backend_diff.coverage_configs()
    assert {c.get("rules") for c in configs} >= set(PRESETS)
    for flag in VARIANT_FLAGS:
        assert any(c.get(flag) is True and len(set(c) & set(VARIANT_FLAGS)) == 1 for c in configs), flag
    assert {c["num_players"] for c in configs} >= set(range(2, 9))
    assert {c.get("max_pips", 12) for c in configs} >= {6, 9, 12, 15, 18}
    assert max(c.get("rounds", 1) for c in configs) >= 7
    assert backend_diff.episode_config(0, 5000) == backend_diff.episode_config(0, 5000)
    assert backend_diff.episode_config(0, 5000) != backend_diff.episode_config(1, 5000)


def _perturbed(kind: str, at: int) -> Any:
    """``make_env`` whose compiled env goes wrong at its ``at``-th fused step."""
    real_make = backend_diff.make_env

    def make(backend: str, kwargs: dict[str, Any]) -> Any:
        e = real_make(backend, kwargs)
        if backend != "compiled":
            return e
        raw = e.unwrapped
        fused = raw._fused
        calls = [0]

        def wrong(
            s: np.ndarray, tb: np.ndarray, action: int, moves: Any, obs: Any, masks: Any, row: int
        ) -> int:
            code = fused(s, tb, action, moves, obs, masks, row)
            calls[0] += 1
            if calls[0] == at and code >= 0:
                if kind == "observation":
                    obs[0] = 1.0 - obs[0]
                elif kind == "mask":
                    masks[row, np.flatnonzero(masks[row])[0]] = (
                        0  # the block is writable, its rows handed out are not
                    )
                elif kind == "hidden" and s[engine.S_BONE_LEN] >= 2:
                    b = engine.S_BONEYARD
                    s[b], s[b + 1] = s[b + 1], s[b]  # the boneyard order: seen by no observation
            return code

        raw._fused = wrong
        return e

    return make


@pytest.mark.parametrize(
    ("kind", "field"),
    [("observation", "observation"), ("mask", "action_mask (the legal moves)"), ("hidden", "state_dict()")],
)
def test_a_perturbed_backend_is_caught(monkeypatch: pytest.MonkeyPatch, kind: str, field: str) -> None:
    monkeypatch.setattr(backend_diff, "make_env", _perturbed(kind, at=5))
    result = backend_diff.run(400, seed=0, progress=False)
    assert result.differences, "the perturbation went unnoticed"
    first = result.differences[0]
    assert f"{field} differs" in first and "episode 0 " in first and "replay:" in first


def test_main_prints_the_summary_and_refuses_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert backend_diff.main(["--episodes", "1", "--first-episode", "7"]) == 0
    assert "decisions" in capsys.readouterr().out
    with pytest.raises(SystemExit) as err:
        backend_diff.main(["--decisions", "0"])
    assert err.value.code == 2
    assert "--decisions: must be an int >= 1" in capsys.readouterr().err
