"""Our wrappers (``mtrain_env.tilegame.wrappers``) behave as PettingZoo's stock ones for every
action in the action space, and refuse the others clearly.

They are written on PettingZoo's public API (not subclasses of its wrappers), so these
tests play both stacks side by side: the same AEC trace for legal actions (Python ints,
numpy integers of every dtype, 0-d arrays) and illegal in-space ones (the game ends, the
offender gets -1), the same errors for calls before ``reset()`` and the same warnings
after the end, in both games. The one documented difference: an action outside the
space, or not an integer, raises the bare env's own ``TypeError``/``ValueError`` (naming
the action and the space) where the stock ``AssertOutOfBoundsWrapper`` asserts. (Ours are
the ``RefusedActionError`` subclasses of those two; outcomes name the built-in class.)
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from pettingzoo import AECEnv
from pettingzoo.utils import BaseWrapper, wrappers
from pettingzoo.utils.env_logger import EnvLogger

import mtrain_env
import mtrain_env.block
from mtrain_env.tilegame import wrappers as ours_module
from mtrain_env.tilegame.actions import (
    ActionRangeError,
    ActionTypeError,
    IllegalMoveError,
    RefusedActionError,
)

GAMES = [
    pytest.param(mtrain_env.raw_env, {"num_players": 3, "rounds": 2}, id="mexican"),
    pytest.param(mtrain_env.block.raw_env, {"match": True}, id="block-match"),
]


def _stock(make_raw: Callable[..., AECEnv], **kwargs: Any) -> Any:
    """PettingZoo's classic stack around a bare env."""
    env = wrappers.TerminateIllegalWrapper(make_raw(**kwargs), illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def _ours(make_raw: Callable[..., AECEnv], **kwargs: Any) -> Any:
    return ours_module.wrap(make_raw(**kwargs), illegal_reward=-1)


def _snapshot(env: Any) -> tuple:
    obs, reward, term, trunc, info = env.last()
    return (
        obs["observation"].tobytes(),
        obs["action_mask"].tobytes(),
        reward,
        type(reward),
        term,
        trunc,
        info["action_mask"].tobytes(),
        env.agent_selection,
        dict(env.rewards),
        dict(env.terminations),
        dict(env.truncations),
        dict(env._cumulative_rewards),
        list(env.agents),
        env.num_agents,
    )


def _outcome(call: Callable[[], Any]) -> tuple[str, str]:
    """(exception type, message) of ``call``, or ('', its warnings) if it returned.

    A refusal of ours (a ``RefusedActionError``) is named by the built-in class it subclasses
    (``ValueError``, ``TypeError``), as the stock stack's errors are. PettingZoo's wrappers
    warn through ``EnvLogger`` (a logger, whose messages it also queues) and Python's
    ``warnings``; both are collected.
    """
    EnvLogger.flush()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except RefusedActionError as err:
            builtin = next(c for c in type(err).__mro__ if c.__module__ == "builtins")
            return builtin.__name__, str(err)
        except Exception as err:  # the type and message are compared
            return type(err).__name__, str(err)
    return "", " | ".join([*map(str, EnvLogger.mqueue), *(str(w.message) for w in caught)])


#: every numpy integer dtype: each holds a valid action as well as a Python int does
INT_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def _as_numpy(action: Any, k: int) -> Any:
    """``action`` as the ``k``-th (cyclically) numpy integer dtype that holds it, every other
    time as a 0-d array."""
    fits = [t for t in INT_DTYPES if np.iinfo(t).max >= int(action)]
    value = fits[k % len(fits)](action)
    return np.array(value) if k % 2 else value


@pytest.mark.parametrize(("make_raw", "kwargs"), GAMES)
@pytest.mark.parametrize("seed", range(6))
def test_wrappers_match_pettingzoo_wrappers(make_raw: Callable[..., AECEnv], kwargs: dict, seed: int) -> None:
    """Same actions (legal ones, numpy integers of every dtype, and an illegal one at a random
    step) -> same AEC trace."""
    ours, stock = _ours(make_raw, **kwargs), _stock(make_raw, **kwargs)
    ours.reset(seed=seed)
    stock.reset(seed=seed)
    rng = np.random.default_rng(seed)
    illegal_at = int(rng.integers(5, 120)) if seed % 2 else -1
    illegal_done = False
    for step, (a, b) in enumerate(zip(ours.agent_iter(), stock.agent_iter(), strict=True)):
        assert a == b
        snap = _snapshot(ours)
        assert snap == _snapshot(stock)
        term, trunc = snap[4], snap[5]
        if term or trunc:
            action = None
        else:
            mask = np.frombuffer(snap[1], dtype=np.int8)
            illegal = step >= illegal_at >= 0 and not illegal_done and (mask == 0).any()
            pool = np.flatnonzero(mask == 0) if illegal else np.flatnonzero(mask)
            illegal_done = illegal_done or bool(illegal)
            action = rng.choice(pool)  # a numpy integer: the checked (slow) paths
            action = int(action) if step % 3 else _as_numpy(action, step // 3)
        assert _outcome(lambda a=action: ours.step(a)) == _outcome(lambda a=action: stock.step(a))
    assert not stock.agents and not ours.agents
    assert ours.unwrapped.state_dict() == stock.unwrapped.state_dict()
    assert illegal_done == (seed % 2 == 1)


@pytest.mark.parametrize(("make_raw", "kwargs"), GAMES)
def test_illegal_move_ends_the_game_with_minus_one_for_the_offender(
    make_raw: Callable[..., AECEnv], kwargs: dict
) -> None:
    env = _ours(make_raw, **kwargs)
    env.reset(seed=3)
    obs, *_ = env.last()
    offender = env.agent_selection
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    assert "Illegal move" in _outcome(lambda: env.step(illegal))[1]
    assert all(env.terminations.values()) and all(env.truncations.values())
    assert env.rewards[offender] == -1.0
    assert all(r == 0 for a, r in env.rewards.items() if a != offender)
    assert env._cumulative_rewards[offender] == -1.0
    seen = []
    for agent in env.agent_iter():
        _, reward, term, trunc, _ = env.last()
        assert term and trunc
        seen.append((agent, reward))
        env.step(None)
    assert sorted(a for a, _ in seen) == sorted(env.possible_agents)
    assert dict(seen)[offender] == -1.0


@pytest.mark.parametrize(("make_raw", "kwargs"), GAMES)
@pytest.mark.parametrize(
    ("action", "error"),
    [
        pytest.param(-1, "ValueError", id="minus-1"),
        pytest.param("n", "ValueError", id="n"),
        pytest.param(np.int64(-2), "ValueError", id="np-minus-2"),
        pytest.param(1.5, "TypeError", id="float"),
        pytest.param(None, "TypeError", id="none"),
        pytest.param("x", "TypeError", id="str"),
        pytest.param(True, "TypeError", id="true"),
        pytest.param(np.array([0]), "TypeError", id="array-1d"),
    ],
)
def test_out_of_space_actions_raise_the_raw_envs_error_where_pettingzoo_asserts(
    make_raw: Callable[..., AECEnv], kwargs: dict, action: Any, error: str
) -> None:
    """The documented deviation: ours raise the bare env's own clear error, the stock stack
    a bare ``AssertionError`` (or, for ``True``, numpy's "truth value" error); nothing changes."""
    ours, stock, raw = _ours(make_raw, **kwargs), _stock(make_raw, **kwargs), make_raw(**kwargs)
    for env in (ours, stock, raw):
        env.reset(seed=0)
    if isinstance(action, str) and action == "n":
        action = int(ours.action_space(ours.agent_selection).n)
    before = ours.unwrapped.state_dict()
    outcome = _outcome(lambda: ours.step(action))
    assert outcome == _outcome(lambda: raw.step(action))  # word for word
    assert outcome[0] == error
    with pytest.raises(ActionRangeError if error == "ValueError" else ActionTypeError):
        ours.step(action)
    assert "action space Discrete(" in outcome[1] and ours.agent_selection in outcome[1], outcome
    assert _outcome(lambda: stock.step(action))[0] in ("AssertionError", "ValueError")
    assert ours.unwrapped.state_dict() == before
    assert not any(ours.terminations.values())  # a bug in the caller is not a move: no -1


@pytest.mark.parametrize(("make_raw", "kwargs"), GAMES)
def test_uint64_and_every_integer_dtype_are_accepted(make_raw: Callable[..., AECEnv], kwargs: dict) -> None:
    """A legal action of any numpy integer dtype plays as the same Python int does (the stock
    ``Discrete.contains`` refuses ``uint64``; our ``FastDiscrete`` holds what ``step`` takes)."""
    for k in range(2 * len(INT_DTYPES)):
        ours, by_int = _ours(make_raw, **kwargs), _ours(make_raw, **kwargs)
        ours.reset(seed=k)
        by_int.reset(seed=k)
        action = int(np.flatnonzero(ours.last()[0]["action_mask"])[-1])
        numpy_action = _as_numpy(action, k)
        assert ours.action_space(ours.agent_selection).contains(numpy_action)
        ours.step(numpy_action)
        by_int.step(action)
        assert _snapshot(ours) == _snapshot(by_int)
    assert not ours.action_space(ours.agent_selection).contains(True)  # gymnasium's takes it for 1


@pytest.mark.parametrize(("make_raw", "kwargs"), GAMES)
def test_dead_agent_action_is_refused_by_name(make_raw: Callable[..., AECEnv], kwargs: dict) -> None:
    """After the game ends, a dead agent's only action is None: anything else is a ValueError
    naming the action and the agent (PettingZoo's names neither), in both stacks' place."""
    env = _ours(make_raw, **kwargs)
    env.reset(seed=5)
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))  # illegal: the game ends
    agent = env.agent_selection
    for action in (0, np.int64(0), "x", 1.5):
        kind, message = _outcome(lambda a=action: env.step(a))
        assert kind == "ValueError" and agent in message and "None" in message, message
        with pytest.raises(IllegalMoveError):
            env.step(action)
    env.step(None)
    assert agent not in env.agents


@pytest.mark.parametrize(("make_raw", "kwargs"), GAMES)
def test_calls_before_reset_fail_as_pettingzoo(make_raw: Callable[..., AECEnv], kwargs: dict) -> None:
    ours, stock = _ours(make_raw, **kwargs), _stock(make_raw, **kwargs)
    calls: list[Callable[[Any], Any]] = [
        lambda e: e.step(0),
        lambda e: e.observe(e.possible_agents[0]),
        lambda e: e.render(),
        lambda e: e.state(),
        lambda e: e.agent_iter(),
        lambda e: e.last(),
    ]
    calls += [lambda e, n=name: getattr(e, n) for name in sorted(ours_module._NEEDS_RESET)]
    for call in calls:
        got = _outcome(lambda c=call: c(ours))
        assert got[0] in ("AssertionError", "AttributeError"), got
        assert got == _outcome(lambda c=call: c(stock))
    assert ours.possible_agents == stock.possible_agents  # other attributes pass through


@pytest.mark.parametrize(("make_raw", "kwargs"), GAMES)
def test_agent_iter_needs_a_step_and_a_finished_game_warns(
    make_raw: Callable[..., AECEnv], kwargs: dict
) -> None:
    outcomes = []
    for env in (_ours(make_raw, **kwargs), _stock(make_raw, **kwargs)):
        env.reset(seed=1)
        it = iter(env.agent_iter())
        next(it)
        outcomes.append(_outcome(lambda it=it: next(it)))  # no step in between
        env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
        for _ in env.agent_iter():  # play to the end
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        outcomes.append(_outcome(lambda env=env: env.step(None)))
        outcomes.append(_outcome(lambda env=env: list(env.agent_iter())))
    half = len(outcomes) // 2
    assert outcomes[:half] == outcomes[half:]
    assert outcomes[0] == ("AssertionError", "need to call step() or reset() in a loop over `agent_iter`")
    assert outcomes[1][0] == "" and outcomes[1][1]  # a warning, no error


@pytest.mark.parametrize(("make_raw", "kwargs"), GAMES)
def test_agent_iter_max_iter_and_fresh_iterations(make_raw: Callable[..., AECEnv], kwargs: dict) -> None:
    for env in (_ours(make_raw, **kwargs), _stock(make_raw, **kwargs)):
        env.reset(seed=2)
        iterable = env.agent_iter(max_iter=3)
        count = 0
        for _ in iterable:
            obs, *_ = env.last()
            env.step(int(np.flatnonzero(obs["action_mask"])[0]))
            count += 1
        assert count == 3
        assert len([env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0])) for _ in iterable]) == 3


def test_wrapped_env_is_a_public_base_wrapper_not_a_stock_subclass() -> None:
    """Ours build on ``BaseWrapper`` only: no dependence on the stock wrappers' internals."""
    env = mtrain_env.env()
    layers = []
    e: Any = env
    while isinstance(e, BaseWrapper):
        layers.append(type(e))
        e = e.env
    assert layers == [
        ours_module.OrderEnforcingWrapper,
        ours_module.AssertOutOfBoundsWrapper,
        ours_module.TerminateIllegalWrapper,
    ]
    for ours, stock in zip(
        layers,
        (wrappers.OrderEnforcingWrapper, wrappers.AssertOutOfBoundsWrapper, wrappers.TerminateIllegalWrapper),
        strict=True,
    ):
        assert not issubclass(ours, stock)
    assert isinstance(env, AECEnv) and env.unwrapped is e
    assert str(env) == str(_stock(mtrain_env.raw_env)) == str(e)


@pytest.mark.parametrize("reset_first", [False, True])
def test_wrapped_env_pickles(reset_first: bool) -> None:
    env = mtrain_env.env(num_players=3)
    if reset_first:
        env.reset(seed=4)
    clone = pickle.loads(pickle.dumps(env))
    if not reset_first:
        assert _outcome(lambda: clone.agents) == ("AttributeError", "agents cannot be accessed before reset")
        clone.reset(seed=4)
        env.reset(seed=4)
    assert _snapshot(clone) == _snapshot(env)
    action = int(np.flatnonzero(env.last()[0]["action_mask"])[0])
    env.step(action)
    clone.step(action)
    assert _snapshot(clone) == _snapshot(env)


class _TinyEnv(AECEnv):
    """A minimal AEC env without ``check_action``: two agents, ``Discrete(3)``, action 2 illegal."""

    metadata = {"name": "tiny_v0"}  # noqa: RUF012 - PettingZoo's class attribute

    def __init__(self) -> None:
        super().__init__()
        from gymnasium import spaces

        self.possible_agents = ["a", "b"]
        self.action_spaces = dict.fromkeys(self.possible_agents, spaces.Discrete(3))
        mask = spaces.Box(0, 1, (3,), dtype=np.int8)
        self.observation_spaces = dict.fromkeys(self.possible_agents, spaces.Dict({"action_mask": mask}))

    def observation_space(self, agent: str) -> Any:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = "a"

    def observe(self, agent: str) -> Any:
        return {"action_mask": np.array([1, 1, 0], dtype=np.int8)}

    def step(self, action: Any) -> None:
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            self._was_dead_step(action)
            return
        self.agent_selection = "b" if self.agent_selection == "a" else "a"


def test_an_env_without_check_action_gets_the_generic_clear_errors() -> None:
    """The wrappers stay generic: on a plain ``Discrete`` env they refuse with
    ``coerce_action``'s errors (naming the agent), pass numpy ints on, and end the game on
    an illegal action of the space."""
    env = ours_module.wrap(_TinyEnv(), illegal_reward=-1)
    env.reset()
    for action, error in [(3, "ValueError"), (-1, "ValueError"), (1.5, "TypeError"), (True, "TypeError")]:
        kind, message = _outcome(lambda a=action: env.step(a))
        assert kind == error and message.startswith("a: action ") and "Discrete(3)" in message, message
        with pytest.raises(ActionRangeError if error == "ValueError" else ActionTypeError):
            env.step(action)
    env.step(np.uint64(1))
    assert env.agent_selection == "b"
    env.step(2)  # illegal by the mask
    assert all(env.terminations.values()) and env.rewards["b"] == -1.0


#: the envs with ``try_step``: both games, and Mexican Train on the compiled backend
TRY_STEP_ENVS = [
    *GAMES,
    pytest.param(
        mtrain_env.raw_env, {"num_players": 3, "rounds": 2, "backend": "compiled"}, id="mexican-compiled"
    ),
]


@pytest.mark.parametrize(("make_raw", "kwargs"), TRY_STEP_ENVS)
def test_try_step_plays_a_legal_move_as_step_and_refuses_the_rest_untouched(
    make_raw: Callable[..., AECEnv], kwargs: dict
) -> None:
    if kwargs.get("backend") == "compiled":
        pytest.importorskip("numba")
    env, twin = make_raw(**kwargs), make_raw(**kwargs)
    assert env.try_step(0) is False  # before reset: nothing to play
    env.reset(seed=3)
    twin.reset(seed=3)
    rng = np.random.default_rng(3)
    played = refused = 0
    while env.agents:
        agent = env.agent_selection
        mask = env.observe(agent)["action_mask"]
        if env.terminations[agent] or env.truncations[agent]:
            assert env.try_step(0) is False and env.try_step(int(np.argmax(mask))) is False  # a dead agent
            env.step(None)
            twin.step(None)
            continue
        before = env.state_dict()
        for bad in np.flatnonzero(mask == 0)[:3].tolist():
            assert env.try_step(bad) is False
            refused += 1
        assert env.state_dict() == before  # a refusal changes nothing
        action = int(rng.choice(np.flatnonzero(mask)))
        assert env.try_step(action) is True
        twin.step(action)
        played += 1
        assert env.state_dict() == twin.state_dict() and env.agent_selection == twin.agent_selection
        assert env.rewards == twin.rewards and env.infos.keys() == twin.infos.keys()
    assert played > 20 and refused > 20


@pytest.mark.parametrize(("make_raw", "kwargs"), TRY_STEP_ENVS)
def test_an_illegal_move_is_judged_against_the_table_it_is_played_on(
    make_raw: Callable[..., AECEnv], kwargs: dict
) -> None:
    """An observation made before a snapshot was loaded does not judge the move: the mask of
    the table it is played on does (PettingZoo's wrapper reads the stale observation)."""
    if kwargs.get("backend") == "compiled":
        pytest.importorskip("numba")
    env = _ours(make_raw, **kwargs)
    env.reset(seed=5)
    first = env.unwrapped.state_dict()
    for _ in range(4):
        env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    later = env.unwrapped.state_dict()
    stale = env.last()[0]["action_mask"]  # observed on the later table
    env.unwrapped.load_state_dict(first)
    now = env.unwrapped.observe(env.agent_selection)["action_mask"]
    illegal_now = np.flatnonzero((stale == 1) & (now == 0))
    assert illegal_now.size, "the two tables should disagree on some move"
    agent = env.agent_selection
    env.step(int(illegal_now[0]))
    assert all(env.terminations.values()) and env.rewards[agent] == -1.0
    env.reset(seed=5)
    env.unwrapped.load_state_dict(later)
    env.last()
    env.unwrapped.load_state_dict(first)
    legal_now = int(np.flatnonzero(now)[0])
    env.step(legal_now)  # played on the first table, as a twin plays it
    twin = make_raw(**kwargs)
    twin.reset(seed=5)
    twin.load_state_dict(first)
    twin.step(legal_now)
    assert env.unwrapped.state_dict() == twin.state_dict()
