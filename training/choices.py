"""Play a labelling game through THE play loop (:mod:`agents.play`), one callback per choice.

The expert-iteration and ``mc``-distillation labellers both play games in which every seat
is decided by the same code and every decision with a choice is recorded; this seats a
:class:`ChoiceAgent` wrapping that code at every seat of :func:`agents.play.play_game`, so
the labellers have no play loop of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from agents.mexican_train.base import Agent, Decision
from agents.mexican_train.oracle import CheatDecision
from agents.play import play_game

__all__ = ["CheatChoiceAgent", "ChoiceAgent", "play_choices"]


class ChoiceAgent(Agent):
    """Plays forced moves itself and asks ``choose`` at every decision with a choice."""

    name = "choices"

    def __init__(self, choose: Callable[[Decision], int]) -> None:
        super().__init__(None)
        self.choose = choose

    def act(self, decision: Decision) -> int:
        legal = decision.legal_actions
        return int(legal[0]) if len(legal) == 1 else int(self.choose(decision))


class CheatChoiceAgent(ChoiceAgent):
    """A :class:`ChoiceAgent` whose decisions carry the true state (CHEATS): for labellers
    whose teacher is the ``oracle`` (only the teacher reads it; what is fitted, and what
    every other agent of the labeller is handed, is the seat's view)."""

    name = "cheat_choices"
    cheats: ClassVar[bool] = True
    decision_class = CheatDecision


def play_choices(env: Any, seed: int, choose: Callable[[Decision], int], cheat: bool = False) -> None:
    """Reset ``env`` to deal ``seed`` and play it to its end with ``choose`` in every seat
    (with ``cheat``, each decision a :class:`CheatDecision`)."""
    agent = (CheatChoiceAgent if cheat else ChoiceAgent)(choose)
    play_game(env, [agent] * env.unwrapped.config.num_players, seed=seed)
