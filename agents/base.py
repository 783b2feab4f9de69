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
from dataclasses import dataclass
from typing import Any

import numpy as np

from mtrain_env.codec import ActionCodec
from mtrain_env.core.public import PublicState
from mtrain_env.core.rules import MexicanTrain


@dataclass(frozen=True)
class Decision:
    """Everything an agent may use to choose one action."""

    observation: np.ndarray  #: the seat's float32 observation vector
    action_mask: np.ndarray  #: int8 mask over the relative action space
    view: PublicState  #: leak-free public table + own hand
    game: MexicanTrain  #: static rules and tables (no state)
    codec: ActionCodec  #: relative action codec of this config

    @property
    def seat(self) -> int:
        return self.view.seat

    @property
    def legal_actions(self) -> list[int]:
        """Legal actions in the env's relative encoding, increasing."""
        return np.flatnonzero(self.action_mask).tolist()

    def to_move(self, action: int) -> int:
        """Relative env action -> absolute core move (for simulation with ``game``)."""
        return self.codec.rel_to_abs[self.view.seat][action]

    def to_action(self, move: int) -> int:
        """Absolute core move -> relative env action."""
        return self.codec.abs_to_rel[self.view.seat][move]


class Agent(abc.ABC):
    """Base class of every agent (baselines, search, trained policies)."""

    #: short registry name, e.g. ``"greedy"``
    name: str = "agent"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; re-seed when ``seed`` is given."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    @abc.abstractmethod
    def act(self, decision: Decision) -> int:
        """The chosen action (relative encoding); must be legal under ``decision.action_mask``."""

    def params(self) -> dict[str, Any]:
        """Parameters that define this agent (recorded in tournament outputs)."""
        return {}

    def __repr__(self) -> str:
        extra = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({extra})"


def decision_for(env: Any, agent_id: str) -> Decision:
    """Build the :class:`Decision` of ``agent_id`` from a (wrapped or raw) Mexican Train env."""
    raw = env.unwrapped
    obs = raw.observe(agent_id)
    return Decision(
        observation=obs["observation"],
        action_mask=obs["action_mask"],
        view=raw.public_view(agent_id),
        game=raw.game,
        codec=raw.codec,
    )
