"""What defines a self-play run and how it is measured, without torch: the learners'
configuration (:class:`SelfPlayConfig`), ``selfplay.json``'s reading
and writing, and :class:`RunOptions`.

Kept apart from the learners (:mod:`training.selfplay.learner`)
so that ``mtrain selfplay`` checks every option before it imports torch; those modules
re-export these names.
"""

from __future__ import annotations

import math
import os
import re
import zipfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from agents.mexican_train.selfplay_file import NET_KINDS
from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.files import os_error_text
from training.checks import MAX_EVAL_DEALS, MAX_ROLLOUT, ConfigError, check_rollout
from training.selfplay.seatbook import SeatBook

__all__ = [
    "ALGOS",
    "BACKENDS",
    "CHECKPOINT_FILE",
    "CONFIG_FILE",
    "INT_BOUNDS",
    "MAX_ROLLOUT",
    "OPPONENTS",
    "RunOptions",
    "SelfPlayConfig",
    "check_seat_book",
    "checkpoint_fault",
    "config_from_json",
    "config_to_json",
    "error_text",
    "read_config_file",
]

#: league opponents a run can play against: none (pure self-play) or the batched planner
OPPONENTS = ("none", "planner")
#: settings added after the first runs were written: a ``selfplay.json`` without them is a
#: run of their default (no --init, no league); every other setting must be in the file
_LATER_SETTINGS = frozenset({"init", "opponents", "opponent_share", "opponent_seats"})
#: the range of each int setting of :class:`SelfPlayConfig` (``mtrain dev bench-selfplay`` checks
#: its options against these too); ``num_games x steps`` is bounded by :data:`MAX_ROLLOUT`
INT_BOUNDS: dict[str, tuple[int, int]] = {
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


@dataclass(frozen=True)
class SelfPlayConfig:
    """Everything that defines a self-play run, checked on construction: a bad setting is a
    one-line :class:`~training.checks.ConfigError` naming its field."""

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
        for name, (lo, hi) in INT_BOUNDS.items():
            _check_int(name, getattr(self, name), lo, hi)
        check_seat_book(self.num_games, self.steps, self.num_players, self.max_pips)
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
            _check_number(name, getattr(self, name), f"[{flo}, {fhi}]", flo, fhi)
        for name in ("lr", "clip", "max_grad_norm"):  # 0 would learn nothing
            if getattr(self, name) <= 0:
                raise ConfigError(name, f"must be > 0, got {getattr(self, name)!r}")
        if self.net not in NET_KINDS:
            raise ConfigError("net", f"must be one of {', '.join(NET_KINDS)}, got {self.net!r}")
        if not isinstance(self.init, str):
            raise ConfigError("init", f"must be a policy file path, got {self.init!r}")
        if self.opponents not in OPPONENTS:
            raise ConfigError("opponents", f"must be one of {', '.join(OPPONENTS)}, got {self.opponents!r}")
        if self.opponents == "none" and self.opponent_share:
            raise ConfigError(
                "opponent_share", f"needs opponents (e.g. planner), got {self.opponent_share!r}"
            )
        if not _is_int(self.opponent_seats):
            raise ConfigError("opponent_seats", f"must be an int, got {self.opponent_seats!r}")
        if not 0 <= self.opponent_seats < self.num_players:
            most, got = self.num_players - 1, self.opponent_seats
            raise ConfigError("opponent_seats", f"must be in 0..{most} (0: drawn 1..n-1), got {got!r}")
        if self.opponent_seats and self.opponents == "none":
            raise ConfigError(
                "opponent_seats", f"needs opponents (e.g. planner), got {self.opponent_seats!r}"
            )
        if self.opponents != "none" and self.league_games == 0:
            raise ConfigError(
                "opponent_share",
                f"must give at least one of the {self.num_games} games opponents "
                f"with opponents {self.opponents}, got {self.opponent_share!r}",
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
        """The configuration of ``selfplay.json``'s settings; ``ValueError`` for a setting
        unknown, missing (but those added later, :data:`_LATER_SETTINGS`) or out of range."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown self-play settings {unknown}")
        missing = sorted(known - set(data) - _LATER_SETTINGS)
        if missing:
            raise ValueError(f"missing self-play settings {missing}")
        return cls(**data)


#: the learners (``selfplay.json``'s ``"algo"``): PPO only, kept in the file as a run's identity
ALGOS = ("ppo",)

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
    #: who collects the rollouts: ``local`` (this process) or ``ray`` (``actors`` Ray actors)
    backend: str = "local"
    actors: int = 1
    #: a Ray cluster's ``HOST:PORT`` ("": a local Ray instance)
    address: str = ""
    #: where the updates run: ``auto`` (a GPU if torch sees one, else the CPU), ``cpu``,
    #: ``cuda`` or ``cuda:N``
    device: str = "auto"

    def __post_init__(self) -> None:
        # 0 means "never" for eval_every and "at evaluations and the end only" for
        # checkpoint_every; a run of 0 steps or evaluations of 0 deals would do nothing
        lows = {"total_steps": 1, "eval_every": 0, "eval_deals": 1, "eval_seed": 0, "checkpoint_every": 0}
        for name, low in lows.items():
            _check_int(name, getattr(self, name), low, MAX_EVAL_DEALS if name == "eval_deals" else None)
        m = self.max_minutes
        if not _is_number(m) or not m >= 0:
            raise ConfigError("max_minutes", f"must be >= 0, got {m!r}")
        if self.backend not in BACKENDS:
            raise ConfigError("backend", f"must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        _check_int("actors", self.actors, 1, 4096)
        if self.backend != "ray" and self.actors != 1:
            raise ConfigError("actors", f"needs --backend ray, got {self.actors!r} with {self.backend}")
        if self.address and self.backend != "ray":  # its form: training.selfplay.cli
            raise ConfigError("address", f"needs --backend ray, got {self.address!r} with {self.backend}")
        if not _DEVICE.fullmatch(self.device):
            raise ConfigError("device", f"must be auto, cpu, cuda or cuda:N, got {self.device!r}")


#: the collectors of :class:`RunOptions` ``backend``
BACKENDS = ("local", "ray")
_DEVICE = re.compile(r"auto|cpu|cuda(:[0-9]{1,3})?")


def check_seat_book(num_games: int, steps: int, num_players: int, max_pips: int) -> None:
    """``ConfigError("num_games x steps", ...)`` for a rollout of more than
    :data:`MAX_ROLLOUT` decisions, naming the memory its seat book would take on the table."""

    def nbytes() -> int:
        from mtrain_env.mexican_train.core.config import GameConfig
        from mtrain_env.mexican_train.observation import ObservationLayout

        game = GameConfig.make(num_players=num_players, max_pips=max_pips)
        rows = num_games * steps + num_games * num_players  # as SeatBook's capacity
        return rows * SeatBook.row_bytes(ObservationLayout(game).size, game.num_actions)

    check_rollout("num_games x steps", (num_games, steps), "decisions a rollout", "a seat book", nbytes)


# Python ints and floats only (not numpy's, unlike training.checks): the settings are
# written to selfplay.json as they are, and json cannot write a numpy number
def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_int(field: str, value: Any, low: int, high: int | None = None) -> None:
    """``value`` is an int in ``low..high`` (no upper bound if ``high`` is None)."""
    if not _is_int(value) or value < low or (high is not None and value > high):
        text = f">= {low}" if high is None else f"in {low}..{high}"
        raise ConfigError(field, f"must be an int {text}, got {value!r}")


def _check_number(field: str, value: Any, text: str, low: float, high: float) -> None:
    """``value`` is a finite number in ``[low, high]`` (``text``: how the message writes the range)."""
    if not _is_number(value) or not math.isfinite(value) or not low <= value <= high:
        raise ConfigError(field, f"must be a number in {text}, got {value!r}")


def error_text(err: ConfigError) -> str:
    """A self-play configuration error as its messages read: ``"lr must be > 0, got 0.0"``
    (the field, then what is wrong), for the command line to put after the option's flag."""
    return f"{err.field} {err.message}"


def config_to_json(config: SelfPlayConfig) -> dict[str, Any]:
    """``selfplay.json``: the learner's name and its settings."""
    return {"algo": "ppo", **config.to_json()}


def config_from_json(data: dict[str, Any]) -> SelfPlayConfig:
    """Inverse of :func:`config_to_json` (a file without ``"algo"`` is a PPO run);
    ``ValueError`` saying what is wrong with ``data``."""
    if not isinstance(data, dict):
        raise ValueError(f"must hold a JSON object of self-play settings, got a {_json_kind(data)}")
    data = dict(data)
    algo = data.pop("algo", "ppo")
    if not isinstance(algo, str) or algo not in ALGOS:
        raise ConfigError("algo", f"must be one of {', '.join(ALGOS)}, got {algo!r}")
    return SelfPlayConfig.from_json(data)


def _json_kind(data: Any) -> str:
    kinds = {list: "list", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if data is None else kinds.get(type(data), type(data).__name__)


def read_config_file(path: str | os.PathLike[str]) -> SelfPlayConfig:
    """The configuration in a run's ``selfplay.json``; ``ValueError("<path>: <what is
    wrong>")``, one line, for a file that cannot be read or does not hold one."""
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise ValueError(f"{path}: cannot read it ({os_error_text(err)})") from None
    try:
        data = json_text.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a JSON file (not UTF-8 text)") from None
    except ValueError as err:
        raise ValueError(f"{path}: not a JSON file ({err})") from None
    try:
        return config_from_json(data)
    except ConfigError as err:
        raise ValueError(f"{path}: {' '.join(error_text(err).split())}") from None
    except (ValueError, TypeError) as err:
        raise ValueError(f"{path}: {' '.join(str(err).split())}") from None


def checkpoint_fault(path: str | os.PathLike[str]) -> str | None:
    """What makes ``path`` (an existing run's ``checkpoint.pt``) unreadable at a glance, without
    torch (not a file, or not the zip archive ``torch.save`` writes), in words to follow the
    path; ``None`` if neither (or if it does not exist). What the archive holds is checked by
    :func:`training.selfplay.checkpoint.load_checkpoint`."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return None
    if not path.is_file():
        return f"not a checkpoint file ({'a directory' if path.is_dir() else 'not a regular file'})"
    try:
        with path.open("rb") as fh:
            fh.read(1)  # is_zipfile answers False for a file it cannot read: ask first
            if zipfile.is_zipfile(fh):
                return None
    except OSError as err:
        return f"cannot read it ({os_error_text(err)})"
    return "not a self-play checkpoint (not the zip archive torch.save writes)"
