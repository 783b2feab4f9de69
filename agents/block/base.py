"""The agent interface for partnership dominoes, mirroring :mod:`agents.base`.

An agent decides from a :class:`BlockDecision`: the seat's observation vector and action
mask (exactly what the env gives that seat), a decoded leak-free
:class:`~mtrain_env.block.core.public.PublicView` (public table + own hand) and the static rules
(:class:`~mtrain_env.block.core.rules.BlockDominoes`, no state). No agent ever receives the
hidden state. Agents are seeded: ``reset(seed)`` fixes all their randomness.
"""

from __future__ import annotations

from typing import Any

from agents.base import BaseAgent, SeatDecision
from mtrain_env.block.codec import ActionCodec
from mtrain_env.block.core.public import PublicView
from mtrain_env.block.core.rules import BlockDominoes

__all__ = ["BlockAgent", "BlockDecision", "decision_for", "new_ends"]


class BlockDecision(SeatDecision):
    """A partnership-dominoes seat's decision (the env action is the core move)."""

    __slots__ = ()
    game: BlockDominoes
    codec: ActionCodec

    @property
    def view(self) -> PublicView:
        """Leak-free public table + own hand (:func:`mtrain_env.block.core.public.public_view`)."""
        return super().view


def new_ends(view: PublicView, action: int) -> tuple[int, int]:
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


class BlockAgent(BaseAgent[BlockDecision]):
    """Base class of every block-dominoes agent."""

    decision_class = BlockDecision


def decision_for(env: Any, agent_id: str) -> BlockDecision:
    """The :class:`BlockDecision` of ``agent_id`` from a (wrapped or raw) block env."""
    return BlockDecision(env, agent_id)
