"""One writer per run directory for the training commands: :func:`run_locked`.

``mtrain train``, ``mtrain selfplay`` and the ``python -m`` labelling tools run their whole
job under :func:`mtrain_env.tilegame.files.run_lock` on ``--out``, so a second run on the
same directory (a requeued job, the same command in a second terminal) is refused at once
with one line naming the holder, instead of interleaving checkpoints and curves.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TypeVar

from mtrain_env.tilegame.files import LOCK_FILE, DirectoryInUseError, os_error_text, run_lock

__all__ = ["run_locked"]

P = TypeVar("P")


def run_locked(
    out: str | Path,
    prepare: Callable[[], P | None],
    run: Callable[[P], int],
    refuse: Callable[[str], int],
) -> int:
    """``run(prepare())`` holding ``out``'s single-writer lock; the exit status.

    ``prepare`` does the command's checks (reading ``out``): the prepared run, or ``None``
    when it refused the command line (it printed why; the status is 2). ``refuse(text)``
    prints one line for a directory in use (or one that cannot be locked) and returns the
    status. The lock is taken before ``prepare`` reads ``out``. Only a directory with no
    ``.lock`` in it (none yet, or its last run finished: a holder removes the file as it
    leaves) is checked once beforehand, so that a refused command line creates no directory
    and no lock file; the checks run again under the lock, as another run may have started
    there meanwhile.
    """
    path = Path(out)
    if (not str(out) or not (path / LOCK_FILE).exists()) and prepare() is None:
        return 2
    with ExitStack() as stack:
        try:
            stack.enter_context(run_lock(path))
        except DirectoryInUseError as err:
            return refuse(str(err))
        except OSError as err:  # e.g. a read-only directory
            return refuse(f"cannot lock {path}: {os_error_text(err)}")
        prepared = prepare()
        status = 2 if prepared is None else run(prepared)
    return status
