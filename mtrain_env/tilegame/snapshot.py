"""Readers for JSON state dicts shared by every game: typed, ranged, naming the key.

Each raises ``TypeError`` for a wrong type and ``ValueError`` for a missing key or a
value out of range, so a corrupt snapshot fails loudly before anything is loaded.
"""

from __future__ import annotations

from typing import Any

__all__ = ["req", "req_bools", "req_int"]


def req(d: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    """``d[key]``, which must exist and be of ``kind`` (a bool is not an int here)."""
    if key not in d:
        raise ValueError(f"state dict is missing {key!r}")
    value = d[key]
    if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
        raise TypeError(f"state dict {key!r} must be {kind}, got {type(value).__name__}")
    return value


def req_int(d: dict[str, Any], key: str, lo: int, hi: int) -> int:
    """``d[key]`` as an int in ``lo .. hi``."""
    value = req(d, key, int)
    if not lo <= value <= hi:
        raise ValueError(f"state dict {key!r} must be in {lo}..{hi}, got {value!r}")
    return int(value)


def req_bools(d: dict[str, Any], key: str, length: int) -> list[bool]:
    """``d[key]`` as a list of ``length`` bools."""
    value = req(d, key, list)
    if len(value) != length or not all(isinstance(x, bool) for x in value):
        raise ValueError(f"state dict {key!r} must be a list of {length} bools")
    return list(value)
