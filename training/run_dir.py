"""The files of a training run's directory: their names, strict JSON, ``config.json``, the
pointer to the newest checkpoint (:func:`read_latest`; what the checkpoint holds is checked
by :mod:`training.checkpoints`), the summary's text and the learning curve (layout:
:mod:`training.train`).

Shared by the SB3 trainer (:mod:`training.train`) and the RLlib one
(:mod:`training.rllib.train`); imports no learning library.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.files import atomic_write, os_error_text
from training.run_config import ConfigError, TrainConfig

__all__ = [
    "CHECKPOINTS",
    "CHECKPOINT_FILE",
    "CHECKPOINT_NAME",
    "CONFIG_FILE",
    "CURVE_CSV",
    "CURVE_PNG",
    "FINAL_MODEL",
    "LATEST",
    "LEAGUE_DIR",
    "LEAGUE_FILE",
    "MODEL_FILE",
    "POLICY_FILE",
    "RLLIB_BACKEND",
    "SNAPSHOT_NAME",
    "STATE_FILE",
    "STATE_FORMAT",
    "SUMMARY_FILE",
    "CheckpointError",
    "format_summary",
    "is_rllib_run",
    "latest_checkpoint",
    "progress_files",
    "read_config",
    "read_latest",
    "read_run_text",
    "run_config_json",
    "run_files",
    "step_directories",
    "strict_json",
    "with_ci95",
    "write_curve",
]

CONFIG_FILE = "config.json"
#: what an RLlib run's ``config.json`` says in ``"backend"`` (:mod:`training.rllib.train`)
RLLIB_BACKEND = "rllib"
SUMMARY_FILE = "summary.json"
CHECKPOINTS = "checkpoints"
LATEST = "latest.json"
LEAGUE_DIR = "league"
CURVE_CSV = "curve.csv"
CURVE_PNG = "curve.png"
POLICY_FILE = "policy.npz"
FINAL_MODEL = "final_model.zip"
#: the files of a checkpoint directory
MODEL_FILE = "model.zip"
STATE_FILE = "state.pkl"
LEAGUE_FILE = "league.json"
CHECKPOINT_FILE = "checkpoint.json"
#: 2: paths relative to the run, policy files, checkpoint.json (1: absolute paths, pickled snapshots)
STATE_FORMAT = 2
#: what latest.json may name (a directory inside checkpoints/)
CHECKPOINT_NAME = re.compile(r"step_\d{12}")
#: what a league may name (a file inside league/; ``.pt``: a format-1 snapshot, upgraded on resume)
SNAPSHOT_NAME = re.compile(r"snap_\d{12}\.(npz|pt)")


class CheckpointError(ValueError):
    """A run that cannot be resumed: ``file`` (a path) and ``message`` (what is wrong with it)."""

    def __init__(self, file: str | os.PathLike[str], message: str) -> None:
        message = " ".join(str(message).split())  # always one line
        super().__init__(f"{file}: {message}")
        self.file = str(file)
        self.message = message


def strict_json(obj: Any, **kwargs: Any) -> str:
    """``json.dumps`` that writes strict JSON: NaN and infinities become ``null`` (never the
    ``NaN`` / ``Infinity`` tokens other readers reject); numpy scalars and arrays, tuples and
    paths become their JSON equivalents."""
    return json.dumps(_jsonable(obj), allow_nan=False, **kwargs)


def _jsonable(x: Any) -> Any:
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, os.PathLike):
        return os.fspath(x)
    return x


def run_files(out: Path) -> list[str]:
    """What in ``out`` shows a training run is there (``config.json``, ``checkpoints/``)."""
    return [name for name in (CONFIG_FILE, CHECKPOINTS) if (Path(out) / name).exists()]


def read_latest(out: Path) -> tuple[Path, int] | None:
    """The newest checkpoint directory named by ``checkpoints/latest.json`` and its step;
    ``None`` if the run has none yet. Raises :class:`CheckpointError` if the pointer is not
    ``{"dir": "step_<N>", "step": N}``, leaves ``checkpoints/`` or names an incomplete checkpoint."""
    root = Path(out) / CHECKPOINTS
    pointer = root / LATEST
    if not pointer.exists():
        return None
    try:
        data = json_text.read_file(pointer)
    except (OSError, ValueError) as err:
        raise CheckpointError(pointer, f"not readable JSON ({err})") from None
    if not isinstance(data, dict) or set(data) != {"dir", "step"}:
        raise CheckpointError(pointer, f'must be {{"dir": "step_<N>", "step": N}}, got {str(data)[:80]}')
    name, step = data["dir"], data["step"]
    if not isinstance(name, str) or not CHECKPOINT_NAME.fullmatch(name):
        text = f"dir must name a checkpoint directory inside {CHECKPOINTS}/ (step_<12 digits>), got {name!r}"
        raise CheckpointError(pointer, text)
    if not isinstance(step, int) or isinstance(step, bool) or name != f"step_{step:012d}":
        raise CheckpointError(pointer, f"step {step!r} is not the step of {name}")
    directory = root / name
    if directory.is_symlink() or directory.resolve().parent != root.resolve():
        raise CheckpointError(pointer, f"{name} leads outside {root}")
    for file in (MODEL_FILE, STATE_FILE):
        if not (directory / file).is_file():
            raise CheckpointError(directory / file, f"missing (the checkpoint {LATEST} points to)")
    return directory, int(step)


def step_directories(out: Path) -> list[tuple[Path, int]]:
    """The checkpoint directories in ``checkpoints/`` (``step_<12 digits>``, not links, not
    the ``.tmp`` of a write in progress) and their steps, newest first: what a run whose
    ``latest.json`` is gone may be resumed from, once one is verified."""
    root = Path(out) / CHECKPOINTS
    if not root.is_dir():
        return []
    found = [
        (p, int(p.name[5:]))
        for p in root.iterdir()
        if CHECKPOINT_NAME.fullmatch(p.name) and p.is_dir() and not p.is_symlink()
    ]
    return sorted(found, key=lambda item: item[1], reverse=True)


def progress_files(out: Path) -> list[str]:
    """What in ``out`` a run writes only once past its first checkpoint: curve rows
    and league snapshots of later steps, the summary, final model and policy, checkpoint
    directories. A run that shows these but has no checkpoint to continue from must not
    start over in the same place (its files would mix with the new run's)."""
    out = Path(out)
    names = [name for name in (SUMMARY_FILE, FINAL_MODEL, POLICY_FILE) if (out / name).exists()]
    if _curve_past_step_0(out / CURVE_CSV):
        names.append(CURVE_CSV)
    league = out / LEAGUE_DIR
    snapshots = league.iterdir() if league.is_dir() else iter(())
    if any(SNAPSHOT_NAME.fullmatch(p.name) and int(p.name[5:17]) > 0 for p in snapshots):
        names.append(f"{LEAGUE_DIR}/snap_*")
    if step_directories(out):
        names.append(f"{CHECKPOINTS}/step_*")
    return names


def _curve_past_step_0(path: Path) -> bool:
    """Whether ``curve.csv`` holds more than the step-0 evaluation (a file that cannot be read
    as one counts: it is not a fresh run's)."""
    if not path.exists():
        return False
    try:
        with path.open(newline="", encoding="utf-8") as f:
            return any(row.get("step") != "0" for row in csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error):
        return True


def latest_checkpoint(out: Path) -> Path | None:
    """The newest complete checkpoint directory of a run, if any (see :func:`read_latest`)."""
    found = read_latest(out)
    return None if found is None else found[0]


def is_rllib_run(out: str | os.PathLike[str]) -> bool:
    """Whether ``out`` holds an RLlib run (its ``config.json`` says ``"backend": "rllib"``);
    here, not in :mod:`training.rllib.train`, so that telling the backends apart imports no Ray."""
    try:
        data = json_text.read_file(Path(out) / CONFIG_FILE)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("backend") == RLLIB_BACKEND


def read_run_text(path: Path, kind: str) -> str:
    """The text of a run's file; :class:`CheckpointError` naming it when it cannot be read
    or is not UTF-8 (``not <kind> (not UTF-8 text: ...)``)."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise CheckpointError(path, f"cannot read it ({os_error_text(err)})") from None
    except UnicodeDecodeError as err:
        text = f"not {kind} (not UTF-8 text: {err.reason} at byte {err.start})"
        raise CheckpointError(path, text) from None


def read_config(out: Path) -> TrainConfig:
    """The :class:`TrainConfig` of the run in ``out`` (either ``config.json`` format), its
    ``out`` being ``out``; raises :class:`CheckpointError` saying what is wrong with the file."""
    path = Path(out) / CONFIG_FILE
    text = read_run_text(path, "JSON")
    try:
        data = json_text.loads(text)
    except ValueError as err:
        raise CheckpointError(path, f"not JSON ({err})") from None
    if not isinstance(data, dict) or not {"steps", "seed", "n_envs"} <= set(data):
        raise CheckpointError(path, "does not hold a training configuration (steps, seed, n_envs, ...)")
    data["out"] = str(out)  # a run is where its directory is (older runs stored a path here)
    try:
        return TrainConfig.from_json(data)
    except ConfigError as err:
        raise CheckpointError(path, str(err)) from None
    except (TypeError, ValueError) as err:
        raise CheckpointError(path, f"does not hold a training configuration ({err})") from None


def run_config_json(config: TrainConfig) -> dict[str, Any]:
    """What ``config.json`` holds: :meth:`TrainConfig.to_json` without ``out`` (the run is
    where its directory is)."""
    d = config.to_json()
    del d["out"]
    return d


def format_summary(summary: Mapping[str, Any], out: str | os.PathLike[str] | None = None) -> str:
    """The human-readable end of a run, from :meth:`Trainer.make_summary`; the files it names
    are shown inside ``out`` (the run directory) when given."""
    lines = []
    steps, this = summary["steps"], summary["steps_this_run"]
    head = f"trained {steps:,} steps"
    if summary.get("resumed_from") is not None:
        head += f" ({this:,} this run, resumed from step {summary['resumed_from']:,}"
        head += f"; {summary['resumed_by']})" if summary.get("resumed_by") else ")"
    elif summary.get("restarted"):
        head += " (started over: the run had no checkpoint yet)"
    head += (
        f" in {summary['seconds']:.1f} s: {summary['steps_per_second']:,.0f} steps/s while learning, "
        f"{summary['n_envs']} envs"
    )
    if summary.get("nan_events"):
        head += f", {summary['nan_events']} non-finite updates rolled back"
    lines.append(head)
    final = summary.get("final_eval") or []
    if final:
        lines.append(
            f"final evaluation at step {final[0]['step']:,}, "
            f"{summary['eval_deals']} duplicate deals per opponent"
        )
        lines.append(
            "  learner minus opponent round score (below 0: the learner scores less = better), 95% CI:"
        )
        width = max(len(str(r["opponent"])) for r in final)
        for r in final:
            diff, ci = r["diff"], r.get("ci95")
            if ci is None or diff is None:
                text = f"{_num(diff)}  (no CI: one deal)"
            else:
                text = f"{diff:+8.2f} ± {(ci[1] - ci[0]) / 2:6.2f}  [{ci[0]:+.2f}, {ci[1]:+.2f}]"
            lowest = r.get("lowest_rate")
            if lowest is not None and math.isfinite(lowest):
                text += f"  finished lowest in {100 * lowest:.0f}% of rounds"
            lines.append(f"  vs {r['opponent']:<{width}}  {text}")
    else:
        lines.append("no evaluation (eval_every = 0)")
    files = {k: v if v is None or out is None else str(Path(out) / v) for k, v in summary["files"].items()}
    if files.get("curve_csv"):
        lines.append(f"curve:        {files['curve_csv']}, {files['curve_png']}")
    lines.append(f"policy:       {files['policy']} (model + optimizer: {files['model']})")
    lines.append(f"tensorboard:  tensorboard --logdir {files['tensorboard']}")
    lines.append(f"summary:      {files['summary']}")
    return "\n".join(lines)


def with_ci95(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Evaluation rows with ``ci95``, the 95 % CI of their ``diff`` (``None`` when its standard
    error is undefined: one deal), as a summary's ``final_eval`` holds them."""
    final = []
    for r in rows:
        diff, se = float(r["diff"]), float(r["diff_se"])
        final.append({**r, "ci95": [diff - 1.96 * se, diff + 1.96 * se] if math.isfinite(se) else None})
    return final


def _num(x: Any) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:+8.2f}"


def write_curve(out: Path, rows: list[dict[str, Any]]) -> None:
    """``curve.csv`` and ``curve.png`` from the evaluation rows."""
    if not rows:
        return
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    atomic_write(out / CURVE_CSV, buf.getvalue())
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for opp in sorted({r["opponent"] for r in rows}):
        mine = [r for r in rows if r["opponent"] == opp]
        x = np.array([r["step"] for r in mine])
        y = np.array([r["diff"] for r in mine], dtype=float)
        se = np.nan_to_num(np.array([r["diff_se"] for r in mine], dtype=float))
        ax1.plot(x, y, marker="o", label=f"vs {opp}")
        ax1.fill_between(x, y - 1.96 * se, y + 1.96 * se, alpha=0.2)
        ax2.plot(x, [r["lowest_rate"] for r in mine], marker="o", label=f"vs {opp}")
    ax1.axhline(0.0, color="grey", lw=0.8)
    ax1.set_xlabel("environment steps")
    ax1.set_ylabel("learner - opponent round score (lower is better)")
    ax1.legend()
    ax2.set_xlabel("environment steps")
    ax2.set_ylabel("share of rounds finished lowest")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(out / CURVE_PNG, dpi=90)
    plt.close(fig)
