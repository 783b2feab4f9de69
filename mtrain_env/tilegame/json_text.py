"""Reading JSON that came from a file: one exception for every way it can be wrong.

``json.loads`` raises ``ValueError`` (``JSONDecodeError``) for malformed text, but
``RecursionError`` for text nested past the interpreter's recursion limit (a few KB of
``[[[[``); readers that catch ``ValueError`` to name a damaged file would let that one
escape as a crash. :func:`loads` turns it into a ``ValueError`` too, and :func:`read_file`
does the same for a file's bytes (text that is not UTF-8 is a ``ValueError`` there as well).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["loads", "read_file", "read_object"]


def loads(text: str | bytes, **kwargs: Any) -> Any:
    """``json.loads(text, **kwargs)``; every failure to parse is a ``ValueError``."""
    try:
        return json.loads(text, **kwargs)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None


def read_file(path: str | os.PathLike[str]) -> Any:
    """The JSON value in the file at ``path``. A file that is not JSON (not UTF-8 text,
    malformed, nested too deeply) is a ``ValueError`` saying which, without the path (the
    caller names the file); a file that cannot be read is the ``OSError`` it raised."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"not UTF-8 text: {err.reason} at byte {err.start}") from None
    return loads(text)


def read_object(path: str | os.PathLike[str]) -> dict[str, Any]:
    """:func:`read_file` for a file that must hold a JSON object; anything else (a list, a
    number...) is a ``ValueError`` naming what it holds."""
    value = read_file(path)
    if not isinstance(value, dict):
        raise ValueError(f"must hold a JSON object, got {type(value).__name__}")
    return value
