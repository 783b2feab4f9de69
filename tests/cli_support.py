"""Shared by the command-line tests: which heavy library a refused command line imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

#: run in a fresh interpreter: each command line must exit 2; prints the first one after
#: which a library of the list was imported, with those libraries, or null
_SCRIPT = """
import contextlib, importlib, io, json, sys
module, command, cases, libraries = json.loads(sys.argv[1])
main = importlib.import_module(module).main
for argv in cases:
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            code = main([command, *argv] if command else argv)
        except SystemExit as e:
            code = e.code
    if code != 2:
        raise SystemExit(f"exit {code}, not 2, for {argv}")
    loaded = [m for m in libraries if m in sys.modules]
    if loaded:
        print(json.dumps([argv, loaded]))
        break
else:
    print("null")
"""


def imported_by_refusals(
    command: str | None, cases: list[list[str]], libraries: list[str], cwd: Path, module: str = "training.app"
) -> Any:
    """Run ``mtrain COMMAND ARGV`` (or ``python -m MODULE ARGV`` with ``command=None``) for
    every ``ARGV`` of ``cases`` in one fresh interpreter (each must be refused, exit code 2):
    ``None`` if none of ``libraries`` was imported, else ``[the first argv after which one
    was, those libraries]``."""
    res = subprocess.run(
        [sys.executable, "-c", _SCRIPT, json.dumps([module, command, cases, libraries])],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    return json.loads(res.stdout)
