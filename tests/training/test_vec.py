"""``ShardedVecEnv`` error paths: an env raising in a worker gives that worker's traceback,
leaves every pipe in step with its worker, and does not hang ``close``.

The envs are tiny stand-ins (no game): what is under test is the worker plumbing.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from training.vec import ShardedVecEnv

CLOSE_TIMEOUT_S = 20.0


class Boom(gym.Env[np.ndarray, int]):
    """An env that raises in ``step`` (and in ``explode``) when built with ``bad=True``."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, bad: bool, bad_reset: bool = False) -> None:
        self.bad = bad
        self.bad_reset = bad_reset
        self.callback = lambda: None  # an attribute whose value does not pickle
        self.resets = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        self.resets += 1
        if self.bad_reset and self.resets > 1:
            raise ValueError("reset bug")
        return np.zeros(2, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self.bad:
            raise ValueError("engine bug")
        return np.zeros(2, np.float32), 0.0, False, False, {}

    def explode(self) -> str:
        """Raise in the bad env, answer in the good one."""
        if self.bad:
            raise ValueError("method bug")
        return "fine"


def _make(bad: bool, bad_reset: bool = False) -> Callable[[], gym.Env]:
    return lambda: Boom(bad, bad_reset)


def _closes_in_time(venv: ShardedVecEnv) -> bool:
    """Run ``close`` in a thread; if it is still blocked after the timeout, kill the workers."""
    thread = threading.Thread(target=venv.close, daemon=True)
    thread.start()
    thread.join(CLOSE_TIMEOUT_S)
    if not thread.is_alive():
        return True
    for process in venv.processes:  # unblock the stuck recv so the test run can go on
        process.terminate()
    thread.join(CLOSE_TIMEOUT_S)
    return False


@pytest.fixture
def venv() -> Iterator[ShardedVecEnv]:
    """Two workers, one env each; worker 0's env raises in ``step`` and ``explode``."""
    env = ShardedVecEnv([_make(True), _make(False)], workers=2, start_method="fork")
    yield env
    if not env.closed:
        for process in env.processes:
            process.terminate()


def test_a_step_error_names_the_worker_and_close_returns(venv: ShardedVecEnv) -> None:
    venv.reset()
    with pytest.raises(RuntimeError, match=r"(?s)error in env worker 0:.*engine bug"):
        venv.step(np.array([0, 0]))
    assert not venv.waiting
    assert _closes_in_time(venv), f"close() still blocked after {CLOSE_TIMEOUT_S} s"
    assert venv.closed


def test_a_method_error_leaves_the_other_workers_replies_read(venv: ShardedVecEnv) -> None:
    with pytest.raises(RuntimeError, match=r"(?s)error in env worker 0:.*method bug"):
        venv.env_method("explode")
    # worker 1's reply to ``explode`` was consumed, so it cannot answer this call instead
    assert venv.get_attr("bad") == [True, False]
    assert _closes_in_time(venv)


def test_an_answer_that_does_not_pickle_is_an_error_and_the_worker_answers_on(venv: ShardedVecEnv) -> None:
    with pytest.raises(RuntimeError, match=r"(?s)error in env worker 0:.*pickle"):
        venv.get_attr("callback")  # a lambda: pickle refuses it
    assert venv.get_attr("bad") == [True, False]
    assert _closes_in_time(venv)


def test_a_reset_error_leaves_the_other_workers_replies_read() -> None:
    venv = ShardedVecEnv([_make(False, bad_reset=True), _make(False)], workers=2, start_method="fork")
    try:
        venv.reset()
        with pytest.raises(RuntimeError, match=r"(?s)error in env worker 0:.*reset bug"):
            venv.reset()
        assert venv.get_attr("resets") == [2, 2]
        assert _closes_in_time(venv)
    finally:
        if not venv.closed:
            for process in venv.processes:
                process.terminate()


def test_close_after_the_workers_died_mid_step_does_not_raise() -> None:
    """A worker gone during a step (killed, or quit on its own) leaves a closed or reset pipe:
    ``close`` drains what it can and returns (it raised EOFError / ConnectionResetError)."""
    venv = ShardedVecEnv([_make(False), _make(False)], workers=2, start_method="fork")
    venv.reset()
    for process in venv.processes:
        process.kill()
        process.join(CLOSE_TIMEOUT_S)
    venv.waiting = True  # interrupted between step_async and step_wait
    assert _closes_in_time(venv)
    assert venv.closed


def test_a_worker_ignores_sigint_so_the_learner_drives_shutdown() -> None:
    """Ctrl-C reaches the whole process group; the workers stay up for ``close``."""
    venv = ShardedVecEnv([_make(False), _make(False)], workers=2, start_method="fork")
    try:
        venv.reset()  # the workers are in their command loop
        for process in venv.processes:
            assert process.pid is not None
            os.kill(process.pid, signal.SIGINT)
        for process in venv.processes:
            process.join(0.5)
            assert process.is_alive(), "a worker quit on SIGINT"
        venv.step(np.array([0, 0]))  # and still answers
        assert _closes_in_time(venv)
    finally:
        if not venv.closed:
            for process in venv.processes:
                process.terminate()


@pytest.mark.parametrize("when", ["waiting", "stepping"])
def test_a_worker_whose_learner_is_gone_ends_quietly(when: str) -> None:
    """A learner killed outright (SIGKILL, the OOM killer) closes its ends of the pipes: a
    worker waiting for a command while its last answer was unread finds its pipe reset, one
    stepping finds it broken when it answers. Either ends (exit status 0)
    instead of dying on a traceback on the stderr it shares with the learner."""
    venv = ShardedVecEnv([_make(False)], workers=1, start_method="fork")
    (learner,), (worker,) = venv.remotes, venv.processes
    try:
        learner.send(("reset", [(0, None)]))
        if when == "waiting":
            assert learner.poll(CLOSE_TIMEOUT_S)  # answered; the answer is never read
        learner.close()
        worker.join(CLOSE_TIMEOUT_S)
        assert worker.exitcode == 0
    finally:
        if worker.is_alive():
            worker.terminate()
