"""Which optional extras are installed, and the one line that says how to get a missing one.

Commands that need an extra (numba for the compiled core, OpenSpiel for the speed reference
and the block cross-check) ask here before they start, so a missing extra is one clear line
naming it, never a traceback halfway through. Only the module's presence is checked
(:func:`importlib.util.find_spec`): nothing is imported here.
"""

from __future__ import annotations

import importlib.util

#: extra -> the top-level module that shows it is installed
EXTRA_MODULES: dict[str, str] = {"fast": "numba", "openspiel": "pyspiel"}


def missing_extra(extra: str, needed_by: str) -> str | None:
    """``None`` when ``extra`` is installed, else one line: what needs it and how to install it."""
    module = EXTRA_MODULES[extra]
    if importlib.util.find_spec(module) is not None:
        return None
    return (
        f"{needed_by} needs {module}, which is not installed "
        f"(install the `{extra}` extra: pip install 'mtrain_env[{extra}]')"
    )
