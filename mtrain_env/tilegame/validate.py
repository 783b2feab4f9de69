"""Validators shared by every game's frozen config (Mexican Train, partnership dominoes).

They reject the silent coercions that hide typos: a bool where an int is meant
(``num_players=True``), an int where a flag is meant (``counter_clockwise=2``), a string
outside its known choices. Each raises ``TypeError`` for a wrong type and ``ValueError``
for a wrong value, naming the keyword.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["as_bool", "as_choice", "as_int", "as_optional_int"]


def as_int(name: str, value: Any) -> int:
    """``value`` as an ``int`` (numpy ints accepted, bools and floats rejected)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got bool {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}") from None


def as_optional_int(name: str, value: Any) -> int | None:
    """``None`` or :func:`as_int`."""
    return None if value is None else as_int(name, value)


def as_bool(name: str, value: Any) -> bool:
    """``value`` as a ``bool``; numpy bools are accepted, ints (a likely typo) are not."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")


def as_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """``value`` if it is one of ``choices`` (strings)."""
    options = tuple(choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {options}, got {type(value).__name__} {value!r}")
    if value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value
