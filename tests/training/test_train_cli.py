"""``mtrain train`` from the command line: bad input, existing runs, resume, the summary.

* every option with a bad value -> one stderr line ``mtrain train: --option: message``
  naming the allowed values, exit code 2, nothing written (no --out, no league/);
* an --out that holds a run needs --resume; --resume needs a run with a checkpoint;
  options that conflict with the resumed run are refused;
* --resume continues in the --out given, also for a copied or moved run directory (no file
  of a run names a directory; a copy and its original advance separately), and reads the
  flat config.json of runs written before the game config was nested;
* the run ends with a human summary (final evaluation with 95 % CIs, steps/s, where the
  files are) and summary.json; every JSON file of a run is strict (no NaN / Infinity);
* ``--help`` has one line per option, in groups.

Game rules cited by the bad values: R1 (set size), R3 (players), R25 (rounds).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mtrain_env.mexican_train.core.config import GameConfig
from tests import REPO
from tests.cli_support import imported_by_refusals
from training.app import main as mtrain

FRAMEWORKS = ("torch", "stable_baselines3", "sb3_contrib", "ray")
OUT = "{out}"  # replaced by the test's --out directory
#: a tiny valid run (double-6, 3 players, 1 in-process env): a bad case that slipped through
#: validation would train for a second and fail on the exit code
BASE = [
    "--steps", "64", "--out", OUT, "--vec", "dummy", "--envs", "1", "--n-steps", "64",
    "--batch-size", "64", "--players", "3", "--max-pips", "6", "--net-arch", "8",
    "--heuristics", "random", "--eval-opponents", "random", "--eval-every", "0",
    "--checkpoint-every", "0", "--no-progress",
]  # fmt: skip


def _bad(args: list[str], flag: str, says: str = "", id: str = "") -> Any:
    return pytest.param(args, flag, says, id=id or " ".join(args) or "empty")


#: (extra arguments, the option the message must name, a word it must contain)
BAD = [
    # run
    _bad(["--steps", "0"], "--steps", ">= 1"),
    _bad(["--steps", "-5"], "--steps"),
    _bad(["--steps", "1e6"], "--steps", "integer"),
    _bad(["--out", ""], "--out"),
    _bad(["--seed", "-1"], "--seed"),
    _bad(["--seed", str(2**32)], "--seed"),
    _bad(["--seed", "x"], "--seed", "integer"),
    _bad(["--envs", "0"], "--envs", ">= 1"),
    _bad(["--envs", "-2"], "--envs"),
    _bad(["--envs", "4097"], "--envs", "0..4096"),  # each env a Python object (run_config.MAX_ENVS)
    _bad(["--envs", "1000000000000"], "--envs", "0..4096"),
    _bad(["--workers", "0"], "--workers"),
    _bad(["--workers", "two"], "--workers"),
    _bad(["--vec", "x"], "--vec", "sharded, subproc, dummy"),
    _bad(["--checkpoint-every", "-1"], "--checkpoint-every"),
    _bad(["--keep-checkpoints", "0"], "--keep-checkpoints"),
    _bad(["--torch-threads", "0"], "--torch-threads"),
    _bad(["--verbose", "-1"], "--verbose"),
    _bad(["--verbose", "3"], "--verbose", "0..2"),
    _bad(["--resume"], "--resume", "no run to resume"),
    _bad(["--no-progress=x"], "--no-progress"),
    _bad(["--bogus", "3"], "--bogus", "unknown option"),
    _bad(["--player=3"], "--player", "unknown option"),  # abbreviations are off
    _bad(["extra"], "extra", "unexpected argument"),
    # game
    _bad(["--players", "1"], "--players", "R3", id="players-1"),
    _bad(["--players", "20", "--max-pips", "12"], "--players", "2..8", id="players-20"),
    _bad(["--players", "9"], "--players", "R3", id="players-9-d6"),
    _bad(["--players", "x"], "--players", "integer"),
    _bad(["--players", "2.5"], "--players"),
    _bad(["--max-pips", "3"], "--max-pips", "R1"),
    _bad(["--max-pips", "19"], "--max-pips", "6..18"),
    _bad(["--rules", "nope"], "--rules", "pagat"),
    _bad(["--rules", "chicken_foot"], "--rules"),
    _bad(["--rounds", "0"], "--rounds", "R25"),
    _bad(["--rounds", "8"], "--rounds", "1..7"),
    _bad(["--flag", "not_a_flag"], "--flag", "one_tile_opening"),
    _bad(["--flag", "blank_penalty", "--flag", "chicken_foot"], "--flag", "chicken_foot"),
    _bad(["--reward", "x"], "--reward", "zero_sum"),
    _bad(["--seat", "9"], "--seat", "0..2"),
    _bad(["--seat", "-1"], "--seat"),
    _bad(["--seat", "first"], "--seat", "rotate"),
    # PPO
    _bad(["--n-steps", "0"], "--n-steps"),
    _bad(["--n-steps", "1"], "--n-steps", "at least 2"),
    _bad(["--n-steps", "65537"], "--n-steps", "0..65536"),
    _bad(["--n-steps", "1000000000000"], "--n-steps", "0..65536"),
    # each alone in range, together a rollout buffer of hundreds of GiB (training.checks.MAX_ROLLOUT)
    _bad(["--envs", "4096", "--n-steps", "65536"], "--envs x --n-steps", "at most 1,048,576 env steps"),
    _bad(["--envs", "2048", "--n-steps", "513"], "--envs x --n-steps", "= 1,050,624 (a rollout buffer of"),
    _bad(["--batch-size", "1"], "--batch-size", ">= 2"),
    _bad(["--batch-size", "65"], "--batch-size", "fit in a rollout (n_steps x n_envs = 64)"),
    _bad(["--epochs", "0"], "--epochs"),
    _bad(["--lr", "-1"], "--lr", "> 0"),
    _bad(["--lr", "0"], "--lr"),
    _bad(["--lr", "nan"], "--lr", "finite"),
    _bad(["--lr", "inf"], "--lr"),
    _bad(["--lr", "fast"], "--lr", "number"),
    _bad(["--lr-schedule", "cosine"], "--lr-schedule", "linear"),
    _bad(["--gamma", "1.5"], "--gamma"),
    _bad(["--gamma", "-0.1"], "--gamma"),
    _bad(["--gae-lambda", "2"], "--gae-lambda"),
    _bad(["--clip-range", "0"], "--clip-range"),
    _bad(["--ent-coef", "-0.1"], "--ent-coef"),
    _bad(["--vf-coef", "-1"], "--vf-coef"),
    _bad(["--max-grad-norm", "0"], "--max-grad-norm"),
    _bad(["--target-kl", "-1"], "--target-kl", "0 = off"),
    _bad(["--net-arch", "0,a"], "--net-arch", "256,256"),
    _bad(["--net-arch", "0"], "--net-arch", "1..2048"),
    _bad(["--net-arch", "2049"], "--net-arch", "each an int in 1..2048"),
    _bad(["--net-arch", "1000000000000"], "--net-arch", "1..2048"),
    _bad(["--net-arch", "8,8,8,8,8,8,8,8,8"], "--net-arch", "1..8 hidden layer sizes"),
    _bad(["--net-arch", ""], "--net-arch"),
    _bad(["--net-arch", "64,-5"], "--net-arch"),
    _bad(["--logit-bound", "0"], "--logit-bound"),
    _bad(["--features", "plannr"], "--features", "env, planner"),
    _bad(["--shaping", "-1"], "--shaping"),
    _bad(["--shaping", "nan"], "--shaping"),
    # league
    _bad(["--heuristics", "planer:1"], "--heuristics", "planner"),
    _bad(["--heuristics", "greedy:0"], "--heuristics", "> 0"),
    _bad(["--heuristics", "ppo:1"], "--heuristics", "trained for another table"),  # a 4-player network
    _bad(["--heuristics", "greedy:-1"], "--heuristics"),
    _bad(["--heuristics", "greedy:x"], "--heuristics", "number"),
    _bad(["--heuristics", "greedy:nan"], "--heuristics"),
    _bad(["--heuristics", "greedy,greedy"], "--heuristics", "twice"),
    _bad(["--heuristics", ","], "--heuristics", "no agent names"),
    _bad(["--heuristics", ":2"], "--heuristics", "missing"),
    _bad(["--p-heuristic", "0"], "--p-heuristic"),
    _bad(["--p-heuristic", "1.5"], "--p-heuristic"),
    _bad(["--p-latest", "-0.1"], "--p-latest"),
    _bad(["--p-older", "2"], "--p-older"),
    _bad(["--snapshot-every", "-1"], "--snapshot-every", "0 = never"),
    _bad(["--max-snapshots", "0"], "--max-snapshots"),
    # evaluation
    _bad(["--eval-every", "-1"], "--eval-every"),
    _bad(["--eval-deals", "0"], "--eval-deals", "1..100000"),
    _bad(["--eval-deals", "-3"], "--eval-deals"),
    _bad(["--eval-deals", "100001"], "--eval-deals", "1..100000"),  # run_config.MAX_EVAL_DEALS
    _bad(["--eval-deals", "1000000000000"], "--eval-deals", "1..100000"),  # was a silent hang
    _bad(["--eval-opponents", "greedyy"], "--eval-opponents", "greedy"),
    _bad(["--eval-opponents", "champion_policy"], "--eval-opponents", "champion's networks ship for"),
    _bad(["--eval-opponents", ","], "--eval-opponents"),
    _bad(["--eval-opponents", "random,random"], "--eval-opponents", "more than once"),
    _bad(["--eval-seed", "-1"], "--eval-seed"),
    # behaviour cloning
    _bad(["--bc-expert", "nobody", "--bc-samples", "10"], "--bc-expert", "planner"),
    _bad(["--bc-expert", "planner"], "--bc-expert", "--bc-samples"),
    _bad(["--bc-samples", "10"], "--bc-samples", "--bc-expert"),
    _bad(["--bc-samples", "-1", "--bc-expert", "random"], "--bc-samples"),
    _bad(["--bc-param", "broken"], "--bc-param", "KEY=VALUE"),
    _bad(["--bc-param", "danger=1"], "--bc-param", "--bc-expert"),
    _bad(["--bc-param", "x=NaN", "--bc-expert", "planner", "--bc-samples", "5"], "--bc-param", "finite"),
    _bad(["--bc-expert", "planner", "--bc-samples", "5", "--bc-param", "nosuch=1"], "--bc-param", "nosuch"),
    _bad(["--bc-epochs", "0"], "--bc-epochs"),
    _bad(["--bc-lr", "0"], "--bc-lr"),
]


def _run(argv: list[str]) -> tuple[int, str, str]:
    """``mtrain train ARGV`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = mtrain(["train", *argv])
        except SystemExit as e:
            code = int(e.code) if isinstance(e.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def _argv(out: Path, extra: list[str]) -> list[str]:
    return [str(out) if a == OUT else a for a in BASE] + extra


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got:\n{err}"
    return lines[0]


@pytest.mark.parametrize(("extra", "flag", "says"), BAD)
def test_bad_option_gets_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, extra: list[str], flag: str, says: str
) -> None:
    out = tmp_path / "run"
    code, stdout, err = _run(_argv(out, extra))
    line = _one_line(err)
    assert code == 2, err
    assert line.startswith(f"mtrain train: {flag}: "), line
    assert says in line, f"{line!r} does not say {says!r}"
    assert "Traceback" not in err and stdout == ""
    assert not out.exists()  # no run directory, no league/
    assert list(tmp_path.iterdir()) == []


def test_every_option_has_a_bad_case() -> None:
    from training.cli import _OPTIONS

    tried = {a.split("=")[0] for args, *_rest in (p.values for p in BAD) for a in args if a.startswith("--")}
    assert set(_OPTIONS) | {"--resume", "--no-progress"} <= tried


def test_an_out_that_is_a_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("keep me")
    code, _out, err = _run(_argv(f, []))
    assert code == 2 and _one_line(err) == f"mtrain train: --out: {f} is a file, not a directory"
    code, _out, err = _run(_argv(f / "run", []))
    assert code == 2 and _one_line(err) == f"mtrain train: --out: cannot create {f / 'run'}: {f} is a file"
    assert f.read_text() == "keep me" and list(tmp_path.iterdir()) == [f]


def test_missing_required_options(tmp_path: Path) -> None:
    code, _out, err = _run([])
    assert code == 2
    assert _one_line(err).startswith("mtrain train: --steps, --out: required")
    code, _out, err = _run(["--steps", "10", "--players"])
    assert code == 2 and _one_line(err) == "mtrain train: --players: expected one argument"


def test_the_real_command_answers_bad_input_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run(
        [sys.executable, "-m", "training.app", "train", *_argv(out, ["--heuristics", "planer:1"])],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2
    assert _one_line(res.stderr).startswith("mtrain train: --heuristics: unknown agent 'planer'")
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_bad_options_are_refused_before_the_learning_framework_is_imported(tmp_path: Path) -> None:
    """A typo costs a fraction of a second: every bad option of ``BAD`` exits 2 before torch,
    SB3 or Ray is imported (the checks live in the torch-free ``training.run_config``)."""
    cases = [_argv(tmp_path / f"run{i}", p.values[0]) for i, p in enumerate(BAD)]
    assert imported_by_refusals("train", cases, list(FRAMEWORKS), tmp_path) is None
    assert list(tmp_path.iterdir()) == []


def _listing(d: Path) -> dict[str, tuple[int, int]]:
    """The run's files, with mtimes and sizes; not the lock file, whose holder line every
    command writing the directory rewrites (it takes the lock before reading the run)."""
    files = (p for p in sorted(d.rglob("*")) if p.name != ".lock")
    return {str(p.relative_to(d)): (p.stat().st_mtime_ns, p.stat().st_size) for p in files}


@pytest.mark.parametrize("holds", ["config.json", "checkpoints"])
def test_an_existing_run_needs_resume_and_stays_untouched(tmp_path: Path, holds: str) -> None:
    out = tmp_path / "run"
    out.mkdir()
    if holds == "config.json":
        (out / "config.json").write_text("{}")
    else:
        (out / "checkpoints").mkdir()
    before = _listing(out)
    code, _stdout, err = _run(_argv(out, []))
    line = _one_line(err)
    assert code == 2 and line.startswith(f"mtrain train: --out: {out} already holds a training run")
    assert "--resume" in line and "new --out" in line
    assert _listing(out) == before


def test_resume_needs_a_training_config(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text("{}")
    code, _stdout, err = _run(_argv(out, ["--resume"]))
    assert code == 2 and _one_line(err).startswith(
        f"mtrain train: --resume: {out / 'config.json'}: does not hold a training configuration"
    )
    assert sorted(p.name for p in out.iterdir()) == ["config.json"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"\xff\xfe{}", "not JSON (not UTF-8 text: invalid start byte at byte 0)"),
        (b'{"steps": "\xe9"}', "not JSON (not UTF-8 text: invalid continuation byte at byte 11)"),
        (b"{not json", "not JSON ("),
    ],
)
def test_resume_names_an_unreadable_config_json(tmp_path: Path, content: bytes, says: str) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_bytes(content)
    code, _stdout, err = _run(_argv(out, ["--resume"]))
    assert code == 2 and _one_line(err).startswith(
        f"mtrain train: --resume: {out / 'config.json'}: {says}"
    ), err
    assert sorted(p.name for p in out.iterdir()) == ["config.json"]


def test_the_python_api_refuses_an_existing_run_before_writing(tmp_path: Path) -> None:
    from training.train import ConfigError, TrainConfig, Trainer

    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text("{}")
    with pytest.raises(FileExistsError, match="already holds a training run"):
        Trainer(TrainConfig(out=str(out)))
    with pytest.raises(ConfigError, match="eval_deals") as err:
        Trainer(TrainConfig(out=str(tmp_path / "new"), eval_deals=0))
    assert err.value.field == "eval_deals"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


# ------------------------------------------------------------ the bounds of a rollout
def test_the_rollout_bounds_refuse_in_the_python_api_and_take_their_edges() -> None:
    """``n_envs``, ``n_steps``, ``net_arch`` and ``n_envs x n_steps`` have upper bounds (F2 of
    audit s31: a huge value hung or crashed after config.json was written); the shipped
    configurations and every value at a bound pass."""
    from training.run_config import ConfigError, TrainConfig

    for fields, field in [
        ({"n_envs": 4097}, "n_envs"),
        ({"n_steps": 65537}, "n_steps"),
        ({"net_arch": [2049]}, "net_arch"),
        ({"net_arch": [8] * 9}, "net_arch"),
        ({"n_envs": 2048, "n_steps": 513}, "n_envs x n_steps"),
    ]:
        with pytest.raises(ConfigError) as err:
            TrainConfig(**fields).resolved()  # type: ignore[arg-type]
        assert err.value.field == field, err.value
    from training.checks import MAX_LAYERS, MAX_ROLLOUT, MAX_WIDTH
    from training.run_config import MAX_ENVS, MAX_N_STEPS, rollout_row_bytes

    with pytest.raises(ConfigError) as err:
        TrainConfig(n_envs=MAX_ENVS, n_steps=MAX_N_STEPS).validate()
    size = MAX_ENVS * MAX_N_STEPS * rollout_row_bytes(GameConfig.make(), "env") / 2**30  # 803.0
    assert str(err.value) == (
        f"n_envs x n_steps: must be at most {MAX_ROLLOUT:,} env steps a rollout, "
        f"got 4096 x 65536 = 268,435,456 (a rollout buffer of {size:.1f} GiB)"
    )
    assert MAX_ROLLOUT == MAX_ENVS * 256 == 16 * MAX_N_STEPS
    for ok in (
        TrainConfig(n_envs=8, n_steps=2000, net_arch=[128, 128]),  # the README's runs
        TrainConfig(n_envs=MAX_ENVS, n_steps=256, net_arch=[MAX_WIDTH] * MAX_LAYERS),
        TrainConfig(n_envs=16, n_steps=MAX_N_STEPS, batch_size=MAX_ROLLOUT),
        TrainConfig(workers=1000),  # the default envs, 8 a worker, are capped to MAX_ENVS
    ):
        resolved = ok.resolved()
        assert TrainConfig.from_json(json.loads(json.dumps(resolved.to_json()))).resolved() == resolved
    assert TrainConfig(workers=1000).resolved().n_envs == MAX_ENVS


def test_the_rollout_row_is_what_the_buffer_holds() -> None:
    """:func:`rollout_row_bytes` (the size a refusal names) is sb3-contrib's buffer per env step."""
    from gymnasium import spaces
    from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

    from training.run_config import rollout_row_bytes
    from training.single_agent import SingleAgentEnv

    for game, features in ((GameConfig.make(), "env"), (GameConfig.make(3, 6), "planner")):
        env = SingleAgentEnv(env_kwargs=game.to_dict(), features=features)
        n_envs, n_steps = 3, 5
        buffer = MaskableRolloutBuffer(
            n_steps, env.observation_space, spaces.Discrete(game.num_actions), n_envs=n_envs
        )
        held = sum(v.nbytes for v in vars(buffer).values() if isinstance(v, np.ndarray))
        assert held == n_envs * n_steps * rollout_row_bytes(game, features)


def test_resume_refuses_a_saved_config_past_a_bound(tmp_path: Path) -> None:
    """A config.json past a bound (written before the bounds, or by hand) is refused on
    --resume in one line naming the file, the run left as it was; one within them resumes
    (the tiny runs below, and the README's: ``test_the_rollout_bounds_...``)."""
    from training.run_config import TrainConfig
    from training.run_dir import run_config_json

    small = {"game": GameConfig.make(3, 6), "vec": "dummy", "net_arch": [8], "batch_size": 64}
    for fields, says in [
        ({"n_envs": 4097, "n_steps": 64}, "n_envs: must be an int in 0..4096 (0 = the default), got 4097"),
        ({"n_envs": 1, "n_steps": 10**12}, "n_steps: must be an int in 0..65536 (0 = the default), got"),
        ({"n_envs": 1, "n_steps": 64, "net_arch": [10**12]}, "net_arch: needs 1..8 hidden layer sizes"),
        ({"n_envs": 4096, "n_steps": 65536}, "n_envs x n_steps: must be at most 1,048,576 env steps"),
    ]:
        run = tmp_path / "run"
        run.mkdir()
        config = TrainConfig(**{**small, **fields})  # type: ignore[arg-type]
        (run / "config.json").write_text(json.dumps(run_config_json(config)))
        before = _listing(run)
        code, stdout, err = _run(["--steps", "64", "--out", str(run), "--resume", "--no-progress"])
        assert code == 2 and stdout == "", err
        assert _one_line(err).startswith(f"mtrain train: --resume: {run / 'config.json'}: {says}"), err
        assert _listing(run) == before and sorted(p.name for p in tmp_path.iterdir()) == ["run"]
        shutil.rmtree(run)


# ---------------------------------------------------------------- the game config
def test_the_game_is_one_nested_config_and_round_trips() -> None:
    from training.train import TrainConfig

    c = TrainConfig(game=GameConfig.make(num_players=3, max_pips=6, rules="cardinal", blank_penalty=True))
    assert (
        isinstance(c.game, GameConfig)
        and c.game.hand_size == GameConfig.make(3, 6, rules="cardinal").hand_size
    )
    again = TrainConfig.from_json(json.loads(json.dumps(c.to_json())))
    assert again == c
    kw = c.env_kwargs()
    assert kw["num_players"] == 3 and kw["reward"] == "zero_sum" and kw["blank_penalty"] is True
    assert kw["one_tile_opening"] is True  # the preset's flags travel resolved
    assert GameConfig.make(**{k: v for k, v in kw.items() if k != "reward"}) == c.game
    # a mapping of GameConfig.make keywords is validated into the frozen config
    assert TrainConfig(game={"num_players": 3, "max_pips": 6}).game == GameConfig.make(3, 6)  # type: ignore[arg-type]


def test_old_flat_configs_are_read() -> None:
    from training.train import TrainConfig

    flat = {"steps": 10, "num_players": 3, "max_pips": 6, "rules": "pagat", "rounds": 2}
    flat["flags"] = {"blank_penalty": True}
    c = TrainConfig.from_json(flat)
    assert c.game == GameConfig.make(num_players=3, max_pips=6, rounds=2, blank_penalty=True)
    assert c.steps == 10


@pytest.mark.parametrize(
    ("game", "field"),
    [
        ({"num_players": 1}, "game.num_players"),
        ({"max_pips": 30}, "game.max_pips"),
        ({"rules": "nope"}, "game.rules"),
        ({"rounds": 0}, "game.rounds"),
        ({"no_such_flag": True}, "game.flags"),
        ({"blank_penalty": 1}, "game.flags"),
    ],
)
def test_a_bad_game_config_names_its_keyword(game: dict[str, Any], field: str) -> None:
    from training.train import ConfigError, TrainConfig

    with pytest.raises(ConfigError) as err:
        TrainConfig(game=game)  # type: ignore[arg-type]
    assert err.value.field == field


def test_parse_weights_says_what_is_wrong() -> None:
    from agents.mexican_train.league import parse_weights

    assert parse_weights(" greedy:2, random ") == {"greedy": 2.0, "random": 1.0}
    for text, word in [
        ("", "no agent names"),
        ("greedy:0", "> 0"),
        ("greedy:inf", "> 0"),
        ("greedy:two", "'two'"),
        ("a,a", "twice"),
        (":1", "missing"),
    ]:
        with pytest.raises(ValueError, match=word):
            parse_weights(text)


def test_strict_json_maps_non_finite_numbers_to_null() -> None:
    import numpy as np

    from training.train import strict_json

    text = strict_json(
        {"a": math.nan, "b": [np.float32(np.inf), 1.5], "c": np.int64(3), "d": (np.bool_(True),)}
    )
    assert json.loads(text) == {"a": None, "b": [None, 1.5], "c": 3, "d": [True]}


def test_the_summary_text_without_a_confidence_interval() -> None:
    from training.train import format_summary

    row = {
        "step": 64,
        "opponent": "random",
        "diff": 1.5,
        "diff_se": math.nan,
        "lowest_rate": 0.5,
        "ci95": None,
    }
    text = format_summary(
        {
            "steps": 64, "steps_this_run": 64, "resumed_from": None, "seconds": 1.0,
            "steps_per_second": 64.0, "n_envs": 1, "nan_events": 0, "eval_deals": 1, "final_eval": [row],
            "files": {"policy": "p.pt", "model": "m.zip", "tensorboard": "tb", "summary": "s.json",
                      "curve_csv": "c.csv", "curve_png": "c.png"},
        }
    )  # fmt: skip
    assert "vs random" in text and "no CI" in text and "finished lowest in 50%" in text


def test_help_has_one_line_per_option_in_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    from training.cli import _OPTIONS

    monkeypatch.setenv("COLUMNS", "100")
    code, text, _err = _run(["--help"])
    assert code == 0
    for title in ("run:", "game (docs/RULES.md):", "PPO:", "league", "evaluation", "behaviour cloning"):
        assert any(line.startswith(title) for line in text.splitlines()), title
    options = text[text.index("\nrun:") :].splitlines()
    for flag in [*_OPTIONS, "--resume", "--no-progress"]:
        (line,) = [x for x in options if x.startswith(f"  {flag} ")]
        assert len(line.split()) >= 3, line  # option, metavar or help, help on the same line
    # no help text wraps onto a continuation line
    assert not [x for x in options if x.startswith(" " * 10)]


# ------------------------------------------------------------------ real tiny runs
RUN = [
    "--steps", "256", "--envs", "2", "--vec", "dummy", "--players", "3", "--max-pips", "6",
    "--n-steps", "64", "--batch-size", "64", "--epochs", "1", "--net-arch", "16",
    "--checkpoint-every", "128", "--snapshot-every", "128", "--eval-every", "128", "--eval-deals", "2",
    "--heuristics", "random", "--eval-opponents", "random,greedy",
    "--p-heuristic", "0.05", "--p-latest", "1", "--p-older", "0", "--no-progress",
]  # fmt: skip


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A 256-step run whose opponents are mostly snapshots of the learner: (dir, stdout)."""
    out = tmp_path_factory.mktemp("train") / "ra"
    code, stdout, err = _run([*RUN, "--out", str(out)])
    assert code == 0, err
    return out, stdout


def _strict(path: Path) -> Any:
    def refuse(token: str) -> Any:
        raise AssertionError(f"{path}: non-strict JSON token {token}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def test_a_run_ends_with_a_summary_and_strict_json(finished_run: tuple[Path, str]) -> None:
    out, stdout = finished_run
    summary = _strict(out / "summary.json")
    assert summary["steps"] == 256 and summary["resumed_from"] is None and summary["steps_per_second"] > 0
    assert [r["opponent"] for r in summary["final_eval"]] == ["random", "greedy"]
    for r in summary["final_eval"]:
        assert r["step"] == 256
        if r["diff_se"] is None:
            assert r["ci95"] is None
        else:
            assert r["ci95"] == pytest.approx(
                [r["diff"] - 1.96 * r["diff_se"], r["diff"] + 1.96 * r["diff_se"]]
            )
            assert f"{r['diff']:+.2f}" in stdout and f"[{r['ci95'][0]:+.2f}, {r['ci95'][1]:+.2f}]" in stdout
    assert "trained 256 steps" in stdout and "steps/s" in stdout and "95% CI" in stdout
    for key in ("curve_csv", "curve_png", "policy", "tensorboard", "summary", "checkpoint"):
        assert not Path(summary["files"][key]).is_absolute()  # relative to the run directory
        assert (out / summary["files"][key]).exists()
        if key != "checkpoint":
            assert str(out / summary["files"][key]) in stdout
    jsons = list(out.rglob("*.json"))
    assert len(jsons) >= 5  # config, summary, latest, league.json and checkpoint.json per checkpoint
    for path in jsons:
        _strict(path)
    assert _strict(out / "config.json")["game"]["num_players"] == 3


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_no_file_of_a_run_names_a_directory(finished_run: tuple[Path, str]) -> None:
    """Every path stored in a run is relative to it: its own location appears in no file (the
    pickled state's snapshot opponents included), snapshots in flight are named by file name."""
    out = finished_run[0]
    named = [
        str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and str(out).encode() in p.read_bytes()
    ]
    assert named == []
    assert "out" not in _strict(out / "config.json")
    assert _strict(out / "checkpoints" / "latest.json") == {"dir": f"step_{256:012d}", "step": 256}
    state = pickle.loads((out / "checkpoints" / f"step_{256:012d}" / "state.pkl").read_bytes())
    seated = [
        a for s in state["env_states"] for a in pickle.loads(s["opponents"]).values() if hasattr(a, "path")
    ]
    assert seated, "the run should have snapshot opponents in flight at its last checkpoint"
    assert all(re.fullmatch(r"snap_\d{12}\.npz", a.path) for a in seated), [a.path for a in seated]


def _weights(run: Path, step: int) -> dict[str, Any]:
    from agents.policy_net import read_sb3_archive

    return read_sb3_archive(run / "checkpoints" / f"step_{step:012d}" / "model.zip")[2]


def test_a_copied_run_is_independent_and_a_moved_run_resumes(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    """``cp -r ra rb``; resume rb, then ra: each advances in its own directory and leaves the
    other untouched (names, sizes, mtimes); ``mv rb rc`` (rb gone): rc resumes where it is."""
    ra = _copy(finished_run[0], tmp_path / "ra")
    rb = _copy(ra, tmp_path / "rb")
    before_a = _listing(ra)
    code, stdout, err = _run([*RUN, "--steps", "384", "--out", str(rb), "--resume"])
    assert code == 0, err
    assert "resumed from step 256" in stdout
    assert _listing(ra) == before_a
    before_b = _listing(rb)
    code, _stdout, err = _run([*RUN, "--steps", "512", "--out", str(ra), "--resume"])
    assert code == 0, err
    assert _listing(rb) == before_b
    assert _strict(ra / "checkpoints" / "latest.json")["step"] == 512
    assert _strict(rb / "checkpoints" / "latest.json")["step"] == 384
    for run, steps in ((ra, 512), (rb, 384)):
        summary = _strict(run / "summary.json")
        assert summary["resumed_from"] == 256 and summary["steps"] == steps
    a384, b384 = _weights(ra, 384), _weights(rb, 384)  # the same run, continued twice
    assert all(np.array_equal(a384[k], b384[k]) for k in a384)

    rc = rb.rename(tmp_path / "rc")
    after_a = _listing(ra)
    code, _stdout, err = _run([*RUN, "--steps", "512", "--out", str(rc), "--resume"])
    assert code == 0, err
    assert not rb.exists() and _listing(ra) == after_a
    a512, c512 = _weights(ra, 512), _weights(rc, 512)
    assert all(np.array_equal(a512[k], c512[k]) for k in a512)


def test_resume_reads_a_run_written_with_the_flat_config(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    run = _copy(finished_run[0], tmp_path / "old")
    config = _strict(run / "config.json")
    game = config.pop("game")
    config.update({k: game[k] for k in ("num_players", "max_pips", "rules", "rounds")})
    config["flags"] = {}
    config["out"] = "somewhere/else"
    (run / "config.json").write_text(json.dumps(config))
    code, _stdout, err = _run(["--steps", "320", "--out", str(run), "--resume", "--no-progress"])
    assert code == 0, err
    rewritten = _strict(run / "config.json")
    assert rewritten["game"]["num_players"] == 3 and "num_players" not in rewritten
    assert _strict(run / "summary.json")["steps"] == 384  # one more rollout of 2 x 64


@pytest.mark.parametrize(
    ("extra", "flags"),
    [
        (["--lr", "0.1"], "--lr"),
        (["--players", "4", "--lr", "0.1"], "--players, --lr"),
        (["--flag", "blank_penalty"], "--flag"),
        (["--rules", "cardinal"], "--rules"),
        (["--net-arch", "32"], "--net-arch"),
    ],
)
def test_resume_refuses_conflicting_options(
    finished_run: tuple[Path, str], tmp_path: Path, extra: list[str], flags: str
) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    before = _listing(run)
    code, _stdout, err = _run([*RUN, "--steps", "512", "--out", str(run), "--resume", *extra])
    line = _one_line(err)
    assert code == 2 and line.startswith(f"mtrain train: {flags}: conflicting with the run"), line
    assert _listing(run) == before


def test_resume_refuses_fewer_steps_than_the_run_has(finished_run: tuple[Path, str], tmp_path: Path) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    before = _listing(run)
    code, _stdout, err = _run(["--steps", "100", "--out", str(run), "--resume"])
    assert code == 2
    assert _one_line(err) == (
        f"mtrain train: --steps: the run in {run} is at step 256 (its last checkpoint); "
        "give --steps >= 256 to extend it"
    )
    assert _listing(run) == before


def test_resume_names_a_bad_value_in_the_saved_config(finished_run: tuple[Path, str], tmp_path: Path) -> None:
    run = _copy(finished_run[0], tmp_path / "run")
    config = _strict(run / "config.json")
    config["eval_deals"] = 0
    (run / "config.json").write_text(json.dumps(config))
    before = _listing(run)
    code, _stdout, err = _run(["--steps", "512", "--out", str(run), "--resume"])
    assert code == 2
    assert (
        _one_line(err)
        == f"mtrain train: --resume: {run / 'config.json'}: eval_deals: must be an int in 1..100000, got 0"
    )
    (run / "config.json").write_text("{not json")
    code, _stdout, err = _run(["--steps", "512", "--out", str(run), "--resume"])
    assert code == 2 and _one_line(err).startswith(
        f"mtrain train: --resume: {run / 'config.json'}: not JSON ("
    )
    (run / "config.json").write_text('{"steps": 1, "seed": 0, "n_envs": 2, "game": "pagat"}')
    code, _stdout, err = _run(["--steps", "512", "--out", str(run), "--resume"])
    assert code == 2 and _one_line(err).startswith(
        f"mtrain train: --resume: {run / 'config.json'}: does not hold a training configuration ("
    )
    assert _listing(run).keys() == before.keys()


def test_resume_before_the_first_checkpoint_starts_over(
    finished_run: tuple[Path, str], tmp_path: Path
) -> None:
    """A run killed before its first checkpoint (e.g. collecting BC data) starts over on --resume."""
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(finished_run[0] / "config.json", run / "config.json")
    code, stdout, err = _run(["--steps", "128", "--out", str(run), "--resume", "--no-progress"])
    assert code == 0, err
    summary = _strict(run / "summary.json")
    assert summary["restarted"] is True and summary["resumed_from"] is None and summary["steps"] == 128
    assert "started over" in stdout
    assert _strict(run / "checkpoints" / "latest.json")["step"] == 128


def test_heuristics_and_eval_opponents_take_agent_specs() -> None:
    """A spec's commas stay inside its brackets: ``--heuristics "mc[sims=2,z=2]:2,greedy"``."""
    import argparse

    from training import cli

    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    argv = ["train", "--steps", "64", "--out", "runs/x", "--heuristics", "mc[sims=2,z=2]:2,greedy"]
    args = parser.parse_args([*argv, "--eval-opponents", "mc[sims=2,z=2],planner"])
    config = cli.config_from_args(args)
    assert config.heuristics == {"mc[sims=2,z=2]": 2.0, "greedy": 1.0}
    assert list(config.eval_opponents) == ["mc[sims=2,z=2]", "planner"]


def test_an_evaluation_opponent_spec_plays_with_its_parameters() -> None:
    """``evaluate_agent(..., "mc[sims=2]")``: the opponent is mc at 2 rollouts (its budget is
    what the curve's opponent is named by), not mc at its default."""
    from agents.mexican_train.mc import MCAgent
    from mtrain_env.mexican_train import GameConfig
    from training.evaluate import evaluate_agent

    built: list[int] = []
    original = MCAgent.__init__

    def spy(self: MCAgent, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        built.append(self.rollouts)

    game = GameConfig.make(num_players=2, max_pips=6)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(MCAgent, "__init__", spy)
        result = evaluate_agent("random", "mc[sims=2]", deals=1, seed=0, game=game)
    assert result.opponent == "mc[sims=2]" and built and set(built) == {2}


# ------------------------------------------------------------ one writer, interrupts
@pytest.mark.parametrize("backend", ["sb3", "rllib"])
def test_a_directory_in_use_is_refused_in_one_line_before_anything_is_read(
    finished_run: tuple[Path, str], tmp_path: Path, backend: str
) -> None:
    """A second run on an --out being written (a requeued job, the same command in another
    terminal) is refused at once, naming the holder; the run's files stay as they are."""
    from mtrain_env.tilegame.files import run_lock

    run = tmp_path / "run"
    shutil.copytree(finished_run[0], run)
    with run_lock(run):  # flock is per open file: this process's second open is refused too
        before = _listing(run)
        for argv in (["--steps", "512", "--out", str(run), "--resume"], _argv(run, [])):
            code, stdout, err = _run([*argv, "--backend", backend])
            assert code == 2 and stdout == "", err
            held = f"{run} is in use by pid {os.getpid()} (one run writes a directory at a time)"
            assert _one_line(err) == f"mtrain train: --out: {held}"
        assert _listing(run) == before
    code, _stdout, err = _run(["--steps", "128", "--out", str(run), "--resume", "--backend", backend])
    assert code == 2 and "is in use" not in err  # released: the usual checks answer


def _interrupted(*_args: Any, **_kwargs: Any) -> Any:
    raise KeyboardInterrupt


def test_the_interrupt_line_suggests_resume_only_once_the_run_is_set_up(
    finished_run: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from training.train import Trainer

    monkeypatch.setattr(Trainer, "run", _interrupted)  # before config.json is written
    code, _stdout, err = _run(_argv(tmp_path / "new", []))
    assert code == 130
    assert _one_line(err) == "mtrain train: interrupted before the run was set up; run the same command again"
    run = tmp_path / "run"
    shutil.copytree(finished_run[0], run)
    code, _stdout, err = _run(["--steps", "512", "--out", str(run), "--resume"])
    assert code == 130
    assert _one_line(err).startswith("mtrain train: interrupted; run the same command with --resume")


#: the options whose values are agent specs (``--heuristics``: specs with weights)
AGENT_OPTIONS = ("--agents", "--lineup", "--eval-opponents", "--bc-expert", "--heuristics")


def _help_texts(command: str) -> list[str]:
    """The description and every option's help of ``mtrain <command> --help``."""
    import argparse

    from training.app import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    p = sub.choices[command]
    return [p.description or "", *(f"{' '.join(a.option_strings)} {a.help}" for a in p._actions if a.help)]


def _quoted_specs(texts: list[str]) -> list[str]:
    """Every agent spec the help quotes: values of the agent options in the commands it shows
    (example lines and `...` spans), their ``(default ...)`` and ``name[...]`` anywhere."""
    import shlex

    from agents.mexican_train.league import parse_weights
    from agents.registry import split_specs

    found: list[tuple[str, str]] = []  # (the option, its value as written)
    for text in texts:
        commands = re.findall(r"`(mtrain [^`]*)`", text) + re.findall(r"^\s*(mtrain [^#\n]*)", text, re.M)
        for command in commands:
            tokens = shlex.split(command)
            for i, token in enumerate(tokens):
                if token in AGENT_OPTIONS:
                    for value in tokens[i + 1 :]:
                        if value.startswith("-"):
                            break
                        found.append((token, value))
        option = text.split(" ", 1)[0]
        if option in AGENT_OPTIONS:
            found += [(option, d) for d in re.findall(r"\(default ([^)]*)\)", text)]
        found += [("", m) for m in re.findall(r"\b[a-z_]+\[[^\]\s]*\]", text)]
    specs: list[str] = []
    for option, value in found:
        if option == "--heuristics":
            specs += list(parse_weights(value))
        else:
            specs += [s for part in value.split() for s in split_specs(part)]
    return specs


@pytest.mark.parametrize("command", ["selfplay", "train"])
def test_every_agent_spec_the_help_quotes_parses_and_plays_at_the_default_table(command: str) -> None:
    from agents.mexican_train.ppo import REFERENCE_POLICY
    from agents.tournament.harness import AgentSpec, checked_agent

    specs = _quoted_specs(_help_texts(command))
    assert len(specs) >= 3, specs  # the defaults of the evaluation opponents at least
    if command == "selfplay":
        assert "ppo[path=...]" in specs  # where a run's policy.npz is played
    game = GameConfig.make()
    for spec in specs:
        text = spec.replace("...", str(REFERENCE_POLICY))  # a placeholder for a policy file
        checked_agent(AgentSpec.parse(text), game)
