"""``mc_student``: the planner, corrected where a network trained on ``mc``'s choices is sure.

Why not simply imitate ``mc``: ``mc`` plays the planner's move at 85% of its decisions and
deviates where its rollouts say another move is clearly better. A network fitted to its
choices (``training/distill_mc.py``) reaches 72-80% agreement on held-out positions, below
the planner's own 85%, and playing its argmax mixes two plans: measured 5 pips a round WORSE
than the planner (README, "Distilling mc"). So this agent keeps the planner's move and
takes the network's only where the network puts at least ``threshold`` of its probability
on one other legal move: the deviations it can predict confidently, which are the
systematic ones (many of ``mc``'s deviations are noise its gate lets through, and a network
cannot predict those).

Two rules, one per way the network was fitted (``training/distill_mc.py train --loss``):

* ``threshold=`` (networks fitted to ``mc``'s moves by cross-entropy): the network's most
  probable move, if it is not the planner's and has at least that probability;
* ``margin=`` (networks fitted to ``mc``'s per-move results, ``--loss advantage``: the scores
  estimate each move's pips a round over the planner's move): the best-scored move, if it
  beats the planner's by more than ``margin`` pips.

It reads the seat's own observation and mask (one numpy forward pass of a self-play policy
file, ``path``) and the planner's move (leak-free view): nothing hidden, no search at play
time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.mexican_train.base import Agent, Decision
from agents.mexican_train.planner import PlannerAgent
from agents.mexican_train.ppo import PPOAgent
from mtrain_env.mexican_train.core.config import GameConfig

__all__ = ["DEFAULT_RULE", "MC_STUDENT_POLICY", "MCStudentAgent"]

#: the network shipped with the package (see the README's "Distilling mc")
MC_STUDENT_POLICY = Path(__file__).resolve().parent.parent / "policies" / "mc_student.npz"
#: the rule and its value the shipped network plays with (selected on seed 4242, see README)
DEFAULT_RULE: tuple[str, float] = ("threshold", 0.8)


class MCStudentAgent(Agent):
    """The planner's move unless the network is confident ``mc`` would play another.

    Args:
        seed: unused (the agent is deterministic); kept for the common interface.
        path: a self-play policy file fitted to ``mc``'s choices (default
            :data:`MC_STUDENT_POLICY`).
        threshold: probability the network must put on one move other than the planner's
            for that move to be played (``> 1``: always the planner, ``0``: always the
            network's argmax).
        margin: instead of ``threshold``: pips a round by which the network's best-scored
            move must beat the planner's (for advantage-fitted networks).
        Neither: the rule and value the shipped network was selected with
        (:data:`DEFAULT_RULE`).
    """

    name = "mc_student"

    def __init__(
        self,
        seed: int | None = None,
        path: str | Path | None = None,
        threshold: float | None = None,
        margin: float | None = None,
    ) -> None:
        super().__init__(seed)
        if threshold is not None and margin is not None:
            raise ValueError("give threshold (probability rule) or margin (advantage rule), not both")
        if threshold is None and margin is None:
            rule, value = DEFAULT_RULE
            threshold, margin = (value, None) if rule == "threshold" else (None, value)
        if threshold is not None and not threshold >= 0:
            raise ValueError(f"threshold must be >= 0, got {threshold}")
        if margin is not None and not margin >= 0:
            raise ValueError(f"margin must be >= 0, got {margin}")
        self.threshold = None if threshold is None else float(threshold)
        self.margin = None if margin is None else float(margin)
        self.path = str(MC_STUDENT_POLICY if path is None else path)
        self._net = PPOAgent(path=self.path)  # loads the file on first use, in every worker
        self._planner = PlannerAgent()
        self.last_deviated = False  #: whether the last move overruled the planner

    def params(self) -> dict[str, Any]:
        rule = {"threshold": self.threshold} if self.margin is None else {"margin": self.margin}
        return {"path": self.path, **rule}

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._planner.reset()

    def check_game(self, config: GameConfig) -> None:
        self._net.check_game(config)

    def act(self, decision: Decision) -> int:
        self.last_deviated = False
        legal = decision.legal_actions
        planned = int(self._planner.act(decision))
        if len(legal) == 1:
            return planned
        logits = self._net.policy.masked_logits(decision.observation, decision.action_mask)
        idx = np.asarray(legal, np.int64)
        z = np.asarray(logits, np.float64)[idx]
        best = int(np.argmax(z))
        if int(idx[best]) == planned:
            return planned
        if self.margin is not None:
            deviate = z[best] - z[legal.index(planned)] > self.margin
        else:
            p = np.exp(z - z.max())
            deviate = p[best] / p.sum() >= self.threshold
        if deviate:
            self.last_deviated = True
            return int(idx[best])
        return planned
