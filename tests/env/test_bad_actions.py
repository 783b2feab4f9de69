"""Every bad action gets one clear error, through ``raw_env`` and ``env()`` alike, also under ``-O``.

The table below (the audit's 45 and more) is stepped in both games, through the bare env
and through the wrapped one:

* out of the space (an integer out of range): ``ValueError`` (``ActionRangeError``); not an
  integer (``bool``, floats, strings, ``None`` for a live agent, arrays that are not 0-d,
  ...): ``TypeError`` (``ActionTypeError``). Each refusal is a ``RefusedActionError``, the
  one class the play loop blames an agent for (an engine bug is not one).
  The message names the value, ``Discrete(n)`` and the agent; it is word for word the same
  through ``env()`` as through ``raw_env``; nothing changes (the wrapped game is not ended:
  a caller's bug is not a move);
* an illegal action of the space: ``raw_env`` raises ``ValueError`` (``IllegalMoveError``)
  naming the action, the space and the rule broken; ``env()`` ends the game with -1 for the offender
  (``TerminateIllegalWrapper``), whatever the integer's type;
* a legal action of any integer type (every numpy dtype, 0-d arrays, ``IntEnum``) plays as
  the Python int does; a terminated agent's action other than ``None`` is refused by name.

``python -O`` removes ``assert`` statements: :func:`test_the_table_is_the_same_under_python_dash_o`
replays the whole table in a ``python -O`` subprocess and compares every outcome.
"""

from __future__ import annotations

import enum
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import mtrain_env
from mtrain_env.tilegame.actions import (
    ActionRangeError,
    ActionTypeError,
    IllegalMoveError,
    RefusedActionError,
    short_repr,
)
from tests import REPO

ROOT = REPO

#: (game id, raw env factory); both have fewer than 128 actions, so every dtype holds each one
GAMES: dict[str, Callable[[], Any]] = {
    "mexican": lambda: mtrain_env.raw_env(num_players=3, max_pips=6),
    "block": lambda: mtrain_env.block.raw_env(),
}
MAKERS: dict[str, Callable[[Callable[[], Any]], Any]] = {
    "raw_env": lambda make_raw: make_raw(),
    "env": lambda make_raw: mtrain_env.tilegame.wrappers.wrap(make_raw(), illegal_reward=-1),
}
SEED = 4


class _Index:
    """Has ``__index__`` (so ``operator.index`` takes it) but is not an integer type."""

    def __index__(self) -> int:
        return 1

    def __repr__(self) -> str:
        return "_Index()"


class _Int:
    """Has ``__int__`` only."""

    def __int__(self) -> int:
        return 1

    def __repr__(self) -> str:
        return "_Int()"


class _Color(enum.IntEnum):
    RED = 0


#: what each built-in error is refused as (a subclass of it)
REFUSAL = {"ValueError": ActionRangeError, "TypeError": ActionTypeError}


def _builtin_name(err: BaseException) -> str:
    """The built-in exception class ``err`` is an instance of (the refusal classes subclass one)."""
    return next(c.__name__ for c in type(err).__mro__ if c.__module__ == "builtins")


#: (id, value from n = the number of actions, expected error); each is refused by step
BAD_ACTIONS: list[tuple[str, Callable[[int], Any], type[Exception]]] = [
    # integers out of range: ValueError
    ("minus-1", lambda n: -1, ValueError),
    ("n", lambda n: n, ValueError),
    ("n+1", lambda n: n + 1, ValueError),
    ("1e9", lambda n: 10**9, ValueError),
    ("2**64", lambda n: 2**64, ValueError),
    ("-2**63", lambda n: -(2**63), ValueError),
    ("np.int8(-1)", lambda n: np.int8(-1), ValueError),
    ("np.int16(-1)", lambda n: np.int16(-1), ValueError),
    ("np.int32(n)", lambda n: np.int32(n), ValueError),
    ("np.int64(-1)", lambda n: np.int64(-1), ValueError),
    ("np.int64(n)", lambda n: np.int64(n), ValueError),
    ("np.uint16(n)", lambda n: np.uint16(n), ValueError),
    ("np.uint32(1e9)", lambda n: np.uint32(10**9), ValueError),
    ("np.uint64(max)", lambda n: np.uint64(2**64 - 1), ValueError),
    ("array(-1)", lambda n: np.array(-1), ValueError),
    ("array(n)", lambda n: np.array(n), ValueError),
    ("array(n, uint64)", lambda n: np.array(n, dtype=np.uint64), ValueError),
    # not integers: TypeError
    ("True", lambda n: True, TypeError),
    ("False", lambda n: False, TypeError),
    ("np.True_", lambda n: np.bool_(True), TypeError),
    ("np.False_", lambda n: np.bool_(False), TypeError),
    ("array(True)", lambda n: np.array(True), TypeError),
    ("1.5", lambda n: 1.5, TypeError),
    ("2.0", lambda n: 2.0, TypeError),
    ("-0.0", lambda n: -0.0, TypeError),
    ("nan", lambda n: float("nan"), TypeError),
    ("inf", lambda n: float("inf"), TypeError),
    ("np.float16(1)", lambda n: np.float16(1), TypeError),
    ("np.float32(3)", lambda n: np.float32(3), TypeError),
    ("np.float64(3)", lambda n: np.float64(3), TypeError),
    ("array(3.0)", lambda n: np.array(3.0), TypeError),
    ("complex", lambda n: complex(3, 0), TypeError),
    ("np.complex64", lambda n: np.complex64(3), TypeError),
    ("'3'", lambda n: "3", TypeError),
    ("'a'", lambda n: "a", TypeError),
    ("bytes", lambda n: b"\x03", TypeError),
    ("np.str_", lambda n: np.str_("3"), TypeError),
    ("array('3')", lambda n: np.array("3"), TypeError),
    ("None", lambda n: None, TypeError),
    ("[3]", lambda n: [3], TypeError),
    ("(3,)", lambda n: (3,), TypeError),
    ("{3}", lambda n: {3}, TypeError),
    ("dict", lambda n: {"action": 3}, TypeError),
    ("array([3])", lambda n: np.array([3]), TypeError),
    ("array([[3]])", lambda n: np.array([[3]]), TypeError),
    ("array([1, 2])", lambda n: np.array([1, 2]), TypeError),
    ("array([])", lambda n: np.array([], dtype=np.int64), TypeError),
    ("Fraction", lambda n: Fraction(3, 1), TypeError),
    ("Decimal", lambda n: Decimal(3), TypeError),
    ("object", lambda n: object(), TypeError),
    ("array(3, object)", lambda n: np.array(3, dtype=object), TypeError),
    ("timedelta64", lambda n: np.timedelta64(3), TypeError),
    ("datetime64", lambda n: np.datetime64(3, "D"), TypeError),
    ("range", lambda n: range(3), TypeError),
    ("__index__", lambda n: _Index(), TypeError),
    ("__int__", lambda n: _Int(), TypeError),
]

#: the types an illegal (in-space) action is tried as
ILLEGAL_KINDS: list[tuple[str, Callable[[int], Any]]] = [
    ("int", lambda a: a),
    ("np.int16", np.int16),
    ("np.uint64", np.uint64),
    ("array", np.array),
]

#: every type a legal action may come as
LEGAL_KINDS: list[tuple[str, Callable[[int], Any]]] = [
    *((t.__name__, t) for t in (np.int8, np.int16, np.int32, np.int64)),
    *((t.__name__, t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)),
    ("array(int8)", lambda a: np.array(a, dtype=np.int8)),
    ("array(uint64)", lambda a: np.array(a, dtype=np.uint64)),
    ("IntEnum", lambda a: enum.IntEnum("A", {"X": a})["X"] if a else _Color.RED),
]

RULE_RE = re.compile(r"\b[RB]\d{1,2}\b|one_double_per_turn|cover_own_double_on_it|double_opening")


# ------------------------------------------------------------------------ outcomes
def _fresh(game: str, make: str) -> Any:
    env = MAKERS[make](GAMES[game])
    env.reset(seed=SEED)
    return env


def bad_action_outcome(game: str, make: str, case: str) -> dict[str, Any]:
    """What stepping the table's ``case`` does: the error, and what its message names."""
    _, value, _ = next(row for row in BAD_ACTIONS if row[0] == case)
    env = _fresh(game, make)
    n = int(env.action_space(env.agent_selection).n)
    action = value(n)
    before = json.dumps(env.unwrapped.state_dict(), sort_keys=True)
    try:
        env.step(action)
    except (TypeError, ValueError, AssertionError, KeyError, RuntimeError) as err:
        message = str(err)
        error = _builtin_name(err)
        refusal = type(err).__name__ if isinstance(err, RefusedActionError) else ""
    else:
        message, error, refusal = "", "accepted", ""
    return {
        "error": error,
        "refusal": refusal,
        "message": message if case not in ("object",) else message.split(" at 0x")[0],
        "names_action": short_repr(action) in message,
        "names_space": f"Discrete({n})" in message,
        "names_agent": env.agent_selection in message,
        "unchanged": json.dumps(env.unwrapped.state_dict(), sort_keys=True) == before,
        "game_on": not any(env.terminations.values()),
    }


def _illegal_action(env: Any) -> int:
    legal = set(env.unwrapped.legal_actions())
    return next(a for a in range(env.unwrapped.config.num_actions) if a not in legal)


def illegal_outcome(game: str, make: str, kind: str) -> dict[str, Any]:
    """What an illegal in-space action of type ``kind`` does."""
    convert = dict(ILLEGAL_KINDS)[kind]
    env = _fresh(game, make)
    offender = env.agent_selection
    action = _illegal_action(env)
    before = json.dumps(env.unwrapped.state_dict(), sort_keys=True)
    try:
        env.step(convert(action))
    except ValueError as err:
        message = str(err)
        return {
            "error": type(err).__name__,
            "names_action": f"action {action} " in message,
            "names_space": f"Discrete({env.unwrapped.config.num_actions})" in message,
            "names_rule": bool(RULE_RE.search(message)),
            "unchanged": json.dumps(env.unwrapped.state_dict(), sort_keys=True) == before,
        }
    return {
        "error": "none",
        "all_terminated": all(env.terminations.values()),
        "offender_reward": env.rewards[offender],
        "others_zero": all(r == 0 for a, r in env.rewards.items() if a != offender),
    }


def legal_outcome(game: str, make: str, kind: str) -> bool:
    """Whether a legal action of type ``kind`` plays exactly as the same Python int."""
    convert = dict(LEGAL_KINDS)[kind]
    a, b = _fresh(game, make), _fresh(game, make)
    action = a.unwrapped.legal_actions()[-1]
    a.step(convert(action))
    b.step(action)
    return bool(
        a.unwrapped.state_dict() == b.unwrapped.state_dict() and a.agent_selection == b.agent_selection
    )


def all_outcomes() -> dict[str, Any]:
    """Every outcome of the tables, keyed ``game/make/row`` (what the ``-O`` run prints)."""
    out: dict[str, Any] = {"__debug__": __debug__}
    for game in GAMES:
        for make in MAKERS:
            for case, _, _ in BAD_ACTIONS:
                out[f"{game}/{make}/bad/{case}"] = bad_action_outcome(game, make, case)
            for kind, _ in ILLEGAL_KINDS:
                out[f"{game}/{make}/illegal/{kind}"] = illegal_outcome(game, make, kind)
            for kind, _ in LEGAL_KINDS:
                out[f"{game}/{make}/legal/{kind}"] = legal_outcome(game, make, kind)
    return out


# ---------------------------------------------------------------------------- tests
def test_the_table_is_big_enough() -> None:
    assert len(BAD_ACTIONS) >= 45
    assert len({case for case, _, _ in BAD_ACTIONS}) == len(BAD_ACTIONS)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize(("case", "value", "error"), BAD_ACTIONS, ids=[row[0] for row in BAD_ACTIONS])
def test_bad_action_gets_one_clear_error_in_both_stacks(
    game: str, case: str, value: Callable[[int], Any], error: type[Exception]
) -> None:
    raw = bad_action_outcome(game, "raw_env", case)
    wrapped = bad_action_outcome(game, "env", case)
    assert raw["error"] == error.__name__, raw
    assert raw["refusal"] == REFUSAL[error.__name__].__name__, raw  # the class the play loop blames
    assert raw["names_action"] and raw["names_space"] and raw["names_agent"], raw["message"]
    assert raw["unchanged"] and raw["game_on"]
    assert wrapped == raw  # the same error, word for word, and the game goes on


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("kind", [k for k, _ in ILLEGAL_KINDS])
def test_illegal_action_raises_on_raw_env_and_ends_the_wrapped_game(game: str, kind: str) -> None:
    raw = illegal_outcome(game, "raw_env", kind)
    assert raw == {
        "error": "IllegalMoveError",  # a ValueError
        "names_action": True,
        "names_space": True,
        "names_rule": True,
        "unchanged": True,
    }
    assert illegal_outcome(game, "env", kind) == {
        "error": "none",
        "all_terminated": True,
        "offender_reward": -1.0,
        "others_zero": True,
    }


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("kind", [k for k, _ in LEGAL_KINDS])
def test_legal_action_of_any_integer_type_plays(game: str, make: str, kind: str) -> None:
    assert legal_outcome(game, make, kind)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("make", MAKERS)
def test_terminated_agent_action_other_than_none_is_refused_by_name(game: str, make: str) -> None:
    env = _fresh(game, make)
    raw = env.unwrapped
    while not all(env.terminations.values()):  # to the end, by legal moves
        env.step(raw.legal_actions()[0])
    agent = env.agent_selection
    for action in (0, np.int64(1), "x", True):
        with pytest.raises(
            IllegalMoveError, match=rf"{agent} is terminated or truncated: the only valid action is None"
        ):
            env.step(action)
    while env.agents:
        env.step(None)
    if make == "raw_env":  # after the very end (the wrapper only warns, as PettingZoo's)
        with pytest.raises(RuntimeError, match="the episode is over"):
            env.step(None)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda e, a: e.observe(a), id="observe"),
        pytest.param(lambda e, a: e.action_space(a), id="action_space"),
        pytest.param(lambda e, a: e.observation_space(a), id="observation_space"),
        pytest.param(lambda e, a: e.unwrapped.observe_mask(a), id="observe_mask"),
        pytest.param(lambda e, a: e.unwrapped.public_view(a), id="public_view"),
    ],
)
def test_unknown_agent_name_is_a_value_error_listing_the_agents(
    game: str, make: str, call: Callable[[Any, Any], Any]
) -> None:
    env = _fresh(game, make)
    for name in ("nobody", "player_9", 0, None):
        with pytest.raises(ValueError) as err:
            call(env, name)
        assert repr(name) in str(err.value) and str(env.possible_agents) in str(err.value)
    with pytest.raises(TypeError, match=r"an agent is a name such as 'player_0', got \['player_0'\]"):
        call(env, ["player_0"])
    call(env, env.possible_agents[-1])  # a real name still works


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize(
    ("method", "call"),
    [
        ("legal_actions", lambda e: e.legal_actions()),
        ("observe_mask", lambda e: e.observe_mask("player_0")),
        ("public_view", lambda e: e.public_view("player_0")),
        ("observe", lambda e: e.observe("player_0")),
        ("step", lambda e: e.step(0)),
    ],
)
def test_calls_before_reset_raise_runtime_error(game: str, method: str, call: Callable[[Any], Any]) -> None:
    """``legal_actions()`` used to return ``[]`` before ``reset``."""
    with pytest.raises(RuntimeError, match=re.escape(f"call reset() before {method}()")):
        call(GAMES[game]())


def test_the_table_is_the_same_under_python_dash_o() -> None:
    """``python -O`` (no ``assert`` statements) gives exactly the same outcome for every row."""
    script = "import json, tests.env.test_bad_actions as t; print(json.dumps(t.all_outcomes()))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-O", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    optimized = json.loads(done.stdout.splitlines()[-1])  # after PettingZoo's logged warnings
    assert optimized.pop("__debug__") is False  # asserts were really gone
    here = json.loads(json.dumps(all_outcomes()))
    assert here.pop("__debug__") is True
    assert optimized.keys() == here.keys()
    differ = [key for key in here if optimized[key] != here[key]]
    assert not differ, [(key, here[key], optimized[key]) for key in differ[:5]]


#: the tables whose mask a caller must not edit: both backends of Mexican Train, block
MASK_TABLES: dict[str, Callable[[], Any]] = {
    "mexican-python": lambda: mtrain_env.raw_env(num_players=3, max_pips=6, backend="python"),
    "mexican-compiled": lambda: mtrain_env.raw_env(num_players=3, max_pips=6, backend="compiled"),
    "block": lambda: mtrain_env.block.raw_env(),
}


@pytest.mark.parametrize("table", MASK_TABLES)
def test_a_caller_cannot_edit_the_env_s_mask(table: str) -> None:
    """The mask handed out (``observe``, ``last``, ``infos``) is the one the env reads
    legality from: it is read-only, so a caller's edit fails loudly instead of making a legal
    move illegal (the compiled backend refused it) or ``legal_actions()`` wrong. Checked at
    the deal and after steps (the compiled backend's fused step builds its own mask)."""
    if table.endswith("compiled"):
        pytest.importorskip("numba")
    env = MASK_TABLES[table]()
    env.reset(seed=SEED)
    kept: list[tuple[np.ndarray, np.ndarray]] = []  # each step's mask, and a copy taken then
    for _ in range(40):  # past the compiled fast path's block of masks
        if all(env.terminations.values()):
            break
        agent = env.agent_selection
        legal = env.legal_actions()
        observed = env.observe(agent)["action_mask"]
        for mask in (observed, env.last()[0]["action_mask"], env.infos[agent]["action_mask"]):
            with pytest.raises(ValueError, match="read-only"):
                mask[legal[-1]] = 0
        assert env.legal_actions() == legal
        kept.append((observed, observed.copy()))
        env.step(legal[-1])
    assert len(kept) > 16
    for mask, then in kept:  # a mask kept by the caller is never written again
        np.testing.assert_array_equal(mask, then)
