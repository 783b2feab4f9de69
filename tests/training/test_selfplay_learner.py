"""The self-play learner: determinism, exact resume, policy files, the ``ppo`` agent, the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch as th

from agents.mexican_train.ppo import PPOAgent, clear_cache
from agents.mexican_train.tilenet import (
    MASKED,
    NetSpec,
    build_net,
    is_selfplay_policy,
    read_selfplay_policy,
    save_selfplay_policy,
)
from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain
from mtrain_env.mexican_train.core.config import GameConfig
from tests.cli_support import imported_by_refusals
from tests.selfplay_support import SMALL_RUN, checkpoint_round_trip
from training.app import main as mtrain
from training.checks import ConfigError
from training.selfplay.checkpoint import load_checkpoint, save_checkpoint
from training.selfplay.config import config_to_json
from training.selfplay.learner import SelfPlayConfig, SelfPlayPPO

TINY = {
    "num_players": 3,
    "max_pips": 6,
    "num_games": 6,
    "steps": 12,
    "hidden": 16,
    "pair_hidden": 8,
    "minibatch": 32,
    "epochs": 2,
}


#: the options of a run of 72 decisions (SMALL_RUN), for command lines that must be refused
TINY_RUN = [*SMALL_RUN, "--steps", "72"]


def _params(learner: SelfPlayPPO) -> dict[str, th.Tensor]:
    return {k: v.clone() for k, v in learner.net.state_dict().items()}


def _same(a: dict[str, th.Tensor], b: dict[str, th.Tensor]) -> bool:
    return a.keys() == b.keys() and all(th.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("net", ["tile", "graph", "mlp"])
def test_a_seeded_run_is_deterministic_and_learns_something(net: str) -> None:
    runs = []
    for _ in range(2):
        learner = SelfPlayPPO(SelfPlayConfig(net=net, seed=3, **TINY))
        before = _params(learner)
        for _ in range(2):
            learner.iterate()
        runs.append((learner, _params(learner)))
        assert not _same(before, runs[-1][1])  # the updates changed the weights
    (a, pa), (b, pb) = runs
    assert _same(pa, pb)
    np.testing.assert_array_equal(a.collector.env.states, b.collector.env.states)
    other = SelfPlayPPO(SelfPlayConfig(net=net, seed=4, **TINY))
    other.iterate()
    other.iterate()
    assert not _same(pa, _params(other))


def test_resume_from_a_checkpoint_is_exact(tmp_path) -> None:
    config = SelfPlayConfig(seed=5, **TINY)
    straight = SelfPlayPPO(config)
    for _ in range(3):
        straight.iterate()
    _, resumed = checkpoint_round_trip(lambda: SelfPlayPPO(config), tmp_path / "c.pt")
    assert resumed.env_steps == config.steps * config.num_games
    for _ in range(2):
        resumed.iterate()
    assert _same(_params(straight), _params(resumed))
    np.testing.assert_array_equal(straight.collector.env.states, resumed.collector.env.states)
    assert (straight.trained, straight.rounds) == (resumed.trained, resumed.rounds)


def test_a_checkpoint_of_another_config_is_refused(tmp_path) -> None:
    learner = SelfPlayPPO(SelfPlayConfig(seed=5, **TINY))
    save_checkpoint(learner.state_dict(), tmp_path / "c.pt")
    other = SelfPlayPPO(SelfPlayConfig(seed=6, **TINY))
    with pytest.raises(ValueError, match=r"differs in \['seed'\]"):
        other.load_state_dict(load_checkpoint(tmp_path / "c.pt"))


@pytest.mark.parametrize("net", ["tile", "graph", "mlp"])
def test_policy_file_round_trip_and_masking(tmp_path, net: str) -> None:
    config = GameConfig.make(num_players=4, max_pips=12)
    model = build_net(NetSpec.make(net, config, hidden=32, pair_hidden=16), seed=1)
    path = save_selfplay_policy(model, tmp_path / "p.npz")
    assert is_selfplay_policy(path)
    loaded = read_selfplay_policy(path)
    batch = BatchedMexicanTrain(16, copy=True, num_players=4, max_pips=12)
    obs_np, mask_np, _seat, _ = batch.reset(seed=3)
    for _ in range(30):  # into the middle of the rounds
        obs_np, mask_np, *_ = batch.step(np.array([np.flatnonzero(m)[-1] for m in mask_np]))
    obs, mask = th.as_tensor(obs_np), th.as_tensor(mask_np != 0)
    logits, value = model(obs, mask)
    logits2, value2 = loaded(obs, mask)
    assert th.allclose(logits, logits2) and th.allclose(value, value2)
    assert bool((logits[~mask] == MASKED).all()) and bool((logits[mask] > MASKED / 2).all())


def test_bad_policy_files_are_refused(tmp_path) -> None:
    import zipfile

    bad = tmp_path / "bad.npz"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("policy.json", '{"format": "mtrain-selfplay-policy", "version": 9}')
    with pytest.raises(ValueError, match="format version 9"):
        read_selfplay_policy(bad)
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    assert not is_selfplay_policy(tmp_path / "junk.npz")
    with pytest.raises(ValueError, match="not a self-play policy file"):
        read_selfplay_policy(tmp_path / "junk.npz")


def test_the_ppo_agent_plays_a_selfplay_policy(tmp_path) -> None:
    from agents.tournament import AgentSpec, TournamentConfig, run_tournament

    learner = SelfPlayPPO(SelfPlayConfig(seed=2, **TINY))
    learner.iterate()
    path = save_selfplay_policy(learner.net, tmp_path / "policy.npz")
    clear_cache()
    agent = PPOAgent(path=path)
    assert agent.policy.observation_space.shape == (learner.collector.env.obs_size,)
    result = run_tournament(
        TournamentConfig(
            agents=[
                AgentSpec("ppo", {"path": str(path)}, label="learner"),
                AgentSpec("random", {}, label="random"),
            ],
            game=GameConfig.make(num_players=3, max_pips=6),
            lineup=["learner", "random", "random"],
            deals=2,
            seed=1,
            workers=1,
            out_dir=None,
            progress=False,
            plots=False,
        )
    )
    stats = {a["agent"]: a for a in result.agents}
    assert stats["learner"]["seat_rounds"] == 6


def test_config_errors_name_the_field() -> None:
    with pytest.raises(ConfigError, match=r"^num_games: must be an int"):
        SelfPlayConfig(num_games=0)
    with pytest.raises(ConfigError, match=r"^net: must be one of"):
        SelfPlayConfig(net="cnn")
    with pytest.raises(ConfigError, match=r"^lr: must be > 0"):
        SelfPlayConfig(lr=0.0)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--games", "0"], "mtrain selfplay: --games: num_games must be an int in 1..65536, got 0"),
        # each alone in range, their seat book 7.3 TiB: a MemoryError that left --out/.lock (audit s31 F3)
        (
            ["--games", "65536", "--rollout-steps", "65536", "--steps", "10"],
            "mtrain selfplay: --games x --rollout-steps: num_games x steps must be at most 1,048,576 "
            "decisions a rollout, got 65536 x 65536 = 4,294,967,296 (a seat book of 7.3 TiB)\n",
        ),
        (["--net", "cnn"], "mtrain selfplay: --net: net must be one of tile, graph, mlp, got 'cnn'"),
        (["--minutes", "-1"], "mtrain selfplay: --minutes: max_minutes must be >= 0, got -1.0"),
        (["--eval-opponents", "nobody"], "mtrain selfplay: --eval-opponents: unknown agent 'nobody'"),
        (["--players", "3", "--eval-opponents", "ppo"], "mtrain selfplay: --eval-opponents: ppo: policy "),
        # accepted before, hence with a tiny run's options (that run is what a regression does)
        (["--init", "."], "mtrain selfplay: --init: . is a directory, not a self-play policy file"),
        (
            [*TINY_RUN, "--eval-seed", "-1"],
            "mtrain selfplay: --eval-seed: eval_seed must be an int >= 0, got -1",
        ),
        (
            [*TINY_RUN, "--eval-deals", "0"],
            "mtrain selfplay: --eval-deals: eval_deals must be an int in 1..100000, got 0",
        ),
        (  # training.checks.MAX_EVAL_DEALS: each evaluation holds its rows and stops training
            [*TINY_RUN, "--eval-deals", "1000000000000"],
            "mtrain selfplay: --eval-deals: eval_deals must be an int in 1..100000, got 1000000000000",
        ),
        ([*TINY_RUN, "--clip", "0"], "mtrain selfplay: --clip: clip must be > 0, got 0.0"),
        ([*SMALL_RUN, "--steps", "0"], "mtrain selfplay: --steps: total_steps must be an int >= 1, got 0"),
        # the empty --out is named first (without that check, --games 0 is: no run in the cwd)
        (["--out", "", "--games", "0"], "mtrain selfplay: --out: expected a directory path, got ''"),
    ],
)
def test_cli_errors_are_one_line(tmp_path, capsys, argv: list[str], message: str) -> None:
    assert mtrain(["selfplay", "--out", str(tmp_path / "run"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert not (tmp_path / "run").exists()


def test_bad_options_are_refused_before_torch_is_imported(tmp_path) -> None:
    """A typo costs a fraction of a second: the configuration lives in the torch-free
    ``training.selfplay.config``, and an ``--init`` file is checked by its header."""
    first = SelfPlayPPO(SelfPlayConfig(seed=2, **TINY))
    path = save_selfplay_policy(first.net, tmp_path / "start.npz")
    out = str(tmp_path / "run")
    cases = [
        ["--out", out, "--games", "0"],
        ["--out", out, "--net", "cnn"],
        ["--out", out, "--minutes", "-1"],
    ]
    cases += [["--out", out, "--eval-opponents", "nobody"], ["--out", out, "--algo", "dmc"]]
    cases += [["--out", out, "--init", str(path)], ["--out", out, "--resume"]]  # another shape; no run
    cases += [["--out", out, "--players", "3", "--eval-opponents", "ppo"]]  # a 4-player network
    cases += [["--out", out, "--init", "."], ["--out", "", "--games", "0"]]
    cases += [["--out", out, "--games", "65536", "--rollout-steps", "65536"]]  # the seat book's size
    bad = [["--eval-seed", "-1"], ["--eval-deals", "0"], ["--clip", "0"], ["--steps", "0"]]
    cases += [["--out", out, *TINY_RUN, *b] for b in bad]
    assert imported_by_refusals("selfplay", cases, ["torch", "numba"], tmp_path) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["start.npz"]


def test_a_run_resumes_after_its_init_file_is_gone(tmp_path, capsys) -> None:
    """``--init`` is read when a run starts; its checkpoints hold the weights after that,
    so deleting the starting file does not stop ``--resume`` (it was a traceback)."""
    first = SelfPlayPPO(SelfPlayConfig(seed=2, **TINY))
    start = save_selfplay_policy(first.net, tmp_path / "start.npz")
    out = str(tmp_path / "run")
    assert mtrain(["selfplay", "--out", out, "--init", str(start), "--steps", "72", *SMALL_RUN]) == 0
    start.unlink()
    capsys.readouterr()
    assert mtrain(["selfplay", "--out", out, "--steps", "144", "--resume", *SMALL_RUN]) == 0
    assert "144 env decisions" in capsys.readouterr().out


def test_cli_runs_and_resumes(tmp_path, capsys) -> None:
    out = str(tmp_path / "run")
    small = SMALL_RUN
    assert mtrain(["selfplay", "--out", out, "--steps", "72", *small]) == 0
    assert "72 env decisions" in capsys.readouterr().out
    assert mtrain(["selfplay", "--out", out, "--steps", "144", *small]) == 2
    assert "holds a run; add --resume" in capsys.readouterr().err
    assert mtrain(["selfplay", "--out", out, "--steps", "144", "--resume", "--no-progress"]) == 0
    assert "144 env decisions" in capsys.readouterr().out
    assert is_selfplay_policy(tmp_path / "run" / "policy.npz")


def test_a_checkpoint_of_the_old_batch_format_is_refused_in_one_line(tmp_path, capsys) -> None:
    """Checkpoints written before ``BatchedMexicanTrain.state_dict`` (the learner's own
    ``ResumableBatch`` snapshot: arrays, generators, seed) are refused, not half-loaded."""
    out = tmp_path / "run"
    small = SMALL_RUN
    assert mtrain(["selfplay", "--out", str(out), "--steps", "72", *small]) == 0
    capsys.readouterr()
    state = load_checkpoint(out / "checkpoint.pt")
    env = state["env"]
    state["env"] = {"arrays": {f"_{k}": v for k, v in env["arrays"].items()}, "rngs": env["rngs"], "seed": 5}
    save_checkpoint(state, out / "checkpoint.pt")
    assert mtrain(["selfplay", "--out", str(out), "--steps", "144", "--resume", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mtrain selfplay: --resume: ") and "cannot be restored" in err, err
    assert err.count("\n") == 1


def test_init_starts_from_a_policy_file(tmp_path, capsys) -> None:
    first = SelfPlayPPO(SelfPlayConfig(seed=2, **TINY))
    first.iterate()
    path = save_selfplay_policy(first.net, tmp_path / "start.npz")
    second = SelfPlayPPO(SelfPlayConfig(seed=9, init=str(path), **TINY))
    assert _same(_params(first), _params(second))
    second.iterate()  # and it trains from there
    assert not _same(_params(first), _params(second))
    other = {**TINY, "hidden": 32}
    with pytest.raises(ValueError, match=r"init: .* holds a"):
        SelfPlayPPO(SelfPlayConfig(init=str(path), **other))
    argv = ["selfplay", "--out", str(tmp_path / "run"), "--init", str(path)]
    assert mtrain(argv) == 2
    assert "--init: " in capsys.readouterr().err and not (tmp_path / "run").exists()


# ------------------------------------------------------------ a damaged run on --resume
def _tiny_json() -> dict[str, Any]:
    return config_to_json(SelfPlayConfig(**TINY))


def _damaged_run(out: Path, config: Any = None, checkpoint: Any = None) -> Path:
    """A run directory holding ``config`` as selfplay.json (bytes as they are, else as JSON;
    default: a valid TINY run's) and ``checkpoint`` as checkpoint.pt (bytes as they are,
    ``"dir"`` a directory, ``"unreadable"`` a link to ``/proc/self/mem``, else ``torch.save``'d)."""
    out.mkdir()
    data = _tiny_json() if config is None else config
    (out / "selfplay.json").write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    if checkpoint == "dir":
        (out / "checkpoint.pt").mkdir()
    elif checkpoint == "unreadable":  # every read fails with EIO (chmod 000 does not stop root)
        (out / "checkpoint.pt").symlink_to("/proc/self/mem")
    elif isinstance(checkpoint, bytes):
        (out / "checkpoint.pt").write_bytes(checkpoint)
    elif checkpoint is not None:
        th.save(checkpoint, out / "checkpoint.pt")
    return out


def _without(key: str) -> dict[str, Any]:
    return {k: v for k, v in _tiny_json().items() if k != key}


#: (selfplay.json, checkpoint.pt, the message after "--resume: <out>/"); refused at a glance,
#: before torch is imported
GLANCE = {
    "json-not-text": (b"\xff\xfe\x00 garbage", None, "selfplay.json: not a JSON file (not UTF-8 text)"),
    "json-broken": (b'{"num_players": ', None, "selfplay.json: not a JSON file (Expecting value"),
    "json-list": ([1, 2], None, "selfplay.json: must hold a JSON object of self-play settings, got a list"),
    "json-missing": (_without("clip"), None, "selfplay.json: missing self-play settings ['clip']"),
    "json-type": ({**_tiny_json(), "hidden": "16"}, None, "selfplay.json: hidden must be an int in 8..4096"),
    "json-rollout": (
        {**_tiny_json(), "num_games": 65536, "steps": 65536},
        None,
        "selfplay.json: num_games x steps must be at most 1,048,576 decisions a rollout, got 65536 x 65536",
    ),
    "json-algo": ({**_tiny_json(), "algo": []}, None, "selfplay.json: algo must be one of ppo, got []"),
    "ckpt-bytes": (None, bytes(range(256)), "checkpoint.pt: not a self-play checkpoint (not the zip archive"),
    "ckpt-empty": (None, b"", "checkpoint.pt: not a self-play checkpoint (not the zip archive"),
    "ckpt-json": (None, b'{"config": {}}', "checkpoint.pt: not a self-play checkpoint (not the zip archive"),
    "ckpt-dir": (None, "dir", "checkpoint.pt: not a checkpoint file (a directory)"),
}
if Path("/proc/self/mem").exists():  # Linux: a file every read of which fails
    GLANCE["ckpt-unreadable"] = (None, "unreadable", "checkpoint.pt: cannot read it (Input/output error)")
#: the same for checkpoints torch reads, whose contents are wrong
CONTENTS = {
    "ckpt-list": ([1, 2], "checkpoint.pt: not a self-play checkpoint (holds a list, not a learner's state"),
    "ckpt-no-dtype": (
        {"net": {"__ndarray__": th.zeros(2)}},
        "(net: an array tag must hold '__ndarray__' and",
    ),
    "ckpt-not-tensor": ({"net": {"__ndarray__": [1.0], "dtype": "float32"}}, "the array must be a tensor"),
    "ckpt-dtype": (
        {"net": {"__ndarray__": th.zeros(2), "dtype": "float99"}},
        "(net: unknown dtype 'float99')",
    ),
    "ckpt-object": ({"net": {"__ndarray__": th.zeros(2), "dtype": "object"}}, "dtype must be bool, an int"),
    "ckpt-no-state": ({"wall_s": 1.0}, "checkpoint.pt: cannot be restored: no 'config' in it"),
}
RESUME = ["--resume", "--steps", "12", "--eval-every", "0", "--no-progress"]


def _listing(d: Path) -> list[tuple[str, int]]:
    """The run's files and sizes; the lock file is not the run's (it is taken before the
    checkpoint's contents are read, so a refusal there leaves it behind)."""
    return [(str(p.relative_to(d)), p.stat().st_size) for p in sorted(d.rglob("*")) if p.name != ".lock"]


@pytest.mark.parametrize(
    ("config", "checkpoint", "message"),
    [pytest.param(*v, id=k) for k, v in GLANCE.items()]
    + [pytest.param(None, c, m, id=k) for k, (c, m) in CONTENTS.items()],
)
def test_a_damaged_run_is_refused_in_one_line_and_left_as_it_was(
    tmp_path, capsys, config: Any, checkpoint: Any, message: str
) -> None:
    out = _damaged_run(tmp_path / "run", config, checkpoint)
    before = _listing(out)
    assert mtrain(["selfplay", "--out", str(out), *RESUME]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mtrain selfplay: --resume: {out}") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert _listing(out) == before  # no policies/, tb/, curve.csv, checkpoint.pt.tmp
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_damaged_run_is_refused_before_torch_is_imported(tmp_path) -> None:
    cases = []
    for i, (config, checkpoint, _message) in enumerate(GLANCE.values()):
        cases.append(["--out", str(_damaged_run(tmp_path / f"run{i}", config, checkpoint)), *RESUME])
    assert imported_by_refusals("selfplay", cases, ["torch", "numba"], tmp_path) is None


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ([{"net": 1}], "holds a list, not a learner's state"),
        ({"env": {"arrays": {"x": {"__ndarray__": th.zeros(2)}}}}, "env.arrays.x: an array tag must hold"),
        (
            {"book": [{"__ndarray__": [1.0], "dtype": "float32"}]},
            "book[0]: the array must be a tensor, got list",
        ),
        ({"net": {"__ndarray__": th.zeros(2), "dtype": 5}}, "net: dtype must be a numpy dtype name, got 5"),
        ({"net": {"__ndarray__": th.zeros(2), "dtype": "nosuch"}}, "net: unknown dtype 'nosuch'"),
        ({"net": {"__ndarray__": th.zeros(2), "dtype": "<U3"}}, "dtype must be bool, an int or a float"),
    ],
)
def test_decode_refuses_a_state_it_did_not_encode(tmp_path, state: Any, message: str) -> None:
    from training.run_dir import CheckpointError
    from training.selfplay.checkpoint import SelfPlayCheckpointError, _decode

    with pytest.raises(ValueError, match=re.escape(message)):
        _decode(state)
    path = tmp_path / "checkpoint.pt"
    th.save(state, path)
    with pytest.raises(
        SelfPlayCheckpointError, match=re.escape(f"{path}: not a self-play checkpoint (")
    ) as err:
        load_checkpoint(path)
    assert message in str(err.value) and "\n" not in str(err.value)
    # one except catches the checkpoint errors of every trainer
    assert isinstance(err.value, CheckpointError) and err.value.file == str(path)


def _flip_a_weight_byte(path: Path) -> None:
    """Flip one bit in the middle of the checkpoint's largest tensor (its bytes are stored
    uncompressed in the zip; torch.load reads them without checking the zip's CRC)."""
    import struct
    import zipfile

    with zipfile.ZipFile(path) as zf:
        big = max((i for i in zf.infolist() if "/data/" in i.filename), key=lambda i: i.file_size)
    data = bytearray(path.read_bytes())
    name_len, extra_len = struct.unpack("<HH", data[big.header_offset + 26 : big.header_offset + 30])
    data[big.header_offset + 30 + name_len + extra_len + big.file_size // 2] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_checkpoint_with_a_flipped_byte_is_refused_naming_the_file(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    assert mtrain(["selfplay", "--out", str(out), "--steps", "72", *SMALL_RUN]) == 0
    ckpt = out / "checkpoint.pt"
    _flip_a_weight_byte(ckpt)
    before = _listing(out)
    capsys.readouterr()
    assert mtrain(["selfplay", "--out", str(out), "--steps", "144", "--resume", "--no-progress"]) == 2
    says = f"{ckpt}: damaged: its contents are not those of the sha256 it recorded"
    assert capsys.readouterr().err == f"mtrain selfplay: --resume: {says}\n"
    assert _listing(out) == before
    from training.selfplay.checkpoint import SelfPlayCheckpointError

    with pytest.raises(SelfPlayCheckpointError, match=re.escape(says)):
        load_checkpoint(ckpt)


def test_the_checksum_covers_every_value_and_where_it_is() -> None:
    from training.selfplay.checkpoint import state_sha256

    state = {"net": th.arange(4.0), "counters": {"env_steps": 72, "updates": 1}, "gen": [1, 2]}
    same = {"net": th.arange(4.0), "counters": {"env_steps": 72, "updates": 1}, "gen": [1, 2]}
    assert state_sha256(state) == state_sha256(same)
    changed = [
        {**state, "net": th.arange(4.0).flip(0)},  # a tensor's bytes
        {**state, "net": th.arange(4.0).double()},  # its dtype
        {**state, "net": th.arange(4.0).reshape(2, 2)},  # its shape
        {**state, "counters": {"env_steps": 73, "updates": 1}},  # a value
        {**state, "counters": {"env_steps": 1, "updates": 72}},  # values swapped between keys
        {**state, "counters": {"env_steps": 72.0, "updates": 1}},  # a value's type
        {**state, "gen": [1, 2, 3]},  # a list's length
    ]
    assert len({state_sha256(s) for s in changed} | {state_sha256(state)}) == len(changed) + 1
