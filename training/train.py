"""MaskablePPO self-play training with a league, evaluation, checkpoints and exact resume.

``train(TrainConfig(...))`` (or ``mtrain train``, :mod:`training.cli`) runs:

* ``n_envs`` :class:`~agents.mexican_train.single_agent.SingleAgentEnv` envs whose
  opponents come from the :class:`~agents.mexican_train.league.League`, spread over
  ``workers`` processes (one per core) by :class:`~training.vec.ShardedVecEnv`, masks
  served by :class:`~training.vec.VecMaskCache`;
* :class:`~training.policy.RobustMaskablePPO` with a :class:`~training.policy.GuardedMaskablePolicy`
  (the NaN / Simplex robustness measures are described in :mod:`training.policy`);
* optionally a behaviour-cloning warm start from an expert agent (:mod:`training.bc`);
* at the start of each rollout, whatever is due: a league snapshot (every
  ``snapshot_every`` steps), an evaluation against heuristics on duplicate deals
  (every ``eval_every``, :mod:`training.evaluate`, appended to ``curve.csv`` and drawn in
  ``curve.png``) and a checkpoint (every ``checkpoint_every``, and at step 0 and at the end).

Output directory (every path stored in it is relative to it: a run is wherever its
directory is, and a copy is a run of its own)::

    config.json                  the resolved TrainConfig without ``out``, the game as one nested
                                 GameConfig (resume reads it back; runs that kept the game keys flat too)
    checkpoints/step_<N>/        model.zip (weights, Adam state, num_timesteps, lr scale)
                                 + state.pkl (everything else, below) + league.json + checkpoint.json
                                 (step and the sha256 of the others); latest.json points to the newest
    league/snap_<N>.npz          frozen policies of the league, policy files (unreferenced ones are deleted)
    tb/                          TensorBoard logs (SB3 train/rollout scalars, eval/*, robust/*)
    curve.csv, curve.png         the learning curve
    bc.json                      behaviour-cloning statistics (when used)
    final_model.zip, policy.npz  the trained model and its policy alone, a policy file
                                 (:mod:`agents.policy_net`, for ``agents.mexican_train.ppo``)
    summary.json                 steps, speed, the final evaluation with 95 % CIs, where the files are

Every JSON file is strict JSON (:func:`strict_json`: NaN and infinities are written as ``null``).
Policies (league snapshots, the evaluated policy, ``policy.npz``) are policy files, read
without unpickling; only ``model.zip`` and ``state.pkl`` are pickles, written and read by
this module inside the run directory.

**Validation** (:mod:`training.run_config`): :class:`Trainer` checks every field, and
refuses an ``out`` that holds a run unless resuming, before anything starts or is written.

**Resume** (``resume=True``) continues a killed run from its newest checkpoint exactly:
``state.pkl`` holds every env's full state (deal, hidden hands, RNGs, opponents and their
RNGs, the worker's league copy), the last observations and episode-start flags, the
torch / numpy / ``random`` generator states, the league, the evaluation curve, what is due
next, and the episode-statistics buffers; ``model.zip`` the weights, optimizer and
``num_timesteps``. Checkpoints are written at rollout boundaries (nothing is in flight),
to a temporary directory renamed into place, and ``latest.json`` is replaced last, so a
kill at any moment leaves the previous checkpoint intact. At most one checkpoint interval
of work is lost, and the resumed run is step-for-step the run that was killed (same
``n_envs`` required). TensorBoard events past the checkpoint are purged on resume. The run
continues in the ``out`` it is resumed from (a run directory may be copied or moved: no
path inside it names a directory; snapshot opponents are stored by their file name in
``league/``), and its ``config.json`` is rewritten there with the new target.

**Resume checks**: those of :mod:`training.checkpoints`, before anything is started or
written. A resumed run first removes what writes killed midway left (their temporary
files, ``checkpoints/step_<N>.tmp``).

**Determinism**: same seed + same ``n_envs`` -> same curve and weights, whatever
``vec`` and ``workers`` (each env is independent and keeps its index). Set up by
``torch.use_deterministic_algorithms(True)``, a fixed ``torch_threads`` (default 1) in the
learner and 1 thread in each env worker, seeded envs/agents/opponents (never the global
``random``), seeded evaluation. Residual nondeterminism: wall-clock fields (``time/fps``,
TensorBoard wall times); results across different machines, torch builds or thread
counts may differ in the last float bits (BLAS kernels), which then grows over training.

**Efficiency on a few cores**: :mod:`training.vec`; ``torch_threads`` defaults to 1
because more OpenMP threads spin against the env workers on shared cores.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import random
import shutil
import sys
import time
import warnings
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import HumanOutputFormat, KVWriter, Logger, TensorBoardOutputFormat
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

from agents.mexican_train.league import League
from agents.policy_format import input_version
from agents.policy_net import save_policy
from mtrain_env.tilegame.files import atomic_write, remove_temp_files, run_lock
from training import bc
from training.checkpoints import (
    MODEL_OBJECTS,
    Checkpoint,
    load_checkpoint,
    sha256_of,
    upgrade_format_1,
)
from training.evaluate import EvalResult, evaluate
from training.policy import GuardedMaskablePolicy, RobustMaskablePPO
from training.run_config import (
    RESUME_OVERRIDES,
    ConfigError,
    TrainConfig,
    make_game,
)
from training.run_dir import (
    CHECKPOINT_FILE,
    CHECKPOINT_NAME,
    CHECKPOINTS,
    CONFIG_FILE,
    CURVE_CSV,
    CURVE_PNG,
    FINAL_MODEL,
    LATEST,
    LEAGUE_DIR,
    LEAGUE_FILE,
    MODEL_FILE,
    POLICY_FILE,
    SNAPSHOT_NAME,
    STATE_FILE,
    STATE_FORMAT,
    SUMMARY_FILE,
    CheckpointError,
    format_summary,
    latest_checkpoint,
    read_config,
    run_config_json,
    run_files,
    strict_json,
    with_ci95,
    write_curve,
)
from training.single_agent import EnvFactory
from training.vec import ShardedVecEnv, VecMaskCache

#: the trainer, and the names callers have always imported from here (their homes:
#: :mod:`training.run_config`, :mod:`training.run_dir`, :mod:`training.checkpoints`)
__all__ = [
    "CheckpointError",
    "ConfigError",
    "TrainConfig",
    "Trainer",
    "configure_determinism",
    "format_summary",
    "latest_checkpoint",
    "make_game",
    "make_logger",
    "make_vec_env",
    "read_config",
    "strict_json",
    "train",
]


# ------------------------------------------------------------------ helpers
def configure_determinism(seed: int, torch_threads: int) -> None:
    """Seed python / numpy / torch and make torch deterministic on ``torch_threads`` threads.

    Also turns off ``torch.distributions`` argument validation in this process: it is the
    check that raises the Simplex ``ValueError``, the guarded policy keeps every logit
    finite so it has nothing left to catch (non-finite weights are caught by
    :class:`RobustMaskablePPO` instead), and it re-checks every distribution built in each
    policy forward.
    """
    th.set_num_threads(max(1, int(torch_threads)))
    th.use_deterministic_algorithms(True)
    th.distributions.Distribution.set_default_validate_args(False)
    set_random_seed(seed)


def _env_factory(config: TrainConfig, league: League, root: Path) -> EnvFactory:
    return EnvFactory(
        env_kwargs=config.env_kwargs(),
        league_state=league.state_dict(),
        league_root=str(root),
        seat=config.seat,
        illegal_action="raise",  # a masking bug must never turn into a training signal
        shaping=config.shaping,
        gamma=config.gamma,
        snapshot_deterministic=config.snapshot_deterministic,
        features=config.features,
    )


def make_vec_env(config: TrainConfig, league: League, root: Path) -> VecMonitor:
    """``n_envs`` wrapped envs in worker processes (or in-process with ``vec="dummy"``).

    ``VecMaskCache`` (:mod:`training.vec`) serves the action masks from the step infos,
    ``VecMonitor`` records episode returns and lengths for SB3's ``rollout/*`` logs.
    """
    fns = [_env_factory(config, league, root) for _ in range(config.n_envs)]
    venv: VecEnv
    if config.vec == "sharded":
        venv = ShardedVecEnv(fns, workers=config.workers)
    elif config.vec == "subproc":
        venv = SubprocVecEnv(fns)  # type: ignore[arg-type]
    else:
        venv = DummyVecEnv(fns)  # type: ignore[arg-type]
    return VecMonitor(VecMaskCache(venv))


@contextlib.contextmanager
def _preserve_rng() -> Any:
    """Restore the torch / numpy / ``random`` global generators on exit."""
    np_state, py_state = np.random.get_state(), random.getstate()  # noqa: NPY002 (see _state)
    with th.random.fork_rng(devices=[]):
        try:
            yield
        finally:
            np.random.set_state(np_state)  # noqa: NPY002
            random.setstate(py_state)


class _TensorBoardFormat(TensorBoardOutputFormat):
    """SB3's TensorBoard writer with ``purge_step`` (drops events a resumed run redoes)."""

    def __init__(self, folder: str, purge_step: int | None) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(log_dir=folder, purge_step=purge_step)
        self._is_closed = False


def make_logger(out: Path, purge_step: int | None, verbose: int) -> Logger:
    """SB3's logger for a run: TensorBoard under ``out/tb`` (events past ``purge_step``
    dropped on resume, so the curve is not written twice) and stdout when ``verbose``."""
    formats: list[KVWriter] = [_TensorBoardFormat(str(out / "tb"), purge_step)]
    if verbose:
        formats.append(HumanOutputFormat(sys.stdout))
    return Logger(str(out), formats)


# ------------------------------------------------------------------ trainer
class Trainer:
    """Owns the model, envs, league and bookkeeping of one run (see the module docstring)."""

    def __init__(self, config: TrainConfig, resume: bool = False) -> None:
        """Validate the run (raises :class:`ConfigError`, ``FileExistsError`` or
        ``FileNotFoundError``; on resume also :class:`CheckpointError`, after the checks of
        :func:`load_checkpoint`); nothing is started or written before :meth:`run`."""
        self.out = Path(config.out)
        self._checkpoint: Checkpoint | None = None  #: the checkpoint to resume (checked)
        self.resume = resume  #: continues from a checkpoint
        self.restarted = False  #: resume=True found no checkpoint: the run started over
        if self.out.exists() and not self.out.is_dir():
            raise ConfigError("out", f"{self.out} is a file, not a directory")
        if resume:
            if not (self.out / CONFIG_FILE).exists():
                raise FileNotFoundError(f"no run to resume in {self.out} ({CONFIG_FILE} missing)")
            saved = read_config(self.out)
            for name in RESUME_OVERRIDES:
                setattr(saved, name, getattr(config, name))
            self.config = saved.resolved()
            self._checkpoint = load_checkpoint(self.out, self.config)
            # killed before its first checkpoint (e.g. while collecting BC data): it starts over
            # with its saved configuration (and the BC data collected so far, bc_data.npz);
            # load_checkpoint refuses a run past it that has no checkpoint left
            self.restarted = self._checkpoint is None
            self.resume = not self.restarted
            at = 0 if self._checkpoint is None else self._checkpoint.step
            if self.config.steps < at:
                text = f"the run in {self.out} is at step {at} (its last checkpoint)"
                raise ConfigError("steps", f"{text}; give --steps >= {at} to extend it")
        else:
            what = run_files(self.out)
            if what:
                raise FileExistsError(
                    f"{self.out} already holds a training run ({', '.join(what)}): "
                    "resume it or choose another out directory"
                )
            self.config = config.resolved()
        c = self.config
        self.league_root = self.out / LEAGUE_DIR
        self.curve: list[dict[str, Any]] = []
        self.next_eval = 0 if c.eval_every > 0 else -1
        self.next_checkpoint = 0
        self.bc_stats: dict[str, Any] | None = None
        self.start_step = 0
        self.throughput = 0.0  #: env steps per second of the last learn() call
        self.seconds = 0.0  #: wall time of the last run() call
        self.summary: dict[str, Any] = {}  #: what run() wrote to summary.json
        self.league = League(
            heuristics=dict(c.heuristics),
            p_heuristic=c.p_heuristic,
            p_latest=c.p_latest,
            p_older=c.p_older,
            snapshot_every=c.snapshot_every,
            max_snapshots=c.max_snapshots,
        )

    # -------------------------------------------------------------- build
    def _setup(self) -> None:
        c = self.config
        configure_determinism(c.seed, c.torch_threads)
        self._remove_killed_writes()
        self.league_root.mkdir(parents=True, exist_ok=True)
        # a resumed run records its new target and the current format
        atomic_write(self.out / CONFIG_FILE, strict_json(run_config_json(c), indent=2))
        checkpoint = self._checkpoint if self.resume else None
        state: dict[str, Any] | None = None
        if checkpoint is not None:
            state = checkpoint.state
            if state["format"] == 1:
                state = upgrade_format_1(state, self.league_root)
            self.league = League.from_state_dict(state["league"])
        self.env = make_vec_env(c, self.league, self.league_root)
        if checkpoint is None:
            self.model = self._new_model()
        else:
            assert state is not None
            # model.zip's data pickles objects (cloudpickle); every one is given here instead, so
            # nothing in the file is unpickled (its tensors are read with weights_only=True)
            objects = self._model_objects()  # load_checkpoint checked that they cover what it pickled
            self.model = RobustMaskablePPO.load(
                checkpoint.dir / MODEL_FILE, env=self.env, device="cpu", custom_objects=objects
            )
            self._restore(state)
        self.model.set_logger(
            make_logger(
                self.out,
                self.model.num_timesteps if self.resume else (0 if self.restarted else None),
                c.verbose,
            )
        )

    def _learning_rate(self) -> float | Callable[[float], float]:
        c = self.config
        if c.lr_schedule != "linear":
            return c.learning_rate
        base = c.learning_rate

        def lr(progress_remaining: float) -> float:
            return base * progress_remaining

        return lr

    def _model_objects(self) -> dict[str, Any]:
        """What a checkpoint's ``model.zip`` pickles in its ``data``, rebuilt from the run's
        config and env (SB3's ``custom_objects``): the policy and buffer classes, the spaces,
        the schedules; the last observations and episode buffers come from ``state.pkl``."""
        from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
        from stable_baselines3.common.utils import FloatSchedule

        lr = self._learning_rate()
        assert self.env is not None
        objects = {
            "policy_class": GuardedMaskablePolicy,
            "rollout_buffer_class": MaskableRolloutBuffer,
            "observation_space": self.env.observation_space,
            "action_space": self.env.action_space,
            "learning_rate": lr,
            "lr_schedule": FloatSchedule(lr),
            "clip_range": FloatSchedule(self.config.clip_range),
            "_last_obs": None,  # restored from state.pkl
            "_last_episode_starts": None,
            "ep_info_buffer": deque(),
            "ep_success_buffer": deque(),
        }
        assert objects.keys() == MODEL_OBJECTS
        return objects

    def _new_model(self) -> RobustMaskablePPO:
        c = self.config
        return RobustMaskablePPO(
            GuardedMaskablePolicy,
            self.env,
            learning_rate=self._learning_rate(),
            n_steps=c.n_steps,
            batch_size=c.batch_size,
            n_epochs=c.n_epochs,
            gamma=c.gamma,
            gae_lambda=c.gae_lambda,
            clip_range=c.clip_range,
            ent_coef=c.ent_coef,
            vf_coef=c.vf_coef,
            max_grad_norm=c.max_grad_norm,
            target_kl=c.target_kl if c.target_kl and c.target_kl > 0 else None,
            policy_kwargs={
                "net_arch": {"pi": list(c.net_arch), "vf": list(c.net_arch)},
                "logit_bound": c.logit_bound,
                "features": c.features,
                # recorded in the archive, so that it is read for this layout (policy_net)
                "observation_version": input_version(c.features),
                "ortho_init": True,
            },
            seed=c.seed,
            device="cpu",
            verbose=0,
        )

    # ------------------------------------------------------------ snapshots
    def _state(self) -> dict[str, Any]:
        m = self.model
        assert m.env is not None and m._last_obs is not None
        venv = m.env
        assert isinstance(venv, VecMonitor)
        return {
            "format": STATE_FORMAT,
            "step": int(m.num_timesteps),
            "n_envs": self.config.n_envs,
            "league": self.league.state_dict(),
            "next_eval": self.next_eval,
            "next_checkpoint": self.next_checkpoint,
            "curve": list(self.curve),
            "bc": self.bc_stats,
            "env_states": venv.env_method("get_state"),
            "last_obs": np.array(m._last_obs, copy=True),
            "last_episode_starts": np.array(m._last_episode_starts, copy=True),
            "monitor": {
                "episode_returns": venv.episode_returns.copy(),
                "episode_lengths": venv.episode_lengths.copy(),
                "episode_count": venv.episode_count,
            },
            "ep_info_buffer": list(m.ep_info_buffer or []),
            # SB3 shuffles minibatches with numpy's legacy global generator: it is part of the run
            "rng": {
                "torch": th.get_rng_state(),
                "numpy": np.random.get_state(),  # noqa: NPY002
                "python": random.getstate(),
            },
        }

    def _restore(self, state: dict[str, Any]) -> None:
        if state.get("format") != STATE_FORMAT:
            raise ValueError(f"checkpoint state format {state.get('format')} is not {STATE_FORMAT}")
        m = self.model
        venv = self.env
        for i, s in enumerate(state["env_states"]):
            venv.env_method("set_state", s, indices=[i])
        venv.env_method("set_league_state", self.league.state_dict(), str(self.league_root))
        m._last_obs = state["last_obs"]
        m._last_episode_starts = state["last_episode_starts"]
        mon = state["monitor"]
        venv.episode_returns = mon["episode_returns"]
        venv.episode_lengths = mon["episode_lengths"]
        venv.episode_count = mon["episode_count"]
        m.ep_info_buffer = deque(state["ep_info_buffer"], maxlen=m._stats_window_size)
        m.ep_success_buffer = deque(maxlen=m._stats_window_size)
        self.next_eval = state["next_eval"]
        self.next_checkpoint = state["next_checkpoint"]
        self.curve = list(state["curve"])
        self.bc_stats = state.get("bc")
        self.start_step = int(state["step"])
        th.set_rng_state(state["rng"]["torch"])
        np.random.set_state(state["rng"]["numpy"])  # noqa: NPY002
        random.setstate(state["rng"]["python"])
        write_curve(self.out, self.curve)

    def _remove_killed_writes(self) -> None:
        """Remove what writes killed midway left in the run directory (the caller holds its
        lock): temporary files (:func:`~mtrain_env.tilegame.files.remove_temp_files`) and
        checkpoint directories never renamed into place (``checkpoints/step_<N>.tmp``)."""
        if not self.out.is_dir():
            return
        remove_temp_files(self.out)
        root = self.out / CHECKPOINTS
        if root.is_dir():
            for tmp in root.glob("step_*.tmp"):
                named = CHECKPOINT_NAME.fullmatch(tmp.name[: -len(".tmp")])
                if named and tmp.is_dir() and not tmp.is_symlink():
                    shutil.rmtree(tmp)

    def checkpoint(self) -> Path:
        """Write a checkpoint of the current state (atomic; prunes old ones)."""
        step = int(self.model.num_timesteps)
        root = self.out / CHECKPOINTS
        root.mkdir(parents=True, exist_ok=True)
        name = f"step_{step:012d}"
        tmp = root / (name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
        # RNG states are read before anything else that could draw from them
        state = self._state()
        self.model.save(tmp / MODEL_FILE)
        with open(tmp / STATE_FILE, "wb") as f:
            pickle.dump(state, f)
        (tmp / LEAGUE_FILE).write_text(strict_json(self.league.state_dict()), encoding="utf-8")
        hashes = {f: sha256_of(tmp / f) for f in (MODEL_FILE, STATE_FILE, LEAGUE_FILE)}
        meta = {"format": STATE_FORMAT, "step": step, "sha256": hashes}
        (tmp / CHECKPOINT_FILE).write_text(strict_json(meta, indent=2), encoding="utf-8")
        final = root / name
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        atomic_write(root / LATEST, strict_json({"dir": name, "step": step}))
        self._prune(root)
        return final

    def _prune(self, root: Path) -> None:
        dirs = sorted(p for p in root.glob("step_*") if p.is_dir() and not p.name.endswith(".tmp"))
        for old in dirs[: -self.config.keep_checkpoints]:
            shutil.rmtree(old)
        keep = set(self.league.files())
        for d in dirs[-self.config.keep_checkpoints :]:
            with contextlib.suppress(OSError, ValueError, KeyError):
                keep |= {s["file"] for s in json.loads((d / LEAGUE_FILE).read_text())["snapshots"]}
        for f in self.league_root.glob("snap_*"):
            if SNAPSHOT_NAME.fullmatch(f.name) and f.name not in keep:
                f.unlink()

    # ------------------------------------------------------------ periodic
    def add_snapshot(self) -> None:
        step = int(self.model.num_timesteps)
        name = f"snap_{step:012d}.npz"
        save_policy(self._policy(), self.league_root / name)  # atomic
        self.league.add_snapshot(step, name)
        self.env.env_method("set_league_state", self.league.state_dict(), str(self.league_root))
        self.model.logger.record("league/snapshots", len(self.league.snapshots))

    def _policy(self) -> GuardedMaskablePolicy:
        policy = self.model.policy
        assert isinstance(policy, GuardedMaskablePolicy)
        return policy

    def run_eval(self) -> list[EvalResult]:
        c = self.config
        step = int(self.model.num_timesteps)
        eval_dir = self.out / "eval"
        eval_dir.mkdir(exist_ok=True)
        path = eval_dir / f"policy_{step:012d}.npz"
        save_policy(self._policy(), path)
        try:
            # evaluation must not change the training run: no generator it could draw from is shared
            with warnings.catch_warnings(), _preserve_rng():
                warnings.simplefilter("ignore", UserWarning)
                results = evaluate(
                    c.eval_opponents,
                    c.eval_deals,
                    c.eval_seed,
                    c.game,
                    policy_path=path,
                )
        finally:
            from agents.mexican_train import ppo

            ppo.clear_cache()
            path.unlink(missing_ok=True)
        for r in results:
            self.curve.append(r.as_row(step))
            self.model.logger.record(f"eval/diff_vs_{r.opponent}", r.diff)
            self.model.logger.record(f"eval/lowest_rate_vs_{r.opponent}", r.lowest_rate)
        write_curve(self.out, self.curve)
        return results

    def evaluated_at(self, step: int) -> bool:
        """The curve's last evaluation is at ``step``."""
        return bool(self.curve) and self.curve[-1]["step"] == step

    def on_rollout_start(self) -> None:
        """Snapshot, evaluate and checkpoint, whichever is due (in that order)."""
        c = self.config
        step = int(self.model.num_timesteps)
        if self.league.due(step):
            self.add_snapshot()
        if self.next_eval >= 0 and step >= self.next_eval:
            if not self.evaluated_at(step):  # an extended run evaluated it at its end
                self.run_eval()
            while self.next_eval <= step:
                self.next_eval += c.eval_every
        if step >= self.next_checkpoint:
            while self.next_checkpoint <= step:
                self.next_checkpoint += max(1, c.checkpoint_every) if c.checkpoint_every > 0 else 1 << 62
            self.checkpoint()

    # ------------------------------------------------------------------ run
    def warm_start(self) -> None:
        c = self.config
        if not c.bc_expert or c.bc_samples <= 0:
            return
        t0 = time.time()
        data = bc.collect(
            self.env, c.bc_expert, c.bc_samples, c.seed, c.bc_expert_params, cache=self.out / "bc_data.npz"
        )
        collected = time.time() - t0
        policy = self.model.policy
        assert isinstance(policy, GuardedMaskablePolicy)
        stats = bc.clone(
            policy,
            data,
            epochs=c.bc_epochs,
            batch_size=c.bc_batch_size,
            lr=c.bc_lr,
            vf_coef=c.vf_coef,
            seed=c.seed,
        )
        stats.update(expert=c.bc_expert, collect_seconds=collected, total_seconds=time.time() - t0)
        self.bc_stats = stats
        atomic_write(self.out / "bc.json", strict_json(stats, indent=2))

    def run(self, *, lock: bool = True) -> RobustMaskablePPO:
        """Train to ``config.steps`` environment steps (resuming if asked); returns the model.

        ``lock``: hold ``out``'s single-writer lock (:func:`~mtrain_env.tilegame.files.run_lock`)
        for the whole run, so a second run on it raises
        :class:`~mtrain_env.tilegame.files.DirectoryInUseError` before writing anything;
        ``False`` when the caller holds it (``mtrain train`` takes it before its checks)."""
        if not lock:
            return self._run()
        with run_lock(self.out):
            return self._run()

    def _run(self) -> RobustMaskablePPO:
        t0 = time.time()
        self._setup()
        c = self.config
        try:
            if not self.resume:
                self.warm_start()
            remaining = c.steps - int(self.model.num_timesteps)
            if remaining > 0:
                callback = _Callback(self)
                self.model.learn(
                    total_timesteps=remaining,
                    callback=callback,
                    reset_num_timesteps=False,
                    log_interval=1,
                )
            self._finish()
            self.seconds = time.time() - t0
            self.summary = self.make_summary()
            atomic_write(self.out / SUMMARY_FILE, strict_json(self.summary, indent=2) + "\n")
        finally:
            self.env.close()
        return self.model

    def final_eval(self) -> list[dict[str, Any]]:
        """The curve rows of the last evaluation (one per opponent), if any."""
        if not self.curve:
            return []
        last = self.curve[-1]["step"]
        return [r for r in self.curve if r["step"] == last]

    def make_summary(self) -> dict[str, Any]:
        """The run's outcome: steps, speed, the final evaluation with 95 % CIs, where the files
        are (relative to the run directory, as every path stored in it)."""
        c = self.config
        step = int(self.model.num_timesteps)
        checkpoint = latest_checkpoint(self.out)
        return {
            "steps": step,
            "resumed_from": self.start_step if self.resume else None,
            "resumed_by": None if self._checkpoint is None else self._checkpoint.found_by or None,
            "restarted": self.restarted,
            "steps_this_run": step - (self.start_step if self.resume else 0),
            "seconds": self.seconds,
            "steps_per_second": self.throughput,
            "n_envs": c.n_envs,
            "nan_events": int(getattr(self.model, "nan_events", 0)),
            "eval_deals": c.eval_deals,
            "final_eval": with_ci95(self.final_eval()),
            "files": {
                "config": CONFIG_FILE,
                "summary": SUMMARY_FILE,
                "curve_csv": CURVE_CSV if self.curve else None,
                "curve_png": CURVE_PNG if self.curve else None,
                "policy": POLICY_FILE,
                "model": FINAL_MODEL,
                "tensorboard": "tb",
                "checkpoint": None if checkpoint is None else checkpoint.relative_to(self.out).as_posix(),
            },
        }

    def _finish(self) -> None:
        c = self.config
        step = int(self.model.num_timesteps)
        if c.eval_every > 0 and not self.evaluated_at(step):
            self.run_eval()
        if self.model._last_obs is not None:
            self.checkpoint()
        self.model.save(self.out / FINAL_MODEL)
        save_policy(self._policy(), self.out / POLICY_FILE)
        self.model.logger.dump(step)


class _Callback(BaseCallback):
    """Hooks the trainer into SB3's loop: periodic work at rollout starts, a progress bar."""

    def __init__(self, trainer: Trainer) -> None:
        super().__init__()
        self.trainer = trainer
        self.bar: Any = None
        self.t0 = 0.0
        self.step0 = 0

    def _on_training_start(self) -> None:
        from tqdm.auto import tqdm

        c = self.trainer.config
        self.step0 = int(self.model.num_timesteps)
        self.t0 = time.time()
        self.bar = tqdm(
            total=c.steps, initial=self.step0, unit="step", disable=not c.progress, dynamic_ncols=True
        )

    def _on_rollout_start(self) -> None:
        self.trainer.on_rollout_start()

    def _on_step(self) -> bool:
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        return True

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elapsed = max(time.time() - self.t0, 1e-9)
        steps = int(self.model.num_timesteps) - self.step0
        self.trainer.throughput = steps / elapsed


def train(config: TrainConfig, resume: bool = False) -> RobustMaskablePPO:
    """Run (or resume) training; see the module docstring."""
    return Trainer(config, resume=resume).run()
