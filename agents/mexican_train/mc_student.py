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

__all__ = ["DEFAULT_THRESHOLD", "MC_STUDENT_POLICY", "MCStudentAgent"]

#: the network shipped with the package (see the README's "Distilling mc")
MC_STUDENT_POLICY = Path(__file__).resolve().parent.parent / "policies" / "mc_student.npz"
#: the network's probability on another move needed to overrule the planner
DEFAULT_THRESHOLD = 0.8


class MCStudentAgent(Agent):
    """The planner's move unless the network is confident ``mc`` would play another.

    Args:
        seed: unused (the agent is deterministic); kept for the common interface.
        path: a self-play policy file fitted to ``mc``'s choices (default
            :data:`MC_STUDENT_POLICY`).
        threshold: probability the network must put on one move other than the planner's
            for that move to be played (``> 1``: always the planner, ``0``: always the
            network's argmax).
    """

    name = "mc_student"

    def __init__(
        self, seed: int | None = None, path: str | Path | None = None, threshold: float = DEFAULT_THRESHOLD
    ) -> None:
        super().__init__(seed)
        if not threshold >= 0:
            raise ValueError(f"threshold must be >= 0, got {threshold}")
        self.threshold = float(threshold)
        self.path = str(MC_STUDENT_POLICY if path is None else path)
        self._net = PPOAgent(path=self.path)  # loads the file on first use, in every worker
        self._planner = PlannerAgent()
        self.last_deviated = False  #: whether the last move overruled the planner

    def params(self) -> dict[str, Any]:
        return {"path": self.path, "threshold": self.threshold}

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._planner.reset()

    def act(self, decision: Decision) -> int:
        self.last_deviated = False
        legal = decision.legal_actions
        planned = int(self._planner.act(decision))
        if len(legal) == 1:
            return planned
        logits = self._net.policy.masked_logits(decision.observation, decision.action_mask)
        idx = np.asarray(legal, np.int64)
        z = np.asarray(logits, np.float64)[idx]
        p = np.exp(z - z.max())
        p /= p.sum()
        best = int(np.argmax(p))
        if int(idx[best]) != planned and p[best] >= self.threshold:
            self.last_deviated = True
            return int(idx[best])
        return planned
