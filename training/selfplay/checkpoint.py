"""Self-play checkpoints: a learner's whole state in one file, loaded without arbitrary unpickling.

The state (:meth:`SelfPlayPPO.state_dict`) mixes torch tensors, numpy arrays and plain
Python values (generator states). numpy arrays are stored as tensors tagged
``{"__ndarray__": tensor, "dtype": name}`` so that :func:`torch.load` reads the file with
``weights_only=True`` (tensors and plain containers only, no code). The file holds the
encoded state with its sha256 (:func:`state_sha256`: every tensor's bytes, every value and
key, in order), checked when it is read: a flipped byte in a tensor (which ``torch.load``
reads without complaint) is refused, not resumed into another policy. Files written
before the checksum (the encoded state alone at the top) are read as they are. Files are
written to a temporary name and renamed: a kill never leaves half a checkpoint. A file
that is not such a checkpoint is refused with :class:`SelfPlayCheckpointError` naming it.
"""

from __future__ import annotations

import hashlib
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

__all__ = ["SelfPlayCheckpointError", "load_checkpoint", "save_checkpoint", "state_sha256"]

_TAG = "__ndarray__"
#: the top-level key of a checksummed checkpoint, its value the format
_MARK = "__selfplay_checkpoint__"
_FORMAT = 2
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


def state_sha256(encoded: Any) -> str:
    """The hex sha256 of an encoded state as ``torch.load`` gives it back: each tensor's
    dtype, shape and bytes, each other value's type and ``repr``, dict keys and list lengths,
    in order (so a value moved to another key changes it too)."""
    digest = hashlib.sha256()
    _feed(digest, encoded)
    return digest.hexdigest()


def _feed(digest: Any, obj: Any) -> None:
    if isinstance(obj, th.Tensor):
        flat = obj.detach().cpu().contiguous().reshape(-1)
        digest.update(f"T{obj.dtype}{tuple(obj.shape)}:".encode())
        digest.update(flat.view(th.uint8).numpy().tobytes() if flat.numel() else b"")
    elif isinstance(obj, dict):
        digest.update(f"D{len(obj)}:".encode())
        for key, value in obj.items():
            digest.update(f"{type(key).__name__}{key!r}=".encode())
            _feed(digest, value)
    elif isinstance(obj, (list, tuple)):
        digest.update(f"L{len(obj)}:".encode())
        for value in obj:
            _feed(digest, value)
    else:
        digest.update(f"{type(obj).__name__}{obj!r};".encode())


def save_checkpoint(state: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``state`` and its sha256 to ``path`` atomically."""
    path = Path(path)
    encoded = _encode(state)
    with atomic_path(path) as tmp:
        th.save({_MARK: _FORMAT, "sha256": state_sha256(encoded), "state": encoded}, tmp)
    return path


def _verified(raw: Any) -> Any:
    """The encoded state of a loaded file, its recorded sha256 checked (``ValueError``
    saying what is wrong); a file written before the checksum is its state."""
    if not isinstance(raw, dict) or _MARK not in raw:
        return raw
    if raw[_MARK] != _FORMAT or set(raw) != {_MARK, "sha256", "state"}:
        keys = sorted(map(str, raw))
        raise ValueError(f"format {raw[_MARK]!r} with keys {keys}; this version reads {_FORMAT}")
    if raw["sha256"] != state_sha256(raw["state"]):
        raise ValueError("damaged: its contents are not those of the sha256 it recorded")
    return raw["state"]


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
        encoded = _verified(raw)
    except ValueError as err:
        raise SelfPlayCheckpointError(path, str(err)) from None
    try:
        return _decode(encoded)
    except ValueError as err:
        raise SelfPlayCheckpointError(path, f"not a self-play checkpoint ({err})") from None
