"""The env's rules engines as pytest params (``compiled`` is skipped without numba)."""

from __future__ import annotations

import importlib.util

import pytest

HAS_NUMBA = importlib.util.find_spec("numba") is not None

#: skips a test of the compiled backend where numba is not installed
NEEDS_NUMBA = pytest.mark.skipif(not HAS_NUMBA, reason="needs numba (the fast extra)")

#: ``backend=`` values every env suite runs on
BACKENDS = [pytest.param("python", id="python"), pytest.param("compiled", id="compiled", marks=NEEDS_NUMBA)]
