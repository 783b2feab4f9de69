"""``mtrain selfplay`` interrupted: an evaluation cut short is run again on resume (the
curve is the uninterrupted run's), one run writes ``--out`` at a time, and the interrupt
line suggests ``--resume`` only when the run can be resumed."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

import pytest

from mtrain_env.tilegame.files import DirectoryInUseError, run_lock
from tests.selfplay_support import SMALL_RUN
from training.app import main as mtrain
from training.selfplay import run as run_module
from training.selfplay.checkpoint import load_checkpoint, save_checkpoint
from training.selfplay.config import RunOptions
from training.selfplay.learner import SelfPlayConfig

#: 72 decisions an update (6 games of 12 steps): evaluations at 0, 144 and 288
TINY = {"num_players": 3, "max_pips": 6, "num_games": 6, "steps": 12, "hidden": 16, "pair_hidden": 8}
TINY_PPO = {**TINY, "minibatch": 32, "epochs": 1}


def _options() -> RunOptions:
    return RunOptions(
        total_steps=288,
        eval_every=144,
        eval_deals=2,
        eval_opponents=("random",),
        checkpoint_every=0,
        progress=False,
    )


def _curve(out: Path) -> list[dict[str, str]]:
    """curve.csv's rows without ``wall_s`` (the one column a resume may change)."""
    with (out / "curve.csv").open(newline="") as f:
        return [{k: v for k, v in row.items() if k != "wall_s"} for row in csv.DictReader(f)]


def _interrupt_at(monkeypatch: pytest.MonkeyPatch, name: str, call: int) -> None:
    """``run_module.<name>`` raises KeyboardInterrupt at its ``call``-th call."""
    real = getattr(run_module, name)
    calls = [0]

    def interrupted(*args: Any) -> Any:
        calls[0] += 1
        if calls[0] == call:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(run_module, name, interrupted)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The uninterrupted run."""
    out = tmp_path_factory.mktemp("selfplay") / "ref"
    run_module.run_selfplay(SelfPlayConfig(seed=3, **TINY_PPO), out, _options())
    return out


# the evaluation at step 144 (the first is at step 0), before its rows are written (_evaluate)
# or after (plot_curve: the rows are on disk, the plot and TensorBoard are not)
@pytest.mark.parametrize("where", ["_evaluate", "plot_curve"])
def test_an_evaluation_interrupted_after_its_checkpoint_is_run_on_resume(
    reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    out = tmp_path / "run"
    config = SelfPlayConfig(seed=3, **TINY_PPO)
    with monkeypatch.context() as patch:
        _interrupt_at(patch, where, 2)
        with pytest.raises(KeyboardInterrupt):
            run_module.run_selfplay(config, out, _options())
    assert load_checkpoint(out / "checkpoint.pt")["counters"]["env_steps"] == 144
    run_module.run_selfplay(config, out, _options())
    assert [r["env_steps"] for r in _curve(out)] == ["0", "144", "288"]
    assert _curve(out) == _curve(reference)
    assert (out / "policy.npz").read_bytes() == (reference / "policy.npz").read_bytes()


def test_a_checkpoint_without_the_schedule_resumes_as_before(tmp_path: Path, monkeypatch) -> None:
    """Checkpoints written before the schedule was saved: the next multiple of eval_every."""
    out = tmp_path / "run"
    config = SelfPlayConfig(seed=3, **TINY_PPO)
    with monkeypatch.context() as patch:
        _interrupt_at(patch, "_evaluate", 2)
        with pytest.raises(KeyboardInterrupt):
            run_module.run_selfplay(config, out, _options())
    state = load_checkpoint(out / "checkpoint.pt")
    del state["eval"]
    save_checkpoint(state, out / "checkpoint.pt")
    learner = run_module.run_selfplay(config, out, _options())
    assert learner.env_steps == 288
    assert [r["env_steps"] for r in _curve(out)] == ["0", "288"]


def test_a_directory_in_use_is_refused_before_anything_is_read_or_written(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    assert mtrain(["selfplay", "--out", str(out), "--steps", "72", *SMALL_RUN]) == 0
    capsys.readouterr()
    with run_lock(out):  # flock is per open file: this process's own second open is refused too
        before = sorted((p.relative_to(out), p.stat().st_mtime_ns) for p in out.rglob("*"))
        assert mtrain(["selfplay", "--out", str(out), "--steps", "144", "--resume", "--no-progress"]) == 2
        err = capsys.readouterr().err
        expected = f"mtrain selfplay: --out: {out} is in use by pid {os.getpid()} (one run writes"
        assert err.startswith(expected) and err.count("\n") == 1, err
        with pytest.raises(DirectoryInUseError):
            run_module.run_selfplay(SelfPlayConfig(seed=3, **TINY_PPO), out, _options())
        assert sorted((p.relative_to(out), p.stat().st_mtime_ns) for p in out.rglob("*")) == before
    assert mtrain(["selfplay", "--out", str(out), "--steps", "144", "--resume", "--no-progress"]) == 0


def _raise_interrupt(*_args: Any, **_kwargs: Any) -> Any:
    raise KeyboardInterrupt


def test_the_interrupt_line_suggests_resume_only_for_a_run_that_was_set_up(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    monkeypatch.setattr(run_module, "run_selfplay", _raise_interrupt)  # before selfplay.json
    assert mtrain(["selfplay", "--out", str(out), "--steps", "72", *SMALL_RUN]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "mtrain selfplay: interrupted before the run was set up; run the same command again"
    monkeypatch.undo()  # the same command again starts the run; then one interrupted on --resume
    assert mtrain(["selfplay", "--out", str(out), "--steps", "72", *SMALL_RUN]) == 0
    monkeypatch.setattr(run_module, "run_selfplay", _raise_interrupt)
    capsys.readouterr()
    assert mtrain(["selfplay", "--out", str(out), "--steps", "144", "--resume", "--no-progress"]) == 130
    assert capsys.readouterr().err.strip() == (
        f"mtrain selfplay: interrupted; add --resume to continue from the last checkpoint in {out}"
    )


def test_a_run_interrupted_before_its_first_checkpoint_starts_over_without_twice_the_first_rows(
    reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped after the step-0 evaluation wrote its rows, before any checkpoint: the run
    starts over, and its step-0 rows replace those (they were written twice)."""
    out = tmp_path / "run"
    config = SelfPlayConfig(seed=3, **TINY_PPO)
    with monkeypatch.context() as patch:
        _interrupt_at(patch, "plot_curve", 1)  # the step-0 rows are on disk, no checkpoint
        with pytest.raises(KeyboardInterrupt):
            run_module.run_selfplay(config, out, _options())
    assert not (out / "checkpoint.pt").exists() and [r["env_steps"] for r in _curve(out)] == ["0"]
    run_module.run_selfplay(config, out, _options())
    assert _curve(out) == _curve(reference)
