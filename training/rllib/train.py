"""An RLlib PPO run (new API stack) with the SB3 trainer's outputs: curve, checkpoints, resume, TensorBoard.

:class:`RLlibConfig` defines a run (saved as ``config.json``, with ``"backend": "rllib"``);
:class:`RLlibTrainer` runs it:

* a local Ray instance (all CPU cores, no dashboard), or the cluster at ``address``
  (``ray start --head`` on the head node; the same command with ``--address HOST:6379``);
  nothing else changes between the two;
* PPO on :class:`~training.rllib.env.MexicanTrainMultiAgentEnv` with
  :class:`~training.rllib.module.MaskedActorCriticModule`: shared-policy self-play, and the
  league of :mod:`training.rllib.league` (frozen snapshots) and of the env (heuristic seats);
  ``env_runners`` EnvRunner actors with ``envs_per_runner`` envs each (0 runners: sampling
  in this process), one local Learner;
* the learning curve: every ``eval_every`` env steps ``main`` is exported as a policy file
  and played by the tournament harness (:func:`training.evaluate.evaluate`: duplicate
  deals, the ``ppo`` agent) against ``eval_opponents``: ``curve.csv`` + ``curve.png`` as
  the SB3 path writes them;
* checkpoints every ``checkpoint_every`` env steps: ``checkpoints/step_<N>/algorithm``
  (RLlib's ``save_to_path``: weights, optimizer, connector and EnvRunner states) and
  ``trainer.json`` (step, curve, due steps, time), ``checkpoints/latest.json`` replaced last;
  ``resume`` restores the newest (weights, Adam state, snapshots, curve). RLlib does not
  checkpoint its envs' generators, so a resumed run draws other deals than an
  uninterrupted one: the same training, not the same bits (the SB3 path is bit-exact);
* TensorBoard in ``tb/``: the EnvRunners' and ``main``'s learner metrics per iteration,
  the evaluation, env steps/s;
* at the end ``policy.npz`` (``agents.make_agent("ppo", path=...)``) and ``summary.json``
  (``eval_policy.npz`` is the policy the last evaluation played).

Env steps are RLlib's ``num_env_steps_sampled_lifetime``: decisions of the seats RLlib
plays (heuristic seats' moves happen inside the env and are not counted).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.tournament.ray_backend import ensure_ray
from mtrain_env.mexican_train import GameConfig
from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.files import atomic_write, run_lock
from training.checks import (
    MAX_ROLLOUT,
    MAX_SEED,
    ConfigError,
    check_agent_list,
    check_bool,
    check_choice,
    check_int,
    check_path,
    check_real,
    check_sizes,
    check_weights,
)
from training.evaluate import evaluate
from training.rllib.league import MAIN, SnapshotMapping, push_weights, snapshot_ids, take_snapshot
from training.rllib.trainer_file import read_trainer_state
from training.run_config import DEFAULT_HEURISTICS, MAX_ENVS, make_game
from training.run_dir import (
    CHECKPOINTS,
    CONFIG_FILE,
    CURVE_CSV,
    CURVE_PNG,
    LATEST,
    POLICY_FILE,
    RLLIB_BACKEND,
    SUMMARY_FILE,
    CheckpointError,
    strict_json,
    with_ci95,
    write_curve,
)

BACKEND = RLLIB_BACKEND
TRAINER_FILE = "trainer.json"
ALGORITHM_DIR = "algorithm"
EVAL_POLICY = "eval_policy.npz"
DEFAULT_EVAL_OPPONENTS = ("random", "greedy", "planner")
#: ``config.json`` keys a run may lack: where a run lives and runs (not saved) and what
#: was added after the first runs were written (read as its default)
OPTIONAL_KEYS = ("out", "address", "progress", "torch_threads")
#: options a resumed run takes from the command line (speed and placement, not results)
RESUME_OVERRIDES = ("steps", "out", "progress", "env_runners", "envs_per_runner", "address", "torch_threads")


@dataclass
class RLlibConfig:
    """Everything that defines an RLlib run (see the module docstring; :meth:`validate`)."""

    steps: int = 1_000_000
    out: str = "runs/rllib"
    seed: int = 0
    address: str | None = None  #: Ray cluster address; None = a local Ray instance
    env_runners: int = 1  #: EnvRunner actors (0: sample in the driver)
    envs_per_runner: int = 1
    # game
    game: GameConfig = field(default_factory=GameConfig.make)
    reward: str = "zero_sum"
    # PPO
    train_batch: int = 4000  #: env steps per training iteration
    minibatch_size: int = 512
    epochs: int = 4
    learning_rate: float = 3e-4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    logit_bound: float = 20.0
    features: str = "env"
    # league (defaults: pure shared-policy self-play)
    heuristics: dict[str, float] = field(default_factory=dict)
    p_heuristic: float = 0.0
    snapshots: int = 0  #: frozen snapshot slots (0 = none)
    snapshot_every: int = 100_000  #: env steps between snapshots (0 = never)
    p_latest: float = 0.3
    p_older: float = 0.2
    # evaluation
    eval_every: int = 50_000
    eval_deals: int = 10
    eval_opponents: list[str] = field(default_factory=lambda: list(DEFAULT_EVAL_OPPONENTS))
    eval_seed: int = 1_000_003
    # checkpoints
    checkpoint_every: int = 50_000
    keep_checkpoints: int = 3
    torch_threads: int = 1  #: of the learner (this process); EnvRunners get Ray's 1 thread per CPU
    progress: bool = True

    def validate(self) -> None:
        """Check every field (the checks of :mod:`training.checks`, as the SB3 trainer's);
        :class:`ConfigError` naming the first bad one. Fills in the default heuristics when
        ``p_heuristic`` > 0 names none."""
        from agents.policy_format import FEATURE_SETS
        from mtrain_env.mexican_train.rewards import REWARD_MODES

        check_int("steps", self.steps, 1)
        check_path("out", self.out)
        check_int("seed", self.seed, 0, MAX_SEED)
        # address: checked (format, then reachability) by the command line before Ray starts
        check_int("env_runners", self.env_runners, 0)
        check_int("envs_per_runner", self.envs_per_runner, 1, MAX_ENVS)  # the bounds of the SB3 trainer's
        self.game = make_game(self.game)
        check_choice("reward", self.reward, REWARD_MODES)
        check_int("train_batch", self.train_batch, 1, MAX_ROLLOUT)  # n_envs x n_steps
        check_int("minibatch_size", self.minibatch_size, 1)
        if self.minibatch_size > self.train_batch:
            raise ConfigError("minibatch_size", f"must be <= the train batch {self.train_batch}")
        check_int("epochs", self.epochs, 1)
        check_real("learning_rate", self.learning_rate, 0.0, low_open=True)
        check_real("gamma", self.gamma, 0.0, 1.0)
        check_real("gae_lambda", self.gae_lambda, 0.0, 1.0)
        check_real("clip_range", self.clip_range, 0.0, low_open=True)
        check_real("ent_coef", self.ent_coef, 0.0)
        check_real("vf_coef", self.vf_coef, 0.0)
        check_real("max_grad_norm", self.max_grad_norm, 0.0, low_open=True)
        check_sizes("net_arch", self.net_arch)
        check_real("logit_bound", self.logit_bound, 0.0, low_open=True)
        check_choice("features", self.features, FEATURE_SETS)
        check_real("p_heuristic", self.p_heuristic, 0.0, 1.0)
        if self.p_heuristic > 0 and not self.heuristics:
            self.heuristics = dict(DEFAULT_HEURISTICS)
        check_weights("heuristics", self.heuristics, self.game)
        check_int("snapshots", self.snapshots, 0)
        check_int("snapshot_every", self.snapshot_every, 0)  # 0 = never: main's initial weights stay
        check_real("p_latest", self.p_latest, 0.0, 1.0)
        check_real("p_older", self.p_older, 0.0, 1.0)
        if self.p_latest + self.p_older > 1.0:
            raise ConfigError(
                "p_latest", f"p_latest + p_older must be <= 1, got {self.p_latest + self.p_older}"
            )
        check_int("eval_every", self.eval_every, 0)
        check_int("eval_deals", self.eval_deals, 1)
        check_agent_list("eval_opponents", self.eval_opponents, self.game)
        check_int("eval_seed", self.eval_seed, 0, MAX_SEED)
        check_int("checkpoint_every", self.checkpoint_every, 1)
        check_int("keep_checkpoints", self.keep_checkpoints, 1)
        check_int("torch_threads", self.torch_threads, 1)
        check_bool("progress", self.progress)

    def env_config(self) -> dict[str, Any]:
        """RLlib's ``env_config`` of :class:`~training.rllib.env.MexicanTrainMultiAgentEnv`."""
        return {
            "env_kwargs": {**self.game.to_dict(), **self.game.flags(), "reward": self.reward},
            "features": self.features,
            "heuristics": dict(self.heuristics),
            "p_heuristic": float(self.p_heuristic),
        }

    def model_config(self) -> dict[str, Any]:
        """The RLModule's ``model_config`` (:mod:`training.rllib.module`)."""
        return {
            "pi": list(self.net_arch),
            "vf": list(self.net_arch),
            "activation": "tanh",
            "logit_bound": float(self.logit_bound),
            "features": self.features,
        }

    def to_json(self) -> dict[str, Any]:
        """``config.json`` (no ``out`` and no ``address``: where a run lives and runs is not the run)."""
        d = asdict(self)
        d["game"] = self.game.to_dict() | {"flags": self.game.flags()}
        for key in ("out", "address", "progress"):
            d.pop(key)
        return {"backend": BACKEND, **d}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], **runtime: Any) -> RLlibConfig:
        """Inverse of :meth:`to_json`, with the runtime fields (``out``, ``address`` ...) given;
        ``ValueError`` naming the keys missing or unknown, ``ConfigError`` a bad game."""
        if not isinstance(data, Mapping):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        d = {k: v for k, v in data.items() if k != "backend"}
        names = [f.name for f in dataclasses.fields(cls)]
        missing = [k for k in names if k not in d and k not in OPTIONAL_KEYS]
        if missing:
            raise ValueError(f"missing key{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}")
        unknown = sorted(set(d) - set(names))
        if unknown:
            raise ValueError(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}")
        d["game"] = make_game(d["game"])
        return cls(**d, **runtime)


def build_algorithm(config: RLlibConfig) -> Any:
    """The RLlib PPO ``Algorithm`` of ``config`` (Ray must be initialised)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from training.rllib.env import MexicanTrainMultiAgentEnv
    from training.rllib.module import MaskedActorCriticModule

    module_ids = [MAIN, *snapshot_ids(config.snapshots)]
    spec = RLModuleSpec(module_class=MaskedActorCriticModule, model_config=config.model_config())
    ppo = (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        # RLlib's checker steps unmasked random actions, which the env refuses in training; the
        # tests run the checker on illegal_action="terminate" (tests/training/test_ray.py)
        .environment(MexicanTrainMultiAgentEnv, env_config=config.env_config(), disable_env_checking=True)
        .env_runners(
            num_env_runners=config.env_runners,
            num_envs_per_env_runner=config.envs_per_runner,
            num_cpus_per_env_runner=1,
            sample_timeout_s=3600.0,  # a loaded 2-core machine may take minutes for one batch
        )
        .learners(num_learners=0)
        .multi_agent(
            policies=set(module_ids),
            policy_mapping_fn=SnapshotMapping(
                config.game.num_players, config.snapshots, config.p_latest, config.p_older
            ),
            policies_to_train=[MAIN],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=dict.fromkeys(module_ids, spec)))
        .training(
            train_batch_size_per_learner=config.train_batch,
            minibatch_size=config.minibatch_size,
            num_epochs=config.epochs,
            lr=config.learning_rate,
            gamma=config.gamma,
            lambda_=config.gae_lambda,
            clip_param=config.clip_range,
            entropy_coeff=config.ent_coef,
            vf_loss_coeff=config.vf_coef,
            grad_clip=config.max_grad_norm,
            grad_clip_by="global_norm",
        )
        .reporting(metrics_num_episodes_for_smoothing=100)
        .debugging(seed=config.seed, log_level="ERROR")
    )
    return ppo.build_algo()


def _numbers(prefix: str, d: Any, out: dict[str, float]) -> dict[str, float]:
    """Every finite number in a nested result dict, as ``prefix/key/...``."""
    if isinstance(d, Mapping):
        for k, v in d.items():
            _numbers(f"{prefix}/{k}", v, out)
    elif isinstance(d, (int, float)) and not isinstance(d, bool) and math.isfinite(d):
        out[prefix] = float(d)
    return out


class RLlibTrainer:
    """Runs an :class:`RLlibConfig` (module docstring); ``resume`` continues the run in ``out``."""

    def __init__(self, config: RLlibConfig, resume: bool = False) -> None:
        config.validate()
        self.config = config
        self.resume = resume
        self.out = Path(config.out)
        self.step = 0
        self.start_step = 0
        self.seconds = 0.0  #: training time (sampling + learning), evaluation and checkpoints excluded
        self.curve: list[dict[str, Any]] = []
        self.due = {"eval": 0, "snapshot": config.snapshot_every, "checkpoint": config.checkpoint_every}
        self.summary: dict[str, Any] = {}
        self.algo: Any = None
        self._writer: Any = None
        self._latest = read_latest(self.out) if resume else None

    # ------------------------------------------------------------------ run
    def run(self, *, lock: bool = True) -> dict[str, Any]:
        """Train to ``config.steps`` env steps; the summary (also in ``summary.json``).

        ``lock``: hold ``out``'s single-writer lock for the whole run, as
        :meth:`training.train.Trainer.run` does (``False``: the caller holds it)."""
        if not lock:
            return self._run()
        with run_lock(self.out):
            return self._run()

    def _run(self) -> dict[str, Any]:
        import torch
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        c = self.config
        torch.set_num_threads(c.torch_threads)  # 2 threads on 2 shared cores run ~10x slower
        started_ray = ensure_ray(c.address)
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            atomic_write(self.out / CONFIG_FILE, strict_json(c.to_json(), indent=2))
            self.algo = build_algorithm(c)
            if self._latest is not None:
                self._restore(self._latest)
            else:
                for _ in range(c.snapshots):  # every slot starts as main's initial weights
                    take_snapshot(self.algo, c.snapshots)
            self.start_step = self.step
            self._writer = SummaryWriter(str(self.out / "tb"), purge_step=self.step if self.resume else None)
            if c.eval_every and self.step >= self.due["eval"]:
                self._evaluate()
            if self._latest is None:
                self._checkpoint()
            bar = tqdm(total=c.steps, initial=self.step, unit="step", disable=not c.progress, desc="rllib")
            while self.step < c.steps:
                t0 = time.perf_counter()
                result = self.algo.train()
                self.seconds += time.perf_counter() - t0
                from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

                sampled = result.get(ENV_RUNNER_RESULTS, {}).get(NUM_ENV_STEPS_SAMPLED_LIFETIME)
                if sampled is None:  # every EnvRunner failed
                    raise RuntimeError(
                        "no EnvRunner returned samples (their errors are in Ray's worker logs, "
                        "/tmp/ray/session_latest/logs/worker-*.err)"
                    )
                step = int(sampled)
                bar.update(step - self.step)
                self.step = step
                self._log(result)
                if c.snapshots and c.snapshot_every and self.step >= self.due["snapshot"]:
                    take_snapshot(self.algo, c.snapshots)
                    self.due["snapshot"] = self.step + c.snapshot_every
                if c.eval_every and self.step >= self.due["eval"]:
                    self._evaluate()
                if self.step >= self.due["checkpoint"] and self.step < c.steps:
                    self._checkpoint()
            bar.close()
            if c.eval_every and not any(r["step"] == self.step for r in self.curve):
                self._evaluate()
            self._checkpoint()
            self._export(self.out / POLICY_FILE)
            self.summary = self.make_summary()
            atomic_write(self.out / SUMMARY_FILE, strict_json(self.summary, indent=2))
            return self.summary
        finally:
            if self._writer is not None:
                self._writer.close()
            if self.algo is not None:
                self.algo.stop()
            if started_ray:
                import ray

                ray.shutdown()

    # ------------------------------------------------------------ the parts
    def _log(self, result: Mapping[str, Any]) -> None:
        from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, LEARNER_RESULTS

        scalars: dict[str, float] = {}
        _numbers("env_runners", result.get(ENV_RUNNER_RESULTS, {}), scalars)
        _numbers("learner", result.get(LEARNER_RESULTS, {}).get(MAIN, {}), scalars)
        for key, value in scalars.items():
            self._writer.add_scalar(key, value, self.step)
        if self.seconds > 0:
            self._writer.add_scalar("time/steps_per_second", self.throughput, self.step)

    @property
    def throughput(self) -> float:
        """Env steps per second of training time in this process's run."""
        steps = self.step - self.start_step
        return steps / self.seconds if self.seconds > 0 else math.nan

    def _export(self, path: Path) -> None:
        from training.rllib.module import export_state, module_spec

        module = self.algo.get_module(MAIN)
        spec = module_spec(self.config.model_config(), module.observation_space, module.action_space)
        weights = self.algo.learner_group.get_weights(module_ids=[MAIN])[MAIN]
        export_state(weights, spec, path)  # atomic (agents.policy_format.write_npy_zip)

    def _evaluate(self) -> None:
        from agents.mexican_train import ppo

        c = self.config
        path = self.out / EVAL_POLICY
        self._export(path)
        ppo.clear_cache()  # the file changed under the same name
        results = evaluate(c.eval_opponents, c.eval_deals, c.eval_seed, c.game, path)
        for r in results:
            self.curve.append(r.as_row(self.step))
            self._writer.add_scalar(f"eval/diff_vs_{r.opponent}", r.diff, self.step)
            self._writer.add_scalar(f"eval/lowest_rate_vs_{r.opponent}", r.lowest_rate, self.step)
        write_curve(self.out, self.curve)
        self.due["eval"] = self.step + c.eval_every

    def _checkpoint(self) -> None:
        root = self.out / CHECKPOINTS
        root.mkdir(exist_ok=True)
        name = f"step_{self.step:012d}"
        tmp = root / f".{name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        self.algo.save_to_path(str((tmp / ALGORITHM_DIR).resolve()))
        self.due["checkpoint"] = self.step + self.config.checkpoint_every
        state = {"step": self.step, "seconds": self.seconds, "due": self.due, "curve": self.curve}
        (tmp / TRAINER_FILE).write_text(strict_json(state, indent=1), encoding="utf-8")
        final = root / name
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        latest = root / LATEST
        atomic_write(latest, json.dumps({"dir": name, "step": self.step}))
        kept = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("step_"))
        for old in kept[: -self.config.keep_checkpoints]:
            shutil.rmtree(old)

    def _restore(self, directory: Path) -> None:
        state = read_trainer_state(directory / TRAINER_FILE)  # checked again: it may have changed
        self.algo.restore_from_path(str((directory / ALGORITHM_DIR).resolve()))
        modules = [MAIN, *snapshot_ids(self.config.snapshots)]
        push_weights(self.algo, self.algo.learner_group.get_weights(module_ids=modules))
        self.step = state["step"]
        self.seconds = 0.0
        self.due = state["due"]
        self.curve = state["curve"]

    def make_summary(self) -> dict[str, Any]:
        """What ``format_summary`` of :mod:`training.train` prints (and ``summary.json`` holds)."""
        c = self.config
        return {
            "backend": BACKEND,
            "steps": self.step,
            "resumed_from": self.start_step if self.resume else None,
            "restarted": False,
            "steps_this_run": self.step - self.start_step,
            "seconds": self.seconds,
            "steps_per_second": self.throughput,
            "n_envs": max(c.env_runners, 1) * c.envs_per_runner,
            "eval_deals": c.eval_deals,
            "final_eval": with_ci95([r for r in self.curve if r["step"] == self.step]),
            "files": {
                "config": CONFIG_FILE,
                "summary": SUMMARY_FILE,
                "curve_csv": CURVE_CSV if self.curve else None,
                "curve_png": CURVE_PNG if self.curve else None,
                "policy": POLICY_FILE,
                "model": f"{CHECKPOINTS}/step_{self.step:012d}/{ALGORITHM_DIR}",
                "tensorboard": "tb",
            },
        }


def read_latest(out: Path) -> Path | None:
    """The newest checkpoint directory of the run in ``out`` (``None``: none yet);
    :class:`CheckpointError` if ``latest.json`` does not name one inside ``checkpoints/``."""
    path = Path(out) / CHECKPOINTS / LATEST
    if not path.exists():
        return None
    try:
        data = json_text.read_file(path)
        name = str(data["dir"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise CheckpointError(path, f"not a checkpoint pointer ({err})") from None
    directory = path.parent / name
    if not name.startswith("step_") or "/" in name or not (directory / TRAINER_FILE).is_file():
        raise CheckpointError(
            path, f"dir must name a checkpoint directory inside {CHECKPOINTS}/, got {name!r}"
        )
    return directory
