"""``trainer.json``, the trainer's part of an RLlib checkpoint, read back field by field.

The trainer writes it beside RLlib's own checkpoint (``algorithm/``): the step, the time
trained, when the next evaluation, snapshot and checkpoint are due, and the learning curve.
A resumed run goes on from these numbers and rewrites ``curve.csv`` and ``summary.json``
from the curve, so nothing is taken on trust: a wrong type or a step that does not match
the checkpoint's directory is a :class:`~training.run_dir.CheckpointError` naming the key,
before Ray starts. Strict JSON has no NaN: an undefined standard error (one evaluation
deal) was written as ``null`` and is read back as NaN.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from mtrain_env.tilegame import json_text
from training.checks import is_int, is_real
from training.evaluate import EvalResult
from training.run_dir import CheckpointError

__all__ = ["DUE_KEYS", "read_trainer_state"]

#: the schedule ``trainer.json`` keeps: the step each is next due at
DUE_KEYS = ("eval", "snapshot", "checkpoint")
_KEYS = ("step", "seconds", "due", "curve")
_ROW_FIELDS = {f.name: f.type for f in dataclasses.fields(EvalResult)}


def read_trainer_state(path: Path) -> dict[str, Any]:
    """The checked contents of ``path`` (a checkpoint's ``trainer.json``, inside its
    ``step_<N>`` directory): ``step`` (= N), ``seconds``, ``due`` and ``curve``."""
    try:
        data = json_text.read_object(path)
    except (OSError, ValueError) as err:
        raise CheckpointError(path, f"not a checkpoint's trainer state ({err})") from None
    missing = [k for k in _KEYS if k not in data]
    unknown = sorted(set(data) - set(_KEYS))
    if missing or unknown:
        what = [f"missing {k!r}" for k in missing] + [f"unknown key {k!r}" for k in unknown]
        raise CheckpointError(path, f"not a checkpoint's trainer state ({', '.join(what)})")
    step = data["step"]
    if not is_int(step) or step < 0:
        raise CheckpointError(path, f"step must be an int >= 0, got {step!r}")
    directory = path.parent.name
    if directory != f"step_{step:012d}":
        raise CheckpointError(path, f"step {step} is not the step of its directory {directory!r}")
    seconds = data["seconds"]
    if not is_real(seconds) or not math.isfinite(seconds) or seconds < 0:
        raise CheckpointError(path, f"seconds must be a finite number >= 0, got {seconds!r}")
    due = _due(path, data["due"])
    curve = _curve(path, data["curve"], int(step))
    return {"step": int(step), "seconds": float(seconds), "due": due, "curve": curve}


def _due(path: Path, due: Any) -> dict[str, int]:
    if not isinstance(due, dict) or sorted(due) != sorted(DUE_KEYS):
        raise CheckpointError(path, f"due must map {', '.join(DUE_KEYS)} to steps, got {due!r}")
    for key, at in due.items():
        if not is_int(at) or at < 0:
            raise CheckpointError(path, f"due.{key} must be an int >= 0, got {at!r}")
    return {k: int(due[k]) for k in DUE_KEYS}


def _curve(path: Path, curve: Any, step: int) -> list[dict[str, Any]]:
    """The evaluation rows (``EvalResult.as_row``), in step order, none after ``step``."""
    if not isinstance(curve, list):
        raise CheckpointError(path, f"curve must be a list of evaluation rows, got {type(curve).__name__}")
    rows = []
    last = 0
    for i, row in enumerate(curve):
        where = f"curve[{i}]"
        if not isinstance(row, dict) or sorted(row) != sorted(["step", *_ROW_FIELDS]):
            raise CheckpointError(path, f"{where} must be an evaluation row (step, {', '.join(_ROW_FIELDS)})")
        at = row["step"]
        if not is_int(at) or not last <= at <= step:
            order = f"an int in {last}..{step} (rows in step order)"
            raise CheckpointError(path, f"{where}.step must be {order}, got {at!r}")
        last = int(at)
        fields = {k: _field(path, f"{where}.{k}", row[k], kind) for k, kind in _ROW_FIELDS.items()}
        rows.append({"step": last, **fields})
    return rows


def _field(path: Path, where: str, value: Any, kind: Any) -> Any:
    """One field of a row, of the type ``EvalResult`` declares (``null`` floats are NaN)."""
    if kind in (str, "str"):
        if not isinstance(value, str) or not value:
            raise CheckpointError(path, f"{where} must be a non-empty string, got {value!r}")
        return value
    if kind in (int, "int"):
        if not is_int(value) or value < 0:
            raise CheckpointError(path, f"{where} must be an int >= 0, got {value!r}")
        return int(value)
    if value is None:
        return math.nan
    if not is_real(value):
        raise CheckpointError(path, f"{where} must be a number or null, got {value!r}")
    return float(value)
