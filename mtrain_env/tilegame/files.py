"""Atomic file writes: a file is either wholly its old self or wholly the new one.

Every writer of the package and of ``agents`` and ``training`` goes through here (replays,
policy files, checkpoints, CSV curves, run summaries). The new bytes go to a temporary file
in the target's directory, named after the target, the process id and a random suffix
(``.<name>.<pid>.<hex>.tmp``: two writers of one path never share a temporary file, and a
listing by suffix never picks one up). The file is synced, then renamed over the target
(``os.replace``, atomic within one file system), then the directory is synced where the
system allows it. On any failure, ``KeyboardInterrupt`` included, the temporary file is
removed and the error re-raised: the target is left as it was.

* :func:`atomic_write` for bytes or text already in memory;
* :func:`atomic_writer` for a writer that streams into a binary file (``np.savez``);
* :func:`atomic_path` for a writer that opens the file by name (``zipfile``, ``torch.save``,
  PIL's ``Image.save``).

A writer killed outright (SIGKILL, a power cut) leaves its temporary file behind:
:func:`remove_temp_files` removes those of a run directory, called by a run that holds the
directory's lock before it writes anything.

And :func:`run_lock`: one writer per run directory at a time, :func:`os_error_text`: how
every command names the reason a file could not be read or written, and
:func:`read_regular_file`: a reader that never waits on a FIFO nor reads a device without end.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, BinaryIO

__all__ = [
    "LOCK_FILE",
    "TEMP_NAME",
    "DirectoryInUseError",
    "atomic_path",
    "atomic_write",
    "atomic_writer",
    "os_error_text",
    "read_regular_file",
    "remove_temp_files",
    "run_lock",
    "temp_path",
]


def os_error_text(err: OSError) -> str:
    """The reason an OS call failed, as a user should read it: the system's own words
    (``strerror``, e.g. "Permission denied") without the errno and path Python adds, or the
    error's text where the system gave none."""
    return err.strerror or str(err)


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at ``path``, refused past ``limit`` bytes.

    Opened without blocking and checked to be a regular file before a byte is read: a FIFO
    named like a data file would wait for a writer forever, and a device such as
    ``/dev/zero`` never ends. Raises ``OSError`` when the file cannot be opened, is not a
    regular file (``strerror`` names its kind) or holds more than ``limit`` bytes (read at
    most ``limit + 1`` of them, even while it grows).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "of another kind")
            raise OSError(errno.EINVAL, f"not a regular file ({kind})", os.fspath(path))
        too_large = OSError(errno.EFBIG, f"larger than {limit} bytes, the most read of it", os.fspath(path))
        if info.st_size > limit:
            raise too_large
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:  # it grew past the limit while being read
            raise too_large
        return b"".join(chunks)
    finally:
        os.close(fd)


def temp_path(target: Path) -> Path:
    """A fresh temporary name beside ``target`` (hidden, unique to this process and call)."""
    return target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


#: the names :func:`temp_path` gives (``.<target>.<pid>.<8 hex digits>.tmp``) and nothing else
TEMP_NAME = re.compile(r"\..+\.[0-9]+\.[0-9a-f]{8}\.tmp")


def remove_temp_files(directory: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files that killed writers left in ``directory`` and below (regular
    files named as :data:`TEMP_NAME`, nothing else); the paths removed. Only for a caller that
    holds ``directory``'s :func:`run_lock`: no other writer of it can be running then."""
    removed = []
    for root, _dirs, files in os.walk(directory):  # links to directories are not followed
        for name in sorted(files):
            path = Path(root) / name
            if TEMP_NAME.fullmatch(name) and path.is_file() and not path.is_symlink():
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def _fsync_file(path: Path) -> None:
    # Windows commits a file only through a handle that may write
    fd = os.open(path, os.O_RDWR if os.name == "nt" else os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable; skipped where a directory cannot be opened or synced
    (Windows, some network file systems): the rename has happened either way."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_path(path: str | os.PathLike[str], *, fsync: bool = True) -> Iterator[Path]:
    """Yield a temporary path for the caller to write ``path``'s new content to; on leaving
    the block, rename it over ``path`` (synced first when ``fsync``). If the block raises,
    the temporary file is removed and ``path`` left untouched."""
    target = Path(path)
    tmp = temp_path(target)
    try:
        yield tmp
        if fsync:
            _fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if fsync:
        _fsync_dir(target.parent)


@contextmanager
def atomic_writer(path: str | os.PathLike[str], *, fsync: bool = True) -> Iterator[BinaryIO]:
    """Yield a binary file to write ``path``'s new content to (:func:`atomic_path`'s rules)."""
    with atomic_path(path, fsync=fsync) as tmp, open(tmp, "xb") as f:  # the umask's permissions
        yield f


def atomic_write(path: str | os.PathLike[str], data: bytes | str, *, fsync: bool = True) -> Path:
    """Replace ``path``'s content by ``data`` (text as UTF-8, newlines untranslated); ``path``."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_writer(path, fsync=fsync) as f:
        f.write(payload)
    return Path(path)


class DirectoryInUseError(RuntimeError):
    """Another process holds a run directory's lock (:func:`run_lock`)."""


LOCK_FILE = ".lock"


@contextmanager
def run_lock(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold ``directory``'s single-writer lock for the block: a second run writing the same
    directory (a requeued job, the same command in another terminal) is refused at once with
    :class:`DirectoryInUseError` naming the holder, instead of interleaving its writes.

    An advisory ``flock`` on ``directory/.lock`` (created, and the directory too): the
    system releases it when the holder exits, however it exits, so a killed run never leaves
    a stale lock. The holder removes the file as it leaves the block (normally, on an error or
    on Ctrl-C), so a finished run leaves only its own files; only a killed one leaves it
    behind, unheld. Where ``fcntl`` is missing (Windows) the block runs unlocked.
    """
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    lock = path / LOCK_FILE
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks of this kind
        yield lock
        return
    f = _hold(lock, path)
    try:
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}\n")
        f.flush()
        yield lock
    finally:
        with suppress(OSError):  # tidying only: a file left behind is locked again as it is
            lock.unlink()  # while still held: no one can win the lock on this file now
        fcntl.flock(f, fcntl.LOCK_UN)
        f.close()


def _hold(lock: Path, directory: Path) -> IO[str]:
    """``lock`` opened and ``flock``-ed by this process, or :class:`DirectoryInUseError`.

    A holder removes the file before it unlocks, so a lock won on a file already removed
    (opened just before its holder left) guards nothing: the next run creates a new file of
    that name. Such a lock is dropped and the file opened again.
    """
    import fcntl

    while True:
        f = open(lock, "a+", encoding="utf-8")  # noqa: SIM115 - returned open, or closed here
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _same_file(f, lock):
                return f
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            f.close()
            raise DirectoryInUseError(
                f"{directory} is in use by {holder} (one run writes a directory at a time)"
            ) from None
        except BaseException:
            f.close()
            raise
        f.close()


def _same_file(f: IO[str], path: Path) -> bool:
    """Whether the open file ``f`` is the file at ``path`` (not a removed one of that name)."""
    try:
        now = path.stat()
    except FileNotFoundError:
        return False
    held = os.fstat(f.fileno())
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)
