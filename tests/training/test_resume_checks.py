"""``mtrain train --resume`` checks that a run's files fit together before anything runs.

Each case damages a copy of a finished tiny run the way a user or a disk could (a model
archive of another run or of another step, a ``latest.json`` leading out of the run, a
truncated or replaced ``state.pkl`` or ``model.zip``, a league snapshot gone, an edited
``config.json``) and expects one line ``mtrain train: --resume: <file>: <what is wrong>``,
exit code 2, and the run directory untouched. A checkpoint of format 1 (snapshots pickled
by SB3, absolute paths) is upgraded on resume and continues exactly as the same run does.
"""

from __future__ import annotations

import io
import json
import pickle
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.training.test_train_cli import RUN, _copy, _listing, _one_line, _run, _strict, finished_run

__all__ = ["finished_run"]  # the module-scoped fixture of test_train_cli, shared

STEP = 256  #: the finished run's last checkpoint


def _ck(run: Path, step: int = STEP) -> Path:
    return run / "checkpoints" / f"step_{step:012d}"


@pytest.fixture(scope="module")
def other_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of the same game with another network size (``--net-arch 8``)."""
    out = tmp_path_factory.mktemp("other") / "run"
    argv = [*RUN, "--out", str(out), "--steps", "256", "--net-arch", "8", "--eval-every", "0"]
    code, _stdout, err = _run(argv)
    assert code == 0, err
    return out


def _rehash(checkpoint: Path) -> None:
    """Record the checkpoint's current files in its checkpoint.json (as if it wrote them)."""
    from training.checkpoints import sha256_of as _sha256

    meta = json.loads((checkpoint / "checkpoint.json").read_text())
    meta["sha256"] = {f: _sha256(checkpoint / f) for f in meta["sha256"]}
    (checkpoint / "checkpoint.json").write_text(json.dumps(meta))


def _edit_state(run: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = _ck(run) / "state.pkl"
    state = pickle.loads(path.read_bytes())
    change(state)
    path.write_bytes(pickle.dumps(state))
    _rehash(_ck(run))


def _edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    path.write_text(json.dumps(change(json.loads(path.read_text()))))


def _resume(run: Path) -> list[str]:
    """The resume command line (the options a resume may give; the rest is the run's)."""
    return ["--steps", "512", "--out", str(run), "--resume", "--no-progress"]


def _refused(run: Path, expected: str) -> None:
    """Resuming ``run`` is refused with exactly ``expected`` (after the prefix), nothing written."""
    before = _listing(run)
    code, stdout, err = _run(_resume(run))
    assert code == 2, (stdout, err)
    assert _one_line(err) == f"mtrain train: --resume: {expected}"
    assert _listing(run) == before


def test_a_model_of_another_run_is_refused(
    finished_run: tuple[Path, str], other_run: Path, tmp_path: Path
) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    shutil.copy(_ck(other_run) / "model.zip", _ck(run) / "model.zip")
    _refused(
        run,
        f"{_ck(run) / 'model.zip'}: net_arch (actor) [8], but the run's config.json gives [16] "
        "(a model of another run?)",
    )


def test_a_model_of_another_step_is_refused(finished_run: tuple[Path, str], tmp_path: Path) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    shutil.copy(_ck(run, 128) / "model.zip", _ck(run) / "model.zip")
    _refused(
        run,
        f"{_ck(run) / 'model.zip'}: holds step 128, but latest.json says 256 "
        "(a model of another checkpoint?)",
    )


def test_a_model_for_another_game_configuration_is_refused(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    _edit_json(run / "config.json", lambda c: {**c, "features": "planner"})
    _refused(
        run,
        f"{_ck(run) / 'model.zip'}: observation size 137, but the run's config.json gives 279 "
        "(a model of another run?)",
    )


def test_a_replaced_model_with_a_matching_hash_still_has_to_fit(
    finished_run: tuple[Path, str], other_run: Path, tmp_path: Path
) -> None:
    """The architecture check does not rely on checkpoint.json: a swapped model is refused by
    what it holds, whatever hashes were recorded."""
    run = _copy(finished_run[0], tmp_path / "run")
    shutil.copy(_ck(other_run) / "model.zip", _ck(run) / "model.zip")
    _rehash(_ck(run))
    _refused(
        run,
        f"{_ck(run) / 'model.zip'}: net_arch (actor) [8], but the run's config.json gives [16] "
        "(a model of another run?)",
    )


@pytest.mark.parametrize(
    ("pointer", "says"),
    [
        ({"dir": "../../elsewhere", "step": 256}, "dir must name a checkpoint directory inside checkpoints/"),
        (
            {"dir": "/tmp/step_000000000256", "step": 256},
            "dir must name a checkpoint directory inside checkpoints/",
        ),
        (
            {"dir": "step_000000000256/../../x", "step": 256},
            "dir must name a checkpoint directory inside checkpoints/",
        ),
        ({"dir": "step_000000000128", "step": 256}, "step 256 is not the step of step_000000000128"),
        ({"dir": "step_000000000256"}, 'must be {"dir": "step_<N>", "step": N}'),
    ],
)
def test_latest_json_must_point_inside_the_run(
    finished_run: tuple[Path, str], tmp_path: Path, pointer: dict[str, Any], says: str
) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    latest = run / "checkpoints" / "latest.json"
    latest.write_text(json.dumps(pointer))
    before = _listing(run)
    code, _stdout, err = _run(_resume(run))
    line = _one_line(err)
    assert code == 2 and line.startswith(f"mtrain train: --resume: {latest}: ") and says in line, line
    assert _listing(run) == before


def test_a_checkpoint_directory_leading_out_of_the_run_is_refused(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    outside = tmp_path / "outside"
    _ck(run).rename(outside)
    _ck(run).symlink_to(outside, target_is_directory=True)
    _refused(
        run, f"{run / 'checkpoints' / 'latest.json'}: step_000000000256 leads outside {run / 'checkpoints'}"
    )


def test_a_corrupt_latest_json_or_a_missing_checkpoint_is_refused(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    (_ck(run) / "state.pkl").unlink()
    _refused(run, f"{_ck(run) / 'state.pkl'}: missing (the checkpoint latest.json points to)")
    latest = run / "checkpoints" / "latest.json"
    latest.write_text('{"dir": "step_0')
    before = _listing(run)
    code, _stdout, err = _run(_resume(run))
    assert code == 2 and _one_line(err).startswith(f"mtrain train: --resume: {latest}: not readable JSON (")
    assert _listing(run) == before


def test_a_damaged_state_is_refused_before_it_is_unpickled(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    state = _ck(run) / "state.pkl"
    state.write_bytes(state.read_bytes()[: state.stat().st_size // 2])
    _refused(run, f"{state}: damaged or replaced: its sha256 is not the one checkpoint.json recorded")
    # without checkpoint.json (as format 1 wrote them) the unpickler's error is the line
    (_ck(run) / "checkpoint.json").unlink()
    before = _listing(run)
    code, _stdout, err = _run(_resume(run))
    line = _one_line(err)
    assert code == 2 and line.startswith(
        f"mtrain train: --resume: {state}: damaged: not a state this version reads ("
    )
    assert _listing(run) == before


@pytest.mark.parametrize("hashed", [True, False])
def test_a_planted_state_is_refused_without_running_it(
    finished_run: tuple[Path, str], tmp_path: Path, hashed: bool
) -> None:
    """Whoever can write state.pkl can rewrite checkpoint.json too (``hashed``), or delete
    it to pass as format 1: the unpickler still resolves nothing a checkpoint does not hold."""
    from tests.agents.test_pickles import _calls

    run = _copy(finished_run[0], tmp_path / "run")
    marker = tmp_path / "ran"
    (_ck(run) / "state.pkl").write_bytes(_calls("os", "system", f"touch {marker}"))
    if hashed:
        _rehash(_ck(run))
    else:
        (_ck(run) / "checkpoint.json").unlink()
    before = _listing(run)
    code, _stdout, err = _run(_resume(run))
    assert code == 2 and _one_line(err) == (
        f"mtrain train: --resume: {_ck(run) / 'state.pkl'}: damaged: not a state this version reads "
        "(UnpicklingError: the state names os.system, which a checkpoint never holds)"
    )
    assert not marker.exists() and _listing(run) == before


def test_a_model_whose_data_pickles_something_else_is_refused_without_running_it(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    """SB3 unpickles (cloudpickle) every ``:serialized:`` entry of ``model.zip``'s data that
    the loader does not replace; resume replaces all a checkpoint holds and refuses others."""
    import base64
    import zipfile

    from tests.agents.test_pickles import _calls

    run = _copy(finished_run[0], tmp_path / "run")
    marker = tmp_path / "ran"
    model = _ck(run) / "model.zip"
    with zipfile.ZipFile(model) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    data = json.loads(members["data"])
    planted = base64.b64encode(_calls("os", "system", f"touch {marker}")).decode()
    data["lr_schedule"] = {":type:": "<class 'function'>", ":serialized:": planted}  # replaced: harmless
    data["planted"] = {":type:": "<class 'function'>", ":serialized:": planted}
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(model, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    _rehash(_ck(run))
    _refused(run, f"{model}: its data pickles planted, which a checkpoint never holds")
    del data["planted"]
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(model, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    _rehash(_ck(run))
    code, _stdout, err = _run(_resume(run))  # its lr_schedule is the run's own, not the file's
    assert code == 0, err
    assert not marker.exists()


def test_a_format_2_checkpoint_without_its_hashes_is_refused(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    (_ck(run) / "checkpoint.json").unlink()
    _refused(run, f"{_ck(run) / 'checkpoint.json'}: missing (the sha256 of the checkpoint's files)")


def test_a_damaged_model_archive_is_refused(finished_run: tuple[Path, str], tmp_path: Path) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    model = _ck(run) / "model.zip"
    good = model.read_bytes()
    model.write_bytes(good[: len(good) // 2])
    damaged = f"{model}: damaged or replaced: its sha256 is not the one checkpoint.json recorded"
    # half an archive (zipfile finds the directory of the torch archive nested in it)
    _refused(run, f"{damaged} (not an SB3 model archive (no data and policy.pth))")
    with zipfile.ZipFile(io.BytesIO(good)) as zf:
        offset = zf.getinfo("policy.pth").header_offset + 200  # inside the weights
    model.write_bytes(good[:offset] + bytes([good[offset] ^ 0xFF]) + good[offset + 1 :])
    before = _listing(run)
    code, _stdout, err = _run(_resume(run))
    assert code == 2 and _one_line(err).startswith(
        f"mtrain train: --resume: {damaged} (policy.pth: damaged ("
    )
    assert _listing(run) == before


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda s: s.update(step=128), "holds step 128, but latest.json says 256"),
        (lambda s: s.update(format=7), "state format 7; this version reads 1 and 2"),
        (lambda s: s.pop("rng"), "not a checkpoint state (no rng)"),
        (
            lambda s: s.update(last_obs=s["last_obs"][:, :10]),
            "observations of shape (2, 10), the model takes (2, 137)",
        ),
        (
            lambda s: s["league"]["snapshots"].append({"step": 300, "file": "../../evil.npz"}),
            "league: not a league state (ValueError: a snapshot is named by its file name",
        ),
        (lambda s: s["league"].pop("heuristics"), "league: not a league state (KeyError: 'heuristics')"),
        (lambda s: s["env_states"][1].pop("opponent_specs"), "env_states: not env states (KeyError"),
    ],
)
def test_a_state_that_does_not_fit_the_run_is_refused(
    finished_run: tuple[Path, str], tmp_path: Path, change: Callable[[dict[str, Any]], None], says: str
) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    _edit_state(run, change)
    before = _listing(run)
    code, _stdout, err = _run(_resume(run))
    line = _one_line(err)
    assert (
        code == 2 and line.startswith(f"mtrain train: --resume: {_ck(run) / 'state.pkl'}: ") and says in line
    ), line
    assert _listing(run) == before


def test_another_number_of_envs_is_refused(finished_run: tuple[Path, str], tmp_path: Path) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    _edit_json(run / "config.json", lambda c: {**c, "n_envs": 3})
    _refused(
        run,
        f"{_ck(run) / 'state.pkl'}: holds 2 env states of n_envs=2, but the run's config.json has n_envs=3 "
        "(resume needs the same)",
    )


def test_a_missing_league_snapshot_is_refused(finished_run: tuple[Path, str], tmp_path: Path) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    (name,) = [s["file"] for s in _strict(_ck(run) / "league.json")["snapshots"]][-1:]
    snap = run / "league" / name
    snap.unlink()
    _refused(run, f"{snap}: missing (a snapshot the run's league plays)")


def test_the_python_api_raises_checkpoint_error(finished_run: tuple[Path, str], tmp_path: Path) -> None:
    from training.train import CheckpointError, Trainer, read_config

    run = _copy(finished_run[0], tmp_path / "run")
    shutil.copy(_ck(run, 128) / "model.zip", _ck(run) / "model.zip")
    with pytest.raises(CheckpointError) as info:
        Trainer(read_config(run), resume=True)
    assert info.value.file == str(_ck(run) / "model.zip") and info.value.message.startswith("holds step 128")


def test_the_checked_checkpoint_names_the_latest_step(finished_run: tuple[Path, str]) -> None:
    """``load_checkpoint`` returns the step ``latest.json`` names, its directory and its state."""
    from training.checkpoints import load_checkpoint
    from training.train import read_config

    run = finished_run[0]
    checkpoint = load_checkpoint(run, read_config(run))
    assert checkpoint is not None
    assert (checkpoint.dir, checkpoint.step) == (_ck(run), STEP)
    saved = pickle.loads((_ck(run) / "state.pkl").read_bytes())
    assert checkpoint.state.keys() == saved.keys() and checkpoint.state["step"] == STEP
    assert checkpoint.state["league"] == saved["league"]


# ------------------------------------------------------------ format 1 checkpoints
def _as_format_1(run: Path) -> None:
    """Rewrite ``run`` as the previous version wrote it: snapshots pickled by SB3's
    ``policy.save`` (``snap_<N>.pt``), absolute paths in config.json and in the env states
    (to a directory that does not exist), no checkpoint.json."""
    from agents.policy_net import read_policy

    elsewhere = "/nonexistent/old_run"
    renamed = {}
    for npz in sorted((run / "league").glob("snap_*.npz")):
        read_policy(npz).save(str(npz.with_suffix(".pt")))
        npz.unlink()
        renamed[npz.name] = npz.with_suffix(".pt").name

    def league(d: dict[str, Any]) -> dict[str, Any]:
        return {**d, "snapshots": [{**s, "file": renamed.get(s["file"], s["file"])} for s in d["snapshots"]]}

    for ck in (run / "checkpoints").glob("step_*"):
        (ck / "checkpoint.json").unlink()
        _edit_json(ck / "league.json", league)
        state = pickle.loads((ck / "state.pkl").read_bytes())
        state["format"] = 1
        state["league"] = league(state["league"])
        for e in state["env_states"]:
            e["league"] = league(e["league"])
            e["league_root"] = f"{elsewhere}/league"
            specs = e["opponent_specs"]
            for seat, spec in list(specs.items()):
                if spec.kind == "snapshot":
                    specs[seat] = type(spec)(spec.kind, renamed[spec.name], spec.params)
            opponents = pickle.loads(e["opponents"])
            for seat, agent in opponents.items():
                if specs[seat].kind == "snapshot":
                    agent.path = f"{elsewhere}/league/{specs[seat].name}"
            e["opponents"] = pickle.dumps(opponents)
        (ck / "state.pkl").write_bytes(pickle.dumps(state))
    _edit_json(run / "config.json", lambda c: {**c, "out": elsewhere})


def test_a_format_1_checkpoint_is_upgraded_and_continues_exactly(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    from agents.policy_net import read_sb3_archive

    new = _copy(finished_run[0], tmp_path / "new")
    old = _copy(finished_run[0], tmp_path / "old")
    _as_format_1(old)
    assert not list((old / "league").glob("*.npz")) and list((old / "league").glob("*.pt"))
    for run in (new, old):
        code, _stdout, err = _run([*RUN, "--steps", "384", "--out", str(run), "--resume"])
        assert code == 0, err
    a = read_sb3_archive(_ck(new, 384) / "model.zip")[2]
    b = read_sb3_archive(_ck(old, 384) / "model.zip")[2]
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert (old / "curve.csv").read_text() == (new / "curve.csv").read_text()
    league = _strict(_ck(old, 384) / "league.json")
    assert league["snapshots"] and all(s["file"].endswith(".npz") for s in league["snapshots"])
    assert all((old / "league" / s["file"]).is_file() for s in league["snapshots"])
    assert _strict(old / "config.json").get("out") is None


# ------------------------------------------------ latest.json gone: never start over
def test_without_latest_json_the_newest_verified_checkpoint_is_resumed(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    (run / "checkpoints" / "latest.json").unlink()
    code, stdout, err = _run(["--steps", "256", "--out", str(run), "--resume", "--no-progress"])
    assert code == 0, err
    summary = _strict(run / "summary.json")
    assert summary["resumed_from"] == STEP and not summary["restarted"] and summary["steps_this_run"] == 0
    verified = "checkpoints/latest.json was missing: the newest checkpoint whose sha256s verify"
    assert summary["resumed_by"] == verified and f"resumed from step 256; {verified})" in stdout
    assert _strict(run / "checkpoints" / "latest.json") == {"dir": f"step_{STEP:012d}", "step": STEP}


def test_without_latest_json_a_damaged_newest_checkpoint_is_passed_over_and_the_run_is_the_same(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    """Resumed from step 128 (step 256's state.pkl is not the one its checkpoint.json hashed),
    the run reaches step 384 with the weights of the run resumed from 256 as latest.json says."""
    run = _copy(finished_run[0], tmp_path / "run")
    same = _copy(finished_run[0], tmp_path / "same")
    (run / "checkpoints" / "latest.json").unlink()
    state = _ck(run) / "state.pkl"
    state.write_bytes(state.read_bytes()[:-1] + bytes([state.read_bytes()[-1] ^ 1]))
    for out in (run, same):
        code, _stdout, err = _run(["--steps", "384", "--out", str(out), "--resume", "--no-progress"])
        assert code == 0, err
    summary = _strict(run / "summary.json")
    assert summary["resumed_from"] == 128 and summary["resumed_by"].endswith(f"(step_{STEP:012d} did not)")
    mine, theirs = (read_sb3(out) for out in (run, same))
    assert mine.keys() == theirs.keys() and all(np.array_equal(mine[k], theirs[k]) for k in mine)


def read_sb3(run: Path) -> dict[str, Any]:
    from agents.policy_net import read_sb3_archive

    return read_sb3_archive(_ck(run, 384) / "model.zip")[2]


def test_a_run_past_its_first_checkpoint_without_one_is_refused_not_started_over(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    shutil.rmtree(run / "checkpoints")
    _refused(
        run,
        f"{run / 'checkpoints' / 'latest.json'}: missing, but the run went past its first checkpoint "
        "(summary.json, final_model.zip, policy.npz, curve.csv, league/snap_*): it cannot be continued "
        "exactly, and starting over would mix two runs; restore checkpoints/ or use a new --out",
    )


def test_without_latest_json_and_no_checkpoint_that_verifies_the_run_is_refused(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    (run / "checkpoints" / "latest.json").unlink()
    for step in (0, 128, STEP):
        (_ck(run, step) / "checkpoint.json").unlink()  # no sha256 to verify them by
    _refused(
        run,
        f"{run / 'checkpoints' / 'latest.json'}: missing, and no checkpoint in checkpoints/ verifies "
        f"(the newest: {_ck(run) / 'checkpoint.json'}: missing (the sha256 of the checkpoint's files))",
    )


def test_the_leftovers_of_killed_writes_are_removed_on_the_next_start(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    """Temporary files named as ours anywhere in the run, checkpoint directories never renamed
    into place; nothing else."""
    run = _copy(finished_run[0], tmp_path / "run")
    ours = [
        run / ".summary.json.4194305.0123abcd.tmp",
        run / "league" / ".snap_000000000384.npz.9.abcdef01.tmp",
    ]
    theirs = [run / "notes.tmp", run / "league" / ".snap.tmp"]
    for path in ours + theirs:
        path.write_bytes(b"half a file")
    (run / "checkpoints" / f"step_{384:012d}.tmp").mkdir()
    (run / "checkpoints" / f"step_{384:012d}.tmp" / "model.zip").write_bytes(b"half")
    code, _stdout, err = _run(["--steps", "256", "--out", str(run), "--resume", "--no-progress"])
    assert code == 0, err
    assert [p for p in ours if p.exists()] == [] and all(p.exists() for p in theirs)
    assert not (run / "checkpoints" / f"step_{384:012d}.tmp").exists()
