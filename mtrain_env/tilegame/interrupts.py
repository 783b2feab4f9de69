"""Ctrl-C and SIGTERM on the command line: one line and exit status 130, never a traceback.

* :func:`run_main` runs a command's ``main``: SIGTERM (what a cluster scheduler sends) and
  SIGHUP (a closed terminal) are raised as ``KeyboardInterrupt`` for the time of the command
  (unless ignored, as ``nohup`` ignores SIGHUP), so all take the command's own interrupt
  path (finished work saved, the resume hint printed, pools stopped); an interrupt no
  command caught (during start-up, say) ends in one line and 130.
* :func:`workers_ignore_interrupts` (around starting worker processes) and
  :func:`ignore_interrupts` (in a worker): the terminal sends Ctrl-C to the whole process
  group, and a worker that dies on it prints its own traceback; the parent stops its
  workers itself. A process started while Ctrl-C is ignored ignores it from its first
  instruction (Python installs its KeyboardInterrupt handler only over the default), so
  a worker still importing is quiet too.
* :func:`quiet_spawn_context` (the context of a worker pool): a parent killed
  outright (SIGKILL, the OOM killer) stops nobody; its workers would finish their task and
  die on the result they can no longer send, each with a ``BrokenPipeError`` traceback on
  the stderr they share with it. Its workers end quietly instead, as soon as it is gone
  (:func:`exit_with_parent`), and so does one that was already sending its result when the
  parent died.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = [
    "exit_with_parent",
    "ignore_interrupts",
    "quiet_spawn_context",
    "run_main",
    "workers_ignore_interrupts",
]

#: the exit status of a command stopped by Ctrl-C or SIGTERM (128 + SIGINT, the shell's)
INTERRUPTED = 130
#: the exit status when the reader of stdout went away (128 + SIGPIPE, the shell's)
BROKEN_PIPE = 141
#: raised as KeyboardInterrupt while a command runs: a scheduler's stop, a closed terminal
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def run_main(main: Callable[[], object], prog: str) -> int:
    """``main()``'s exit status (0 unless it returns an int); 130 with one line naming
    ``prog`` when interrupted."""
    in_main_thread = threading.current_thread() is threading.main_thread()
    # only over the default: a signal the caller ignores (``nohup`` ignores SIGHUP) stays ignored
    stops = [sig for sig in STOP_SIGNALS if in_main_thread and signal.getsignal(sig) is signal.SIG_DFL]
    previous = {sig: signal.signal(sig, _raise_interrupt) for sig in stops}
    try:
        status = main()
        return status if isinstance(status, int) and not isinstance(status, bool) else 0
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # ``mtrain ... | head``: the reader left; nothing more to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush must not fail too
        return BROKEN_PIPE
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def ignore_interrupts() -> None:
    """Let this (worker) process ignore Ctrl-C: its parent stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def exit_with_parent() -> None:
    """Let this worker process (started by :mod:`multiprocessing`) end, without a word, as
    soon as the process that started it is gone: a daemon thread waits on the parent's
    sentinel, then exits at once (``os._exit``: nothing is flushed or sent to a parent that
    is not there). Outside a :mod:`multiprocessing` child it does nothing."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    sentinel = parent.sentinel

    def watch() -> None:
        multiprocessing.connection.wait([sentinel])
        os._exit(INTERRUPTED)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


#: how long a worker whose result could not be sent waits to see its parent gone
ORPHAN_WAIT_S = 5.0


class _QuietOrphanProcess(multiprocessing.context.SpawnProcess):
    """A spawned worker that ends without a word once its parent is gone: mid-task by
    :func:`exit_with_parent`'s watcher, and when its parent died while it was sending a
    result (the pipe broken before the watcher ran). A broken pipe while the parent still
    runs is a fault, and is raised."""

    def run(self) -> None:
        exit_with_parent()
        try:
            super().run()
        except BrokenPipeError:
            parent = multiprocessing.parent_process()
            if parent is None or not multiprocessing.connection.wait([parent.sentinel], ORPHAN_WAIT_S):
                raise
            os._exit(INTERRUPTED)


class _QuietSpawnContext(multiprocessing.context.SpawnContext):
    Process = _QuietOrphanProcess


def quiet_spawn_context() -> multiprocessing.context.SpawnContext:
    """The ``spawn`` start method, its processes ending quietly once their parent is gone
    (module docstring): ``quiet_spawn_context().Pool(...)``."""
    return _QuietSpawnContext()


@contextmanager
def workers_ignore_interrupts() -> Iterator[None]:
    """Start worker processes inside this block: they inherit an ignored Ctrl-C. This
    process's own handler is back at the end of the block (a Ctrl-C in the moment the
    workers are being started is lost; the next one stops the command)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
