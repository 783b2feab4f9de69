"""Atomic writes (:mod:`mtrain_env.tilegame.files`): the target is either its old content or
the whole new one, and no temporary file outlives the call, whether it succeeds or raises."""

from __future__ import annotations

import os
from contextlib import nullcontext
from pathlib import Path
from typing import IO

import pytest

from mtrain_env.tilegame.files import (
    atomic_path,
    atomic_write,
    atomic_writer,
    os_error_text,
    read_regular_file,
    temp_path,
)


class BoomError(Exception):
    pass


def _listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.parametrize("fsync", [True, False])
def test_atomic_write_bytes_and_text(tmp_path: Path, fsync: bool) -> None:
    raw = tmp_path / "raw.bin"
    assert atomic_write(raw, b"\x00\xffab", fsync=fsync) == raw
    text = tmp_path / "text.csv"
    atomic_write(text, "é,1\r\nx\n", fsync=fsync)  # UTF-8, newlines as given
    assert raw.read_bytes() == b"\x00\xffab"
    assert text.read_bytes() == "é,1\r\nx\n".encode()
    assert _listing(tmp_path) == ["raw.bin", "text.csv"]  # no temporary file left


def test_atomic_write_replaces_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text("old content, longer than the new", encoding="utf-8")
    atomic_write(path, "new")
    assert path.read_text(encoding="utf-8") == "new"
    assert _listing(tmp_path) == ["f.json"]


@pytest.mark.parametrize("error", [BoomError, KeyboardInterrupt])
def test_a_stream_raising_midway_leaves_the_old_file_and_no_temp(tmp_path: Path, error: type) -> None:
    path = tmp_path / "shard.npz"
    path.write_bytes(b"old")
    seen: list[Path] = []
    with pytest.raises(error), atomic_writer(path) as f:
        f.write(b"half of the new")
        f.flush()
        seen.append(Path(f.name))
        assert seen[0].read_bytes() == b"half of the new"  # really written, beside the target
        raise error
    assert seen[0].parent == tmp_path and not seen[0].exists()
    assert path.read_bytes() == b"old"
    assert _listing(tmp_path) == ["shard.npz"]


def test_a_writer_by_name_raising_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    path.write_bytes(b"old")

    def save(to: Path) -> None:  # like torch.save or Image.save: opens the file by name
        to.write_bytes(b"partial")
        raise BoomError

    with pytest.raises(BoomError), atomic_path(path) as tmp:
        save(tmp)
    assert path.read_bytes() == b"old"
    assert _listing(tmp_path) == ["checkpoint.pt"]


def test_atomic_path_renames_what_the_writer_wrote(tmp_path: Path) -> None:
    path = tmp_path / "policy.zip"
    with atomic_path(path) as tmp:
        assert tmp.parent == tmp_path and not tmp.exists()
        tmp.write_bytes(b"zip")
    assert path.read_bytes() == b"zip"
    assert _listing(tmp_path) == ["policy.zip"]


def test_a_writer_that_writes_nothing_fails_and_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_bytes(b"old")
    with pytest.raises(FileNotFoundError), atomic_path(path):
        pass
    assert path.read_bytes() == b"old"


def test_temporary_names_are_unique_hidden_and_beside_the_target(tmp_path: Path) -> None:
    target = tmp_path / "results.csv"
    names = {temp_path(target) for _ in range(100)}
    assert len(names) == 100
    for name in names:
        assert name.parent == tmp_path
        assert name.name.startswith(".results.csv.") and name.name.endswith(".tmp")
        assert f".{os.getpid()}." in name.name


def test_two_open_writers_of_one_path_do_not_collide(tmp_path: Path) -> None:
    path = tmp_path / "latest.json"
    with atomic_writer(path) as first, atomic_writer(path) as second:
        assert first.name != second.name
        first.write(b"first")
        second.write(b"second")
    assert path.read_bytes() == b"first"  # the outer block ends last: its rename wins
    assert _listing(tmp_path) == ["latest.json"]


def test_a_run_directory_has_one_writer_at_a_time(tmp_path: Path) -> None:
    """A second holder of a directory's lock is refused at once, naming the first; the lock
    goes with its holder (a process that exits, however, releases it)."""
    import subprocess
    import sys

    from mtrain_env.tilegame.files import DirectoryInUseError, run_lock

    run = tmp_path / "run"
    with run_lock(run):
        holder = "import sys; from mtrain_env.tilegame.files import run_lock\n"
        holder += "with run_lock(sys.argv[1]): pass\n"
        other = subprocess.run([sys.executable, "-c", holder, str(run)], capture_output=True, text=True)
        assert other.returncode == 1 and f"DirectoryInUseError: {run} is in use by pid " in other.stderr
        with pytest.raises(DirectoryInUseError, match="one run writes a directory at a time"), run_lock(run):
            pass
    with run_lock(run):  # released at the end of the block
        pass
    sleeper = holder.replace("pass", "print('held', flush=True); __import__('time').sleep(60)")
    killed = subprocess.Popen([sys.executable, "-c", sleeper, str(run)], stdout=subprocess.PIPE, text=True)
    assert killed.stdout is not None and killed.stdout.readline() == "held\n"
    killed.kill()
    killed.wait()
    with run_lock(run):  # a killed holder leaves no stale lock
        pass


@pytest.mark.parametrize("leave", ["normally", "raising", "interrupted"])
def test_a_run_directory_lock_leaves_no_file_behind(tmp_path: Path, leave: str) -> None:
    """The holder removes ``.lock`` as it leaves the block, however it leaves (an error,
    Ctrl-C), so a finished run's directory holds only its own files."""
    from mtrain_env.tilegame.files import LOCK_FILE, run_lock

    run = tmp_path / "run"
    raised: dict[str, type[BaseException]] = {"raising": BoomError, "interrupted": KeyboardInterrupt}
    with pytest.raises(raised[leave]) if leave in raised else nullcontext(), run_lock(run):
        (run / "results.csv").write_text("x\n")
        assert (run / LOCK_FILE).read_text() == f"pid {os.getpid()}\n"
        if leave in raised:
            raise raised[leave]
    assert _listing(run) == ["results.csv"]
    with run_lock(run):  # and the directory is free
        pass
    assert _listing(run) == ["results.csv"]


def test_a_lock_won_on_a_file_its_holder_removed_is_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Removing the file makes a race: a run that opened ``.lock`` just before its holder
    removed it and unlocked wins a lock on a file no longer there, while the next run creates
    and locks a new one. The first must see that and try again, meeting the second's lock."""
    import fcntl

    from mtrain_env.tilegame.files import LOCK_FILE, DirectoryInUseError, run_lock

    run = tmp_path / "run"
    run.mkdir()
    real_flock = fcntl.flock
    newcomer: list[IO[str]] = []

    def holder_leaves_then_flock(f: IO[str], operation: int) -> None:
        if not newcomer and operation & fcntl.LOCK_EX:  # the holder leaves; a newcomer locks anew
            (run / LOCK_FILE).unlink()
            newcomer.append(open(run / LOCK_FILE, "a+", encoding="utf-8"))  # noqa: SIM115
            real_flock(newcomer[0], fcntl.LOCK_EX | fcntl.LOCK_NB)
            newcomer[0].write("pid 4242\n")
            newcomer[0].flush()
        real_flock(f, operation)

    monkeypatch.setattr(fcntl, "flock", holder_leaves_then_flock)
    try:
        with pytest.raises(DirectoryInUseError, match="in use by pid 4242"), run_lock(run):
            pass
    finally:
        newcomer[0].close()


def test_os_error_text_is_the_systems_reason_without_errno_or_path(tmp_path: Path) -> None:
    with pytest.raises(OSError) as caught:
        (tmp_path / "absent").read_bytes()
    assert str(caught.value).startswith("[Errno")  # what the helper spares the user
    assert os_error_text(caught.value) == os.strerror(caught.value.errno) == "No such file or directory"
    assert os_error_text(OSError("no reason from the system")) == "no reason from the system"


def test_read_regular_file_reads_only_a_regular_file_within_its_limit(tmp_path: Path) -> None:
    """A FIFO (which would wait for a writer), a device (``/dev/zero`` never ends) and a
    directory are refused before a byte is read, naming their kind; a file past the limit
    is refused, one at the limit read whole."""
    data = tmp_path / "data"
    data.write_bytes(b"x" * 10)
    assert read_regular_file(data, 10) == b"x" * 10
    with pytest.raises(OSError, match="larger than 9 bytes") as caught:
        read_regular_file(data, 9)
    assert os_error_text(caught.value) == "larger than 9 bytes, the most read of it"
    os.mkfifo(tmp_path / "fifo")
    for path, kind in (
        (tmp_path / "fifo", "a FIFO"),
        ("/dev/zero", "a character device"),
        (tmp_path, "a directory"),
    ):
        with pytest.raises(OSError) as caught:
            read_regular_file(path, 1 << 20)
        assert os_error_text(caught.value) == f"not a regular file ({kind})"
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "absent", 10)
