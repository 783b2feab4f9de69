"""The env's rules engines as pytest params (``compiled`` is skipped without numba)."""

from __future__ import annotations

import importlib.util

import pytest

HAS_NUMBA = importlib.util.find_spec("numba") is not None

#: ``backend=`` values every env suite runs on
BACKENDS = [
    pytest.param("python", id="python"),
    pytest.param(
        "compiled",
        id="compiled",
        marks=pytest.mark.skipif(not HAS_NUMBA, reason="needs numba (the fast extra)"),
    ),
]
