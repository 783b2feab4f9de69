"""Validators shared by every game's frozen config (Mexican Train, partnership dominoes).

They reject the silent coercions that hide typos: a bool where an int is meant
(``num_players=True``), an int where a flag is meant (``counter_clockwise=2``), a string
outside its known choices. Each raises ``TypeError`` for a wrong type and ``ValueError``
for a wrong value, naming the keyword (:func:`as_int` also checks the agents' knobs, which
raise one ``ValueError`` for both: its ``error=``).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["as_bool", "as_choice", "as_int", "as_optional_int"]


def as_int(
    name: str,
    value: Any,
    *,
    low: int | None = None,
    high: int | None = None,
    numpy: bool = True,
    error: type[Exception] | None = None,
) -> int:
    """``value`` as an ``int``, bools and floats rejected, in ``low..high`` where given.

    ``numpy=True`` accepts whatever ``operator.index`` takes (numpy ints, 0-d int arrays),
    ``numpy=False`` Python ints only. A wrong type is a ``TypeError`` and a value out of range
    a ``ValueError`` saying the range (``"depth must be an int >= 0, got -1"``, ``"hidden must
    be an int in 1..4096, got 0"``); with ``error``, both are that class with the range
    message (the agents' knobs raise ``ValueError`` for ``depth=True`` as for ``depth=-1``).
    """
    if isinstance(value, bool) or (not numpy and not isinstance(value, int)):
        number = None
    else:
        try:
            number = operator.index(value)
        except TypeError:
            number = None
    if number is None:
        if error is not None:
            raise error(_range_message(name, value, low, high))
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if (low is not None and number < low) or (high is not None and number > high):
        raise (error or ValueError)(_range_message(name, value, low, high))
    return number


def _range_message(name: str, value: Any, low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        bounds = f" in {low}..{high}"
    elif low is not None:
        bounds = f" >= {low}"
    elif high is not None:
        bounds = f" <= {high}"
    else:
        bounds = ""
    return f"{name} must be an int{bounds}, got {value!r}"


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
