"""The configuration of a MaskablePPO run: :class:`TrainConfig`, checked field by field.

:meth:`TrainConfig.validate` checks every field (the game through ``GameConfig.make``,
agents through the registry, feature sets, modes, numeric ranges) and raises
:class:`ConfigError` naming the field, before any process starts or any file is written
(:class:`~training.train.Trainer` calls it); the field checks are those of
:mod:`training.checks`, shared with the other trainers. The module imports no learning library, so the
RLlib backend and the command line read and check a run's configuration without SB3.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mtrain_env.mexican_train.core.config import VARIANT_FLAGS, GameConfig
from training.checks import (
    MAX_EVAL_DEALS,
    MAX_SEED,
    ConfigError,
    check_agent,
    check_agent_list,
    check_bool,
    check_choice,
    check_int,
    check_path,
    check_real,
    check_rollout,
    check_seat,
    check_sizes,
    check_weights,
)

__all__ = [
    "DEFAULT_EVAL_OPPONENTS",
    "DEFAULT_HEURISTICS",
    "ENVS_PER_WORKER",
    "LR_SCHEDULES",
    "MAX_ENVS",
    "MAX_N_STEPS",
    "RESUME_OVERRIDES",
    "ROLLOUT_STEPS",
    "SEAT_MODES",
    "VEC_KINDS",
    "ConfigError",
    "TrainConfig",
    "make_game",
    "rollout_row_bytes",
]

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
#: the most envs of a run (``n_envs``; the default is capped to it): 512 worker processes of
#: ENVS_PER_WORKER. An env is a Python object of about 0.15 MiB that takes about 12 ms to
#: build (4 players, double-12), so 4096 of them are 0.6 GiB and under a minute of set-up
MAX_ENVS = 4096
#: the longest rollout of one env (``n_steps``), as self-play's rollouts (``steps``); the
#: rollout of all envs together is bounded by ``training.checks.MAX_ROLLOUT``
MAX_N_STEPS = 1 << 16

#: the default league and evaluation opponents
DEFAULT_HEURISTICS: dict[str, float] = {"greedy": 2.0, "planner": 1.0, "random": 1.0}
DEFAULT_EVAL_OPPONENTS: tuple[str, ...] = ("random", "greedy", "planner")

#: the game keywords a run used to keep flat in ``config.json`` (read back by ``from_json``)
_FLAT_GAME_KEYS = ("num_players", "max_pips", "hand_size", "rules", "rounds")


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
    League: see :mod:`agents.mexican_train.league`. Evaluation: every ``eval_every`` steps (0 = never)
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
            c.n_envs = min(c.workers if c.vec == "subproc" else c.workers * ENVS_PER_WORKER, MAX_ENVS)
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
        from agents.policy_format import FEATURE_SETS
        from mtrain_env.mexican_train.rewards import REWARD_MODES

        check_int("steps", self.steps, 1)
        check_int("seed", self.seed, 0, MAX_SEED)
        check_path("out", self.out)
        check_int("n_envs", self.n_envs, 0, MAX_ENVS, note="0 = the default")
        check_choice("vec", self.vec, VEC_KINDS)
        check_int("workers", self.workers, 0, note="0 = one per CPU core")
        if not isinstance(self.game, GameConfig):
            raise ConfigError("game", f"must be a GameConfig, got {type(self.game).__name__}")
        check_choice("reward", self.reward, REWARD_MODES)
        check_seat("seat", self.seat, self.game.num_players, SEAT_MODES)
        check_int("n_steps", self.n_steps, 0, MAX_N_STEPS, note="0 = the default")
        if self.n_steps > 0 and self.n_envs > 0 and self.n_steps * self.n_envs < 2:
            raise ConfigError("n_steps", "a rollout (n_steps x n_envs) needs at least 2 steps")
        check_int("batch_size", self.batch_size, 2)
        if self.n_steps > 0 and self.n_envs > 0 and self.batch_size > self.n_steps * self.n_envs:
            rollout = self.n_steps * self.n_envs
            text = f"a minibatch must fit in a rollout (n_steps x n_envs = {rollout}), got {self.batch_size}"
            raise ConfigError("batch_size", text)
        check_int("n_epochs", self.n_epochs, 1)
        check_real("learning_rate", self.learning_rate, 0.0, low_open=True)
        check_choice("lr_schedule", self.lr_schedule, LR_SCHEDULES)
        check_real("gamma", self.gamma, 0.0, 1.0)
        check_real("gae_lambda", self.gae_lambda, 0.0, 1.0)
        check_real("clip_range", self.clip_range, 0.0, low_open=True)
        check_real("ent_coef", self.ent_coef, 0.0)
        check_real("vf_coef", self.vf_coef, 0.0)
        check_real("max_grad_norm", self.max_grad_norm, 0.0, low_open=True)
        if self.target_kl is not None:
            check_real("target_kl", self.target_kl, 0.0, note="0 = off")
        check_sizes("net_arch", self.net_arch)
        check_real("logit_bound", self.logit_bound, 0.0, low_open=True)
        check_choice("features", self.features, FEATURE_SETS)
        if self.n_steps > 0 and self.n_envs > 0:  # the buffer's size: its rows, of the learner's input
            check_rollout(
                "n_envs x n_steps",
                (self.n_envs, self.n_steps),
                "env steps a rollout",
                "a rollout buffer",
                lambda: self.n_envs * self.n_steps * rollout_row_bytes(self.game, self.features),
            )
        check_real("shaping", self.shaping, 0.0, note="0 = none")
        check_weights("heuristics", self.heuristics, self.game)
        check_real("p_heuristic", self.p_heuristic, 0.0, 1.0, low_open=True)
        check_real("p_latest", self.p_latest, 0.0, 1.0)
        check_real("p_older", self.p_older, 0.0, 1.0)
        check_int("snapshot_every", self.snapshot_every, 0, note="0 = never")
        check_int("max_snapshots", self.max_snapshots, 1)
        check_bool("snapshot_deterministic", self.snapshot_deterministic)
        check_int("eval_every", self.eval_every, 0, note="0 = never")
        check_int("eval_deals", self.eval_deals, 1, MAX_EVAL_DEALS)
        check_agent_list("eval_opponents", self.eval_opponents, self.game)
        check_int("eval_seed", self.eval_seed, 0, MAX_SEED)
        check_int("checkpoint_every", self.checkpoint_every, 0, note="0 = at the start and the end only")
        check_int("keep_checkpoints", self.keep_checkpoints, 1)
        if not isinstance(self.bc_expert_params, Mapping):
            raise ConfigError("bc_expert_params", f"must map names to values, got {self.bc_expert_params!r}")
        if self.bc_expert is not None:
            check_agent("bc_expert", self.bc_expert, self.game, self.bc_expert_params, "bc_expert_params")
        check_int("bc_samples", self.bc_samples, 0, note="0 = no warm start")
        if self.bc_samples > 0 and self.bc_expert is None:
            text = "behaviour cloning needs bc_expert (--bc-expert: the agent to clone)"
            raise ConfigError("bc_samples", text)
        check_int("bc_epochs", self.bc_epochs, 1)
        check_real("bc_lr", self.bc_lr, 0.0, low_open=True)
        check_int("bc_batch_size", self.bc_batch_size, 1)
        check_int("torch_threads", self.torch_threads, 1)
        check_bool("progress", self.progress)
        check_int("verbose", self.verbose, 0, 2)

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


def rollout_row_bytes(game: GameConfig, features: str) -> int:
    """Bytes of one row (one env step) of MaskablePPO's rollout buffer on ``game`` with the
    learner's input ``features``: the observation and the action mask (float32 each, sb3-contrib's
    ``MaskableRolloutBuffer``), the action (int64) and six float32 scalars (reward, return,
    episode start, value, log-probability, advantage)."""
    from agents.mexican_train.features import feature_size
    from mtrain_env.mexican_train.observation import ObservationLayout

    observation = feature_size(features, game, ObservationLayout(game).size)
    return 4 * (observation + game.num_actions) + 8 + 6 * 4
