"""Run every notebook top to bottom and save it with its outputs (``make notebooks``).

The notebooks are committed executed, so a reader sees tables and plots on the page.
Budgets come from ``MTRAIN_NB_DEALS`` / ``MTRAIN_NB_STEPS`` (each notebook's defaults when
unset; the test suite runs them small). ``python notebooks/execute.py [NAME ...]``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent


def execute(path: Path) -> float:
    """Execute ``path`` in place (working directory: a scratch dir); returns the seconds taken."""
    book = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        book, timeout=3600, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
    ).execute()
    nbformat.write(book, path)
    return time.perf_counter() - start


def main(names: list[str]) -> int:
    paths = [HERE / n for n in names] if names else sorted(HERE.glob("*.ipynb"))
    for path in paths:
        print(f"{path.name}: {execute(path):.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
