"""What a run's files say, to the character (the writers of ``training/run_dir.py`` and the
resume checks of ``training/checkpoints.py``, where mutation testing found them unpinned).

Pins :func:`~training.run_dir.format_summary`'s whole text (a resumed run, a run started
over, a confidence interval, a row without one, a missing or non-finite number, the files
inside the run directory or not), :func:`~training.run_dir.write_curve`'s ``curve.csv``
and what its ``curve.png`` draws (read back from the figure it saves), the run's
``PolicySpec`` (features, logit bound), every refusal of a ``model.zip`` that does not fit
(each architecture field named, a member missing or damaged, the sha256 blamed only when it
differs) and the refusal of a ``state.pkl`` that cannot be read; and ``strict_json``'s
conversions (numpy ints and halves, -0.0, non-string keys).
"""

from __future__ import annotations

import dataclasses
import errno
import math
import shutil
import zipfile
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pytest

from agents.policy_net import PolicySpec
from tests.training.test_train_cli import finished_run
from training.checkpoints import _check_model, run_policy_spec, sha256_of
from training.run_config import TrainConfig
from training.run_dir import CheckpointError, format_summary, read_config, strict_json, write_curve

__all__ = ["finished_run"]  # the module-scoped tiny run of test_train_cli, shared

matplotlib.use("Agg")


# ------------------------------------------------------------ format_summary
_FILES = {
    "config": "config.json",
    "summary": "summary.json",
    "curve_csv": "curve.csv",
    "curve_png": "curve.png",
    "policy": "policy.npz",
    "model": "final_model.zip",
    "tensorboard": "tb",
    "checkpoint": None,
}


def _row(opponent: str, diff: float | None, ci: list[float] | None, lowest: float | None) -> dict[str, Any]:
    return {"step": 1_234_567, "opponent": opponent, "diff": diff, "ci95": ci, "lowest_rate": lowest}


def test_the_summary_of_a_resumed_run_with_every_kind_of_row() -> None:
    summary = {
        "steps": 1_234_567,
        "steps_this_run": 4_567,
        "resumed_from": 1_230_000,
        "restarted": False,
        "seconds": 12.345,
        "steps_per_second": 1234.6,
        "n_envs": 4,
        "nan_events": 2,
        "eval_deals": 8,
        "final_eval": [
            _row("greedy", -1.25, [-3.0, 0.5], 0.75),
            _row("mc[sims=2]", 2.0, None, math.nan),
            _row("random", None, [-1.0, 1.0], 0.0),
            _row("planner", math.inf, None, None),
        ],
        "files": dict(_FILES),
    }
    out = Path("runs") / "a"
    assert format_summary(summary, out).split("\n") == [
        "trained 1,234,567 steps (4,567 this run, resumed from step 1,230,000) in 12.3 s: "
        "1,235 steps/s while learning, 4 envs, 2 non-finite updates rolled back",
        "final evaluation at step 1,234,567, 8 duplicate deals per opponent",
        "  learner minus opponent round score (below 0: the learner scores less = better), 95% CI:",
        "  vs greedy         -1.25 ±   1.75  [-3.00, +0.50]  finished lowest in 75% of rounds",
        "  vs mc[sims=2]     +2.00  (no CI: one deal)",
        "  vs random      n/a  (no CI: one deal)  finished lowest in 0% of rounds",
        "  vs planner     n/a  (no CI: one deal)",
        f"curve:        {out / 'curve.csv'}, {out / 'curve.png'}",
        f"policy:       {out / 'policy.npz'} (model + optimizer: {out / 'final_model.zip'})",
        f"tensorboard:  tensorboard --logdir {out / 'tb'}",
        f"summary:      {out / 'summary.json'}",
    ]


def test_the_summary_of_a_run_started_over_without_evaluation() -> None:
    summary = {
        "steps": 64,
        "steps_this_run": 64,
        "resumed_from": None,
        "restarted": True,
        "seconds": 0.04,
        "steps_per_second": 1600.4,
        "n_envs": 1,
        "nan_events": 0,
        "final_eval": None,
        "files": {**_FILES, "curve_csv": None, "curve_png": None},
    }
    expected = [
        "trained 64 steps (started over: the run had no checkpoint yet) in 0.0 s: "
        "1,600 steps/s while learning, 1 envs",
        "no evaluation (eval_every = 0)",
        "policy:       policy.npz (model + optimizer: final_model.zip)",
        "tensorboard:  tensorboard --logdir tb",
        "summary:      summary.json",
    ]
    assert format_summary(summary).split("\n") == expected  # out not given: the files as stored
    fresh = {**summary, "restarted": False, "final_eval": []}
    assert format_summary(fresh).split("\n") == [
        "trained 64 steps in 0.0 s: 1,600 steps/s while learning, 1 envs",
        *expected[1:],
    ]
    del fresh["resumed_from"], fresh["restarted"], fresh["nan_events"]  # older summaries
    assert (
        format_summary(fresh).split("\n")[0]
        == "trained 64 steps in 0.0 s: 1,600 steps/s while learning, 1 envs"
    )


# ------------------------------------------------------------ write_curve
def _curve_rows() -> list[dict[str, Any]]:
    return [
        {"step": 128, "opponent": "random", "diff": 1.5, "diff_se": 0.5, "lowest_rate": 0.25, "deals": 2},
        {
            "step": 128,
            "opponent": "greedy",
            "diff": -2.0,
            "diff_se": math.nan,
            "lowest_rate": 0.5,
            "deals": 2,
        },
        {"step": 256, "opponent": "random", "diff": 0.5, "diff_se": 1.0, "lowest_rate": 0.75, "deals": 2},
        {"step": 256, "opponent": "greedy", "diff": -1.0, "diff_se": 0.25, "lowest_rate": 0.0, "deals": 2},
    ]


@pytest.fixture
def saved_figures(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, tuple[Any, ...], dict[str, Any]]]:
    """Every figure ``savefig`` is asked to write, with its arguments (the file is still written)."""
    from matplotlib.figure import Figure

    saved: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []
    original = Figure.savefig

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        saved.append((self, args, kwargs))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    return saved


def test_the_curve_csv_holds_every_row_and_column(tmp_path: Path) -> None:
    write_curve(tmp_path, _curve_rows())
    assert (tmp_path / "curve.csv").read_bytes().decode() == (
        "step,opponent,diff,diff_se,lowest_rate,deals\r\n"
        "128,random,1.5,0.5,0.25,2\r\n"
        "128,greedy,-2.0,nan,0.5,2\r\n"
        "256,random,0.5,1.0,0.75,2\r\n"
        "256,greedy,-1.0,0.25,0.0,2\r\n"
    )


def test_one_row_and_unknown_numbers_make_a_curve(tmp_path: Path, saved_figures: list[Any]) -> None:
    row = {"step": 64, "opponent": "random", "diff": None, "diff_se": None, "lowest_rate": 0.5}
    write_curve(tmp_path, [row])
    assert (tmp_path / "curve.csv").read_text() == "step,opponent,diff,diff_se,lowest_rate\n64,random,,,0.5\n"
    (line,) = [x for x in saved_figures[0][0].axes[0].get_lines() if x.get_label() == "vs random"]
    assert np.isnan(line.get_ydata()).all()


def test_no_rows_write_no_curve(tmp_path: Path, saved_figures: list[Any]) -> None:
    write_curve(tmp_path, [])
    assert list(tmp_path.iterdir()) == [] and saved_figures == []


def test_the_curve_png_draws_each_opponent_with_its_95_percent_band(
    tmp_path: Path, saved_figures: list[tuple[Any, tuple[Any, ...], dict[str, Any]]]
) -> None:
    from matplotlib import pyplot as plt

    write_curve(tmp_path, _curve_rows())
    assert len(saved_figures) == 1
    fig, args, kwargs = saved_figures[0]
    assert args == (tmp_path / "curve.png",) and kwargs == {"dpi": 90}
    assert not plt.fignum_exists(fig.number)  # closed once written
    png = (tmp_path / "curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (990, 360)  # 11 x 4 in

    ax1, ax2 = fig.axes
    assert ax1.get_position().x1 < ax2.get_position().x0  # side by side
    assert ax1.get_xlabel() == ax2.get_xlabel() == "environment steps"
    assert ax1.get_ylabel() == "learner - opponent round score (lower is better)"
    assert ax2.get_ylabel() == "share of rounds finished lowest"
    for ax in (ax1, ax2):
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["vs greedy", "vs random"]
    curves = [line for line in ax1.get_lines() if line.get_label().startswith("vs ")]
    assert [line.get_label() for line in curves] == ["vs greedy", "vs random"]
    assert [line.get_marker() for line in curves] == ["o", "o"]
    assert [list(line.get_xdata()) for line in curves] == [[128, 256], [128, 256]]
    assert [list(line.get_ydata()) for line in curves] == [[-2.0, -1.0], [1.5, 0.5]]
    zero = [line for line in ax1.get_lines() if not line.get_label().startswith("vs ")]
    assert len(zero) == 1
    assert list(zero[0].get_ydata()) == [0.0, 0.0] and zero[0].get_color() == "grey"
    assert zero[0].get_linewidth() == 0.8
    # the bands: diff -/+ 1.96 standard errors (an unknown error draws no band)
    bands = ax1.collections
    assert [band.get_alpha() for band in bands] == [0.2, 0.2]
    for band, (diffs, ses) in zip(
        bands, (([-2.0, -1.0], [0.0, 0.25]), ([1.5, 0.5], [0.5, 1.0])), strict=True
    ):
        vertices = band.get_paths()[0].vertices
        low = [d - 1.96 * s for d, s in zip(diffs, ses, strict=True)]
        high = [d + 1.96 * s for d, s in zip(diffs, ses, strict=True)]
        for step, lo, hi in zip((128, 256), low, high, strict=True):
            ys = vertices[np.isclose(vertices[:, 0], step), 1]
            assert min(ys) == pytest.approx(lo) and max(ys) == pytest.approx(hi)
    lowest = ax2.get_lines()
    assert [line.get_label() for line in lowest] == ["vs greedy", "vs random"]
    assert [line.get_marker() for line in lowest] == ["o", "o"]
    assert [list(line.get_xdata()) for line in lowest] == [[128, 256], [128, 256]]
    assert [list(line.get_ydata()) for line in lowest] == [[0.5, 0.0], [0.25, 0.75]]


# ------------------------------------------------------------ strict_json
def test_strict_json_converts_each_kind_of_value_to_its_json() -> None:
    assert strict_json(np.bool_(True)) == "true" and strict_json(False) == "false"  # not 1 / 0
    assert strict_json([np.int8(-3), np.uint64(7), 2]) == "[-3, 7, 2]"
    assert strict_json([np.float16(0.5), -0.0, -math.inf]) == "[0.5, -0.0, null]"
    assert strict_json({(1, 2): 1, None: 2}) == '{"(1, 2)": 1, "None": 2}'  # keys as text
    assert strict_json(np.arange(3, dtype=np.int32).reshape(1, 3)) == "[[0, 1, 2]]"
    assert strict_json({"t": (Path("x"), "s", None)}) == '{"t": ["x", "s", null]}'


# ------------------------------------------------------------ checkpoints: the model's checks
def test_the_run_policy_spec_is_the_runs_features_and_logit_bound() -> None:
    default = run_policy_spec(TrainConfig(n_envs=2, net_arch=[16]))
    assert (default.features, default.logit_bound, default.pi, default.vf) == ("env", 20.0, (16,), (16,))
    spec = run_policy_spec(TrainConfig(n_envs=2, net_arch=[16, 8], features="planner", logit_bound=5.5))
    assert (spec.features, spec.logit_bound, spec.pi, spec.vf) == ("planner", 5.5, (16, 8), (16, 8))
    assert spec.observation_size != default.observation_size  # the planner features' input


def _model(run: Path) -> Path:
    return run / "checkpoints" / f"step_{256:012d}" / "model.zip"


def _rewritten(model: Path, dst: Path, drop: str = "", stored: str = "") -> Path:
    """``model`` copied member by member into ``dst``, without ``drop``, ``stored`` uncompressed."""
    with zipfile.ZipFile(model) as src, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            if info.filename != drop:
                kind = zipfile.ZIP_STORED if info.filename == stored else zipfile.ZIP_DEFLATED
                out.writestr(info.filename, src.read(info.filename), compress_type=kind)
    return dst


def _set_first_data_byte(path: Path, member: str, value: int) -> None:
    """Set the first byte of ``member``'s data (as stored: compressed or not) in the archive."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        head = zf.getinfo(member).header_offset
    name_len = int.from_bytes(data[head + 26 : head + 28], "little")
    extra_len = int.from_bytes(data[head + 28 : head + 30], "little")
    data[head + 30 + name_len + extra_len] = value
    path.write_bytes(bytes(data))


def _refusal(model: Path, expected: PolicySpec, recorded: str | None = None) -> str:
    """What ``_check_model`` says of ``model`` as the step-256 model of a run of ``expected``."""
    with pytest.raises(CheckpointError) as caught:
        _check_model(model, expected, 256, recorded)
    assert caught.value.file == str(model)
    return caught.value.message


def test_each_field_of_another_architecture_is_named(finished_run: tuple[Path, str]) -> None:
    model = _model(finished_run[0])
    spec = run_policy_spec(read_config(finished_run[0]))
    _check_model(model, spec, 256, sha256_of(model))  # the run's own model passes
    cases = [
        ({"action_count": 99}, f"action count {spec.action_count}, but the run's config.json gives 99"),
        ({"vf": (16, 4)}, "net_arch (critic) [16], but the run's config.json gives [16, 4]"),
        ({"features": "planner"}, "features 'env', but the run's config.json gives 'planner'"),
        ({"logit_bound": 5.5}, "logit_bound 20.0, but the run's config.json gives 5.5"),
        ({"activation": "relu"}, "activation 'tanh', but the run's config.json gives 'relu'"),
    ]
    for change, says in cases:
        assert _refusal(model, dataclasses.replace(spec, **change)) == f"{says} (a model of another run?)"


def test_a_model_without_its_optimizer_or_variables_is_refused(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    model = _model(finished_run[0])
    spec = run_policy_spec(read_config(finished_run[0]))
    for member in ("policy.optimizer.pth", "pytorch_variables.pth"):
        copy = _rewritten(model, tmp_path / f"no_{member}.zip", drop=member)
        assert _refusal(copy, spec, sha256_of(copy)) == f"member {member} missing"
        assert _refusal(copy, spec, sha256_of(model)) == (
            "damaged or replaced: its sha256 is not the one checkpoint.json recorded "
            f"(member {member} missing)"
        )


def test_a_model_with_a_damaged_member_is_refused_naming_it(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    """The members the policy is not read from are checked too (``testzip``): a bad CRC, a
    bad deflate stream; the sha256 is blamed only when one was recorded and differs."""
    model = _model(finished_run[0])
    spec = run_policy_spec(read_config(finished_run[0]))
    member = "policy.optimizer.pth"
    crc = _rewritten(model, tmp_path / "crc.zip", stored=member)
    _check_model(crc, spec, 256, sha256_of(crc))  # rewritten intact
    with zipfile.ZipFile(crc) as zf:
        first = zf.read(member)[0]
    _set_first_data_byte(crc, member, first ^ 0xFF)
    for recorded in (None, sha256_of(crc)):  # format 1: none; format 2: the file's own
        assert _refusal(crc, spec, recorded) == f"member {member} damaged"
    assert _refusal(crc, spec, sha256_of(model)) == (
        f"damaged or replaced: its sha256 is not the one checkpoint.json recorded (member {member} damaged)"
    )
    inflate = _rewritten(model, tmp_path / "inflate.zip")
    _set_first_data_byte(inflate, member, 0xFF)  # deflate block type 3: reserved
    for recorded in (None, sha256_of(inflate)):
        assert _refusal(inflate, spec, recorded) == (
            "damaged (Error -3 while decompressing data: invalid block type)"
        )


def test_a_state_that_cannot_be_read_is_named_with_the_reason(
    finished_run: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ``OSError`` while reading ``state.pkl`` (after its sha256 matched) is a one-line
    refusal naming the file and the system's reason (its ``strerror``, else the error)."""
    from training import checkpoints

    run = shutil.copytree(finished_run[0], tmp_path / "run")
    state = run / "checkpoints" / f"step_{256:012d}" / "state.pkl"
    assert checkpoints.load_checkpoint(run, read_config(run)).dir == state.parent  # readable: passes
    for error, says in (
        (OSError(errno.EIO, "Input/output error"), "cannot read it (Input/output error)"),
        (OSError("the disk went away"), "cannot read it (the disk went away)"),
    ):

        def fail(*_args: Any, error: OSError = error, **_kwargs: Any) -> Any:
            raise error

        monkeypatch.setattr(checkpoints.pickles, "load", fail)
        with pytest.raises(CheckpointError) as caught:
            checkpoints.load_checkpoint(run, read_config(run))
        assert (caught.value.file, caught.value.message) == (str(state), says)


@pytest.mark.parametrize("name", ["model.zip", "state.pkl", "league.json"])
def test_a_file_that_cannot_be_hashed_is_named_with_the_reason(
    finished_run: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Reading a format-2 checkpoint's file for its sha256 can fail (permissions, an I/O
    error): a one-line refusal naming the file, not a traceback."""
    from training import checkpoints

    run = shutil.copytree(finished_run[0], tmp_path / "run")
    target = run / "checkpoints" / f"step_{256:012d}" / name
    real = checkpoints.sha256_of

    def unreadable(path: Path) -> str:
        if Path(path) == target:
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path)

    monkeypatch.setattr(checkpoints, "sha256_of", unreadable)
    with pytest.raises(CheckpointError) as caught:
        checkpoints.load_checkpoint(run, read_config(run))
    assert (caught.value.file, caught.value.message) == (str(target), "cannot read it (Permission denied)")


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc/self/mem")
@pytest.mark.parametrize("name", ["model.zip", "state.pkl", "league.json"])
def test_resume_refuses_an_unreadable_checkpoint_file_in_one_line(
    finished_run: tuple[Path, str], tmp_path: Path, name: str
) -> None:
    """A checkpoint file every read of which fails with an I/O error (a link to
    ``/proc/self/mem``; ``chmod 000`` does the same for a user who is not root): ``mtrain
    train --resume`` says which file and why, exit 2, and writes nothing."""
    from tests.training.test_train_cli import _listing, _one_line, _run

    run = shutil.copytree(finished_run[0], tmp_path / "run")
    target = run / "checkpoints" / f"step_{256:012d}" / name
    target.unlink()
    target.symlink_to("/proc/self/mem")
    before = _listing(run)
    code, _stdout, err = _run(["--steps", "512", "--out", str(run), "--resume", "--no-progress"])
    assert code == 2
    assert _one_line(err) == f"mtrain train: --resume: {target}: cannot read it (Input/output error)"
    assert _listing(run) == before
