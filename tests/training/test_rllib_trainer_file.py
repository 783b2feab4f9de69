"""``trainer.json`` of an RLlib checkpoint is read back field by field (``read_trainer_state``),
and ``mtrain train --resume`` refuses a bad one before Ray starts, naming the key."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from training.app import main as mtrain
from training.rllib.trainer_file import read_trainer_state
from training.run_dir import CheckpointError, strict_json

STEP = 4000


def _row(step: int, **change: Any) -> dict[str, Any]:
    row = {"step": step, "opponent": "random", "deals": 1, "games": 3, "learner_score": 20.5,
           "opponent_score": 30.0, "diff": -9.5, "diff_se": math.nan, "lowest_rate": 0.5}  # fmt: skip
    return {**row, **change}


def _state(**change: Any) -> dict[str, Any]:
    """What ``RLlibTrainer._checkpoint`` writes at step ``STEP`` (one evaluation deal: se NaN)."""
    state = {
        "step": STEP,
        "seconds": 12.5,
        "due": {"eval": 8000, "snapshot": 6000, "checkpoint": 8000},
        "curve": [_row(0), _row(STEP, diff=-2.0)],
    }
    return {**state, **change}


def _write(root: Path, state: Any, step: int = STEP) -> Path:
    directory = root / "checkpoints" / f"step_{step:012d}"
    directory.mkdir(parents=True)
    path = directory / "trainer.json"
    path.write_text(state if isinstance(state, str) else strict_json(state, indent=1), encoding="utf-8")
    return path


def test_the_written_state_reads_back_with_null_as_nan(tmp_path: Path) -> None:
    path = _write(tmp_path, _state())
    assert '"diff_se": null' in path.read_text()  # strict JSON has no NaN
    state = read_trainer_state(path)
    assert state["step"] == STEP and state["seconds"] == 12.5
    assert state["due"] == {"eval": 8000, "snapshot": 6000, "checkpoint": 8000}
    first, last = state["curve"]
    assert math.isnan(first["diff_se"]) and math.isnan(last["diff_se"])
    assert {k: v for k, v in last.items() if k != "diff_se"} == {
        k: v for k, v in _row(STEP, diff=-2.0).items() if k != "diff_se"
    }
    assert isinstance(first["games"], int) and isinstance(first["diff"], float)


BAD: list[tuple[Any, str]] = [
    ("{", "not a checkpoint's trainer state (Expecting property name"),
    ("[1, 2]", "not a checkpoint's trainer state (must hold a JSON object, got list)"),
    ({k: v for k, v in _state().items() if k != "due"}, "missing 'due'"),
    (_state(colour="red"), "unknown key 'colour'"),
    (_state(step=True), "step must be an int >= 0, got True"),
    (_state(step=STEP + 1), f"step {STEP + 1} is not the step of its directory 'step_{STEP:012d}'"),
    (_state(seconds=-1), "seconds must be a finite number >= 0, got -1"),
    (_state(seconds="12"), "seconds must be a finite number >= 0, got '12'"),
    (_state(due={"eval": 1, "snapshot": 2}), "due must map eval, snapshot, checkpoint to steps"),
    (_state(due={"eval": 1, "snapshot": 2, "checkpoint": -3}), "due.checkpoint must be an int >= 0, got -3"),
    (_state(due={"eval": 1.5, "snapshot": 2, "checkpoint": 3}), "due.eval must be an int >= 0, got 1.5"),
    (_state(curve={"step": 0}), "curve must be a list of evaluation rows, got dict"),
    (_state(curve=[{"step": 0}]), "curve[0] must be an evaluation row (step, opponent, deals"),
    (_state(curve=[_row(0), _row(STEP + 10)]), f"curve[1].step must be an int in 0..{STEP} (rows in step"),
    (_state(curve=[_row(2000), _row(1000)]), f"curve[1].step must be an int in 2000..{STEP}"),
    (_state(curve=[_row(0, opponent="")]), "curve[0].opponent must be a non-empty string, got ''"),
    (_state(curve=[_row(0, games=-1)]), "curve[0].games must be an int >= 0, got -1"),
    (_state(curve=[_row(0, diff="-9.5")]), "curve[0].diff must be a number or null, got '-9.5'"),
    (_state(curve=[_row(0, lowest_rate=True)]), "curve[0].lowest_rate must be a number or null, got True"),
]


@pytest.mark.parametrize(("state", "says"), BAD)
def test_a_bad_trainer_state_is_refused_naming_the_key(tmp_path: Path, state: Any, says: str) -> None:
    path = _write(tmp_path, state if isinstance(state, str) else json.loads(strict_json(state)))
    with pytest.raises(CheckpointError) as err:
        read_trainer_state(path)
    assert err.value.file == str(path) and says in err.value.message, err.value.message


def test_resume_refuses_a_bad_trainer_state_before_ray_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ray = pytest.importorskip("ray")

    from training.rllib.train import RLlibConfig

    out = tmp_path / "r"
    out.mkdir()
    (out / "config.json").write_text(json.dumps(RLlibConfig().to_json()))
    path = _write(out, _state(due={"eval": 1, "snapshot": 2, "checkpoint": "soon"}))
    (out / "checkpoints" / "latest.json").write_text(json.dumps({"dir": path.parent.name, "step": STEP}))
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    assert mtrain(["train", "--out", str(out), "--resume", "--steps", "9000", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err == f"mtrain train: --resume: {path}: due.checkpoint must be an int >= 0, got 'soon'\n"
    assert not ray.is_initialized()
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
