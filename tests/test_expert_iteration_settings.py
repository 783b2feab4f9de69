"""``python -m training.expert_iteration`` reruns: the settings are recorded and checked (a
rerun with others is refused, not "resumed"), and one run writes ``--out`` at a time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("torch")

from agents.mexican_train.ismcts import ISMCTSAgent
from mtrain_env.tilegame.files import run_lock
from training import expert_iteration

SMALL = ["--games", "2", "--sims", "4", "--epochs", "1", "--hidden", "16"]


def _files(out: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in sorted(out.iterdir()) if p.name != ".lock"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One iteration of a small run."""
    out = tmp_path_factory.mktemp("exit") / "run"
    assert expert_iteration.main(["--out", str(out), "--iterations", "1", *SMALL]) == 0
    return out


def test_a_rerun_with_other_settings_is_refused_in_one_line(run: Path, capsys) -> None:
    before = _files(run)
    other = ["--games", "3", "--sims", "5", "--epochs", "1", "--hidden", "16", "--seed", "8"]
    assert expert_iteration.main(["--out", str(run), "--iterations", "1", *other]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"expert_iteration: --out: {run} holds iterations made with other settings: ")
    assert "--games 2 -> 3, --sims 4 -> 5, --seed 7 -> 8" in err
    assert _files(run) == before


def test_a_rerun_with_the_same_settings_resumes(run: Path, capsys) -> None:
    assert expert_iteration.main(["--out", str(run), "--iterations", "1", *SMALL]) == 0
    assert "iteration 0: resumed from" in capsys.readouterr().out


def test_iterations_without_recorded_settings_are_refused(run: Path, tmp_path: Path, capsys) -> None:
    old = tmp_path / "old"
    old.mkdir()
    for name in ("iter_0.npz", "labels_0.npz"):
        (old / name).write_bytes((run / name).read_bytes())
    assert expert_iteration.main(["--out", str(old), "--iterations", "1", *SMALL]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds iterations but no settings.json" in err, err
    assert sorted(p.name for p in old.iterdir()) == ["iter_0.npz", "labels_0.npz"]


def test_a_directory_in_use_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    with run_lock(out):  # flock is per open file: refused in this process too
        assert expert_iteration.main(["--out", str(out), "--iterations", "1", *SMALL]) == 2
    err = capsys.readouterr().err
    held = f"{out} is in use by pid {os.getpid()} (one run writes a directory at a time)"
    assert err == f"expert_iteration: --out: {held}\n"
    assert sorted(p.name for p in out.iterdir()) == []  # nothing written, and the lock gone with its holder


def test_c_and_opponents_reach_the_searchers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``--c`` and ``--opponents`` were documented and never passed: the labelling searcher
    of iteration 0 (ismcts) is built with them when given, with its own defaults otherwise."""
    built: list[tuple[float, str]] = []

    def label_games(searcher: ISMCTSAgent, *args: object, **kwargs: object) -> object:
        built.append((searcher.c, searcher.opponents))
        raise KeyboardInterrupt  # enough: the searcher is what this test reads

    monkeypatch.setattr(expert_iteration, "label_games", label_games)
    for extra, expected in (([], (10.0, "tree")), (["--c", "3", "--opponents", "chain"], (3.0, "chain"))):
        with pytest.raises(KeyboardInterrupt):
            expert_iteration.main(
                ["--out", str(tmp_path / str(len(extra))), "--iterations", "1", *SMALL, *extra]
            )
        assert built[-1] == expected


@pytest.mark.parametrize("damaged", [b'{"games": ', b"\xff{}", b"[2]"])
def test_damaged_settings_are_refused_in_one_line(run: Path, tmp_path: Path, capsys, damaged: bytes) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("iter_0.npz", "labels_0.npz"):
        (copy / name).write_bytes((run / name).read_bytes())
    (copy / "settings.json").write_bytes(damaged)
    before = _files(copy)
    assert expert_iteration.main(["--out", str(copy), "--iterations", "1", *SMALL]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"{copy / 'settings.json'}: not the settings of an expert_iteration run (" in err
    assert _files(copy) == before
