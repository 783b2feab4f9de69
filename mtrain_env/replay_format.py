"""The replay format's pieces: its constants, data types and errors, and the env helpers
every part of it shares (a fresh env of a replay's game, moves in words, round results).

The format itself is described in :mod:`mtrain_env.replay`, which gathers the public API.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mtrain_env.tilegame.aec import ROUND_RESULT_KEY

__all__ = [
    "GAMES",
    "REPLAY_FORMAT",
    "REPLAY_VERSION",
    "DamagedReplayError",
    "Replay",
    "ReplayMismatchError",
    "ReplayStep",
    "describe_move",
    "episode_over",
    "final_results",
    "game_name",
    "jsonable",
    "make_env",
    "published_round_result",
]

REPLAY_FORMAT = "mtrain-replay"
REPLAY_VERSION = 2
#: the games a replay can hold
GAMES = ("mexican_train", "block")


@dataclass(frozen=True)
class ReplayStep:
    """One decision: the seat that acted, its action id, the decoded move, annotations."""

    seat: int
    action: int
    move: str  #: e.g. ``"6|6 on player_2's train"``, ``"draw"``, ``"pass"`` (seats absolute)
    annotations: dict[str, Any] | None = None  #: the agent's own view of the choice, if any


@dataclass
class Replay:
    """A whole (or cut-short) game: everything needed to replay it and what it gave."""

    game: str  #: ``"mexican_train"`` or ``"block"``
    config: dict[str, Any]  #: the resolved game config (``GameConfig.to_dict()``)
    seed: int  #: the ``reset`` seed of the episode
    agents: list[str]  #: one name per seat (``"planner"``, ``"human"``, a tournament label)
    versions: dict[str, Any]  #: ``{"mtrain_env": ..., "replay": REPLAY_VERSION}``
    steps: list[ReplayStep] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)  #: each round's public ``round_result``
    final: dict[str, Any] | None = None  #: ``{"returns": [...], "scores": [...]}``; None if cut short
    options: dict[str, Any] = field(default_factory=dict)  #: the ``reset`` options (a fixed deal...)
    reward: str | None = None  #: the env's reward mode (None: the game's default)
    #: the index of the decision that ended each round (parallel to ``rounds``)
    round_ends: list[int] = field(default_factory=list)

    @property
    def num_players(self) -> int:
        return int(self.config["num_players"])

    @property
    def finished(self) -> bool:
        return self.final is not None


class DamagedReplayError(ValueError):
    """A replay file that cannot be read: not UTF-8, not JSON Lines, or not this format."""

    def __init__(self, path: str | os.PathLike[str], line: int, reason: str) -> None:
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = str(path)
        self.line = line
        self.reason = reason


class ReplayMismatchError(AssertionError):
    """Re-simulating a replay gave something else than the file says, at ``step_index``."""

    def __init__(self, step_index: int, expected: Any, got: Any, what: str = "step") -> None:
        super().__init__(
            f"step {step_index}: {what}: the replay says {expected!r}, re-simulation gives {got!r}"
        )
        self.step_index = step_index
        self.expected = expected
        self.got = got
        self.what = what


# ------------------------------------------------------------------- the envs
def game_name(env: Any) -> str:
    """``"mexican_train"`` or ``"block"``: the game of a (raw or wrapped) env of this package."""
    from mtrain_env.block.env import raw_env as block_raw_env
    from mtrain_env.mexican_train.env import raw_env as mexican_raw_env

    raw = env.unwrapped
    if isinstance(raw, mexican_raw_env):
        return "mexican_train"
    if isinstance(raw, block_raw_env):
        return "block"
    raise TypeError(f"not an env of this package: {type(raw).__name__}")


def make_env(game: str, config: dict[str, Any], reward: str | None = None, **kwargs: Any) -> Any:
    """A fresh raw env of ``game`` with ``config`` (``ValueError``/``TypeError`` if invalid)."""
    if game not in GAMES:
        raise ValueError(f"game must be one of {GAMES}, got {game!r}")
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict, got {type(config).__name__}")
    if reward is not None:
        kwargs["reward"] = reward
    if game == "mexican_train":
        from mtrain_env.mexican_train.env import raw_env as mexican_raw_env

        return mexican_raw_env(**config, **kwargs)
    from mtrain_env.block.env import raw_env as block_raw_env

    return block_raw_env(**config, **kwargs)


def describe_move(env: Any, seat: int, action: int) -> str:
    """The move of ``seat``'s ``action`` in words, seats absolute: ``"3|5 on player_1's train"``,
    ``"6|6 on the Mexican train"``, ``"3|5 on the left end"``, ``"draw"``, ``"pass"``."""
    raw = env.unwrapped
    a = raw.decode_action(action)
    if a.kind != "play":
        return str(a.kind)
    tile = f"{a.tile[0]}|{a.tile[1]}"
    if not hasattr(a, "train"):  # block dominoes: a line end
        return f"{tile} on the {'right' if a.end else 'left'} end"
    n = raw.config.num_players
    if a.train == n:
        return f"{tile} on the Mexican train"
    return f"{tile} on player_{(seat + a.train) % n}'s train"


def published_round_result(env: Any) -> dict[str, Any] | None:
    """The round result the last step published (in every live agent's infos), if any."""
    for info in env.unwrapped.infos.values():
        return info.get(ROUND_RESULT_KEY)
    return None


def episode_over(raw: Any) -> bool:
    """Whether every live agent of the raw env is done."""
    return bool(raw.agents) and all(raw.terminations[a] or raw.truncations[a] for a in raw.agents)


def final_results(raw: Any, returns: Sequence[float], rounds: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Final returns (rewards summed per seat) and scores (round scores summed per seat)."""
    scores = [sum((float(r["scores"][i]) for r in rounds), 0.0) for i in range(raw.config.num_players)]
    return {"returns": [float(x) for x in returns], "scores": scores}


def jsonable(value: Any, what: str) -> Any:
    """``value`` through a strict JSON round trip (no NaN, plain types); ``ValueError`` if not JSON."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as err:
        raise ValueError(f"{what} must be plain JSON values: {err}") from None
