"""Numba cache stamps that watch the files a kernel inlines, not only its own.

Numba caches a function by the file it is defined in: a kernel that calls (and so inlines)
functions of another file would keep running stale machine code after that file changed.
:func:`cache_watching` registers a cache locator that adds the named files' hashes to a
module's cache stamp, so editing any of them recompiles the module's kernels.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

__all__ = ["cache_watching"]

#: module file -> the files whose hashes join its cache stamp
_WATCHED: dict[str, tuple[str, ...]] = {}


def _locator_class(caching: Any, base_classes: list[Any]) -> Any:
    class _WatchingLocator(caching._CacheLocator):
        def __init__(self, inner: Any, watched: tuple[str, ...]) -> None:
            self._inner = inner
            self._watched = watched

        def ensure_cache_path(self) -> None:
            self._inner.ensure_cache_path()

        def get_cache_path(self) -> str:
            return str(self._inner.get_cache_path())

        def get_source_stamp(self) -> Any:
            digests = []
            for path in self._watched:
                with open(path, "rb") as f:
                    digests.append(hashlib.sha256(f.read()).digest())
            return (self._inner.get_source_stamp(), tuple(digests))

        def get_disambiguator(self) -> str:
            return str(self._inner.get_disambiguator())

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            watched = _WATCHED.get(os.path.abspath(py_file))
            if watched is None:
                return None
            for base in base_classes:
                inner = base.from_function(py_func, py_file)
                if inner is not None:
                    return cls(inner, watched)
            return None

    return _WatchingLocator


def cache_watching(module_file: str, *watched: str) -> bool:
    """Make ``module_file``'s numba cache stamp include the hashes of the ``watched`` files.

    Returns whether caching is safe (pass it as ``njit(cache=...)``): False when numba's
    (private) cache API is not the one expected, and the kernels are then not cached.
    """
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - numba without its caching module
        return False
    impl = getattr(caching, "CacheImpl", None)
    base_classes = [c for c in getattr(impl, "_locator_classes", ()) if c.__name__ != "_WatchingLocator"]
    if impl is None or not base_classes or not hasattr(caching, "_CacheLocator"):
        return False
    _WATCHED[os.path.abspath(module_file)] = tuple(os.path.abspath(w) for w in watched)
    if not any(c.__name__ == "_WatchingLocator" for c in impl._locator_classes):
        impl._locator_classes.insert(0, _locator_class(caching, base_classes))
    return True
