"""Self-play collected by Ray actors: the local run's curve and policy bytes with 1 and 2
actors (one of the two killed mid-run and restarted by Ray with the same data), a learner killed by
SIGKILL resumed with the actors to the uninterrupted curve, and the command line's refusals
(an unreachable head, actors the games cannot hold, a device torch does not see)."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from tests import REPO  # noqa: E402
from training.app import main as mtrain  # noqa: E402
from training.selfplay.config import RunOptions  # noqa: E402
from training.selfplay.learner import SelfPlayConfig  # noqa: E402
from training.selfplay.ray_collect import RayCollectors  # noqa: E402
from training.selfplay.run import run_selfplay  # noqa: E402

#: 130 games: three blocks of 64 games (64, 64, 2), so two actors step 64 and 66 games
CONFIG = SelfPlayConfig(
    num_players=3,
    max_pips=6,
    num_games=130,
    steps=6,
    hidden=16,
    pair_hidden=8,
    minibatch=128,
    epochs=1,
    seed=3,
)
#: the same run on the command line
ARGV = [
    *["--players", "3", "--max-pips", "6", "--games", "130", "--rollout-steps", "6", "--hidden", "16"],
    *["--pair-hidden", "8", "--minibatch", "128", "--epochs", "1", "--seed", "3", "--no-progress"],
    *["--eval-deals", "2", "--eval-opponents", "random", "--device", "cpu"],
]
DECISIONS = CONFIG.num_games * CONFIG.steps  # an update's


def _options(**kw: Any) -> RunOptions:
    base = {
        "total_steps": 4 * DECISIONS,
        "eval_every": 2 * DECISIONS,
        "eval_deals": 2,
        "eval_opponents": ("random",),
        "checkpoint_every": 1,
        "progress": False,
        "device": "cpu",
    }
    return RunOptions(**{**base, **kw})


def _curve(out: Path) -> list[dict[str, str]]:
    """curve.csv's rows without ``wall_s`` (the one column that is the clock's)."""
    with (out / "curve.csv").open(newline="") as f:
        return [{k: v for k, v in row.items() if k != "wall_s"} for row in csv.DictReader(f)]


@pytest.fixture(scope="module")
def local_ray() -> Any:
    """A local Ray instance of two CPUs for the module's tests."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run collected in this process."""
    out = tmp_path_factory.mktemp("local") / "run"
    run_selfplay(CONFIG, out, _options())
    assert len(_curve(out)) == 3  # evaluations at 0, 2 and 4 updates
    return out


def test_one_ray_actor_gives_the_local_run(local_ray: Any, reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    collectors = RayCollectors(CONFIG, 1)
    assert [hi - lo for lo, hi in collectors.parts] == [130]
    learner = run_selfplay(CONFIG, out, _options(), collectors=collectors)
    assert learner.env_steps == 4 * DECISIONS
    assert _curve(out) == _curve(reference)
    assert (out / "policy.npz").read_bytes() == (reference / "policy.npz").read_bytes()
    assert collectors.actors == []  # closed with the run


class _KillingCollectors(RayCollectors):
    """Kills actor 0 (Ray restarts it) right after its ``kill_at``-th rollout was sent."""

    def __init__(self, *args: Any, kill_at: int) -> None:
        super().__init__(*args)
        self.calls, self.kill_at = 0, kill_at

    def submit(self, weights: dict[str, np.ndarray]) -> list[Any]:
        refs = super().submit(weights)
        self.calls += 1
        if self.calls == self.kill_at:
            ray.kill(self.actors[0], no_restart=False)
        return refs


def test_two_actors_give_the_local_run_and_a_killed_one_collects_the_same_slice(
    local_ray: Any, reference: Path, tmp_path: Path
) -> None:
    """Two actors of 64 and 66 games; actor 0 is killed after the second of four rollouts
    was sent (the first is a plain two-actor rollout): Ray restarts it, and the run is the
    local one."""
    out = tmp_path / "run"
    collectors = _KillingCollectors(CONFIG, 2, kill_at=2)
    assert [hi - lo for lo, hi in collectors.parts] == [64, 66]
    learner = run_selfplay(CONFIG, out, _options(), collectors=collectors)
    assert collectors.calls == 4
    assert learner.env_steps == 4 * DECISIONS
    assert _curve(out) == _curve(reference)
    assert (out / "policy.npz").read_bytes() == (reference / "policy.npz").read_bytes()
    assert collectors.actors == []  # closed with the run


@pytest.mark.slow
def test_a_learner_killed_by_sigkill_resumes_with_the_actors(reference: Path, tmp_path: Path) -> None:
    """Two command-line runs with their own local Ray: the first is SIGKILLed once it wrote
    its second checkpoint; ``--resume`` finishes it to the uninterrupted curve."""
    out = tmp_path / "run"
    steps = ["--steps", str(4 * DECISIONS), "--eval-every", str(2 * DECISIONS), "--checkpoint-every", "1"]
    cmd = [sys.executable, "-m", "training.app", "selfplay", "--out", str(out), *ARGV, *steps]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    ray_args = ["--backend", "ray", "--actors", "2"]
    first = subprocess.Popen([*cmd, *ray_args], env=env, start_new_session=True)
    from training.selfplay.checkpoint import load_checkpoint

    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and first.poll() is None:
        ckpt = out / "checkpoint.pt"
        if ckpt.is_file() and load_checkpoint(ckpt)["counters"]["updates"] >= 1:
            break
        time.sleep(0.2)
    assert first.poll() is None, "the run ended before it could be killed"
    os.killpg(first.pid, signal.SIGKILL)  # the learner and the Ray it started
    first.wait()
    done = load_checkpoint(out / "checkpoint.pt")["counters"]["updates"]
    assert 1 <= done < 4
    resumed = subprocess.run(
        [*cmd, *ray_args, "--resume"], env=env, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    assert _curve(out) == _curve(reference)
    assert (out / "policy.npz").read_bytes() == (reference / "policy.npz").read_bytes()


def test_an_unreachable_head_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["selfplay", "--out", str(out), *ARGV, "--backend", "ray", "--address", "127.0.0.1:9"]
    assert mtrain(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mtrain selfplay: --address: cannot reach a Ray cluster at 127.0.0.1:9 (")
    assert err.count("\n") == 1
    assert not out.exists()  # nothing written


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--backend", "ray", "--actors", "4"],
            "--actors: each actor steps whole blocks of 64 games: --games 130 makes 3 block(s), got 4 actors",
        ),
        (["--actors", "2"], "--actors: actors needs --backend ray, got 2 with local"),
        (
            ["--address", "10.0.0.5:6379"],
            "--address: address needs --backend ray, got '10.0.0.5:6379' with local",
        ),
        (["--backend", "ray", "--address", "head"], "--address: expected HOST:PORT"),
        (["--backend", "spark"], "--backend: backend must be one of local, ray, got 'spark'"),
        (["--device", "tpu"], "--device: device must be auto, cpu, cuda or cuda:N, got 'tpu'"),
        (["--device", "cuda:99"], "--device: cuda:99 is not available (torch sees "),
    ],
)
def test_scale_options_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    out = tmp_path / "run"
    assert mtrain(["selfplay", "--out", str(out), *ARGV, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mtrain selfplay: {message}"), err
    assert err.count("\n") == 1
    assert not out.exists()
