"""Reading JSON that came from a file: one exception for every way it can be wrong.

``json.loads`` raises ``ValueError`` (``JSONDecodeError``) for malformed text, but
``RecursionError`` for text nested past the interpreter's recursion limit (a few KB of
``[[[[``); readers that catch ``ValueError`` to name a damaged file would let that one
escape as a crash. :func:`loads` turns it into a ``ValueError`` too.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["loads"]


def loads(text: str | bytes, **kwargs: Any) -> Any:
    """``json.loads(text, **kwargs)``; every failure to parse is a ``ValueError``."""
    try:
        return json.loads(text, **kwargs)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None
