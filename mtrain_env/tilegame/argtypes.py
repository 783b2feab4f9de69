"""Command-line argument checks every layer's commands share: argparse ``type`` functions
that name the bound and the value, and :func:`output_problem`, asked before any work so
that a typo in an output path costs nothing. (Game-agnostic: the lowest layer, so a
benchmark module of a game may use them as well as the ``mtrain`` entry points.)"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from mtrain_env.tilegame.files import os_error_text

__all__ = [
    "OneLineErrorParser",
    "int_at_least",
    "integer",
    "non_negative_float",
    "number",
    "output_problem",
    "positive_float",
    "refuse_output",
]


class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser whose bad command line gets one line naming the problem (exit
    status 2), not argparse's usage block above it: ``mtrain`` and every ``python -m`` tool."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


def integer(text: str) -> int:
    """An argparse ``type``: an int (its range is checked where the option is used)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def number(text: str) -> float:
    """An argparse ``type``: a float (its range is checked where the option is used)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def int_at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type``: an int >= ``low`` (the error names the bound and the value)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an int >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an int >= {low}, got {value}")
        return value

    return parse


def output_problem(path: str | os.PathLike[str], kind: str = "file") -> str | None:
    """Why an output ``kind`` (``"file"`` or ``"directory"``) cannot be written at ``path``,
    missing parent directories created on the way, or None if it can. Commands ask before any
    work, so a typo costs nothing: an existing path of the other kind, a parent that is a
    file, or a directory that refuses new files (tried with a temporary file that is
    removed at once: permission bits alone do not tell, for root or on special filesystems)."""
    if not str(path):
        return "expected a path"
    target = Path(path)
    try:
        return _output_problem(target, kind)
    except OSError as err:  # e.g. a name longer than the file system allows (ENAMETOOLONG)
        return f"cannot use {target} ({os_error_text(err)})"


def _output_problem(target: Path, kind: str) -> str | None:
    """:func:`output_problem` of a non-empty path; ``OSError`` when it cannot even be looked at."""
    if kind == "file" and target.is_dir():
        return f"{target} is a directory"
    if kind == "directory" and target.exists() and not target.is_dir():
        return f"{target} is a file, not a directory"
    base = next(
        d
        for d in [target if kind == "directory" else target.parent, *target.absolute().parents]
        if d.exists()
    )
    if not base.is_dir():
        return f"cannot create {target}: {base} is a file"
    try:
        with tempfile.TemporaryFile(dir=base):
            pass
    except OSError as err:
        return f"cannot write in {base} ({os_error_text(err)})"
    return None


def refuse_output(parser: argparse.ArgumentParser, option: str, path: Any, kind: str = "file") -> None:
    """``parser.error`` (exit 2, nothing written) when :func:`output_problem` finds one."""
    problem = None if path is None else output_problem(path, kind)
    if problem is not None:
        parser.error(f"{option}: {problem}")


def _finite_float(bound: str, low_ok: bool) -> Callable[[str], float]:
    """An argparse ``type``: a finite number ``bound`` (``> 0``, or ``>= 0`` with ``low_ok``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number {bound}, got {text!r}") from None
        if not (value >= 0 if low_ok else value > 0) or value == float("inf"):
            raise argparse.ArgumentTypeError(f"must be a number {bound}, got {text}")
        return value

    return parse


#: an argparse ``type``: a finite number > 0
positive_float = _finite_float("> 0", low_ok=False)
#: an argparse ``type``: a finite number >= 0
non_negative_float = _finite_float(">= 0", low_ok=True)
