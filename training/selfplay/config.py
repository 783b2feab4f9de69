"""What defines a self-play run and how it is measured, without torch: the learners'
configurations (:class:`SelfPlayConfig`, :class:`DMCConfig`), ``selfplay.json``'s reading
and writing, and :class:`RunOptions`.

Kept apart from the learners (:mod:`training.selfplay.learner`, :mod:`training.selfplay.dmc`)
so that ``mtrain selfplay`` checks every option before it imports torch; those modules
re-export these names.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from agents.mexican_train.selfplay_file import NET_KINDS

__all__ = [
    "ALGOS",
    "CHECKPOINT_FILE",
    "CONFIG_FILE",
    "OPPONENTS",
    "DMCConfig",
    "RunOptions",
    "SelfPlayConfig",
    "algo_of",
    "config_from_json",
    "config_to_json",
]

#: league opponents a run can play against: none (pure self-play) or the batched planner
OPPONENTS = ("none", "planner")


@dataclass(frozen=True)
class SelfPlayConfig:
    """Everything that defines a self-play run (checked on construction, one-line errors)."""

    num_players: int = 4
    max_pips: int = 12
    net: str = "tile"
    hidden: int = 128
    pair_hidden: int = 64
    num_games: int = 256
    steps: int = 64  #: env steps per rollout (each steps every game once)
    epochs: int = 3
    minibatch: int = 2048
    lr: float = 3e-4
    gamma: float = 1.0
    lam: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    seed: int = 0
    threads: int = 1
    #: a self-play policy file whose weights start the network ("": fresh weights from ``seed``)
    init: str = ""
    #: who plays the opponent seats of the league games (:data:`OPPONENTS`)
    opponents: str = "none"
    #: the share of the games that are league games (the first ``league_games`` games)
    opponent_share: float = 0.0
    #: opponent seats of each league game: 0 draws 1..n-1 uniformly, k plays exactly k
    #: (``n - 1``: one learner seat against the lineup, a best response to it)
    opponent_seats: int = 0

    def __post_init__(self) -> None:
        ints = {
            "num_players": (2, 8),
            "max_pips": (6, 18),
            "hidden": (8, 4096),
            "pair_hidden": (8, 4096),
            "num_games": (1, 1 << 16),
            "steps": (1, 1 << 16),
            "epochs": (1, 100),
            "minibatch": (16, 1 << 20),
            "threads": (1, 64),
            "seed": (0, 2**63 - 1),
        }
        for name, (lo, hi) in ints.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ValueError(f"{name} must be an int in {lo}..{hi}, got {v!r}")
        floats: dict[str, tuple[float, float]] = {
            "lr": (0.0, 1.0),
            "gamma": (0.0, 1.0),
            "lam": (0.0, 1.0),
            "clip": (0.0, 10.0),
            "ent_coef": (0.0, 10.0),
            "vf_coef": (0.0, 100.0),
            "max_grad_norm": (0.0, 1e6),
            "opponent_share": (0.0, 1.0),
        }
        for name, (flo, fhi) in floats.items():
            v = getattr(self, name)
            if (
                isinstance(v, bool)
                or not isinstance(v, (int, float))
                or not math.isfinite(v)
                or not flo <= v <= fhi
            ):
                raise ValueError(f"{name} must be a number in [{flo}, {fhi}], got {v!r}")
        if self.lr <= 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if self.net not in NET_KINDS:
            raise ValueError(f"net must be one of {', '.join(NET_KINDS)}, got {self.net!r}")
        if not isinstance(self.init, str):
            raise ValueError(f"init must be a policy file path, got {self.init!r}")
        if self.opponents not in OPPONENTS:
            raise ValueError(f"opponents must be one of {', '.join(OPPONENTS)}, got {self.opponents!r}")
        if self.opponents == "none" and self.opponent_share:
            raise ValueError(f"opponent_share needs opponents (e.g. planner), got {self.opponent_share!r}")
        if isinstance(self.opponent_seats, bool) or not isinstance(self.opponent_seats, int):
            raise ValueError(f"opponent_seats must be an int, got {self.opponent_seats!r}")
        if not 0 <= self.opponent_seats < self.num_players:
            most, got = self.num_players - 1, self.opponent_seats
            raise ValueError(f"opponent_seats must be in 0..{most} (0: drawn 1..n-1), got {got!r}")
        if self.opponent_seats and self.opponents == "none":
            raise ValueError(f"opponent_seats needs opponents (e.g. planner), got {self.opponent_seats!r}")
        if self.opponents != "none" and self.league_games == 0:
            raise ValueError(
                f"opponent_share must give at least one of the {self.num_games} games opponents "
                f"with opponents {self.opponents}, got {self.opponent_share!r}"
            )

    @property
    def league_games(self) -> int:
        """How many games (the first ones) have opponent seats."""
        if self.opponents == "none":
            return 0
        return math.floor(self.opponent_share * self.num_games + 0.5)

    def game(self) -> dict[str, int]:
        """The ``BatchedMexicanTrain`` / ``raw_env`` game keywords."""
        return {"num_players": self.num_players, "max_pips": self.max_pips}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SelfPlayConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown self-play settings {unknown}")
        return cls(**data)


@dataclass(frozen=True)
class DMCConfig(SelfPlayConfig):
    """A deep Monte-Carlo run: :class:`SelfPlayConfig` plus the exploration rate."""

    epochs: int = 1  #: passes over each rollout's finished decisions
    minibatch: int = 1024
    #: probability of a uniformly random legal action at a real decision (DouZero: 0.01)
    epsilon: float = 0.05

    def __post_init__(self) -> None:
        super().__post_init__()
        e = self.epsilon
        if isinstance(e, bool) or not isinstance(e, (int, float)) or not math.isfinite(e) or not 0 <= e <= 1:
            raise ValueError(f"epsilon must be a number in [0, 1], got {e!r}")


#: learner name -> its configuration class (``selfplay.json``'s ``"algo"``)
ALGOS: dict[str, type[SelfPlayConfig]] = {"ppo": SelfPlayConfig, "dmc": DMCConfig}

CONFIG_FILE = "selfplay.json"
CHECKPOINT_FILE = "checkpoint.pt"


@dataclass(frozen=True)
class RunOptions:
    """How long to run and how to measure it (not part of the learner's identity)."""

    total_steps: int = 10_000_000
    max_minutes: float = 0.0  #: 0: no wall-time budget
    eval_every: int = 2_000_000
    eval_deals: int = 100
    eval_opponents: tuple[str, ...] = ("planner", "greedy")
    eval_seed: int = 90_210
    checkpoint_every: int = 20  #: updates
    progress: bool = True

    def __post_init__(self) -> None:
        for name in ("total_steps", "eval_every", "eval_deals", "checkpoint_every"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} must be a non-negative int, got {v!r}")
        if not isinstance(self.max_minutes, (int, float)) or not self.max_minutes >= 0:
            raise ValueError(f"max_minutes must be >= 0, got {self.max_minutes!r}")


def algo_of(config: SelfPlayConfig) -> str:
    """The learner a configuration is for."""
    return "dmc" if isinstance(config, DMCConfig) else "ppo"


def config_to_json(config: SelfPlayConfig) -> dict[str, Any]:
    """``selfplay.json``: the learner's name and its settings."""
    return {"algo": algo_of(config), **config.to_json()}


def config_from_json(data: dict[str, Any]) -> SelfPlayConfig:
    """Inverse of :func:`config_to_json` (a file without ``"algo"`` is a PPO run)."""
    data = dict(data)
    algo = data.pop("algo", "ppo")
    if algo not in ALGOS:
        raise ValueError(f"algo must be one of {', '.join(ALGOS)}, got {algo!r}")
    return ALGOS[algo].from_json(data)
