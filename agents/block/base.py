"""The agent interface for partnership dominoes, mirroring :mod:`agents.base`.

An agent decides from a :class:`BlockDecision`: the seat's observation vector and action
mask (exactly what the env gives that seat), a decoded leak-free
:class:`~mtrain_env.block.public.BlockView` (public table + own hand) and the static rules
(:class:`~mtrain_env.block.rules.BlockDominoes`, no state). No agent ever receives the
hidden state. Agents are seeded: ``reset(seed)`` fixes all their randomness.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

import numpy as np

from mtrain_env.block.codec import BlockCodec
from mtrain_env.block.public import BlockView
from mtrain_env.block.rules import BlockDominoes

__all__ = ["BlockAgent", "BlockDecision", "decision_for", "new_ends"]


@dataclass(frozen=True)
class BlockDecision:
    """Everything an agent may use to choose one action."""

    observation: np.ndarray  #: the seat's float32 observation vector
    action_mask: np.ndarray  #: int8 mask over Discrete(57)
    view: BlockView  #: leak-free public table + own hand
    game: BlockDominoes  #: static rules and tables (no state)
    codec: BlockCodec

    @property
    def seat(self) -> int:
        return self.view.seat

    @property
    def legal_actions(self) -> list[int]:
        """Legal actions, increasing (the env action is the core move)."""
        return np.flatnonzero(self.action_mask).tolist()


def new_ends(view: BlockView, action: int) -> tuple[int, int]:
    """The line's open ends after laying ``action`` (B8); unchanged for PASS."""
    if action == 2 * view.config.num_tiles:
        return view.ends
    a, b = view.config.tiles.tiles[action >> 1]
    left, right = view.ends
    if left < 0:
        return a, b
    if action & 1:
        return left, (a if b == right else b)
    return (a if b == left else b), right


class BlockAgent(abc.ABC):
    """Base class of every block-dominoes agent."""

    #: short registry name
    name: str = "agent"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; re-seed when ``seed`` is given."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    @abc.abstractmethod
    def act(self, decision: BlockDecision) -> int:
        """The chosen action; must be legal under ``decision.action_mask``."""

    def params(self) -> dict[str, Any]:
        """Parameters that define this agent (recorded in benchmark outputs)."""
        return {}

    def __repr__(self) -> str:
        extra = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({extra})"


def decision_for(env: Any, agent_id: str) -> BlockDecision:
    """The :class:`BlockDecision` of ``agent_id`` from a (wrapped or raw) block env."""
    raw = env.unwrapped
    obs = raw.observe(agent_id)
    return BlockDecision(
        observation=obs["observation"],
        action_mask=obs["action_mask"],
        view=raw.public_view(agent_id),
        game=raw.game,
        codec=raw.codec,
    )
