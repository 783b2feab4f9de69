"""The one small agent interface: an agent sees only what its seat may know.

Every decision an agent makes is a function of a :class:`Decision`: the seat's
observation vector and action mask (exactly what the env gives that seat), and a
decoded, leak-free :class:`~mtrain_env.core.public.PublicState` (public table + own
hand) built by the env. The static rules (:class:`~mtrain_env.core.rules.MexicanTrain`,
config and tables, no state) come along so search agents can simulate. No agent ever
receives the hidden state.

Agents are seeded: ``reset(seed)`` fixes all their randomness (a
``numpy.random.Generator``), so a seeded agent is deterministic.
"""

from __future__ import annotations

import abc
from typing import Any, Generic, TypeVar

import numpy as np

from mtrain_env.codec import ActionCodec
from mtrain_env.core.public import PublicState
from mtrain_env.core.rules import MexicanTrain


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
        self.game: Any = raw.game  #: static rules and tables (no state)
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
    def view(self) -> Any:
        """Leak-free public table + own hand."""
        if self._view is None:
            self._view = self._env.public_view(self.agent_id)
        return self._view

    @property
    def legal_actions(self) -> list[int]:
        """Legal actions, increasing."""
        return self.action_mask.nonzero()[0].tolist()


class Decision(SeatDecision):
    """A Mexican Train seat's decision (trains in actions are relative to the seat)."""

    __slots__ = ()
    game: MexicanTrain
    codec: ActionCodec

    @property
    def view(self) -> PublicState:
        """Leak-free public table + own hand (:func:`mtrain_env.core.public.public_state`)."""
        return super().view

    def to_move(self, action: int) -> int:
        """Relative env action -> absolute core move (for simulation with ``game``)."""
        return self.codec.rel_to_abs[self.seat][action]

    def to_action(self, move: int) -> int:
        """Absolute core move -> relative env action."""
        return self.codec.abs_to_rel[self.seat][move]


DecisionT = TypeVar("DecisionT", bound=SeatDecision)


class BaseAgent(abc.ABC, Generic[DecisionT]):
    """Seeded agent of any game of the package: ``act(decision) -> action``."""

    #: short registry name, e.g. ``"greedy"``
    name: str = "agent"

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

    def params(self) -> dict[str, Any]:
        """JSON values of every constructor argument (recorded in, and identifying, tournament runs)."""
        return {}

    def __repr__(self) -> str:
        extra = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({extra})"


class Agent(BaseAgent[Decision]):
    """Base class of every Mexican Train agent (baselines, search, trained policies)."""


def decision_for(env: Any, agent_id: str) -> Decision:
    """The :class:`Decision` of ``agent_id`` in a (wrapped or raw) Mexican Train env.

    It reads the env lazily: use it for the current position only (before the next step).
    """
    return Decision(env, agent_id)
