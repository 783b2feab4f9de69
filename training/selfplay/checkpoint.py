"""Self-play checkpoints: a learner's whole state in one file, loaded without arbitrary unpickling.

The state (:meth:`SelfPlayPPO.state_dict`) mixes torch tensors, numpy arrays and plain
Python values (generator states). numpy arrays are stored as tensors tagged
``{"__ndarray__": tensor, "dtype": name}`` so that :func:`torch.load` reads the file with
``weights_only=True`` (tensors and plain containers only, no code). Files are written to
a temporary name and renamed: a kill never leaves half a checkpoint. A file that is not
such a checkpoint is refused with :class:`SelfPlayCheckpointError` naming it.
"""

from __future__ import annotations

import os
import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch as th

from agents.policy_format import weights_only_refusal
from mtrain_env.tilegame.files import atomic_path, os_error_text
from training.run_dir import CheckpointError

__all__ = ["SelfPlayCheckpointError", "load_checkpoint", "save_checkpoint"]

_TAG = "__ndarray__"
#: the kinds of numpy dtype a state holds (bool, ints, floats)
_DTYPE_KINDS = "biuf"


class SelfPlayCheckpointError(CheckpointError):
    """A self-play run's ``checkpoint.pt`` that cannot be read or restored: ``file`` and
    ``message``, one line ``"<file>: <what is wrong>"``. A :class:`training.run_dir.CheckpointError`,
    so one ``except`` catches the checkpoint errors of every trainer."""


def _encode(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype == np.bool_:
            return {_TAG: th.from_numpy(obj.astype(np.uint8)), "dtype": "bool"}
        return {_TAG: th.from_numpy(np.ascontiguousarray(obj)), "dtype": obj.dtype.name}
    if isinstance(obj, dict):
        return {k: _encode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_encode(v) for v in obj]
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    return obj


def _decode(obj: Any) -> dict[str, Any]:
    """The state :func:`_encode` wrote (a dict at the top); ``ValueError`` saying where it
    is not (an array tag without its dtype or whose array is not a tensor, a dtype that is
    not a numeric or bool numpy one)."""
    if not isinstance(obj, dict):
        raise ValueError(f"holds a {type(obj).__name__}, not a learner's state (a dict)")
    return {k: _decode_value(v, str(k)) for k, v in obj.items()}


def _decode_value(obj: Any, where: str) -> Any:
    if isinstance(obj, dict):
        if _TAG in obj:
            return _decode_array(obj, where)
        return {k: _decode_value(v, f"{where}.{k}") for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode_value(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    return obj


def _decode_array(obj: dict[Any, Any], where: str) -> np.ndarray:
    if set(obj) != {_TAG, "dtype"}:
        raise ValueError(
            f"{where}: an array tag must hold {_TAG!r} and 'dtype' only, got keys {sorted(map(str, obj))}"
        )
    tensor, name = obj[_TAG], obj["dtype"]
    if not isinstance(tensor, th.Tensor):
        raise ValueError(f"{where}: the array must be a tensor, got {type(tensor).__name__}")
    if not isinstance(name, str):
        raise ValueError(f"{where}: dtype must be a numpy dtype name, got {name!r}")
    try:
        dtype = np.dtype(name)
    except TypeError:
        raise ValueError(f"{where}: unknown dtype {name!r}") from None
    if dtype.kind not in _DTYPE_KINDS:
        raise ValueError(f"{where}: dtype must be bool, an int or a float, got {name!r}")
    try:
        arr = tensor.numpy()
    except (RuntimeError, TypeError) as err:  # e.g. a tensor numpy has no dtype for
        raise ValueError(f"{where}: not an array ({err})") from None
    return arr.astype(np.bool_) if dtype.kind == "b" else arr.astype(dtype, copy=False)


def save_checkpoint(state: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``state`` to ``path`` atomically."""
    path = Path(path)
    with atomic_path(path) as tmp:
        th.save(_encode(state), tmp)
    return path


def load_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint` (``weights_only=True``);
    :class:`SelfPlayCheckpointError` (``"<path>: <what is wrong>"``) for a file that is not one."""
    try:
        raw = th.load(path, weights_only=True)
    except OSError as err:
        raise SelfPlayCheckpointError(path, f"cannot read it ({os_error_text(err)})") from None
    except (pickle.UnpicklingError, EOFError, RuntimeError, ValueError, zipfile.BadZipFile) as err:
        refusal = weights_only_refusal(err, "a checkpoint")
        raise SelfPlayCheckpointError(path, f"not a self-play checkpoint ({refusal})") from None
    try:
        return _decode(raw)
    except ValueError as err:
        raise SelfPlayCheckpointError(path, f"not a self-play checkpoint ({err})") from None
