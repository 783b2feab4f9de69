"""Pieces every AEC adapter of this package needs, independent of the game.

* :class:`FastDiscrete`: ``Discrete`` with an O(1) ``contains`` for plain ints (PettingZoo's
  ``AssertOutOfBoundsWrapper`` calls it on every step, and gymnasium's version costs more
  than a whole game step).
* :func:`coerce_action`: the one validation of an incoming action (type, then range).
* :func:`rng_state` / :func:`rng_from_state`: a ``numpy.random.Generator`` as JSON and back,
  for ``state_dict``.
* :func:`check_options`: ``reset(options=...)`` must be a dict; unknown keys warn (the
  PettingZoo test suite passes arbitrary options).
* :func:`dict_observation_space`: the ``{"observation", "action_mask"}`` space.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = [
    "FastDiscrete",
    "check_options",
    "coerce_action",
    "dict_observation_space",
    "rng_from_state",
    "rng_state",
]


class FastDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``contains`` is a plain range check for Python ints."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self._size = int(n)

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return 0 <= x < self._size
        return super().contains(x)


def coerce_action(action: Any, num_actions: int) -> int:
    """``action`` as a Python int in ``0 .. num_actions - 1``.

    Accepts Python ints, numpy integer scalars and 0-d integer arrays; raises ``TypeError``
    for anything else (``None``, floats, bools) and ``ValueError`` out of range.
    """
    if type(action) is not int:
        if isinstance(action, np.integer) or (
            isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu"
        ):
            action = int(action)
        else:
            raise TypeError(f"an action must be an int in Discrete({num_actions}), got {action!r}")
    if not 0 <= action < num_actions:
        raise ValueError(f"action {action} is outside the action space Discrete({num_actions})")
    return action


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """A JSON-serializable copy of the generator's bit-generator state."""
    return copy.deepcopy(dict(rng.bit_generator.state))


def rng_from_state(state: Any) -> np.random.Generator:
    """A new generator restored from :func:`rng_state` output; ``ValueError`` if malformed."""
    rng = np.random.default_rng()
    try:
        rng.bit_generator.state = copy.deepcopy(state)
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"not a numpy bit-generator state: {err}") from None
    return rng


def check_options(options: Any, known: Iterable[str]) -> dict[str, Any]:
    """``options`` (``None`` -> ``{}``) checked to be a dict; unknown keys warn and are dropped."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict, got {type(options).__name__}")
    known = tuple(known)
    unknown = sorted(set(options) - set(known))
    if unknown:
        warnings.warn(f"ignoring unknown reset option(s) {unknown}; known: {list(known)}", stacklevel=3)
    return {k: v for k, v in options.items() if k in known}


def dict_observation_space(high: np.ndarray, num_actions: int) -> spaces.Dict:
    """``{"observation": Box(0, high) float32, "action_mask": Box(0, 1) int8}``."""
    return spaces.Dict(
        {
            "observation": spaces.Box(low=0.0, high=high, shape=high.shape, dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(num_actions,), dtype=np.int8),
        }
    )
