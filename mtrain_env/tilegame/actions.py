"""What counts as an integer where the package reads one from its user: actions, pips and seeds.

One definition, shared by ``step``, the action space's ``contains``, the wrappers, the
codecs, the deal parser and ``reset(seed)``, so they all accept and refuse exactly the same values:

* accepted: a Python ``int`` (or a subclass such as an ``IntEnum`` member), a numpy integer
  scalar of any dtype (``int8`` .. ``int64``, ``uint8`` .. ``uint64``) and a 0-d array of one;
* refused: ``bool`` (``True`` is a slip, not action 1), floats (even integral ones: ``2.0``
  usually means a policy's output was not rounded on purpose), strings, ``None``, arrays of
  any other shape or dtype, and numpy's ``timedelta64`` (a numpy integer subclass that is
  a duration, not a number).

And one family of exceptions for an action the env (or a core) refuses, so a caller can
tell "the agent chose a bad action" from an engine bug that happens to raise a
``ValueError`` or ``TypeError`` after the move was judged legal (the play loop blames the
agent for the first only). Each is a subclass of the built-in error it always was:

* :class:`RefusedActionError`: the base; never raised itself;
* :class:`ActionTypeError` (a ``TypeError``): not an accepted integer;
* :class:`ActionRangeError` (a ``ValueError``): an integer outside the action space;
* :class:`IllegalMoveError` (a ``ValueError``): an action of the space that the rules do
  not allow now (the message names the rule), or any action but ``None`` from an agent
  that is terminated or truncated.

A refusal leaves the state unchanged. No framework import (the pure cores use it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "ActionRangeError",
    "ActionTypeError",
    "IllegalMoveError",
    "RefusedActionError",
    "check_seed",
    "coerce_action",
    "integer_value",
    "short_repr",
]

#: longest value representation quoted in an error message
_REPR_LIMIT = 60


class RefusedActionError(Exception):
    """The env or a rules core refused an action and changed nothing: the caller's
    (the agent's) mistake, not the engine's. Catch this class, never a bare ``ValueError``,
    to tell the two apart."""


class ActionTypeError(RefusedActionError, TypeError):
    """An action that is not an accepted integer (see the module): a ``TypeError``."""


class ActionRangeError(RefusedActionError, ValueError):
    """An integer outside the action space: a ``ValueError``."""


class IllegalMoveError(RefusedActionError, ValueError):
    """A move that the rules do not allow now (a ``ValueError`` naming the rule)."""


def integer_value(x: Any) -> int | None:
    """``x`` as a Python int if it is an accepted integer (see the module), else ``None``."""
    if type(x) is int:
        return x
    if isinstance(x, int):
        return None if isinstance(x, bool) else int(x)
    if isinstance(x, np.integer):
        return None if isinstance(x, np.timedelta64) else int(x)
    if isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu":
        return int(x)
    return None


def check_seed(seed: Any) -> int:
    """A ``reset`` seed as a Python int: an accepted integer (see the module) ``>= 0``, as
    Gymnasium and PettingZoo ask. ``TypeError`` for anything else (``1.5``, ``"3"``,
    ``True``), ``ValueError`` for a negative int; both name ``seed`` (numpy's own errors
    say "expected non-negative integer" or name ``SeedSequence``). ``None`` is the
    caller's to handle (fresh entropy)."""
    value = integer_value(seed)
    if value is None:
        kind = type(seed).__name__
        raise TypeError(f"seed must be a non-negative int or None, got {short_repr(seed)} ({kind})")
    if value < 0:
        raise ValueError(f"seed must be a non-negative int or None, got {value}")
    return value


def short_repr(x: Any) -> str:
    """``repr(x)`` cut to a readable length, for error messages."""
    text = repr(x)
    return text if len(text) <= _REPR_LIMIT else text[: _REPR_LIMIT - 3] + "..."


def coerce_action(action: Any, num_actions: int) -> int:
    """``action`` as a Python int in ``0 .. num_actions - 1``.

    :class:`ActionTypeError` (a ``TypeError``) for a value that is not an accepted integer
    (see the module), :class:`ActionRangeError` (a ``ValueError``) for an integer outside
    ``Discrete(num_actions)``; both name the value and the space.
    """
    value = integer_value(action)
    if value is None:
        hint = "; None is only the action of a terminated or truncated agent" if action is None else ""
        raise ActionTypeError(
            f"action {short_repr(action)} ({type(action).__name__}) is not in the action space "
            f"Discrete({num_actions}): an action is an int (a Python or numpy integer, or a "
            f"0-d integer array){hint}"
        )
    if not 0 <= value < num_actions:
        raise ActionRangeError(
            f"action {short_repr(action)} is outside the action space Discrete({num_actions}) "
            f"(0 .. {num_actions - 1})"
        )
    return value
