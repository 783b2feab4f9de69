"""The checks every policy file goes through (torch-free).

Both policy-file formats (:mod:`agents.policy_net`'s SB3-shaped MLPs and
:mod:`agents.mexican_train.selfplay_file`'s self-play networks) start with a
``policy.json`` naming the format and its version (:func:`check_format`) and hold one
``.npy`` per parameter (:func:`read_checked_npy`: the header checked before any byte of
data is read), without importing any learning framework, so reading a self-play policy
needs numpy only.
"""

from __future__ import annotations

import math
import re
from typing import IO, Any

import numpy as np

__all__ = ["check_format", "read_checked_npy", "weights_only_refusal"]

_FLOAT32 = np.dtype("<f4")


def check_format(data: Any, name: str, version: int) -> None:
    """A policy file's JSON header is an object of format ``name`` at ``version``;
    ``ValueError`` saying what is not."""
    if not isinstance(data, dict):
        raise ValueError(f"must be a JSON object, got {type(data).__name__}")
    if data.get("format") != name:
        raise ValueError(f"format must be {name!r}, got {data.get('format')!r}")
    found = data.get("version")
    if type(found) is not int or found != version:  # not True, not 1.0
        raise ValueError(f"format version {found!r}; this version reads {version}")


def read_checked_npy(
    f: IO[bytes], shape: tuple[int | None, ...], dtype: np.dtype[Any] = _FLOAT32, max_elements: int = 1 << 26
) -> np.ndarray:
    """An array of ``dtype`` and ``shape`` (``None``: any length there, at most
    ``max_elements`` in all) from an ``.npy`` stream. Its header is checked before its data
    is read, so a file declaring a huge array allocates nothing and no pickled object array
    is ever read; a float array must be finite. ``ValueError`` saying what is wrong."""
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        found, fortran, found_dtype = np.lib.format.read_array_header_1_0(f)
    elif version == (2, 0):
        found, fortran, found_dtype = np.lib.format.read_array_header_2_0(f)
    else:
        raise ValueError(f".npy format version {version} (1.0 or 2.0 expected)")
    if found_dtype != dtype:
        raise ValueError(
            f"dtype {found_dtype} ({'little-endian ' if dtype.itemsize > 1 else ''}{dtype.name} expected)"
        )
    found = tuple(found)
    if len(found) != len(shape) or any(
        want is not None and n != want for n, want in zip(found, shape, strict=False)
    ):
        raise ValueError(f"shape {found}, the architecture says {_shape_text(shape)}")
    if math.prod(found) > max_elements:
        raise ValueError(f"shape {found}: more than {max_elements} values")
    nbytes = math.prod(found) * dtype.itemsize
    data = f.read(nbytes)
    if len(data) != nbytes or f.read(1):
        raise ValueError(f"{len(data)} data bytes, {nbytes} expected")
    array = np.frombuffer(data, dtype=dtype).reshape(found, order="F" if fortran else "C")
    if dtype.kind == "f" and not np.isfinite(array).all():
        raise ValueError("non-finite values")
    return np.array(array, order="C")


def _shape_text(shape: tuple[int | None, ...]) -> str:
    return (
        "("
        + ", ".join("any" if n is None else str(n) for n in shape)
        + ("," if len(shape) == 1 else "")
        + ")"
    )


def weights_only_refusal(err: Exception, holder: str = "a policy") -> str:
    """One line of why ``torch.load(weights_only=True)`` refused a file (its message runs
    to a page): the global it names or the type it builds, which ``holder`` never holds,
    else the unpickler's own reason (``Unsupported operand 103``: not a pickle)."""
    text = str(err)
    named = re.search(r"GLOBAL (\S+) (?:was not an allowed global|whose module)", text)
    if named:
        return f"it names {named.group(1)}, which {holder} never holds"
    built = re.search(r"Can only build .*?, but got (.+)", text)
    if built:
        return f"it builds {built.group(1).strip()}, which {holder} never holds"
    unpickler = re.search(r"WeightsUnpickler error:\s*(.+)", text)
    if unpickler:
        return unpickler.group(1).strip()[:200]
    lines = [line.strip() for line in text.splitlines() if line.strip() and "documentation" not in line]
    if lines:
        return lines[0][:200]
    return "empty or cut short" if isinstance(err, EOFError) else type(err).__name__
