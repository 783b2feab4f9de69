"""Self-play checkpoints: a learner's whole state in one file, loaded without arbitrary unpickling.

The state (:meth:`SelfPlayPPO.state_dict`) mixes torch tensors, numpy arrays and plain
Python values (generator states). numpy arrays are stored as tensors tagged
``{"__ndarray__": tensor, "dtype": name}`` so that :func:`torch.load` reads the file with
``weights_only=True`` (tensors and plain containers only, no code). Files are written to
a temporary name and renamed: a kill never leaves half a checkpoint.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch as th

__all__ = ["load_checkpoint", "save_checkpoint"]

_TAG = "__ndarray__"


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


def _decode(obj: Any) -> Any:
    if isinstance(obj, dict):
        if _TAG in obj:
            arr = obj[_TAG].numpy()
            return arr.astype(np.bool_) if obj["dtype"] == "bool" else arr.astype(obj["dtype"], copy=False)
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    return obj


def save_checkpoint(state: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``state`` to ``path`` atomically."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    th.save(_encode(state), tmp)
    tmp.replace(path)
    return path


def load_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint` (``weights_only=True``)."""
    return _decode(th.load(path, weights_only=True))
