"""Running a script in a fresh interpreter: this checkout's, or another venv's.

:data:`BLOCK_IMPORTS` is a script preamble that makes the top-level modules named in
``sys.argv[1]`` (comma-separated) unimportable and records every attempt in ``tried``;
:func:`run_script` runs a script and returns the JSON object its last output line prints.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

BLOCK_IMPORTS = """
import json, sys

BLOCKED = set(sys.argv[1].split(","))
tried = []


class BlockImports:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            tried.append(name)
            raise ImportError(f"{name} is blocked by the test")
        return None


sys.meta_path.insert(0, BlockImports())
"""


def run_script(code: str, *args: str, python: str = sys.executable, checkout: bool = True) -> dict[str, Any]:
    """Run ``code`` with ``python`` and return the JSON its last output line holds.

    ``checkout=True`` puts this checkout first on the path; ``False`` runs from a neutral
    directory with no ``PYTHONPATH`` (the interpreter's installed packages only).
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if checkout:
        env["PYTHONPATH"] = str(ROOT)
    cwd = ROOT if checkout else Path(python).parent
    proc = subprocess.run(
        [python, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    return json.loads(proc.stdout.splitlines()[-1])
