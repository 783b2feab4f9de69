"""Field checks of the run configurations, shared so that every trainer refuses the same values.

Each ``check_*`` function raises :class:`ConfigError` naming the field and saying what is
allowed; :class:`~training.run_config.TrainConfig` (SB3), :class:`~training.rllib.train.RLlibConfig`
and the self-play configurations (:mod:`training.selfplay.config`) call them one field at a
time, so a value one trainer refuses (``gamma=True``, ``seed=-5``) no trainer accepts. The
module imports no learning library: the command lines check a run before torch or Ray loads.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import agents
from agents.registry import resolve
from agents.spec import AgentSpec
from mtrain_env.mexican_train.core.config import GameConfig

__all__ = [
    "MAX_EVAL_DEALS",
    "MAX_LAYERS",
    "MAX_ROLLOUT",
    "MAX_WIDTH",
    "ConfigError",
    "byte_text",
    "check_agent",
    "check_agent_list",
    "check_bool",
    "check_choice",
    "check_int",
    "check_path",
    "check_real",
    "check_rollout",
    "check_seat",
    "check_sizes",
    "check_weights",
    "is_int",
    "is_real",
]

#: the largest seed numpy's legacy seeding (and SB3's) takes
MAX_SEED = 2**32 - 1
#: the widest hidden layer (``net_arch``) and the most hidden layers of a trainer's network:
#: 8x the default width (256) and 4x its depth (2), and still within the parameters a policy
#: file may hold (``agents.policy_net.MAX_PARAMETERS``, 100M) on the largest table with the
#: planner features (17 players, double-18: 85M). A larger network would train, but its
#: snapshots and checkpoints would not be read back (a test holds the two bounds together)
MAX_WIDTH = 2048
MAX_LAYERS = 8
#: the most rows one rollout may hold: ``n_envs x n_steps`` env steps in MaskablePPO's rollout
#: buffer (``mtrain train``), ``num_games x steps`` decisions in the self-play seat book
#: (``mtrain selfplay``, ``mtrain dev bench-selfplay``). 2**20 is 16x the largest rollout of a
#: command the repository ships (``mtrain selfplay --games 512 --rollout-steps 128``: 65,536
#: decisions; the guide's ``mtrain train`` runs hold 8 x 2000), 64x self-play's default
#: (256 x 64) and 512x ``mtrain train``'s (2048); on the default table (4 players, double-12)
#: it is 3.1 GiB of rollout buffer or 1.8 GiB of seat book. A fixed number, not a share of
#: this machine's memory: a run's configuration is valid, and resumes, on every machine
MAX_ROLLOUT = 1 << 20
#: the most duplicate deals per opponent of one evaluation (``eval_deals`` of ``mtrain train``
#: and ``mtrain selfplay``): an evaluation holds its rows in memory and stops the training
#: while it plays; 100,000 deals are 400,000 rounds at 4 players, hours of the fastest
#: opponent, against the defaults' 10 and 100
MAX_EVAL_DEALS = 100_000


class ConfigError(ValueError):
    """A bad configuration value, raised before anything runs or is written.

    ``field`` names the field (``game.num_players`` ... ``game.flags`` for the game's
    keywords), ``message`` says what is wrong and what is allowed.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def is_int(x: Any) -> bool:
    """An int (Python or numpy), and not a bool (``True`` is no count)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def is_real(x: Any) -> bool:
    """An int or a float (Python or numpy), and not a bool."""
    return is_int(x) or isinstance(x, (float, np.floating))


def check_int(field: str, value: Any, low: int, high: int | None = None, note: str = "") -> None:
    """``value`` is an int in ``low..high`` (no upper bound if ``high`` is None)."""
    text = f"an int >= {low}" if high is None else f"an int in {low}..{high}"
    if note:
        text += f" ({note})"
    if not is_int(value) or value < low or (high is not None and value > high):
        raise ConfigError(field, f"must be {text}, got {value!r}")


def check_real(
    field: str, value: Any, low: float, high: float | None = None, low_open: bool = False, note: str = ""
) -> None:
    """``value`` is a finite number in ``[low, high]`` (``(low, high]`` if ``low_open``)."""
    if low_open:
        text = f"> {low:g}" if high is None else f"in ({low:g}, {high:g}]"
    else:
        text = f">= {low:g}" if high is None else f"in [{low:g}, {high:g}]"
    if note:
        text += f" ({note})"
    ok = is_real(value) and math.isfinite(value)
    ok = ok and (value > low if low_open else value >= low) and (high is None or value <= high)
    if not ok:
        raise ConfigError(field, f"must be a finite number {text}, got {value!r}")


def check_bool(field: str, value: Any) -> None:
    """``value`` is ``True`` or ``False`` (not ``"yes"``, not ``1``)."""
    if not isinstance(value, bool):
        raise ConfigError(field, f"must be a bool, got {value!r}")


def check_choice(field: str, value: Any, choices: Sequence[str]) -> None:
    """``value`` is one of ``choices``."""
    if value not in choices:
        raise ConfigError(field, f"must be one of {', '.join(choices)}; got {value!r}")


def check_path(field: str, value: Any) -> None:
    """``value`` is a non-empty path (``""`` would be the current directory)."""
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        raise ConfigError(field, f"must be a directory path, got {value!r}")


def check_seat(field: str, seat: Any, num_players: int, modes: Sequence[str]) -> None:
    """``seat`` is one of ``modes`` (``"random"`` ...) or a seat index of the table."""
    if isinstance(seat, str) and seat in modes:
        return
    if not (is_int(seat) and 0 <= seat < num_players):
        raise ConfigError(
            field,
            f"must be {' or '.join(modes)} or a seat index in 0..{num_players - 1} "
            f"({num_players} players); got {seat!r}",
        )


def check_sizes(field: str, value: Any) -> None:
    """``value`` is a list of 1..:data:`MAX_LAYERS` hidden layer sizes, each an int in
    1..:data:`MAX_WIDTH`."""
    ok = isinstance(value, (list, tuple)) and 1 <= len(value) <= MAX_LAYERS
    if not ok or not all(is_int(x) and 1 <= x <= MAX_WIDTH for x in value):
        text = f"needs 1..{MAX_LAYERS} hidden layer sizes, each an int in 1..{MAX_WIDTH} (e.g. [256, 256])"
        raise ConfigError(field, f"{text}, got {value!r}")


def byte_text(n: float) -> str:
    """A number of bytes for a message: ``"801.8 GiB"``."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024:
            return f"{n:.0f} bytes" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} PiB"


def check_rollout(
    field: str, counts: tuple[int, int], unit: str, store: str, nbytes: Callable[[], int]
) -> None:
    """The product of ``counts`` (the rows of one rollout, two checked ints) is at most
    :data:`MAX_ROLLOUT`; the refusal says how much memory ``store`` would take
    (``nbytes()``, called only then): ``field`` names both factors (``"n_envs x n_steps"``)."""
    a, b = counts
    if a * b > MAX_ROLLOUT:
        size = byte_text(nbytes())
        text = f"must be at most {MAX_ROLLOUT:,} {unit}, got {a} x {b} = {a * b:,} ({store} of {size})"
        raise ConfigError(field, text)


def check_agent(
    field: str, agent: Any, game: GameConfig, params: Mapping[str, Any] | None = None, params_field: str = ""
) -> None:
    """A registered agent (or ``module:Class``) that can be built (with ``params``) and can
    play ``game``'s table (:meth:`~agents.base.BaseAgent.check_game`: found now, not mid-run)."""
    if not isinstance(agent, str) or not agent:
        raise ConfigError(field, f"needs agent names, got {agent!r}")
    try:
        spec = AgentSpec(agent)  # a name, or a spec such as "mc[sims=50]"
        cls = agents.agent_class(spec.name)
    except (ImportError, ValueError) as err:
        raise ConfigError(field, str(err)) from None
    merged = {**spec.params, **(params or {})}  # the given parameters win over the spec's
    try:
        cls, merged = resolve(spec, params=params)
        built = cls(seed=0, **merged)
    except (TypeError, ValueError) as err:
        text = f"agent {agent!r} does not take the parameters {merged}: {err}"
        raise ConfigError(params_field or field, text) from None
    try:
        built.check_game(game)
    except ValueError as err:
        raise ConfigError(field, f"{agent}: {err}") from None


def check_weights(field: str, weights: Any, game: GameConfig) -> None:
    """``weights`` maps agents (:func:`check_agent`) to sampling weights, each a number > 0."""
    if not isinstance(weights, Mapping):
        raise ConfigError(field, f"must map agent names to weights, got {weights!r}")
    for name, weight in weights.items():
        check_agent(field, name, game)
        if not is_real(weight) or not math.isfinite(weight) or weight <= 0:
            raise ConfigError(field, f"the weight of {name!r} must be a number > 0, got {weight!r}")


def check_agent_list(field: str, names: Any, game: GameConfig) -> None:
    """``names`` is a list of agents (:func:`check_agent`), none twice."""
    if not isinstance(names, (list, tuple)):
        raise ConfigError(field, f"must be a list of agent names, got {names!r}")
    for name in names:
        check_agent(field, name, game)
    twice = sorted({x for x in names if list(names).count(x) > 1})
    if twice:
        raise ConfigError(field, f"names {twice} more than once")
