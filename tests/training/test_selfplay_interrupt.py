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


# ------------------------------------------------ a run that cannot be continued exactly
def _files(out: Path) -> dict[str, tuple[int, int]]:
    """The run's files with sizes and mtimes, but the lock (taken before the run is read)."""
    return {
        str(p.relative_to(out)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(out.rglob("*"))
        if p.name != ".lock"
    }


def _resume_refused(out: Path, capsys: pytest.CaptureFixture[str], says: str) -> None:
    """``mtrain selfplay --resume`` on ``out``: exit 2, one line ``says``, nothing changed."""
    before = _files(out)
    capsys.readouterr()
    assert mtrain(["selfplay", "--out", str(out), "--resume", "--steps", "432", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err == f"mtrain selfplay: --resume: {says}\n", err
    assert _files(out) == before


def _copy_run(reference: Path, out: Path) -> Path:
    import shutil

    shutil.copytree(reference, out)
    return out


@pytest.mark.parametrize("left", ["everything", "policy.npz"])
def test_a_run_past_step_0_without_its_checkpoint_is_refused_not_restarted(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], left: str
) -> None:
    """Starting over would replace policy.npz, cut the curve and mix the policy files of two runs."""
    out = _copy_run(reference, tmp_path / "run")
    (out / "checkpoint.pt").unlink()
    progress = "curve.csv rows up to step 288, policies/step_000000000288.npz and 1 more, policy.npz"
    if left == "policy.npz":  # the final policy alone (a run without evaluations) shows progress too
        for name in ("curve.csv", "policies/step_000000000144.npz", "policies/step_000000000288.npz"):
            (out / name).unlink()
        progress = "policy.npz"
    says = (
        f"{out / 'checkpoint.pt'}: missing, but the run went past step 0 ({progress}): it cannot be "
        "continued exactly without it, and starting over would mix two runs; restore it or use a new --out"
    )
    _resume_refused(out, capsys, says)


#: curve.csv's third line (the step-144 row) replaced: (the line, what the refusal says)
BAD_ROWS = {
    "garbage": ("garbage line", "expected 11 fields, got 1"),
    "short": ("144,1.0,36,random,2", "expected 11 fields, got 5"),
    "step": ("x,1.0,36,random,2,6,5.0,9.0,-4.0,-6.0,-2.0", "column 'env_steps': 'x' is not a valid value"),
    "negative": ("-144,1.0,36,random,2,6,5.0,9.0,-4.0,-6.0,-2.0", "column 'env_steps': '-144' is not"),
    "no-name": ("144,1.0,36,,2,6,5.0,9.0,-4.0,-6.0,-2.0", "column 'opponent': '' is not a valid value"),
    "inf": ("144,1.0,36,random,2,6,inf,9.0,-4.0,-6.0,-2.0", "column 'learner_score': 'inf' is not"),
    "order": ("432,1.0,36,random,2,6,5.0,9.0,-4.0,-6.0,-2.0", "env_steps 288 comes after 432"),
}


@pytest.mark.parametrize(("line", "says"), BAD_ROWS.values(), ids=BAD_ROWS.keys())
def test_a_damaged_curve_row_is_refused_naming_the_file_and_line(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, says: str
) -> None:
    out = _copy_run(reference, tmp_path / "run")
    lines = (out / "curve.csv").read_text().splitlines()
    lines[2] = line
    (out / "curve.csv").write_text("\n".join(lines) + "\n")
    before = _files(out)
    assert mtrain(["selfplay", "--out", str(out), "--resume", "--steps", "432", "--no-progress"]) == 2
    err = capsys.readouterr().err
    number = 4 if line.startswith("432,") else 3  # the step-288 row after it is out of order
    assert err.startswith(f"mtrain selfplay: --resume: {out / 'curve.csv'}:{number}: {says}"), err
    assert err.count("\n") == 1 and _files(out) == before


def test_the_temporary_files_of_killed_writes_are_removed_on_the_next_start(
    reference: Path, tmp_path: Path
) -> None:
    """Ours only (``.<name>.<pid>.<8 hex>.tmp``), anywhere in the run; other files are kept."""
    out = _copy_run(reference, tmp_path / "run")
    ours = [out / ".checkpoint.pt.4194305.0123abcd.tmp", out / "policies" / ".policy.npz.7.deadbeef.tmp"]
    theirs = [out / "notes.tmp", out / ".checkpoint.pt.tmp", out / ".curve.csv.12.xyz.tmp"]
    for path in ours + theirs:
        path.write_bytes(b"half a file")
    options = _options()
    run_module.run_selfplay(SelfPlayConfig(seed=3, **TINY_PPO), out, options)
    assert [p for p in ours if p.exists()] == [] and all(p.exists() for p in theirs)


def test_the_progress_bar_of_a_run_bounded_by_minutes_counts_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its total is the time budget, brought down to when the steps run out: the ETA is real."""
    import tqdm

    bars: list[Any] = []

    class Bar:
        def __init__(self, total: float, unit: str, **_kwargs: Any) -> None:
            self.total, self.unit, self.n, self.totals = total, unit, 0.0, [total]
            bars.append(self)

        def update(self, n: float) -> None:
            self.n += n
            self.totals.append(self.total)

        def set_postfix_str(self, _text: str) -> None:
            pass

        def write(self, _text: str) -> None:
            pass

        def close(self) -> None:
            pass

    monkeypatch.setattr(tqdm, "tqdm", Bar)
    options = RunOptions(total_steps=144, max_minutes=5.0, eval_every=0, progress=True)
    run_module.run_selfplay(SelfPlayConfig(seed=3, **TINY_PPO), tmp_path / "run", options)
    (bar,) = bars
    assert bar.unit == "s" and bar.totals[0] == 300.0
    assert bar.total < 300.0 and bar.total == pytest.approx(bar.n)  # the steps ended it


def test_the_time_bound_is_the_earlier_of_the_two() -> None:
    assert run_module._time_bound(10.0, 50.0, 1000, 100.0) == 20.0  # the steps run out first
    assert run_module._time_bound(10.0, 5.0, 1000, 100.0) == 15.0  # the minutes do
    assert run_module._time_bound(0.0, 60.0, 1000, 0.0) == 60.0  # no rate yet: the budget
