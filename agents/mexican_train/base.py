"""The Mexican Train side of the agent interface (:mod:`agents.base`).

A :class:`Decision` carries a Mexican Train seat's observation, mask and leak-free
:class:`~mtrain_env.mexican_train.core.public.PublicView`; trains in its actions are
relative to the seat, and :meth:`Decision.to_move` / :meth:`Decision.to_action` convert
to and from the rules core's absolute moves (for search agents that simulate).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.base import BaseAgent, SeatDecision
from mtrain_env.mexican_train.codec import ActionCodec
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.public import PublicView
from mtrain_env.mexican_train.core.rules import MexicanTrain

__all__ = ["Agent", "Decision", "decision_for", "table_file"]


class Decision(SeatDecision):
    """A Mexican Train seat's decision (trains in actions are relative to the seat)."""

    __slots__ = ()
    game: MexicanTrain
    codec: ActionCodec

    @property
    def view(self) -> PublicView:
        """Leak-free public table + own hand (:func:`mtrain_env.mexican_train.core.public.public_view`)."""
        return super().view

    def to_move(self, action: int) -> int:
        """Relative env action -> absolute core move (for simulation with ``game``)."""
        return self.codec.rel_to_abs[self.seat][action]

    def to_action(self, move: int) -> int:
        """Absolute core move -> relative env action."""
        return self.codec.abs_to_rel[self.seat][move]


class Agent(BaseAgent[Decision]):
    """Base class of every Mexican Train agent (baselines, search, trained policies)."""

    decision_class = Decision


def decision_for(env: Any, agent_id: str) -> Decision:
    """The :class:`Decision` of ``agent_id`` in a (wrapped or raw) Mexican Train env.

    It reads the env lazily: use it for the current position only (before the next step).
    """
    return Decision(env, agent_id)


def table_file(files: dict[tuple[int, int], Path], config: GameConfig, what: str, remedy: str) -> Path:
    """The shipped file of ``config``'s table (``files`` keyed by ``(players, N of double-N)``);
    ``ValueError`` naming the tables ``what`` ships for and the ``remedy``."""
    key = (config.num_players, config.max_pips)
    if key not in files:
        tables = ", ".join(f"{n} players double-{p}" for n, p in files)
        raise ValueError(
            f"{what} ship for {tables}; this game has {config.num_players} players, "
            f"double-{config.max_pips}: {remedy}"
        )
    return files[key]
