"""MaskablePPO self-play training with a league, evaluation, checkpoints and exact resume.

``train(TrainConfig(...))`` (or ``mtrain train``, :mod:`training.cli`) runs:

* ``n_envs`` :class:`~training.single_agent.SingleAgentEnv` envs whose opponents come
  from the :class:`~training.league.League`, spread over ``workers`` processes (one per
  core) by :class:`~training.vec.ShardedVecEnv`, masks served by
  :class:`~training.vec.VecMaskCache`;
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

**Validation**: :meth:`TrainConfig.validate` checks every field (the game through
``GameConfig.make``, agents through the registry, feature sets, modes, numeric ranges) and
raises :class:`ConfigError` naming the field; :class:`Trainer` calls it (and refuses an
``out`` that holds a run unless resuming) before any process starts or any file is written.

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

**Resume checks** (:func:`load_checkpoint`, before anything is started or written):
``latest.json`` must name a ``step_<N>`` directory inside ``checkpoints/`` whose step it
states; ``model.zip`` must be a GuardedMaskablePolicy model (read without unpickling) whose
observation size, action count, ``net_arch``, feature set and logit bound are the run's
config and whose ``num_timesteps`` is that step; ``model.zip``, ``state.pkl`` and
``league.json`` must have the sha256 that ``checkpoint.json`` recorded (so a damaged state
is never unpickled); ``state.pkl`` must hold that step, ``n_envs`` states and
observations of the model's size, and a league whose snapshot files are in ``league/``.
Anything else raises :class:`CheckpointError` (``<file>: <what is wrong>``). Checkpoints
of format 1 (league snapshots pickled by SB3's ``policy.save``) are upgraded on resume:
each snapshot the state names is converted once into a policy file beside it.

**Determinism**: same seed + same ``n_envs`` -> same curve and weights, whatever
``vec`` and ``workers`` (each env is independent and keeps its index). Set up by
``torch.use_deterministic_algorithms(True)``, a fixed ``torch_threads`` (default 1) in the
learner and 1 thread in each env worker, seeded envs/agents/opponents (never the global
``random``), seeded evaluation. Residual nondeterminism: wall-clock fields (``time/fps``,
TensorBoard wall times); results across different machines, torch builds or thread
counts may differ in the last float bits (BLAS kernels), which then grows over training.

**Efficiency on a few cores**: the ``action_masks`` round trip that MaskablePPO adds to
every step is answered from the step's own info (:class:`VecMaskCache`); batching the
policy forward over more envs helps more than more processes do, so
:class:`ShardedVecEnv` steps several envs in each worker process; ``torch_threads``
defaults to 1 because more OpenMP threads spin against the env workers on shared cores.
The rates reached are in the README's training section.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import json
import math
import os
import pickle
import random
import re
import shutil
import sys
import time
import warnings
import zipfile
import zlib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import HumanOutputFormat, KVWriter, Logger, TensorBoardOutputFormat
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

import agents
from agents.mexican_train import pickles
from agents.mexican_train.league import SNAPSHOT, League, OpponentSpec
from agents.policy_net import (
    PolicyFileError,
    PolicySpec,
    read_sb3_archive,
    save_policy,
    upgrade_trusted_policy,
)
from mtrain_env.mexican_train.core.config import VARIANT_FLAGS, GameConfig
from training import bc
from training.evaluate import EvalResult, evaluate
from training.policy import GuardedMaskablePolicy, RobustMaskablePPO
from training.single_agent import EnvFactory, SingleAgentEnv
from training.vec import ShardedVecEnv, VecMaskCache

CONFIG_FILE = "config.json"
SUMMARY_FILE = "summary.json"
CHECKPOINTS = "checkpoints"
LATEST = "latest.json"
LEAGUE_DIR = "league"
CURVE_CSV = "curve.csv"
CURVE_PNG = "curve.png"
POLICY_FILE = "policy.npz"
FINAL_MODEL = "final_model.zip"
#: the files of a checkpoint directory
MODEL_FILE = "model.zip"
STATE_FILE = "state.pkl"
LEAGUE_FILE = "league.json"
CHECKPOINT_FILE = "checkpoint.json"
#: 2: paths relative to the run, policy files, checkpoint.json (1: absolute paths, pickled snapshots)
STATE_FORMAT = 2
#: what latest.json may name (a directory inside checkpoints/)
CHECKPOINT_NAME = re.compile(r"step_\d{12}")
#: what a league may name (a file inside league/; ``.pt``: a format-1 snapshot, upgraded on resume)
SNAPSHOT_NAME = re.compile(r"snap_\d{12}\.(npz|pt)")
VEC_KINDS = ("sharded", "subproc", "dummy")
LR_SCHEDULES = ("constant", "linear")
#: ``seat`` values besides a fixed seat index
SEAT_MODES = ("random", "rotate")
#: what ``resume`` takes from the new config (the rest comes from the run's config.json);
#: ``vec`` and ``workers`` do not change results (same ``n_envs``), only speed; ``out`` is
#: where the run is now (a run directory may be copied or moved)
RESUME_OVERRIDES = ("steps", "out", "progress", "verbose", "vec", "workers")
#: default envs per worker process (the policy forward is batched over all envs)
ENVS_PER_WORKER = 8
#: default rollout size per PPO update (all envs together)
ROLLOUT_STEPS = 2048

#: the default league and evaluation opponents
DEFAULT_HEURISTICS: dict[str, float] = {"greedy": 2.0, "planner": 1.0, "random": 1.0}
DEFAULT_EVAL_OPPONENTS: tuple[str, ...] = ("random", "greedy", "planner")

#: the game keywords a run used to keep flat in ``config.json`` (read back by ``from_json``)
_FLAT_GAME_KEYS = ("num_players", "max_pips", "hand_size", "rules", "rounds")


class CheckpointError(ValueError):
    """A run that cannot be resumed: ``file`` (a path) and ``message`` (what is wrong with it)."""

    def __init__(self, file: str | os.PathLike[str], message: str) -> None:
        message = " ".join(str(message).split())  # always one line
        super().__init__(f"{file}: {message}")
        self.file = str(file)
        self.message = message


class ConfigError(ValueError):
    """A bad :class:`TrainConfig` value, raised before anything runs or is written.

    ``field`` names the field (``game.num_players`` ... ``game.flags`` for the game's
    keywords), ``message`` says what is wrong and what is allowed.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _game_field(message: str) -> str:
    """The :class:`GameConfig` keyword an error message of ``GameConfig.make`` is about."""
    names = [*_FLAT_GAME_KEYS, "config keyword", *VARIANT_FLAGS]
    hits = [(message.find(n), n) for n in names if n in message]
    if not hits:
        return "game"
    name = min(hits)[1]
    return "game.flags" if name == "config keyword" or name in VARIANT_FLAGS else f"game.{name}"


def make_game(game: GameConfig | Mapping[str, Any] | None = None, /, **keywords: Any) -> GameConfig:
    """A validated :class:`GameConfig` from ``GameConfig.make`` keywords (flat, as ``to_dict()``
    writes them; a ``flags`` mapping is also accepted); errors become :class:`ConfigError`
    naming the keyword (``game.num_players``, ...)."""
    if isinstance(game, GameConfig) and not keywords:
        return game
    kw: dict[str, Any] = dict(game.to_dict() if isinstance(game, GameConfig) else game or {})
    kw.update(keywords)
    flags = kw.pop("flags", None) or {}
    if not isinstance(flags, Mapping):
        raise ConfigError("game.flags", f"must map variant names to booleans, got {flags!r}")
    kw.update(flags)
    try:
        return GameConfig.make(**kw)
    except (TypeError, ValueError) as err:
        raise ConfigError(_game_field(str(err)), str(err)) from None


@dataclass
class TrainConfig:
    """Everything that defines a training run (saved as ``config.json``).

    Game: ``game``, the one :class:`~mtrain_env.mexican_train.core.config.GameConfig` of the
    run (players, set, rules preset, rounds, hand size, RULES.md variants; a mapping of
    ``GameConfig.make`` keywords is accepted and validated), ``reward`` (env reward mode),
    ``seat`` (learner seat: ``"random"``, ``"rotate"`` or a seat index).
    PPO: the usual MaskablePPO arguments; ``n_steps`` is per env; ``net_arch`` the hidden
    sizes of both the actor and the critic; ``logit_bound`` the soft logit clamp;
    ``lr_schedule`` ``"constant"`` or ``"linear"`` (to 0 at ``steps``); ``shaping`` the
    potential-based shaping coefficient (0 = none).
    League: see :mod:`training.league`. Evaluation: every ``eval_every`` steps (0 = never)
    against ``eval_opponents`` on ``eval_deals`` duplicate deals. Checkpoints: every
    ``checkpoint_every`` steps, ``keep_checkpoints`` kept. BC: ``bc_expert`` (registered
    agent) and ``bc_samples`` (0 = no warm start).

    :meth:`validate` (called by :meth:`resolved`, hence by the :class:`Trainer`) checks every
    field and raises :class:`ConfigError` naming it.
    """

    steps: int = 1_000_000
    seed: int = 0
    out: str = "runs/ppo"
    n_envs: int = 0  #: 0 = ENVS_PER_WORKER per worker process
    vec: str = "sharded"  #: "sharded" (``workers`` processes), "subproc" (one per env) or "dummy"
    workers: int = 0  #: processes of ``vec="sharded"``; 0 = one per CPU core
    # game
    game: GameConfig = field(default_factory=GameConfig.make)
    reward: str = "zero_sum"
    seat: str | int = "random"
    # PPO
    n_steps: int = 0  #: rollout steps per env per update; 0 = ROLLOUT_STEPS // n_envs
    batch_size: int = 512
    n_epochs: int = 4
    learning_rate: float = 3e-4
    lr_schedule: str = "constant"
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = 0.05
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    logit_bound: float = 20.0
    features: str = "env"  #: learner input, agents.mexican_train.features: "env" or "planner"
    shaping: float = 0.0
    # league
    heuristics: dict[str, float] = field(default_factory=dict)  #: default: DEFAULT_HEURISTICS registered
    p_heuristic: float = 0.5
    p_latest: float = 0.3
    p_older: float = 0.2
    snapshot_every: int = 100_000
    max_snapshots: int = 20
    snapshot_deterministic: bool = False
    # evaluation
    eval_every: int = 50_000
    eval_deals: int = 10
    eval_opponents: list[str] = field(default_factory=list)  #: default: DEFAULT_EVAL_OPPONENTS registered
    eval_seed: int = 1_000_003
    # checkpoints
    checkpoint_every: int = 50_000
    keep_checkpoints: int = 3
    # behaviour cloning
    bc_expert: str | None = None
    bc_expert_params: dict[str, Any] = field(default_factory=dict)
    bc_samples: int = 0
    bc_epochs: int = 5
    bc_lr: float = 1e-3
    bc_batch_size: int = 256
    # runtime
    torch_threads: int = 1
    progress: bool = True
    verbose: int = 0

    def __post_init__(self) -> None:
        self.game = make_game(self.game)

    def resolved(self) -> TrainConfig:
        """A validated copy with the defaults that depend on the machine filled in (cores,
        envs, rollout length, registered agents); raises :class:`ConfigError`."""
        self.validate()  # before the defaults hide a bad value (e.g. n_envs=-3)
        c = dataclasses.replace(self)
        if c.workers <= 0:
            c.workers = os.cpu_count() or 1
        if c.n_envs <= 0:  # subproc: one process per env; otherwise envs are batched
            c.n_envs = c.workers if c.vec == "subproc" else c.workers * ENVS_PER_WORKER
        if c.n_steps <= 0:
            c.n_steps = max(16, ROLLOUT_STEPS // c.n_envs)
        if not c.heuristics:
            c.heuristics = dict(DEFAULT_HEURISTICS)
        if not c.eval_opponents:
            c.eval_opponents = list(DEFAULT_EVAL_OPPONENTS)
        c.validate()
        return c

    def validate(self) -> None:
        """Check every field (types, ranges, names of agents, feature sets, modes);
        raise :class:`ConfigError` naming the first bad one. ``0`` stands for "the default"
        in ``n_envs``, ``workers`` and ``n_steps``, empty for it in ``heuristics`` and
        ``eval_opponents`` (see :meth:`resolved`)."""
        from agents.mexican_train.features import FEATURE_SETS
        from mtrain_env.mexican_train.rewards import REWARD_MODES

        _int("steps", self.steps, 1)
        _int("seed", self.seed, 0, 2**32 - 1)
        if not isinstance(self.out, (str, os.PathLike)) or not str(self.out):
            raise ConfigError("out", f"must be a directory path, got {self.out!r}")
        _int("n_envs", self.n_envs, 0, note="0 = the default")
        _choice("vec", self.vec, VEC_KINDS)
        _int("workers", self.workers, 0, note="0 = one per CPU core")
        if not isinstance(self.game, GameConfig):
            raise ConfigError("game", f"must be a GameConfig, got {type(self.game).__name__}")
        _choice("reward", self.reward, REWARD_MODES)
        _seat(self.seat, self.game.num_players)
        _int("n_steps", self.n_steps, 0, note="0 = the default")
        if self.n_steps > 0 and self.n_envs > 0 and self.n_steps * self.n_envs < 2:
            raise ConfigError("n_steps", "a rollout (n_steps x n_envs) needs at least 2 steps")
        _int("batch_size", self.batch_size, 2)
        _int("n_epochs", self.n_epochs, 1)
        _real("learning_rate", self.learning_rate, 0.0, low_open=True)
        _choice("lr_schedule", self.lr_schedule, LR_SCHEDULES)
        _real("gamma", self.gamma, 0.0, 1.0)
        _real("gae_lambda", self.gae_lambda, 0.0, 1.0)
        _real("clip_range", self.clip_range, 0.0, low_open=True)
        _real("ent_coef", self.ent_coef, 0.0)
        _real("vf_coef", self.vf_coef, 0.0)
        _real("max_grad_norm", self.max_grad_norm, 0.0, low_open=True)
        if self.target_kl is not None:
            _real("target_kl", self.target_kl, 0.0, note="0 = off")
        if (
            not isinstance(self.net_arch, (list, tuple))
            or not self.net_arch
            or not all(_is_int(x) and x >= 1 for x in self.net_arch)
        ):
            raise ConfigError(
                "net_arch", f"needs hidden layer sizes >= 1, e.g. [256, 256], got {self.net_arch!r}"
            )
        _real("logit_bound", self.logit_bound, 0.0, low_open=True)
        _choice("features", self.features, FEATURE_SETS)
        _real("shaping", self.shaping, 0.0, note="0 = none")
        if not isinstance(self.heuristics, Mapping):
            raise ConfigError("heuristics", f"must map agent names to weights, got {self.heuristics!r}")
        for name, weight in self.heuristics.items():
            _agent("heuristics", name)
            if not _is_real(weight) or not math.isfinite(weight) or weight <= 0:
                raise ConfigError(
                    "heuristics", f"the weight of {name!r} must be a number > 0, got {weight!r}"
                )
        _real("p_heuristic", self.p_heuristic, 0.0, 1.0, low_open=True)
        _real("p_latest", self.p_latest, 0.0, 1.0)
        _real("p_older", self.p_older, 0.0, 1.0)
        _int("snapshot_every", self.snapshot_every, 0, note="0 = never")
        _int("max_snapshots", self.max_snapshots, 1)
        if not isinstance(self.snapshot_deterministic, bool):
            raise ConfigError(
                "snapshot_deterministic", f"must be a bool, got {self.snapshot_deterministic!r}"
            )
        _int("eval_every", self.eval_every, 0, note="0 = never")
        _int("eval_deals", self.eval_deals, 1)
        if not isinstance(self.eval_opponents, (list, tuple)):
            raise ConfigError("eval_opponents", f"must be a list of agent names, got {self.eval_opponents!r}")
        for name in self.eval_opponents:
            _agent("eval_opponents", name)
        twice = sorted({x for x in self.eval_opponents if list(self.eval_opponents).count(x) > 1})
        if twice:
            raise ConfigError("eval_opponents", f"names {twice} more than once")
        _int("eval_seed", self.eval_seed, 0, 2**32 - 1)
        _int("checkpoint_every", self.checkpoint_every, 0, note="0 = at the start and the end only")
        _int("keep_checkpoints", self.keep_checkpoints, 1)
        if not isinstance(self.bc_expert_params, Mapping):
            raise ConfigError("bc_expert_params", f"must map names to values, got {self.bc_expert_params!r}")
        if self.bc_expert is not None:
            _agent("bc_expert", self.bc_expert, self.bc_expert_params, "bc_expert_params")
        _int("bc_samples", self.bc_samples, 0, note="0 = no warm start")
        if self.bc_samples > 0 and self.bc_expert is None:
            text = "behaviour cloning needs bc_expert (--bc-expert: the agent to clone)"
            raise ConfigError("bc_samples", text)
        _int("bc_epochs", self.bc_epochs, 1)
        _real("bc_lr", self.bc_lr, 0.0, low_open=True)
        _int("bc_batch_size", self.bc_batch_size, 1)
        _int("torch_threads", self.torch_threads, 1)
        if not isinstance(self.progress, bool):
            raise ConfigError("progress", f"must be a bool, got {self.progress!r}")
        _int("verbose", self.verbose, 0, 2)

    def env_kwargs(self) -> dict[str, Any]:
        """Keywords of :class:`mtrain_env.raw_env` for this run (the game, fully resolved, and
        the reward mode)."""
        g = self.game
        return {
            "num_players": g.num_players,
            "max_pips": g.max_pips,
            "hand_size": g.hand_size,
            "rules": g.rules,
            "rounds": g.rounds,
            "reward": self.reward,
            **g.flags(),
        }

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (``game`` as ``GameConfig.to_dict()``); inverse of :meth:`from_json`."""
        d = dataclasses.asdict(self)
        d["game"] = self.game.to_dict()
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> TrainConfig:
        """Read :meth:`to_json` output back; also the flat game keys (``num_players``,
        ``max_pips``, ``rules``, ``rounds``, ``flags``) of runs written before the game
        configuration was nested. Unknown keys are ignored."""
        d = dict(d)
        if "game" not in d:
            flat = {k: d.pop(k) for k in _FLAT_GAME_KEYS if k in d}
            d["game"] = {**flat, "flags": d.pop("flags", None) or {}}
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_real(x: Any) -> bool:
    return _is_int(x) or isinstance(x, (float, np.floating))


def _int(name: str, value: Any, low: int, high: int | None = None, note: str = "") -> None:
    text = f"an int >= {low}" if high is None else f"an int in {low}..{high}"
    if note:
        text += f" ({note})"
    if not _is_int(value) or value < low or (high is not None and value > high):
        raise ConfigError(name, f"must be {text}, got {value!r}")


def _real(
    name: str, value: Any, low: float, high: float | None = None, low_open: bool = False, note: str = ""
) -> None:
    if low_open:
        text = f"> {low:g}" if high is None else f"in ({low:g}, {high:g}]"
    else:
        text = f">= {low:g}" if high is None else f"in [{low:g}, {high:g}]"
    if note:
        text += f" ({note})"
    ok = _is_real(value) and math.isfinite(value)
    ok = ok and (value > low if low_open else value >= low) and (high is None or value <= high)
    if not ok:
        raise ConfigError(name, f"must be a finite number {text}, got {value!r}")


def _choice(name: str, value: Any, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ConfigError(name, f"must be one of {', '.join(choices)}; got {value!r}")


def _seat(seat: Any, num_players: int) -> None:
    if isinstance(seat, str) and seat in SEAT_MODES:
        return
    if not (_is_int(seat) and 0 <= seat < num_players):
        raise ConfigError(
            "seat",
            f"must be {' or '.join(SEAT_MODES)} or a seat index in 0..{num_players - 1} "
            f"({num_players} players); got {seat!r}",
        )


def _agent(name: str, agent: Any, params: Mapping[str, Any] | None = None, params_name: str = "") -> None:
    """A registered agent (or ``module:Class``) that can be built (with ``params``)."""
    if not isinstance(agent, str) or not agent:
        raise ConfigError(name, f"needs agent names, got {agent!r}")
    try:
        cls = agents.agent_class(agent)
    except (ImportError, ValueError) as err:
        raise ConfigError(name, str(err)) from None
    try:
        cls(seed=0, **dict(params or {}))
    except (TypeError, ValueError) as err:
        text = f"agent {agent!r} does not take the parameters {dict(params or {})}: {err}"
        raise ConfigError(params_name or name, text) from None


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


def strict_json(obj: Any, **kwargs: Any) -> str:
    """``json.dumps`` that writes strict JSON: NaN and infinities become ``null`` (never the
    ``NaN`` / ``Infinity`` tokens other readers reject); numpy scalars and arrays, tuples and
    paths become their JSON equivalents."""
    return json.dumps(_jsonable(obj), allow_nan=False, **kwargs)


def _jsonable(x: Any) -> Any:
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, os.PathLike):
        return os.fspath(x)
    return x


def run_files(out: Path) -> list[str]:
    """What in ``out`` shows a training run is there (``config.json``, ``checkpoints/``)."""
    return [name for name in (CONFIG_FILE, CHECKPOINTS) if (Path(out) / name).exists()]


def read_config(out: Path) -> TrainConfig:
    """The :class:`TrainConfig` of the run in ``out`` (either ``config.json`` format), its
    ``out`` being ``out``; raises :class:`CheckpointError` saying what is wrong with the file."""
    path = Path(out) / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise CheckpointError(path, f"cannot read it ({err.strerror or err})") from None
    try:
        data = json.loads(text)
    except ValueError as err:
        raise CheckpointError(path, f"not JSON ({err})") from None
    if not isinstance(data, dict) or not {"steps", "seed", "n_envs"} <= set(data):
        raise CheckpointError(path, "does not hold a training configuration (steps, seed, n_envs, ...)")
    data["out"] = str(out)  # a run is where its directory is (older runs stored a path here)
    try:
        return TrainConfig.from_json(data)
    except ConfigError as err:
        raise CheckpointError(path, str(err)) from None
    except (TypeError, ValueError) as err:
        raise CheckpointError(path, f"does not hold a training configuration ({err})") from None


def run_config_json(config: TrainConfig) -> dict[str, Any]:
    """What ``config.json`` holds: :meth:`TrainConfig.to_json` without ``out`` (the run is
    where its directory is)."""
    d = config.to_json()
    del d["out"]
    return d


def format_summary(summary: Mapping[str, Any], out: str | os.PathLike[str] | None = None) -> str:
    """The human-readable end of a run, from :meth:`Trainer.make_summary`; the files it names
    are shown inside ``out`` (the run directory) when given."""
    lines = []
    steps, this = summary["steps"], summary["steps_this_run"]
    head = f"trained {steps:,} steps"
    if summary.get("resumed_from") is not None:
        head += f" ({this:,} this run, resumed from step {summary['resumed_from']:,})"
    elif summary.get("restarted"):
        head += " (started over: the run had no checkpoint yet)"
    head += (
        f" in {summary['seconds']:.1f} s: {summary['steps_per_second']:,.0f} steps/s while learning, "
        f"{summary['n_envs']} envs"
    )
    if summary.get("nan_events"):
        head += f", {summary['nan_events']} non-finite updates rolled back"
    lines.append(head)
    final = summary.get("final_eval") or []
    if final:
        lines.append(
            f"final evaluation at step {final[0]['step']:,}, "
            f"{summary['eval_deals']} duplicate deals per opponent"
        )
        lines.append(
            "  learner minus opponent round score (below 0: the learner scores less = better), 95% CI:"
        )
        width = max(len(str(r["opponent"])) for r in final)
        for r in final:
            diff, ci = r["diff"], r.get("ci95")
            if ci is None or diff is None:
                text = f"{_num(diff)}  (no CI: one deal)"
            else:
                text = f"{diff:+8.2f} ± {(ci[1] - ci[0]) / 2:6.2f}  [{ci[0]:+.2f}, {ci[1]:+.2f}]"
            lowest = r.get("lowest_rate")
            if lowest is not None and math.isfinite(lowest):
                text += f"  finished lowest in {100 * lowest:.0f}% of rounds"
            lines.append(f"  vs {r['opponent']:<{width}}  {text}")
    else:
        lines.append("no evaluation (eval_every = 0)")
    files = {k: v if v is None or out is None else str(Path(out) / v) for k, v in summary["files"].items()}
    if files.get("curve_csv"):
        lines.append(f"curve:        {files['curve_csv']}, {files['curve_png']}")
    lines.append(f"policy:       {files['policy']} (model + optimizer: {files['model']})")
    lines.append(f"tensorboard:  tensorboard --logdir {files['tensorboard']}")
    lines.append(f"summary:      {files['summary']}")
    return "\n".join(lines)


def _num(x: Any) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:+8.2f}"


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class _TensorBoardFormat(TensorBoardOutputFormat):
    """SB3's TensorBoard writer with ``purge_step`` (drops events a resumed run redoes)."""

    def __init__(self, folder: str, purge_step: int | None) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(log_dir=folder, purge_step=purge_step)
        self._is_closed = False


def make_logger(out: Path, purge_step: int | None, verbose: int) -> Logger:
    formats: list[KVWriter] = [_TensorBoardFormat(str(out / "tb"), purge_step)]
    if verbose:
        formats.append(HumanOutputFormat(sys.stdout))
    return Logger(str(out), formats)


def write_curve(out: Path, rows: list[dict[str, Any]]) -> None:
    """``curve.csv`` and ``curve.png`` from the evaluation rows."""
    if not rows:
        return
    fields = list(rows[0])
    tmp = out / (CURVE_CSV + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, out / CURVE_CSV)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for opp in sorted({r["opponent"] for r in rows}):
        mine = [r for r in rows if r["opponent"] == opp]
        x = np.array([r["step"] for r in mine])
        y = np.array([r["diff"] for r in mine], dtype=float)
        se = np.nan_to_num(np.array([r["diff_se"] for r in mine], dtype=float))
        ax1.plot(x, y, marker="o", label=f"vs {opp}")
        ax1.fill_between(x, y - 1.96 * se, y + 1.96 * se, alpha=0.2)
        ax2.plot(x, [r["lowest_rate"] for r in mine], marker="o", label=f"vs {opp}")
    ax1.axhline(0.0, color="grey", lw=0.8)
    ax1.set_xlabel("environment steps")
    ax1.set_ylabel("learner - opponent round score (lower is better)")
    ax1.legend()
    ax2.set_xlabel("environment steps")
    ax2.set_ylabel("share of rounds finished lowest")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(out / CURVE_PNG, dpi=90)
    plt.close(fig)


def read_latest(out: Path) -> tuple[Path, int] | None:
    """The newest checkpoint directory named by ``checkpoints/latest.json`` and its step;
    ``None`` if the run has none yet. Raises :class:`CheckpointError` if the pointer is not
    ``{"dir": "step_<N>", "step": N}``, leaves ``checkpoints/`` or names an incomplete checkpoint."""
    root = Path(out) / CHECKPOINTS
    pointer = root / LATEST
    if not pointer.exists():
        return None
    try:
        data = json.loads(pointer.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise CheckpointError(pointer, f"not readable JSON ({err})") from None
    if not isinstance(data, dict) or set(data) != {"dir", "step"}:
        raise CheckpointError(pointer, f'must be {{"dir": "step_<N>", "step": N}}, got {str(data)[:80]}')
    name, step = data["dir"], data["step"]
    if not isinstance(name, str) or not CHECKPOINT_NAME.fullmatch(name):
        text = f"dir must name a checkpoint directory inside {CHECKPOINTS}/ (step_<12 digits>), got {name!r}"
        raise CheckpointError(pointer, text)
    if not _is_int(step) or name != f"step_{step:012d}":
        raise CheckpointError(pointer, f"step {step!r} is not the step of {name}")
    directory = root / name
    if directory.is_symlink() or directory.resolve().parent != root.resolve():
        raise CheckpointError(pointer, f"{name} leads outside {root}")
    for file in (MODEL_FILE, STATE_FILE):
        if not (directory / file).is_file():
            raise CheckpointError(directory / file, f"missing (the checkpoint {LATEST} points to)")
    return directory, int(step)


def latest_checkpoint(out: Path) -> Path | None:
    """The newest complete checkpoint directory of a run, if any (see :func:`read_latest`)."""
    found = read_latest(out)
    return None if found is None else found[0]


@dataclass
class Checkpoint:
    """A checkpoint checked by :func:`load_checkpoint`, its state unpickled."""

    dir: Path
    step: int
    state: dict[str, Any]


def run_policy_spec(config: TrainConfig) -> PolicySpec:
    """The architecture of the run's policy (what its ``model.zip`` must hold)."""
    env = SingleAgentEnv(env_kwargs=config.env_kwargs(), features=config.features)
    assert env.observation_space.shape is not None
    return PolicySpec(
        observation_size=int(env.observation_space.shape[0]),
        action_count=int(env.raw.config.num_actions),
        pi=tuple(config.net_arch),
        vf=tuple(config.net_arch),
        features=config.features,
        logit_bound=float(config.logit_bound),
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_model(path: Path, expected: PolicySpec, step: int, recorded: str | None) -> None:
    """``model.zip`` is an intact model of the run's architecture at ``step`` (read without
    unpickling: :func:`agents.policy_net.read_sb3_archive`). What it holds is checked before
    its ``recorded`` sha256, so that a model of another run is named as such."""
    problem = None
    try:
        spec, steps, _weights = read_sb3_archive(path)
        with zipfile.ZipFile(path) as zf:
            missing = [m for m in ("policy.optimizer.pth", "pytorch_variables.pth") if m not in zf.NameToInfo]
            damaged = zf.testzip()
        if missing or damaged:
            problem = f"member {missing[0]} missing" if missing else f"member {damaged} damaged"
    except PolicyFileError as err:
        problem = err.message
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as err:
        problem = f"damaged ({err})"
    if problem is not None:
        if recorded is not None and recorded != _sha256(path):
            problem = f"damaged or replaced: its sha256 is not the one {CHECKPOINT_FILE} recorded ({problem})"
        raise CheckpointError(path, problem)
    for name, label in (
        ("observation_size", "observation size"),
        ("action_count", "action count"),
        ("pi", "net_arch (actor)"),
        ("vf", "net_arch (critic)"),
        ("features", "features"),
        ("logit_bound", "logit_bound"),
        ("activation", "activation"),
    ):
        have, want = getattr(spec, name), getattr(expected, name)
        if have != want:
            have, want = (list(x) if isinstance(x, tuple) else x for x in (have, want))
            raise CheckpointError(
                path,
                f"{label} {have!r}, but the run's {CONFIG_FILE} gives {want!r} (a model of another run?)",
            )
    if steps != step:
        raise CheckpointError(
            path, f"holds step {steps}, but {LATEST} says {step} (a model of another checkpoint?)"
        )


def _recorded_hashes(directory: Path, step: int) -> dict[str, str] | None:
    """The sha256 per file that the checkpoint's ``checkpoint.json`` recorded (``None`` if
    it has none: format 1)."""
    meta_path = directory / CHECKPOINT_FILE
    if not meta_path.exists():
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise CheckpointError(meta_path, f"not readable JSON ({err})") from None
    hashes = meta.get("sha256") if isinstance(meta, dict) else None
    files = (MODEL_FILE, STATE_FILE, LEAGUE_FILE)
    if (
        not isinstance(hashes, dict)
        or meta.get("step") != step
        or not all(isinstance(hashes.get(f), str) for f in files)
    ):
        raise CheckpointError(
            meta_path, f'must be {{"format": 2, "step": {step}, "sha256": {{<file>: <hex>}}}}'
        )
    return {f: hashes[f] for f in files}


def _check_hashes(directory: Path, hashes: Mapping[str, str]) -> None:
    """The files of ``directory`` are those its ``checkpoint.json`` recorded (format 2)."""
    for file in (MODEL_FILE, STATE_FILE, LEAGUE_FILE):
        if not (directory / file).is_file():
            raise CheckpointError(directory / file, "missing")
        if hashes.get(file) != _sha256(directory / file):
            raise CheckpointError(
                directory / file, f"damaged or replaced: its sha256 is not the one {CHECKPOINT_FILE} recorded"
            )


#: what unpickling damaged bytes raises
_UNPICKLING_ERRORS = (
    pickle.UnpicklingError,
    EOFError,
    AttributeError,
    ImportError,
    IndexError,
    KeyError,
    TypeError,
    ValueError,
    OverflowError,
)
_STATE_KEYS = (
    "format",
    "step",
    "n_envs",
    "league",
    "next_eval",
    "next_checkpoint",
    "curve",
    "env_states",
    "last_obs",
    "last_episode_starts",
    "monitor",
    "ep_info_buffer",
    "rng",
)


def _snapshot_names(state: Mapping[str, Any]) -> list[str]:
    """Every snapshot file a checkpoint state names: the league's and those seated in the
    episodes in flight."""
    names = [s["file"] for s in state["league"]["snapshots"]]
    for env_state in state["env_states"]:
        names += [s.name for s in env_state["opponent_specs"].values() if s.kind == SNAPSHOT]
    return list(dict.fromkeys(names))


def _check_state(path: Path, state: Any, config: TrainConfig, step: int, obs_size: int, league: Path) -> None:
    if not isinstance(state, dict):
        raise CheckpointError(path, f"not a checkpoint state (a {type(state).__name__})")
    if state.get("format") not in (1, STATE_FORMAT):
        raise CheckpointError(
            path, f"state format {state.get('format')!r}; this version reads 1 and {STATE_FORMAT}"
        )
    missing = [k for k in _STATE_KEYS if k not in state]
    if missing:
        raise CheckpointError(path, f"not a checkpoint state (no {', '.join(missing)})")
    if state["step"] != step:
        raise CheckpointError(path, f"holds step {state['step']!r}, but {LATEST} says {step}")
    n = config.n_envs
    if state["n_envs"] != n or len(state["env_states"]) != n:
        raise CheckpointError(
            path,
            f"holds {len(state['env_states'])} env states of n_envs={state['n_envs']!r}, "
            f"but the run's {CONFIG_FILE} has n_envs={n} (resume needs the same)",
        )
    shape = getattr(state["last_obs"], "shape", None)
    if shape != (n, obs_size):
        raise CheckpointError(path, f"observations of shape {shape}, the model takes ({n}, {obs_size})")
    try:
        League.from_state_dict(state["league"])
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise CheckpointError(path, f"league: not a league state ({type(err).__name__}: {err})") from None
    try:
        names = _snapshot_names(state)
    except (KeyError, TypeError, AttributeError) as err:
        raise CheckpointError(path, f"env_states: not env states ({type(err).__name__}: {err})") from None
    for name in names:
        if not isinstance(name, str) or not SNAPSHOT_NAME.fullmatch(name):
            raise CheckpointError(
                path, f"league: {name!r} is not a snapshot file name (snap_<N>.npz in {LEAGUE_DIR}/)"
            )
        if not (league / name).is_file():
            raise CheckpointError(league / name, "missing (a snapshot the run's league plays)")


def load_checkpoint(out: Path, config: TrainConfig) -> Checkpoint | None:
    """The newest checkpoint of the run in ``out`` after every check of the module docstring
    (``None`` if the run has none yet); raises :class:`CheckpointError`. Writes nothing.

    ``state.pkl`` is unpickled: it is trusted as the file this module wrote inside the run
    directory, once its sha256 matches ``checkpoint.json`` (format 2)."""
    found = read_latest(out)
    if found is None:
        return None
    directory, step = found
    spec = run_policy_spec(config)
    hashes = _recorded_hashes(directory, step)  # format 1 wrote no checkpoint.json
    _check_model(directory / MODEL_FILE, spec, step, None if hashes is None else hashes[MODEL_FILE])
    if hashes is not None:
        _check_hashes(directory, hashes)
    path = directory / STATE_FILE
    try:
        with open(path, "rb") as f:
            state = pickles.load(f)
    except OSError as err:
        raise CheckpointError(path, f"cannot read it ({err.strerror or err})") from None
    except _UNPICKLING_ERRORS as err:
        raise CheckpointError(
            path, f"damaged: not a state this version reads ({type(err).__name__}: {err})"
        ) from None
    _check_state(path, state, config, step, spec.observation_size, Path(out) / LEAGUE_DIR)
    if hashes is None and state["format"] != 1:
        raise CheckpointError(directory / CHECKPOINT_FILE, "missing (the sha256 of the checkpoint's files)")
    return Checkpoint(directory, step, state)


def _upgrade_format_1(state: dict[str, Any], league: Path) -> dict[str, Any]:
    """A format-1 checkpoint state as format 2: each snapshot it names that SB3's
    ``policy.save`` pickled (``snap_<N>.pt``) is converted once into a policy file beside it
    (``snap_<N>.npz``; it unpickles the run's own file, named by the run's own state), and
    the league and the seated opponents name the new files."""
    renamed: dict[str, str] = {}
    for name in _snapshot_names(state):
        if name.endswith(".pt"):
            renamed[name] = name[: -len(".pt")] + ".npz"
            if not (league / renamed[name]).exists():
                upgrade_trusted_policy(league / name, league / renamed[name])

    def league_state(d: Mapping[str, Any]) -> dict[str, Any]:
        snaps = [{**s, "file": renamed.get(s["file"], s["file"])} for s in d["snapshots"]]
        return {**d, "snapshots": snaps}

    def spec(s: OpponentSpec) -> OpponentSpec:
        return dataclasses.replace(s, name=renamed[s.name]) if s.kind == SNAPSHOT and s.name in renamed else s

    env_states = [
        {
            **e,
            "league": league_state(e["league"]),
            "opponent_specs": {k: spec(v) for k, v in e["opponent_specs"].items()},
        }
        for e in state["env_states"]
    ]
    return {
        **state,
        "format": STATE_FORMAT,
        "league": league_state(state["league"]),
        "env_states": env_states,
    }


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
            # with its saved configuration (and the BC data collected so far, bc_data.npz)
            self.restarted = self._checkpoint is None
            self.resume = not self.restarted
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
        self.league_root.mkdir(parents=True, exist_ok=True)
        # a resumed run records its new target and the current format
        _atomic_write(self.out / CONFIG_FILE, strict_json(run_config_json(c), indent=2))
        checkpoint = self._checkpoint if self.resume else None
        state: dict[str, Any] | None = None
        if checkpoint is not None:
            state = checkpoint.state
            if state["format"] == 1:
                state = _upgrade_format_1(state, self.league_root)
            self.league = League.from_state_dict(state["league"])
        self.env = make_vec_env(c, self.league, self.league_root)
        if checkpoint is None:
            self.model = self._new_model()
        else:
            assert state is not None
            # model.zip is a pickle: read only here, the run's own file, checked by load_checkpoint
            self.model = RobustMaskablePPO.load(checkpoint.dir / MODEL_FILE, env=self.env, device="cpu")
            self._restore(state)
        self.model.set_logger(
            make_logger(
                self.out,
                self.model.num_timesteps if self.resume else (0 if self.restarted else None),
                c.verbose,
            )
        )

    def _new_model(self) -> RobustMaskablePPO:
        c = self.config
        lr: float | Callable[[float], float] = c.learning_rate
        if c.lr_schedule == "linear":
            base = c.learning_rate

            def lr(progress_remaining: float) -> float:
                return base * progress_remaining

        return RobustMaskablePPO(
            GuardedMaskablePolicy,
            self.env,
            learning_rate=lr,
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
        hashes = {f: _sha256(tmp / f) for f in (MODEL_FILE, STATE_FILE, LEAGUE_FILE)}
        meta = {"format": STATE_FORMAT, "step": step, "sha256": hashes}
        (tmp / CHECKPOINT_FILE).write_text(strict_json(meta, indent=2), encoding="utf-8")
        final = root / name
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        _atomic_write(root / LATEST, strict_json({"dir": name, "step": step}))
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
        _atomic_write(self.out / "bc.json", strict_json(stats, indent=2))

    def run(self) -> RobustMaskablePPO:
        """Train to ``config.steps`` environment steps (resuming if asked); returns the model."""
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
            _atomic_write(self.out / SUMMARY_FILE, strict_json(self.summary, indent=2) + "\n")
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
        final = []
        for r in self.final_eval():
            diff, se = float(r["diff"]), float(r["diff_se"])
            ci = [diff - 1.96 * se, diff + 1.96 * se] if math.isfinite(se) else None
            final.append({**r, "ci95": ci})
        checkpoint = latest_checkpoint(self.out)
        return {
            "steps": step,
            "resumed_from": self.start_step if self.resume else None,
            "restarted": self.restarted,
            "steps_this_run": step - (self.start_step if self.resume else 0),
            "seconds": self.seconds,
            "steps_per_second": self.throughput,
            "n_envs": c.n_envs,
            "nan_events": int(getattr(self.model, "nan_events", 0)),
            "eval_deals": c.eval_deals,
            "final_eval": final,
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
