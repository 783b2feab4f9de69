"""Ctrl-C and SIGTERM on the command line: one line and exit status 130, the command's own
interrupt path (finished work saved), no traceback from the pool workers."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.terminal import TerminalSession
from mtrain_env.replay import check_replay, read_replay
from mtrain_env.tilegame.interrupts import quiet_spawn_context, run_main
from tests import REPO

ROOT = REPO


def test_sigterm_takes_the_interrupt_path(capsys: pytest.CaptureFixture[str]) -> None:
    """SIGTERM (a scheduler, a closed terminal) is raised as KeyboardInterrupt for the time
    of the command: 130 and one line; the previous handler is back afterwards."""
    before = signal.getsignal(signal.SIGTERM)

    def command() -> int:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)  # interrupted long before
        return 0

    started = time.monotonic()
    assert run_main(command, "mtrain x") == 130
    assert time.monotonic() - started < 5
    assert capsys.readouterr().err == "\nmtrain x: interrupted\n"
    assert signal.getsignal(signal.SIGTERM) is before
    # a stop signal the caller ignores stays ignored (nohup ignores SIGHUP)
    hangup = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert run_main(lambda: os.kill(os.getpid(), signal.SIGHUP) or 5, "mtrain x") == 5
    finally:
        signal.signal(signal.SIGHUP, hangup)
    assert run_main(lambda: 3, "mtrain x") == 3 and run_main(lambda: {"rate": 1.0}, "mtrain x") == 0


def test_ctrl_c_at_the_prompt_saves_the_game_so_far(tmp_path: Path) -> None:
    """``mtrain play``: Ctrl-C quits as ``q`` does (the replay so far is saved and
    re-simulates), with exit status 130 (it printed a traceback and saved nothing)."""
    answers = iter(["1"])

    def read(prompt: str) -> str:
        try:
            return next(answers)
        except StopIteration:
            raise KeyboardInterrupt from None

    out = io.StringIO()
    session = TerminalSession("mexican_train", {"num_players": 2, "max_pips": 6}, ["planner"], 4, read, out)
    save = tmp_path / "game.jsonl"
    assert session.run(save) == 130
    replay = read_replay(save)
    check_replay(replay)
    forced = out.getvalue().count("(your only move: played for you)")  # played without asking
    assert replay.final is None and sum(1 for s in replay.steps if s.seat == 0) == 1 + forced
    assert "you quit; the game so far is saved" in out.getvalue()


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("when", [0, 2000], ids=["while-workers-start", "mid-run"])
def test_ctrl_c_stops_a_bench_on_two_workers_without_tracebacks(tmp_path: Path, when: int) -> None:
    """Ctrl-C reaches the whole process group: the pool workers ignore it from their first
    instruction, still importing or playing (they printed a traceback each), and the parent
    stops them, saves the finished deals, exits 130. ``when``: the bytes of results.csv
    written before the interrupt (0: as soon as the file exists, the workers starting)."""
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "training.app", "bench", "--agents", "planner", "greedy", "--players", "2"]
    cmd += ["--max-pips", "6", "--deals", "100000", "--workers", "2", "--out", str(out), "--no-plots"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    # Ctrl-C as a terminal delivers it, to a command that has not inherited an ignored SIGINT:
    # a suite started in the background of a non-interactive shell (`make test &`) runs with
    # SIGINT ignored (POSIX), the child would inherit that, and Python keeps an inherited
    # SIG_IGN, rightly: a background job is meant to ignore Ctrl-C
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, preexec_fn=_default_sigint, **pipes)  # type: ignore[call-overload]
    deadline = time.monotonic() + 120
    results = out / "results.csv"
    while time.monotonic() < deadline and not (results.exists() and results.stat().st_size >= when):
        time.sleep(0.2)
    for _attempt in range(3):  # a Ctrl-C in the moment the pool is being started is lost: again
        os.killpg(proc.pid, signal.SIGINT)
        try:
            stdout, stderr = proc.communicate(timeout=15)
            break
        except subprocess.TimeoutExpired:
            continue
    else:
        proc.kill()
        stdout, stderr = proc.communicate()
        pytest.fail(f"three Ctrl-C did not stop mtrain bench: {stdout[-300:]!r}, {stderr[-600:]!r}")
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert "interrupted; finished deals are saved" in stdout or stderr == "\nmtrain bench: interrupted\n"


def test_a_reader_that_leaves_ends_the_command_quietly() -> None:
    """``mtrain replay show FILE | head``: the pipe's reader left: exit 141, no BrokenPipeError
    traceback (from the command or from the interpreter's last flush)."""
    script = "import sys\nfrom mtrain_env.tilegame.interrupts import run_main\n"
    script += "def main():\n    raise BrokenPipeError(32, 'Broken pipe')\n"
    script += "sys.exit(run_main(main, 'mtrain x'))\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 141 and done.stderr == ""


#: a parent that starts one worker of quiet_spawn_context and waits to be killed; the
#: worker, holding the GIL, raises the BrokenPipeError that sending a result to its dead
#: parent raises. ``handler``: the worker's exit-with-parent watcher is never started, so
#: that only the handler of that error can keep it quiet; ``both``: the watcher races it
ORPHAN = """
import os, sys, time

from mtrain_env.tilegame import interrupts

if sys.argv[1] == "handler":  # run in the worker too, before its target
    interrupts.exit_with_parent = lambda: None


def send_after_the_parent_died():
    sys.setswitchinterval(1000)  # a watcher gets few turns
    parent = os.getppid()
    os.write(1, b"looping\\n")  # the test kills the parent once it reads this
    while os.getppid() == parent:  # no blocking call: the GIL is not released
        pass
    raise BrokenPipeError(32, "Broken pipe")


if __name__ == "__main__":
    interrupts.quiet_spawn_context().Process(target=send_after_the_parent_died).start()
    time.sleep(120)
"""


@pytest.mark.parametrize("guard", ["handler", "both"])
def test_a_worker_sending_to_a_killed_parent_ends_quietly(tmp_path: Path, guard: str) -> None:
    """The race a pool worker can lose: its parent SIGKILLed while it sends a result,
    before the exit-with-parent watcher ends it. A worker of :func:`quiet_spawn_context`
    says nothing, with the watcher and without it (where a plain spawned worker prints
    the BrokenPipeError's traceback)."""
    script = tmp_path / "orphan.py"
    script.write_text(ORPHAN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(script), guard],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"looping\n"
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=60)  # EOF once the worker has closed stderr too
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert b"Traceback" not in err and b"Process" not in err, err.decode()


def _broken_pipe() -> None:
    raise BrokenPipeError(32, "Broken pipe")


def test_a_broken_pipe_of_a_worker_whose_parent_runs_is_raised() -> None:
    """Only a parent's death is quiet: run here, where no parent is gone, the error is raised."""
    with pytest.raises(BrokenPipeError):
        quiet_spawn_context().Process(target=_broken_pipe).run()
