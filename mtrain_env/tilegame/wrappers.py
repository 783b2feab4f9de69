"""The three wrappers PettingZoo's classic envs use, written on PettingZoo's public API.

``TerminateIllegalWrapper``, ``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``
behave as PettingZoo's for every action in the action space, legal or illegal (same
results, warnings and error messages; the test ``tests/env/test_wrappers.py`` plays them step
for step against the stock wrappers): an illegal move ends the game with the illegal-move
reward for the offender. One deliberate difference:

* **an action outside the action space, or not an integer, raises a clear error** (the
  env's own :meth:`~mtrain_env.tilegame.aec.TileGameEnv.check_action`, else
  :func:`~mtrain_env.tilegame.actions.coerce_action` on a ``Discrete`` space): ``TypeError``
  for a value that is not an integer (``bool``, float, string, ``None`` for a live agent,
  an array that is not 0-d), ``ValueError`` for an integer out of range, each naming the
  value, the space and the agent, exactly as the bare env says it. The stock
  ``AssertOutOfBoundsWrapper`` answers all of these with a bare ``AssertionError: action
  is not in action space`` (and nothing at all under ``python -O``, where its ``assert``
  vanishes and ``-1`` would index the mask from its end), its ``TerminateIllegalWrapper``
  with numpy's "truth value of an array is ambiguous" for ``step(True)``. No check here is
  an ``assert`` statement, so ``python -O`` changes nothing. Any numpy integer dtype holding
  a valid action is accepted (the stock stack refuses ``uint64``), and passed on as a
  Python int.

And one where the stock wrappers cannot tell:

* **a move is judged against the table it is played on**: ``TerminateIllegalWrapper``
  reads the mask of the agent on turn at the step (the stock one, the agent's last
  observation, stale if a snapshot was loaded since). On our envs a legal plain-int step
  goes from ``OrderEnforcingWrapper`` straight to the env's ``try_step``, which judges
  and plays it in one call; observations come from the env itself (the two inner
  wrappers pass them on untouched). Same results; a step and its ``last()`` make two
  Python calls fewer (the inner wrappers' own), and the mask is read once instead of twice.

Otherwise:

* they rely only on PettingZoo's public surface: :class:`pettingzoo.utils.BaseWrapper`
  (``env``, ``unwrapped``, the AEC methods), the AEC attributes of the env, the env-author
  helpers of :class:`pettingzoo.AECEnv` that the stock wrappers call on the unwrapped env
  (``_accumulate_rewards``, ``_deads_step_first``, ``_was_dead_step``; our envs already
  use them) and ``EnvLogger`` for the stock messages; none reads another class's private
  state, so a PettingZoo release that renames its wrappers' internals cannot break them;
* ``BaseWrapper`` forwards every attribute through ``__getattr__``, one failed lookup per
  layer: the attributes read on every step (``agent_selection``, ``agents``, ``rewards``,
  ``terminations``, ``truncations``, ``infos``, ``_cumulative_rewards``) are read-only
  properties that read the unwrapped env directly, so a wrapped step costs little more
  than a bare one.

They are not subclasses of PettingZoo's wrapper classes (``isinstance`` against those is
false); they are ``BaseWrapper`` and ``AECEnv`` instances.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import Any

from gymnasium.spaces import Discrete
from pettingzoo import AECEnv
from pettingzoo.utils import BaseWrapper
from pettingzoo.utils.env_logger import EnvLogger

from mtrain_env.tilegame.actions import ActionRangeError, coerce_action, short_repr

__all__ = ["AssertOutOfBoundsWrapper", "OrderEnforcingWrapper", "TerminateIllegalWrapper", "wrap"]

#: AEC attributes read on every step, served from the unwrapped env
_HOT = ("agent_selection", "agents", "rewards", "terminations", "truncations", "infos", "_cumulative_rewards")

#: attributes ``OrderEnforcingWrapper`` refuses before ``reset()`` (PettingZoo's list)
_NEEDS_RESET = frozenset(
    ("rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents")
)


class _Wrapper(BaseWrapper):
    """``BaseWrapper`` whose hot AEC attributes read ``self._raw`` (the unwrapped env) directly.

    ``_num_actions`` is ``n`` when every agent has the action space ``Discrete(n)`` (then a
    Python int in ``0 .. n - 1`` is checked inline), else -1; ``_check_action`` turns an
    action into a Python int of the space or raises ``TypeError``/``ValueError`` (the
    :class:`~mtrain_env.tilegame.actions.RefusedActionError` subclasses).
    """

    _raw: Any

    def __init__(self, env: AECEnv) -> None:
        if not isinstance(env, AECEnv):
            raise TypeError(f"{type(self).__name__} wraps AEC environments, got {type(env).__name__}")
        super().__init__(env)
        self._raw = raw = env.unwrapped
        spaces = [env.action_space(a) for a in env.possible_agents]
        first = spaces[0] if spaces else None
        same = isinstance(first, Discrete) and int(first.start) == 0 and all(sp == first for sp in spaces)
        self._num_actions = int(first.n) if same and first is not None else -1
        check = getattr(raw, "check_action", None)
        self._check_action: Callable[[Any], Any] = check if callable(check) else self._generic_check

    def _generic_check(self, action: Any) -> Any:
        """For an env without ``check_action``: a ``Discrete`` space's action as a Python int
        (:func:`~mtrain_env.tilegame.actions.coerce_action`, whether or not every agent has
        the same space), another space's own test; a clear error either way."""
        agent = self._raw.agent_selection
        n = self._num_actions
        if n < 0:
            space = self.env.action_space(agent)
            if not (isinstance(space, Discrete) and int(space.start) == 0):
                if not space.contains(action):
                    raise ActionRangeError(
                        f"{agent}: action {short_repr(action)} is not in the action space {space}"
                    )
                return action
            n = int(space.n)
        try:
            return coerce_action(action, n)
        except (TypeError, ValueError) as err:
            raise type(err)(f"{agent}: {err}") from None

    def __str__(self) -> str:
        return str(self.env)  # as PettingZoo's classic wrappers: the env's name


for _name in _HOT:
    setattr(_Wrapper, _name, property(operator.attrgetter(f"_raw.{_name}")))


class TerminateIllegalWrapper(_Wrapper):
    """An illegal move (by the action mask) ends the game: the mover gets ``illegal_reward``,
    every other seat 0, and every agent is terminated and truncated.

    The mask is the one of the agent on turn at the moment of the step:
    ``observation["action_mask"]`` of a fresh observation for a dict observation, else
    ``info["action_mask"]``. (PettingZoo's wrapper reads the agent's last observation, the
    same mask unless the env was changed by other means since, e.g. a loaded snapshot; then
    this one judges the move against the table it is played on.) An env with
    ``try_step(action)`` (ours: :meth:`~mtrain_env.tilegame.aec.TileGameEnv.try_step`)
    plays a legal move and answers in one call, so a legal step encodes nothing more. An
    action that is not in the action space is refused first, with the env's own
    ``TypeError``/``ValueError`` (see the module): it is a bug in the caller, not a move.

    Args:
        illegal_reward: the offender's reward.
    """

    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        super().__init__(env)
        self._illegal_value = illegal_reward
        self._terminated = False  # the game was ended by an illegal move
        self._try_step: Callable[[int], bool] | None = _try_step_of(env)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._terminated = False
        self.env.reset(seed=seed, options=options)

    def _mask(self, agent: Any) -> Any:
        """The action mask of ``agent`` now (a fresh observation's, else its info's)."""
        obs = self.env.observe(agent)
        if isinstance(obs, dict):
            if "action_mask" not in obs:
                raise KeyError(
                    f"`action_mask` not found in dictionary observation: {obs}. Action mask must "
                    "either be in `observation['action_mask']` or `info['action_mask']` to use "
                    "TerminateIllegalWrapper."
                )
            return obs["action_mask"]
        info = self._raw.infos.get(agent, {})
        if "action_mask" not in info:
            raise KeyError(
                f"`action_mask` not found in info for non-dictionary observation: {info}. Action mask "
                "must either be in observation['action_mask'] or info['action_mask'] to use "
                "TerminateIllegalWrapper."
            )
        return info["action_mask"]

    def step(self, action: Any) -> None:
        raw = self._raw
        agent = raw.agent_selection
        try_step = self._try_step
        # the common case first: a legal plain int of the live agent, played by the env
        plain = type(action) is int and 0 <= action < self._num_actions
        if plain and try_step is not None and try_step(action):
            return
        mask = self._mask(agent)
        dead = raw.terminations.get(agent, True) or raw.truncations.get(agent, True)
        if not dead and not plain:
            action = self._check_action(action)  # raises for anything but an action of the space
        if dead and self._terminated:
            raw._was_dead_step(action)
        elif not dead and not mask[action]:
            EnvLogger.warn_on_illegal_move()
            raw._cumulative_rewards[agent] = 0
            raw.terminations = dict.fromkeys(raw.agents, True)
            raw.truncations = dict.fromkeys(raw.agents, True)
            raw.rewards = dict.fromkeys(raw.truncations, 0)
            raw.rewards[agent] = float(self._illegal_value)
            raw._accumulate_rewards()
            raw._deads_step_first()
            self._terminated = True
        elif dead or try_step is None or not try_step(action):  # a live agent's action is legal here
            self.env.step(action)


def _try_step_of(env: AECEnv) -> Callable[[int], bool] | None:
    """``env.try_step`` when ``env`` is an unwrapped env that has one (else ``None``)."""
    method = getattr(env, "try_step", None) if env is env.unwrapped else None
    return method if callable(method) else None


class AssertOutOfBoundsWrapper(_Wrapper):
    """Refuses an action outside the action space with a clear ``TypeError``/``ValueError``.

    Unlike PettingZoo's (a bare ``AssertionError``, gone under ``python -O``), the error is
    the env's own, naming the action, the space and the agent (see the module). A live
    agent's numpy integer is passed on as a Python int; a terminated or truncated agent's
    action goes to the env untouched (``None`` steps it; anything else is refused there).
    """

    def step(self, action: Any) -> None:
        if not (type(action) is int and 0 <= action < self._num_actions):
            raw = self._raw
            agent = raw.agent_selection
            if not (raw.terminations.get(agent, True) or raw.truncations.get(agent, True)):
                action = self._check_action(action)
        self.env.step(action)


class _NotReset:
    """Stands in for the unwrapped env until ``reset()``: every read fails, so the wrapper's
    ``__getattr__`` answers with the "cannot be accessed before reset" error."""

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


class OrderEnforcingWrapper(_Wrapper):
    """Checks that the AEC API is used in order.

    * ``AttributeError`` when ``rewards``, ``terminations``, ``truncations``, ``infos``,
      ``agent_selection``, ``num_agents`` or ``agents`` is read before ``reset()``;
    * ``AssertionError`` when ``render()``, ``step()``, ``observe()``, ``state()`` or
      ``agent_iter()`` is called before ``reset()``, and when a loop over ``agent_iter()``
      goes on without a ``step()``;
    * a warning when ``step()`` is called once no agent is left.
    """

    def __init__(self, env: AECEnv) -> None:
        self._has_reset = False
        self._has_updated = False  # a step or reset happened since agent_iter's last agent
        super().__init__(env)
        self._raw = _NotReset()
        # AssertOutOfBoundsWrapper passes observations on untouched, and an action of the
        # space too: calls skip it (and its frame) when it is the next layer
        inner = env.env if type(env) is AssertOutOfBoundsWrapper else env
        self._inner_step: Callable[[Any], None] = inner.step
        # TerminateIllegalWrapper passes observations on untouched too, and has nothing to do
        # on a legal move: observations come from the env itself, and a plain int goes to the
        # env's try_step first (TerminateIllegalWrapper.step only when it refuses)
        judge = inner if type(inner) is TerminateIllegalWrapper else None
        observer = judge.env if judge is not None else inner
        self._inner_observe: Callable[[Any], Any] = observer.observe
        self._try_step: Callable[[int], bool] | None = judge._try_step if judge is not None else None

    def __getattr__(self, name: str) -> Any:
        if name in _NEEDS_RESET and not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return super().__getattr__(name)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._has_reset = True
        self._has_updated = True
        self.env.reset(seed=seed, options=options)
        self._raw = self.env.unwrapped

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not self._raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            if type(action) is int and 0 <= action < self._num_actions:
                try_step = self._try_step
                if try_step is None or not try_step(action):
                    self._inner_step(action)
            else:
                self.env.step(action)

    def observe(self, agent: Any) -> Any:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self._inner_observe(agent)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last``, reading the unwrapped env's bookkeeping directly."""
        if not self._has_reset:
            return super().last(observe)  # the "before reset" errors
        raw = self._raw
        agent = raw.agent_selection
        if agent is None:
            raise AssertionError("last(): no agent is selected")
        return (
            self._inner_observe(agent) if observe else None,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )

    def render(self) -> Any:
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return self.env.render()

    def state(self) -> Any:
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        return self.env.state()

    def agent_iter(self, max_iter: int = 2**63) -> _OrderEnforcingIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderEnforcingIterable(self, max_iter)


class _OrderEnforcingIterable:
    """``agent_iter()``: each ``iter()`` starts a fresh count of ``max_iter`` agents."""

    def __init__(self, env: OrderEnforcingWrapper, max_iter: int) -> None:
        self.env = env
        self.max_iter = max_iter

    def __iter__(self) -> _OrderEnforcingIterator:
        return _OrderEnforcingIterator(self.env, self.max_iter)


class _OrderEnforcingIterator(Iterator[Any]):
    """The agent on turn while agents are left, at most ``max_iter`` times; asserts that the
    loop stepped (or reset) the env since the previous agent."""

    def __init__(self, env: OrderEnforcingWrapper, max_iter: int) -> None:
        self.env = env
        self.iters_til_term = max_iter

    def __next__(self) -> Any:
        env = self.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        agent = env.agent_selection
        if not env._has_updated:  # raised, not asserted: the same under python -O
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        env._has_updated = False
        return agent


def wrap(env: AECEnv, illegal_reward: float = -1.0) -> AECEnv:
    """Wrap ``env`` exactly as PettingZoo's classic envs are."""
    env = TerminateIllegalWrapper(env, illegal_reward=illegal_reward)
    env = AssertOutOfBoundsWrapper(env)
    return OrderEnforcingWrapper(env)
