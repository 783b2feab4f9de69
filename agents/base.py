"""The agent interface shared by every game: an agent sees only what its seat may know.

Every decision an agent makes is a function of a :class:`SeatDecision`: the seat's
observation vector and action mask (exactly what the env gives that seat), and a decoded,
leak-free public view (the public table plus its own hand) built by the env. The static
rules (config and tables, no state) come along so search agents can simulate. No agent
ever receives the hidden state. (By construction, not by a sandbox: the decision reads
the env it came from, and an agent is code running in the same process. A ``module:Class``
entrant of a tournament is trusted like any imported code; the differential tests in
``tests/env/test_hidden_info.py`` check that every shipped fair agent plays the same move in
positions that differ only in hidden tiles.) Each game narrows the types:
:class:`agents.mexican_train.base.Decision`, :class:`agents.block.base.BlockDecision`.

Agents are seeded: ``reset(seed)`` fixes all their randomness (a
``numpy.random.Generator``), so a seeded agent is deterministic.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np


class SeatDecision:
    """What one seat may use to choose one action, read lazily from any of the package's envs.

    The mask is read at once; the observation vector and the public view (the
    env's ``public_view``) are computed on first access only, so an agent that needs
    neither pays for neither. Use it for the current position only (before the next step).
    """

    __slots__ = ("_env", "_observation", "_view", "action_mask", "agent_id", "codec", "game", "seat")

    def __init__(self, env: Any, agent_id: str) -> None:
        raw = env.unwrapped
        self._env = raw
        self.agent_id = agent_id
        self.seat: int = raw.agent_name_mapping[agent_id]
        #: static rules and tables (no state): the pure rules core on either backend (the
        #: compiled env's ``game`` is its engine, which agents do not simulate with)
        self.game: Any = getattr(raw, "pure_game", raw.game)
        self.codec: Any = raw.codec  #: the env's action codec
        #: int8 mask over the action space (the seat's own; all-zero off turn)
        self.action_mask: np.ndarray = raw.observe_mask(agent_id)
        self._observation: np.ndarray | None = None
        self._view: Any = None

    @property
    def observation(self) -> np.ndarray:
        """The seat's float32 observation vector (exactly what the env gives that seat)."""
        if self._observation is None:
            self._observation = self._env.observe(self.agent_id)["observation"]
        return self._observation

    @property
    def observation_version(self) -> int:
        """The version of the env's observation layout (what a learned policy must read)."""
        return int(self._env.observation_version)

    @property
    def view(self) -> Any:
        """Leak-free public table + own hand."""
        if self._view is None:
            self._view = self._env.public_view(self.agent_id)
        return self._view

    @property
    def legal_actions(self) -> list[int]:
        """Legal actions, increasing."""
        return self.action_mask.nonzero()[0].tolist()


DecisionT = TypeVar("DecisionT", bound=SeatDecision)


class BaseAgent(abc.ABC, Generic[DecisionT]):
    """Seeded agent of any game of the package: ``act(decision) -> action``."""

    #: short registry name, e.g. ``"greedy"``
    name: str = "agent"
    #: the decision type this agent reads (its game's :class:`SeatDecision` subclass); the
    #: play loop builds one per decision as ``decision_class(env, agent_id)``
    decision_class: ClassVar[type[SeatDecision]] = SeatDecision
    #: whether the play loop tells this agent every seat's moves (:meth:`inform`); off by
    #: default, so agents that decide from their own decisions alone cost nothing
    listens: ClassVar[bool] = False

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; re-seed when ``seed`` is given.

        Subclasses that keep per-game state must clear ALL of it here: harnesses reuse
        one instance per seat across games and rely on ``reset`` for reproducibility.
        """
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    @abc.abstractmethod
    def act(self, decision: DecisionT) -> int:
        """The chosen action; must be legal under ``decision.action_mask``."""

    def check_game(self, config: Any) -> None:
        """Raise ``ValueError`` if this agent cannot play games of ``config`` (a network
        trained for another table, a policy file that is missing or not a policy); loads
        what it reads. The tournament harness asks every agent once before the first deal,
        so a bad agent is refused up front, naming the option at fault, instead of failing in
        a worker mid-run. Default: any game."""

    def inform(self, seat: int, action: int) -> None:
        """Seat ``seat`` just took ``action`` (its own relative encoding): the public move
        every player at the table sees (a draw says nothing of the tile drawn). The play loop
        calls it on every agent that :attr:`listens`, after each step and in order, its own
        moves included (OpenSpiel's ``inform_action``)."""

    def params(self) -> dict[str, Any]:
        """JSON values of every constructor argument (recorded in, and identifying, tournament runs)."""
        return {}

    def __repr__(self) -> str:
        extra = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({extra})"
