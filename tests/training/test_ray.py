"""Ray: the RLlib multi-agent adapter, masking module and league (training/rllib), RLlib
training on local Ray, and tournaments on Ray actors (agents/tournament/ray_backend.py).

The adapter, module and mapping tests need RLlib but no running Ray (fast). Everything
that starts Ray shares one local instance (the ``ray_local`` fixture) and is ``slow``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import agents
from agents.tournament import TournamentConfig, run_tournament
from mtrain_env.mexican_train.core.config import GameConfig
from training.app import main as mtrain
from training.rllib.env import MASK_KEY, OBS_KEY, MexicanTrainMultiAgentEnv
from training.rllib.league import MAIN, SnapshotMapping

SMALL = {"num_players": 3, "max_pips": 6}


def _play(
    env: MexicanTrainMultiAgentEnv, seed: int, rng: np.random.Generator
) -> tuple[dict[str, float], dict[str, float]]:
    """One episode with uniformly random legal actions: each seat's summed rewards from the
    adapter, and from the raw env's per-step rewards (with no heuristic seats, one adapter
    step is one env step). Checks the turn-based protocol on the way."""
    obs, _ = env.reset(seed=seed)
    totals: dict[str, float] = {}
    reference: dict[str, float] = {}
    while True:
        assert len(obs) == 1, "only the seat on turn gets an observation"
        ((agent_id, o),) = obs.items()
        raw = env.raw
        assert agent_id == raw.agent_selection
        assert agent_id not in {raw.possible_agents[s] for s in env.heuristic_seats()}
        np.testing.assert_array_equal(o[OBS_KEY], raw.observe(agent_id)["observation"])
        np.testing.assert_array_equal(o[MASK_KEY], raw.infos[agent_id]["action_mask"].astype(np.float32))
        assert env.observation_spaces[agent_id].contains(o)
        action = int(rng.choice(np.flatnonzero(o[MASK_KEY])))
        obs, rewards, terminated, truncated, _ = env.step({agent_id: action})
        for a, r in raw.rewards.items():
            reference[a] = reference.get(a, 0.0) + float(r)
        for a, r in rewards.items():
            totals[a] = totals.get(a, 0.0) + r
        assert not truncated["__all__"]
        if terminated["__all__"]:
            assert set(obs) == set(totals), "every seat that played gets its last observation"
            return totals, reference


def test_rllib_env_checker_accepts_the_adapter() -> None:
    """RLlib's own MultiAgentEnv checker (it steps unmasked random actions: the
    ``terminate`` mode ends the episode on an illegal one, as PettingZoo classic does)."""
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    for kwargs in (SMALL, {}):
        env = MexicanTrainMultiAgentEnv({"env_kwargs": kwargs, "illegal_action": "terminate"})
        check_multiagent_environments(env)


def test_turn_based_rewards_sum_to_the_env_returns() -> None:
    """Every seat's rewards over an episode (two rounds: the first ends mid-episode) are the
    raw env's for it, none lost or moved to another seat (zero-sum: they add up to 0)."""
    env = MexicanTrainMultiAgentEnv({"env_kwargs": {**SMALL, "rounds": 2}})
    rng = np.random.default_rng(0)
    for seed in range(4):
        totals, reference = _play(env, seed, rng)
        assert set(totals) == set(reference)
        for a in reference:
            assert totals[a] == pytest.approx(reference[a])
        assert sum(totals.values()) == pytest.approx(0.0)
        assert any(abs(r) > 0 for r in totals.values())


def test_heuristic_seats_play_inside_the_env() -> None:
    """With p_heuristic = 1 all seats but one are heuristics, played inside the env: RLlib
    only ever sees the learning seat; the same seed gives the same episode."""
    config = {"env_kwargs": SMALL, "heuristics": {"greedy": 1.0}, "p_heuristic": 1.0}
    env = MexicanTrainMultiAgentEnv(config)
    returns = []
    for _ in range(2):
        totals, _ = _play(env, 5, np.random.default_rng(1))
        seats = env.heuristic_seats()
        assert len(seats) == 2 and set(seats.values()) == {"greedy"}
        assert len(totals) == 1
        returns.append(totals)
    assert returns[0] == returns[1]


def test_bad_env_config_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown env_config keys"):
        MexicanTrainMultiAgentEnv({"players": 3})
    with pytest.raises(ValueError, match="unknown agent 'gredy'"):
        MexicanTrainMultiAgentEnv({"heuristics": {"gredy": 1.0}, "p_heuristic": 0.5})
    env = MexicanTrainMultiAgentEnv({"env_kwargs": SMALL})
    obs, _ = env.reset(seed=0)
    ((agent_id, o),) = obs.items()
    illegal = int(np.flatnonzero(o[MASK_KEY] == 0)[0])
    with pytest.raises(ValueError, match=f"{agent_id}: illegal action {illegal}"):
        env.step({agent_id: illegal})
    legal = int(np.flatnonzero(o[MASK_KEY])[0])
    for bad, error in ((legal + 0.9, TypeError), (str(legal), TypeError), (10**6, ValueError)):
        with pytest.raises(error, match="action space Discrete"):  # as the AEC env: not a move
            env.step({agent_id: bad})
    env.step({agent_id: np.int64(legal)})  # the episode went on: the legal move plays


def test_module_masks_and_exports_to_the_ppo_agent(tmp_path: Path) -> None:
    """The masking RLModule never gives an illegal action weight, and its policy file,
    played by the ``ppo`` agent, computes the same logits and the same choice."""
    import torch as th
    from ray.rllib.core.columns import Columns

    from agents.mexican_train.base import decision_for
    from agents.mexican_train.ppo import load_policy
    from agents.policy_net import policy_logits
    from training.rllib.module import MaskedActorCriticModule, export_policy

    env = MexicanTrainMultiAgentEnv({"env_kwargs": SMALL})
    space, action_space = env.observation_spaces["player_0"], env.action_spaces["player_0"]
    module = MaskedActorCriticModule(
        observation_space=space, action_space=action_space, model_config={"pi": [32], "vf": [16]}
    )
    with th.no_grad():  # larger weights than the 0.01 init, so that the logits differ
        module.action_net.weight.normal_()
    export_policy(module, tmp_path / "p.npz")
    policy = load_policy(tmp_path / "p.npz")
    agent = agents.make_agent("ppo", path=str(tmp_path / "p.npz"))
    obs, _ = env.reset(seed=3)
    for _ in range(6):
        ((agent_id, o),) = obs.items()
        batch = {Columns.OBS: {k: th.as_tensor(v)[None] for k, v in o.items()}}
        with th.no_grad():
            out = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0].numpy()
            theirs = policy_logits(policy, th.as_tensor(o[OBS_KEY])[None])[0].numpy()
        legal = o[MASK_KEY] > 0
        np.testing.assert_allclose(out[legal], theirs[legal], rtol=1e-5, atol=1e-5)
        assert (out[~legal] < -1e30).all()
        choice = agent.act(decision_for(env.raw, agent_id))
        assert choice == int(np.argmax(out))
        obs, *_ = env.step({agent_id: choice})


def test_league_mapping_always_trains_main() -> None:
    """One seat per episode plays ``main``; the others draw snapshots at the set rates;
    with no snapshots every seat plays ``main`` (shared-policy self-play)."""
    selfplay = SnapshotMapping(num_players=4)
    assert {selfplay(f"player_{s}", f"ep{e}") for s in range(4) for e in range(20)} == {MAIN}
    league = SnapshotMapping(num_players=4, snapshots=3, p_latest=0.5, p_older=0.25)
    counts: dict[str, int] = {}
    for e in range(2000):
        modules = [league(f"player_{s}", f"episode-{e}") for s in range(4)]
        assert MAIN in modules
        assert modules == [league(f"player_{s}", f"episode-{e}") for s in range(4)]  # stable
        for m in modules:
            counts[m] = counts.get(m, 0) + 1
    others = 2000 * 3
    assert abs(counts["snap_0"] / others - 0.5) < 0.03
    assert abs((counts["snap_1"] + counts["snap_2"]) / others - 0.25) < 0.03


def test_train_cli_refuses_sb3_only_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    cases = [
        (["--vec", "dummy"], "--vec: is an option of the SB3 trainer, not used by --backend rllib"),
        (["--eval-opponents", "gredy"], "--eval-opponents: unknown agent 'gredy'"),
        (["--players", "3", "--eval-opponents", "ppo"], "--eval-opponents: ppo: policy "),  # a 4-player net
        (["--n-steps", "100", "--batch-size", "512"], "--batch-size: must be <= the train batch 100"),
        (["--p-latest", "0.8", "--p-older", "0.5"], "--p-latest: p_latest + p_older must be <= 1"),
    ]
    for extra, message in cases:
        code = mtrain(["train", "--backend", "rllib", "--steps", "100", "--out", str(out), *extra])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith(f"mtrain train: {message}") and err.count("\n") == 1, err
    assert mtrain(["train", "--steps", "100", "--out", str(out), "--address", "h:1"]) == 2
    assert "--address: a Ray cluster address is for --backend rllib" in capsys.readouterr().err
    assert not out.exists()


def test_bench_refuses_an_address_without_the_ray_backend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = mtrain(
        ["bench", "--agents", "random", "--deals", "1", "--out", str(tmp_path / "b"), "--address", "h:1"]
    )
    assert code == 2
    assert capsys.readouterr().err == "mtrain bench: --address: a Ray cluster address is for --backend ray\n"
    assert not (tmp_path / "b").exists()
    with pytest.raises(ValueError, match="backend must be one of processes, ray"):
        TournamentConfig(agents=["random"], backend="dask")


# ------------------------------------------------------------ on local Ray
@pytest.mark.slow
def test_bench_on_ray_writes_the_csv_of_one_worker(tmp_path: Path, ray_local: None) -> None:
    """The same tournament on one process and on two Ray actors: byte-identical results and
    replay files."""
    kw = {
        "agents": ["random", "greedy"],
        "game": GameConfig.make(**SMALL),
        "deals": 6,
        "seed": 4,
        "progress": False,
        "plots": False,
    }
    one = run_tournament(
        TournamentConfig(out_dir=tmp_path / "one", workers=1, replays_dir=tmp_path / "one_replays", **kw)
    )
    ray = run_tournament(
        TournamentConfig(
            out_dir=tmp_path / "ray", workers=2, backend="ray", replays_dir=tmp_path / "ray_replays", **kw
        )
    )
    assert ray.throughput["backend"] == "ray" and ray.throughput["workers"] == 2
    assert (tmp_path / "one/results.csv").read_bytes() == (tmp_path / "ray/results.csv").read_bytes()
    assert one.aggregates() == ray.aggregates()
    replays = sorted(p.name for p in (tmp_path / "one_replays").iterdir())
    assert replays and replays == sorted(p.name for p in (tmp_path / "ray_replays").iterdir())
    for name in replays:
        assert (tmp_path / "one_replays" / name).read_bytes() == (
            tmp_path / "ray_replays" / name
        ).read_bytes()


@pytest.mark.slow
def test_an_agent_failing_on_a_ray_actor_is_the_same_one_line_error(ray_local: None) -> None:
    """Ray wraps a remote exception in a subclass whose text is the remote traceback; the
    harness raises the agent's own AgentFailedError instead, as the other backends do."""
    from agents.tournament import AgentFailedError

    config = TournamentConfig(
        agents=["random", "tests.tournament.test_tournament:Crashes"],
        game=GameConfig.make(**SMALL),
        deals=2,
        backend="ray",
        workers=1,
        progress=False,
        plots=False,
    )
    with pytest.raises(AgentFailedError) as err:
        run_tournament(config)
    assert type(err.value) is AgentFailedError
    assert str(err.value).startswith("agent 'Crashes' at seat") and "\n" not in str(err.value)
    assert 'raise ZeroDivisionError("a bug in the agent")' in err.value.details


@pytest.mark.slow
def test_rllib_self_play_improves_over_random(tmp_path: Path, ray_local: None) -> None:
    """A few PPO iterations of shared-policy self-play on local Ray: the exported policy,
    played by our harness on duplicate deals, does better against ``random`` than the
    untrained one; then --resume continues the run from its checkpoint."""
    out = tmp_path / "run"
    args = ["train", "--backend", "rllib", "--out", str(out), "--players", "3", "--max-pips", "6"]
    args += ["--n-steps", "2000", "--batch-size", "500", "--net-arch", "64,64", "--eval-every", "16000"]
    args += ["--features", "planner", "--lr", "0.001", "--envs", "8"]
    args += ["--eval-deals", "160", "--eval-opponents", "random", "--workers", "1", "--no-progress"]
    assert mtrain([*args, "--steps", "16000", "--checkpoint-every", "8000"]) == 0
    rows = [r for r in _curve(out) if r["opponent"] == "random"]
    first, last = rows[0], rows[-1]
    assert first["step"] == 0 and last["step"] >= 16000
    assert last["diff"] < first["diff"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["backend"] == "rllib" and summary["final_eval"][0]["ci95"][1] < 0
    for name in ("policy.npz", "curve.png", "config.json", "checkpoints/latest.json"):
        assert (out / name).exists(), name
    assert list((out / "tb").glob("events.out.tfevents.*"))
    agents.make_agent("ppo", path=str(out / "policy.npz"))

    assert mtrain(["train", "--out", str(out), "--resume", "--steps", "18000", "--no-progress"]) == 0
    resumed = json.loads((out / "summary.json").read_text())
    assert resumed["resumed_from"] == summary["steps"] and resumed["steps"] >= 18000
    assert [r["step"] for r in _curve(out)][: len(rows)] == [r["step"] for r in rows]


def _curve(out: Path) -> list[dict[str, float]]:
    import csv

    with open(out / "curve.csv", encoding="utf-8") as f:
        return [{k: float(v) if k != "opponent" else v for k, v in r.items()} for r in csv.DictReader(f)]


@pytest.mark.slow
def test_league_snapshots_are_frozen_copies_of_main(ray_local: None) -> None:
    """take_snapshot copies ``main`` into ``snap_0`` (learner and EnvRunners) and shifts the
    older ones down; training moves ``main`` only."""
    from training.rllib.league import take_snapshot
    from training.rllib.train import RLlibConfig, build_algorithm
    from training.train import make_game

    config = RLlibConfig(
        steps=1000, game=make_game(**SMALL), train_batch=400, minibatch_size=200, epochs=1, net_arch=[16],
        snapshots=2, p_latest=0.5, p_older=0.5, eval_every=0, progress=False,
    )  # fmt: skip
    config.validate()
    algo = build_algorithm(config)
    try:

        def weights() -> dict[str, dict[str, np.ndarray]]:
            got = algo.learner_group.get_weights(module_ids=["main", "snap_0", "snap_1"])
            return {m: {k: np.asarray(v) for k, v in w.items()} for m, w in got.items()}

        def runner_snap0() -> dict[str, np.ndarray]:
            (state,) = algo.env_runner_group.foreach_env_runner(
                lambda r: r.module["snap_0"].get_state(), local_env_runner=False
            )
            return {k: np.asarray(v) for k, v in state.items()}

        def same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
            return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)

        algo.train()
        take_snapshot(algo, 2)
        first = weights()
        assert same(first["snap_0"], first["main"])
        assert same(runner_snap0(), first["main"])
        algo.train()
        second = weights()
        assert not same(second["main"], first["main"])  # main learns
        assert same(second["snap_0"], first["snap_0"])  # snapshots do not
        take_snapshot(algo, 2)
        third = weights()
        assert same(third["snap_1"], first["main"]) and same(third["snap_0"], second["main"])
    finally:
        algo.stop()


# ------------------------------------------------ refused before Ray starts (no Ray here)
#: (options after a valid command line, the start of the message after "mtrain train: ");
#: "{file}" is a regular file
BEFORE_RAY = [
    (["--out", "{file}/o"], "--out: cannot create {file}/o: {file} is a file"),
    (["--out", "/proc/x"], "--out: cannot write in /proc"),
    (["--address", "notanaddr"], "--address: expected HOST:PORT (e.g. 10.0.0.5:6379"),
    (["--address", ":6379"], "--address: expected HOST:PORT"),
    (["--address", "ray://h:1"], "--address: expected HOST:PORT"),
    (["--address", "h:0"], "--address: the port must be in 1..65535, got 0 in 'h:0'"),
    (["--address", "h:65536"], "--address: the port must be in 1..65535, got 65536"),
    (["--address", "127.0.0.1:1"], "--address: cannot reach a Ray cluster at 127.0.0.1:1 ("),
    (["--snapshot-every", "-1"], "--snapshot-every: must be an int >= 0, got -1"),
]


def _rllib_argv(tmp_path: Path, extra: list[str]) -> list[str]:
    file = tmp_path / "notes.txt"
    file.write_text("keep me")
    argv = ["train", "--backend", "rllib", "--steps", "100", "--out", str(tmp_path / "r"), "--no-progress"]
    return argv + [a.replace("{file}", str(file)) for a in extra]


@pytest.mark.parametrize(("extra", "message"), BEFORE_RAY)
def test_rllib_refuses_a_bad_out_or_address_before_ray_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    import ray

    assert mtrain(_rllib_argv(tmp_path, extra)) == 2
    err = capsys.readouterr().err
    expected = "mtrain train: " + message.replace("{file}", str(tmp_path / "notes.txt"))
    assert err.startswith(expected) and err.count("\n") == 1, err
    assert not ray.is_initialized()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_rllib_refusals_do_not_import_ray(tmp_path: Path) -> None:
    from tests.cli_support import imported_by_refusals

    cases = [_rllib_argv(tmp_path, extra)[1:] for extra, _message in BEFORE_RAY]
    assert imported_by_refusals("train", cases, ["ray"], tmp_path) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_rllib_resume_names_what_config_json_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from training.rllib.train import RLlibConfig

    out = tmp_path / "r"
    out.mkdir()
    config = RLlibConfig().to_json()
    for data, says in (
        ({k: v for k, v in config.items() if k != "game"}, "(missing key 'game')"),
        ({"backend": "rllib"}, "(missing keys 'steps', 'seed', "),
        ({**config, "colour": "red"}, "(unknown key 'colour')"),
    ):
        (out / "config.json").write_text(json.dumps(data))
        assert mtrain(["train", "--out", str(out), "--resume", "--steps", "100", "--no-progress"]) == 2
        err = capsys.readouterr().err
        head = f"mtrain train: --resume: {out / 'config.json'}: not the config of an RLlib run "
        assert err.startswith(head) and says in err and err.count("\n") == 1, err
    assert sorted(p.name for p in out.iterdir()) == ["config.json"]


def test_rllib_trainer_run_from_python_refuses_a_directory_in_use(tmp_path: Path) -> None:
    """As ``Trainer.run()``: the lock is taken before Ray starts or anything is written."""
    import ray

    from mtrain_env.tilegame.files import DirectoryInUseError, run_lock
    from training.rllib.train import RLlibConfig, RLlibTrainer

    out = tmp_path / "r"
    trainer = RLlibTrainer(RLlibConfig(out=str(out), steps=100, progress=False))
    with run_lock(out), pytest.raises(DirectoryInUseError, match="one run writes a directory at a time"):
        trainer.run()
    assert not ray.is_initialized()
    assert sorted(p.name for p in out.iterdir()) == []  # nothing written, and the lock gone with its holder


def test_rllib_snapshot_every_0_means_never(tmp_path: Path) -> None:
    """As --help says (and the SB3 backend does): the league's slots keep main's initial weights."""
    from training.rllib.options import rllib_config
    from training.train import make_game

    config = rllib_config(
        {"snapshot_every": 0, "max_snapshots": 2},
        make_game(**SMALL),
        steps=100,
        out=str(tmp_path / "r"),
        progress=False,
        address=None,
        resume=False,
    )
    assert config.snapshot_every == 0 and config.snapshots == 2
