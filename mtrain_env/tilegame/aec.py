"""Pieces every AEC adapter of this package needs, independent of the game.

* :class:`FastDiscrete`: ``Discrete`` with an O(1) ``contains`` for plain ints (an
  ``AssertOutOfBoundsWrapper`` checks actions against it, and gymnasium's version converts
  every value through numpy) that holds exactly the actions ``step`` accepts.
* :func:`coerce_action` (from :mod:`mtrain_env.tilegame.actions`): the one validation of
  an incoming action (type, then range).
* :func:`rng_state` / :func:`rng_from_state`: a ``numpy.random.Generator`` as JSON and back,
  for ``state_dict``.
* :func:`check_options`: ``reset(options=...)`` must be a dict; unknown keys warn (the
  PettingZoo test suite passes arbitrary options); :func:`seat_option` reads a seat from it.
* :func:`dict_observation_space`: the ``{"observation", "action_mask"}`` space.
* :class:`TileGameEnv`: the AEC adapter itself, shared by every game of the package.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Iterable
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from mtrain_env.tilegame.actions import IllegalMoveError, check_seed, coerce_action, integer_value, short_repr
from mtrain_env.tilegame.layout import FlatLayout, View
from mtrain_env.tilegame.snapshot import (
    bad_type,
    bad_value,
    check_json,
    check_keys,
    json_equal,
    read_finite,
    read_rng_state,
    req,
)

__all__ = [
    "ENV_STATE_KEY",
    "ROUND_RESULT_KEY",
    "FastDiscrete",
    "TileGameEnv",
    "check_options",
    "coerce_action",
    "dict_observation_space",
    "rng_from_state",
    "rng_state",
    "seat_option",
]


#: key of the AEC bookkeeping section in a ``state_dict``
ENV_STATE_KEY = "env"
#: ``infos[agent]`` key of the public result of the round that the last step ended
ROUND_RESULT_KEY = "round_result"
#: the keys of the ``env`` section, in the order ``state_dict`` writes them
ENV_KEYS = (
    "reward_mode",
    "rng",
    "agents",
    "rewards",
    "cumulative_rewards",
    "terminations",
    "truncations",
    "agent_selection",
    "skip_agent_selection",
    "round_result",
)


class FastDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``contains`` is a plain range check for Python ints.

    It holds exactly what ``step`` accepts (:mod:`mtrain_env.tilegame.actions`): any numpy
    integer dtype holding a value in range (gymnasium's refuses ``uint64``, which cannot be
    cast to its ``int64`` dtype) and no ``bool`` (gymnasium's takes ``True`` for 1).
    """

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self._size = int(n)

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return 0 <= x < self._size
        value = integer_value(x)
        return value is not None and 0 <= value < self._size


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


def seat_option(options: dict[str, Any], key: str, num_players: int, rule: str) -> int | None:
    """``options[key]`` as a seat index, or ``None`` when absent; errors name ``rule``."""
    if key not in options:
        return None
    seat = options[key]
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)):
        raise TypeError(f"options[{key!r}] must be an int seat, got {seat!r}")
    if not 0 <= seat < num_players:
        raise ValueError(f"{rule}: options[{key!r}] must be a seat 0..{num_players - 1}, got {seat}")
    return int(seat)


def dict_observation_space(high: np.ndarray, num_actions: int) -> spaces.Dict:
    """``{"observation": Box(0, high) float32, "action_mask": Box(0, 1) int8}``."""
    return spaces.Dict(
        {
            "observation": spaces.Box(low=0.0, high=high, shape=high.shape, dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(num_actions,), dtype=np.int8),
        }
    )


class TileGameEnv(AECEnv, EzPickle):
    """The AEC adapter shared by the package's games (Mexican Train, partnership dominoes).

    A subclass hands over its rules core and codec tables and implements a few hooks;
    everything else — spaces, masks and infos, validation of actions (state untouched
    on error), rewards at each round's end, the episode's end, JSON snapshots with the
    RNG and the AEC bookkeeping, pickling with state, and render dispatch — lives here,
    written once.

    The core (``self.game``) must offer ``new_game``, ``legal_moves``, ``apply`` and
    ``explain_illegal``; actions map to core moves per seat through
    ``self._action_to_move[seat][action]`` and back through ``self._move_to_action``.

    The step that ends a round (a hand, in block dominoes) puts its public result (the
    game's ``_round_info``) in every agent's ``infos[agent]["round_result"]`` until the
    next step; in a multi-round episode the next round is dealt in that same step, so the
    result is where the final hands are seen (the loop of :mod:`mtrain_env.mexican_train.env`
    collects results by their ``"round"``).
    """

    metadata: ClassVar[dict[str, Any]]
    #: reward modes the subclass accepts
    reward_modes: ClassVar[tuple[str, ...]]
    #: the ``reset(options=...)`` keys the subclass understands
    option_keys: ClassVar[tuple[str, ...]]
    #: how error messages introduce the legal actions
    legal_label: ClassVar[str] = "legal actions"
    #: the core's phases from this value on mean "the round is over" (checked every step)
    round_over_phase: ClassVar[int]

    def _setup(
        self,
        config: Any,
        game: Any,
        layout: FlatLayout,
        encoder: Any,
        num_actions: int,
        action_to_move: list[list[int]],
        move_to_action: list[list[int]],
        reward: str,
        render_mode: str | None,
    ) -> None:
        """Common construction; subclasses call it from ``__init__`` after ``EzPickle.__init__``."""
        if reward not in self.reward_modes:
            raise ValueError(f"reward must be one of {self.reward_modes}, got {reward!r}")
        modes = self.metadata["render_modes"]
        if render_mode is not None and render_mode not in modes:
            raise ValueError(f"render_mode must be None or one of {modes}, got {render_mode!r}")
        AECEnv.__init__(self)
        self.config = config
        self.game = game
        self.layout = layout
        self._encoder = encoder
        self.reward_mode = reward
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(config.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self._num_actions = num_actions
        self._action_to_move = action_to_move
        self._move_to_action = move_to_action
        obs_space = dict_observation_space(layout.high, num_actions)
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {a: FastDiscrete(num_actions) for a in self.possible_agents}
        self._zero_mask = np.zeros(num_actions, dtype=np.int8)
        self._zero_mask.flags.writeable = False
        self._state: Any = None
        self._rng: np.random.Generator | None = None
        self._legal: list[int] = []  # legal core moves of the seat on turn
        self._mask = self._zero_mask
        self._rewards_given = False
        self._round_result_info: dict[str, Any] | None = None  #: in every agent's infos this step
        self.agent_selection = self.possible_agents[0]

    # ------------------------------------------------------------------ hooks
    def _new_state(self, rng: np.random.Generator, options: dict[str, Any]) -> Any:
        """A fresh episode's core state from validated ``reset`` options."""
        raise NotImplementedError

    def _round_result(self, s: Any) -> tuple[list[float], bool]:
        """(rewards by seat, is the episode over?) of the round that just ended."""
        raise NotImplementedError

    def _round_info(self, s: Any) -> dict[str, Any]:
        """The public result of the round that just ended (JSON values, seats absolute)."""
        raise NotImplementedError

    def _public_view(self, s: Any, seat: int) -> Any:
        """What ``seat`` may know: the public table and its own hand."""
        raise NotImplementedError

    def _next_round(self, s: Any, rng: np.random.Generator) -> None:
        """Deal the next round of the episode into ``s``."""
        raise NotImplementedError

    def _state_to_dict(self, s: Any) -> dict[str, Any]:
        raise NotImplementedError

    def _state_from_dict(self, d: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _render_text(self, s: Any) -> str:
        raise NotImplementedError

    def _render_rgb(self, s: Any) -> np.ndarray:
        raise NotImplementedError

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        try:
            return self.observation_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def action_space(self, agent: str) -> spaces.Space:
        try:
            return self.action_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def _seat_of(self, agent: Any) -> int:
        """The seat of agent name ``agent``; a clear error for anything else."""
        try:
            return self.agent_name_mapping[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def _unknown_agent(self, agent: Any) -> Exception:
        """``ValueError`` for an unknown name, ``TypeError`` for an unhashable value (a dict
        lookup's bare ``KeyError`` would name neither the agents nor the method's contract)."""
        try:
            hash(agent)
        except TypeError:
            return TypeError(
                f"an agent is a name such as {self.possible_agents[0]!r}, got "
                f"{short_repr(agent)} ({type(agent).__name__}); the agents are {self.possible_agents}"
            )
        return ValueError(f"unknown agent {short_repr(agent)}; the agents are {self.possible_agents}")

    @property
    def observation_layout(self) -> dict[str, View]:
        """Observation views: name -> ``View(slice, shape)``."""
        return self.layout.views

    @property
    def observation_version(self) -> int:
        """The version of :attr:`observation_layout` (:mod:`mtrain_env.tilegame.layout`):
        what a policy file's network must have been trained on to read this env's vectors."""
        return self.layout.version

    @property
    def state_obj(self) -> Any:
        """The live core state (hidden information included; for tooling, never for agents)."""
        return self._live_state()

    def _live_state(self) -> Any:
        """The live state in the core's own type (``state_obj`` may be a converted copy)."""
        if self._state is None:
            raise RuntimeError("call reset() before using the environment")
        return self._state

    def public_view(self, agent: str) -> Any:
        """What ``agent`` may know: the public table and its own hand (for agents).

        Never contains another seat's hand or the boneyard.
        """
        s = self._state
        if s is None:
            raise RuntimeError("call reset() before public_view()")
        return self._public_view(s, self._seat_of(agent))

    def encode_action(self, tile: tuple[int, int], where: int) -> int:
        """Action of laying ``tile`` (either order) at ``where`` (a train, or a line end)."""
        return int(self.codec.encode_action(tile, where))

    def decode_action(self, action: int) -> Any:
        """The decoded move of an action id (inverse of :meth:`encode_action`); takes every
        value ``step`` takes (numpy integers, 0-d integer arrays) and refuses the rest alike."""
        return self.codec.decode_action(action)

    @property
    def current_seat(self) -> int:
        """Seat index on turn."""
        return int(self._live_state().current)

    def legal_actions(self) -> list[int]:
        """Legal actions of the agent on turn, increasing."""
        if self._state is None:
            raise RuntimeError("call reset() before legal_actions()")
        return np.flatnonzero(self._mask).tolist()

    def observe_mask(self, agent: str) -> np.ndarray:
        """The int8 action mask of ``agent`` (all-zero off turn), without an observation."""
        s = self._state
        if s is None:
            raise RuntimeError("call reset() before observe_mask()")
        return self._mask if self._seat_of(agent) == s.current else self._zero_mask

    def check_action(self, action: Any) -> int:
        """``action`` as a Python int of the action space, or an error that says what is wrong.

        :class:`~mtrain_env.tilegame.actions.ActionTypeError` (a ``TypeError``) for a value
        that is not an integer (:mod:`mtrain_env.tilegame.actions`: ``bool``, floats,
        strings, ``None``, arrays not 0-d),
        :class:`~mtrain_env.tilegame.actions.ActionRangeError` (a ``ValueError``) for an
        integer outside ``Discrete(num_actions)``; the message names the value, the space,
        the agent on turn and its legal actions. Whether the action is legal is not checked here (the
        wrappers call this before ``TerminateIllegalWrapper`` reads the mask).
        """
        if type(action) is int and 0 <= action < self._num_actions:
            return action
        try:
            return coerce_action(action, self._num_actions)
        except (TypeError, ValueError) as err:
            if self._state is None:
                raise
            legal = np.flatnonzero(self._mask).tolist()
            raise type(err)(  # the same refusal class, the agent and its legal actions named
                f"{self.agent_selection}: {err} (a seat lays a tile, draws or passes) -> "
                f"{self.legal_label}: {legal}"
            ) from None

    # --------------------------------------------------------------- AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        # unknown keys warn, not raise: pettingzoo.test.api_test passes options={"options": 1};
        # not silent either: a misspelt key ("first_playr") would deal as if it were not given
        opts = check_options(options, self.option_keys)
        rng = self._rng
        if seed is not None:
            rng = np.random.default_rng(check_seed(seed))  # refused before any change
        elif rng is None:
            rng = np.random.default_rng()
        state = self._new_state(rng, opts)  # validates the options before any change
        self._rng = rng
        self._state = state
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._rewards_given = False
        self._round_result_info = None
        self._skip_agent_selection = None  # PettingZoo's dead-step memory belongs to one episode
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = self._fresh_infos()
        self._settle(state)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        s = self._state
        if s is None:
            raise RuntimeError("call reset() before observe()")
        try:
            seat = self.agent_name_mapping[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None
        return {
            "observation": self._encoder.encode(s, seat),
            # _mask is the zero mask whenever nobody is on turn
            "action_mask": self._mask if seat == s.current else self._zero_mask,
        }

    def step(self, action: int | None) -> None:
        s = self._state
        if s is None:
            raise RuntimeError("call reset() before step()")
        agent = self.agent_selection
        try:
            dead = self.terminations[agent] or self.truncations[agent]
        except KeyError:
            raise RuntimeError(
                f"step({short_repr(action)}): the episode is over and every agent is done; call reset()"
            ) from None
        if dead:
            self._was_dead_step(action)
            return
        # the common case inline (a legal plain int); anything else is checked by _to_move
        if type(action) is int and 0 <= action < self._num_actions:
            move = self._action_to_move[s.current][action]
            if move not in self._legal:
                move = self._to_move(s, action)  # raises before any change
        else:
            move = self._to_move(s, action)  # validates; raises before any change
        self._play(agent, s, move)

    def try_step(self, action: int) -> bool:
        """``step(action)`` if ``action`` (a Python int of the action space: the caller checked
        it) is legal for the live agent on turn, and ``True``; else ``False``, nothing changed.

        The wrappers' path for the common step: ``TerminateIllegalWrapper`` needs to know
        whether a move is legal before the env refuses it, and this answers from the env's
        own mask of the moment in the same call that plays it.
        """
        s = self._state
        agent = self.agent_selection
        if s is None or self.terminations.get(agent, True) or self.truncations.get(agent, True):
            return False
        move = self._action_to_move[s.current][action]
        if move not in self._legal:
            return False
        self._play(agent, s, move)
        return True

    def _play(self, agent: str, s: Any, move: int) -> None:
        """Apply ``agent``'s legal core ``move`` with the step's bookkeeping."""
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_given or self._round_result_info is not None:
            self._begin_step(agent)
        self.game.apply(s, move)
        if s.phase >= self.round_over_phase or self.render_mode == "human":
            self._end_step(s)
        else:  # the common case: the round goes on
            self._settle(s)

    def _begin_step(self, agent: str) -> None:
        """The bookkeeping of a valid step before its move is applied: the mover's
        cumulative reward is consumed, last step's rewards and round result are cleared
        (each dict is rebuilt only when something is in it)."""
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_given:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewards_given = False
        if self._round_result_info is not None:  # a round's result is seen by its last step only
            self.infos = self._fresh_infos()
            self._round_result_info = None

    def _end_step(self, s: Any) -> None:
        """The bookkeeping after a move was applied: a round's end (rewards, result, the
        episode's end or the next deal), then the next decision, then ``human`` render."""
        result = None
        if s.phase >= self.round_over_phase:
            # every seat is rewarded at each round's end, and told how it ended
            values, episode_over = self._round_result(s)
            self.rewards = dict(zip(self.possible_agents, values, strict=True))
            self._rewards_given = True
            result = self._round_info(s)  # read before the next round is dealt
            if episode_over:
                self.terminations = dict.fromkeys(self.agents, True)
            else:
                self._next_round(s, self._rng)  # type: ignore[arg-type]
            self._accumulate_rewards()
        self._settle(s)
        if result is not None:
            self._publish_round_result(result)
        if self.render_mode == "human":
            self.render()

    def _cached_legal(self) -> list[int]:
        """The legal core moves of the seat on turn as the last settle found them."""
        return self._legal

    def _to_move(self, s: Any, action: Any) -> int:
        """Validate an action and return the core move (state untouched); a refusal is a
        :class:`~mtrain_env.tilegame.actions.RefusedActionError` (:meth:`check_action`'s,
        or :class:`~mtrain_env.tilegame.actions.IllegalMoveError` naming the rule)."""
        action = self.check_action(action)
        move = self._action_to_move[s.current][action]
        legal = self._cached_legal()
        if move not in legal:
            reason = self.game.explain_illegal(s, move, legal)
            raise IllegalMoveError(
                f"{self.agent_selection}: action {action} of Discrete({self._num_actions}): {reason} "
                f"-> {self.legal_label}: {self.legal_actions()}"
            )
        return move

    def _was_dead_step(self, action: Any) -> None:
        """PettingZoo's dead step, whose refusal of an action (an
        :class:`~mtrain_env.tilegame.actions.IllegalMoveError`) also names it and the agent."""
        if action is not None:
            raise IllegalMoveError(
                f"{self.agent_selection} is terminated or truncated: the only valid action is None, "
                f"got {short_repr(action)}"
            )
        super()._was_dead_step(None)

    def _fresh_infos(self) -> dict[str, dict[str, Any]]:
        """Every live agent's info: the all-zero mask (``_settle`` gives the seat on turn its own)."""
        return {a: {"action_mask": self._zero_mask} for a in self.agents}

    def _publish_round_result(self, result: dict[str, Any]) -> None:
        for a in self.agents:
            self.infos[a][ROUND_RESULT_KEY] = result
        self._round_result_info = result

    def _settle(self, s: Any) -> None:
        """Refresh legal moves, mask, turn and infos after the state changed."""
        seat = s.current
        infos = self.infos
        previous = self.agent_selection
        self._legal, self._mask = self._legal_and_mask(s)
        self.agent_selection = agent = self.possible_agents[seat]
        if previous != agent and previous in infos:
            infos[previous] = {"action_mask": self._zero_mask}
        if agent in infos:
            infos[agent] = {"action_mask": self._mask}

    def _legal_and_mask(self, s: Any) -> tuple[list[int], np.ndarray]:
        """The legal core moves of the seat on turn and its read-only mask (the zero mask if none)."""
        legal = self.game.legal_moves(s)
        if not legal:
            return legal, self._zero_mask
        buf = bytearray(self._num_actions)
        to_action = self._move_to_action[s.current]
        for m in legal:
            buf[to_action[m]] = 1
        # read-only (bytes): a caller editing its copy of the mask must not change the rules' answer
        return legal, np.frombuffer(bytes(buf), np.int8)

    # -------------------------------------------------------------- snapshots
    def state_dict(self) -> dict[str, Any]:
        """A JSON-serializable snapshot of the whole env (hidden state, RNG, AEC bookkeeping).

        The ``env`` section holds everything PettingZoo's bookkeeping needs to go on exactly
        as this env would, ``_skip_agent_selection`` (the agent the dead steps return to)
        included.
        """
        d = self._state_to_dict(self._live_state())
        d[ENV_STATE_KEY] = {
            "reward_mode": self.reward_mode,
            "rng": rng_state(self._rng),  # type: ignore[arg-type]
            "agents": list(self.agents),
            # floats, whatever wrote them (PettingZoo's dead-step helper clears rewards to int 0)
            "rewards": {a: float(r) for a, r in self.rewards.items()},
            "cumulative_rewards": {a: float(r) for a, r in self._cumulative_rewards.items()},
            "terminations": dict(self.terminations),
            "truncations": dict(self.truncations),
            "agent_selection": self.agent_selection,
            "skip_agent_selection": getattr(self, "_skip_agent_selection", None),
            "round_result": copy.deepcopy(self._round_result_info),
        }
        return d

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` output exactly; on any error nothing changes.

        Validated before anything is touched: the game part by the game's reader (exact
        types, ranges, and every invariant of its rules, naming the key and the rule), the
        ``env`` section key by key (:meth:`_read_env_section`), and the two against each
        other (:meth:`_check_bookkeeping`). Errors are ``TypeError`` (a wrong type) or
        ``ValueError``, worded ``state dict 'KEY': RULE: ...``; ``AEC`` is PettingZoo's
        agent-environment-cycle bookkeeping.
        """
        if not isinstance(d, dict):
            raise TypeError(f"a state dict must be a dict, got {type(d).__name__}")
        if ENV_STATE_KEY not in d:
            raise bad_value(ENV_STATE_KEY, "AEC", "missing: the env's bookkeeping, RNG and reward mode")
        state = self._state_from_dict({k: v for k, v in d.items() if k != ENV_STATE_KEY})
        e = self._read_env_section(d[ENV_STATE_KEY])
        rng = rng_from_state(e["rng"])
        if rng.bit_generator.state != e["rng"]:
            raise bad_value(f"{ENV_STATE_KEY}.rng", "AEC", "numpy does not restore this state as written")
        self._check_bookkeeping(
            state,
            e["agents"],
            e["terminations"],
            e["truncations"],
            e["agent_selection"],
            e["skip_agent_selection"],
        )
        round_result = e["round_result"]
        if round_result is not None and self._episode_over(state):
            expected = self._round_info(state)
            if not json_equal(round_result, expected):
                raise bad_value(
                    f"{ENV_STATE_KEY}.round_result",
                    "AEC",
                    "the episode is over: the result of its last round",
                )
        elif round_result is not None:
            problem = self._previous_round_problem(state, round_result)
            if problem is not None:
                raise bad_value(f"{ENV_STATE_KEY}.round_result", "AEC", problem)
        if round_result is not None:  # JSON objects are unordered: the keys in the env's own order
            round_result = {k: round_result[k] for k in self._round_info(state)}
        # everything validated: swap in at once, every agent's book in seat order
        agents = list(e["agents"])
        self._state = state
        self._rng = rng
        self.agents = agents
        self.rewards = {a: e["rewards"][a] for a in agents}
        self._rewards_given = any(self.rewards.values())
        self._cumulative_rewards = {a: e["cumulative_rewards"][a] for a in agents}
        self.terminations = {a: e["terminations"][a] for a in agents}
        self.truncations = {a: e["truncations"][a] for a in agents}
        self.infos = self._fresh_infos()
        self._round_result_info = None
        self._settle(state)
        self.agent_selection = e["agent_selection"]
        self._skip_agent_selection = e["skip_agent_selection"]
        if round_result is not None:
            self._publish_round_result(copy.deepcopy(round_result))

    def _read_env_section(self, e: Any) -> dict[str, Any]:
        """The ``env`` section with every key of its exact type (``ValueError``/``TypeError``)."""
        key = f"{ENV_STATE_KEY}."
        if type(e) is not dict:
            raise bad_type(ENV_STATE_KEY, "AEC", f"must be a dict, got {type(e).__name__}")
        if "skip_agent_selection" not in e:  # snapshots written before it was saved: none pending
            e = {**e, "skip_agent_selection": None}
        check_keys(e, ENV_KEYS, key, "AEC")
        mode = req(e, "reward_mode", str, "AEC", key)
        if mode != self.reward_mode:
            raise bad_value(
                f"{key}reward_mode", "AEC", f"saved with reward={mode!r}, this env uses {self.reward_mode!r}"
            )
        read_rng_state(e["rng"], f"{key}rng", "AEC")
        agents = req(e, "agents", list, "AEC", key)
        for a in agents:
            if type(a) is not str or a not in self.agent_name_mapping:
                raise bad_value(f"{key}agents", "AEC", f"{a!r} is not an agent of this env")
        order = [self.agent_name_mapping[a] for a in agents]
        if order != sorted(set(order)):
            raise bad_value(f"{key}agents", "AEC", "live agents are listed once each, in seat order")
        for name, kind in (
            ("rewards", float),
            ("cumulative_rewards", float),
            ("terminations", bool),
            ("truncations", bool),
        ):
            book = req(e, name, dict, "AEC", key)
            if set(book) != set(agents):
                raise bad_value(f"{key}{name}", "AEC", f"must map exactly the live agents {agents}")
            for a, value in book.items():
                read_finite(value, kind, f"{key}{name}.{a}", "AEC")
        for name in ("agent_selection", "skip_agent_selection"):
            agent = e[name]
            if not (agent is None and name == "skip_agent_selection") and (
                type(agent) is not str or agent not in self.agent_name_mapping
            ):
                raise bad_value(f"{key}{name}", "AEC", f"{agent!r} is not an agent of this env")
        round_result = e["round_result"]
        if round_result is not None:
            if type(round_result) is not dict:
                raise bad_type(f"{key}round_result", "AEC", "null or the last round's result (a dict)")
            check_json(round_result, f"{key}round_result", "AEC")
        return e

    def _previous_round_problem(self, s: Any, result: Any) -> str | None:
        """What is wrong with a snapshot's ``result`` as the result of the round that ended
        just before ``s``'s was dealt (``None``: nothing); each game checks what its state
        still determines."""
        raise NotImplementedError

    def _episode_over(self, s: Any) -> bool:
        """Whether ``s`` ends the episode (its round is over and no other round follows)."""
        return bool(s.phase >= self.round_over_phase and self._round_result(s)[1])

    def _check_bookkeeping(
        self,
        s: Any,
        agents: list[str],
        terminations: dict[str, bool],
        truncations: dict[str, bool],
        selection: str,
        skip: str | None,
    ) -> None:
        """PettingZoo's bookkeeping against the game state (``ValueError`` naming the key).

        While the episode runs, every agent is live and the one selected is the seat on
        turn. Once it ends (the game is over, or a wrapper ended it), every agent left is
        terminated or truncated, and PettingZoo's dead steps remove them: the first one
        selected goes first, then the first left each time (``_skip_agent_selection``
        remembers whom to select when none is left). A round's end never persists: the env
        deals the next round in the step that ends one.
        """
        key = f"{ENV_STATE_KEY}."
        if s.phase >= self.round_over_phase and not self._round_result(s)[1]:
            raise bad_value(
                "phase",
                "AEC",
                f"{s.phase.name} mid-episode: the env deals the next round in the step that ends one",
            )
        over = self._episode_over(s)
        dead = [a for a in agents if terminations[a] or truncations[a]]
        on_turn = self.possible_agents[s.current]
        if not agents:
            if skip is not None:
                raise bad_value(f"{key}skip_agent_selection", "AEC", "no dead step is left to return from")
            return
        if not dead:
            if over:
                raise bad_value(f"{key}terminations", "AEC", "the episode is over: every agent is terminated")
            if agents != self.possible_agents:
                raise bad_value(
                    f"{key}agents", "AEC", "an agent leaves only by a dead step, once the episode ends"
                )
            if selection != on_turn:
                raise bad_value(
                    f"{key}agent_selection", "AEC", f"the seat on turn is {on_turn}, not {selection}"
                )
            return
        if len(dead) != len(agents):
            book = "truncations" if any(truncations[a] for a in dead) else "terminations"
            live = [a for a in agents if a not in dead]
            raise bad_value(f"{key}{book}", "AEC", f"{dead} are done and {live} are not: all or none")
        if over and not all(terminations[a] for a in agents):
            raise bad_value(f"{key}terminations", "AEC", "the episode is over: every agent is terminated")
        # dead steps under way (or a wrapper selected the first dead agent): the first one left
        under_way = len(agents) < len(self.possible_agents) or selection != on_turn
        if under_way and (selection != agents[0] or skip is None):
            raise bad_value(
                f"{key}agent_selection", "AEC", f"dead steps select the first agent left ({agents[0]})"
            )

    def check_bookkeeping(self) -> None:
        """Check the live env's AEC bookkeeping and mask against its game state (for the soak).

        The same checks as :meth:`load_state_dict`'s, plus: rewards are finite numbers, the
        legal moves are the rules' and the mask of the seat on turn is exactly them.
        Raises ``ValueError`` naming the key.
        """
        s = self._live_state()
        agents = list(self.agents)
        key = f"{ENV_STATE_KEY}."
        for name, book in (("rewards", self.rewards), ("cumulative_rewards", self._cumulative_rewards)):
            if set(book) != set(agents):
                raise bad_value(f"{key}{name}", "AEC", f"must map exactly the live agents {agents}")
            for a, r in book.items():
                if type(r) not in (int, float) or not math.isfinite(r):
                    raise bad_value(f"{key}{name}.{a}", "AEC", f"must be a finite number, got {r!r}")
        for name, flags in (("terminations", self.terminations), ("truncations", self.truncations)):
            if set(flags) != set(agents) or not all(type(v) is bool for v in flags.values()):
                raise bad_value(f"{key}{name}", "AEC", f"must map exactly the live agents {agents} to bools")
        self._check_bookkeeping(
            s,
            agents,
            self.terminations,
            self.truncations,
            self.agent_selection,
            getattr(self, "_skip_agent_selection", None),
        )
        legal = self.game.legal_moves(s)
        cached = self._cached_legal()
        if cached != legal:
            raise bad_value(
                "current_player", "AEC", f"cached legal moves {cached} are not the rules' {legal}"
            )
        expected = np.zeros(self._num_actions, dtype=np.int8)
        for m in legal:
            expected[self._move_to_action[s.current][m]] = 1
        if not np.array_equal(self._mask, expected):
            raise bad_value("current_player", "AEC", "the action mask is not the legal moves")
        if s.phase < self.round_over_phase and not legal:
            raise bad_value("current_player", "AEC", "the seat on turn has no legal move")

    def __getstate__(self) -> dict[str, Any]:
        d = EzPickle.__getstate__(self)
        d["_game_state"] = self.state_dict() if self._state is not None else None
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        snapshot = d.pop("_game_state", None)
        EzPickle.__setstate__(self, d)
        if snapshot is not None:
            self.load_state_dict(snapshot)

    # ----------------------------------------------------------------- render
    def render(self) -> str | np.ndarray | None:
        """``ansi``: the table as text; ``human``: printed; ``rgb_array``: a picture.

        Only public information and the hand of the seat on turn are shown.
        """
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.render_mode == "rgb_array":
            return self._render_rgb(self._live_state())
        text = self._render_text(self._live_state())
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass
