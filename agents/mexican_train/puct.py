"""``ismcts_puct``: ISMCTS guided by a learned policy (PUCT priors at the root), and its distillation.

The search is :class:`~agents.mexican_train.ismcts.ISMCTSAgent`'s (worlds consistent with
the seat's view, one shared tree, chain-policy rollouts for the values) with an
AlphaZero-style root: every legal move starts as a child, and iterations go to
``Q + c_puct P sqrt(N) / (1 + n)``, ``P`` being a self-play network's policy
(:mod:`agents.mexican_train.tilenet`, one forward pass per decision on the seat's own
observation and mask: nothing hidden). The network is trained by expert iteration on
positions labelled with this search's root visits (``training/expert_iteration.py``), so
the prior learns where the search ends up and the search spends its budget there.

``ismcts_puct_policy`` is the distilled network alone (argmax of the same policy, no search):
the fast player. Both read the shipped :data:`PUCT_POLICY` unless given ``path=``.

This was the registered ``champion`` until ``mc`` with network leaves beat it
(:mod:`agents.mexican_train.champion`); kept under its own name, with its measurements in
``docs/champion.md`` ("Where the strength is").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.mexican_train.base import Decision
from agents.mexican_train.ismcts import ISMCTSAgent
from agents.mexican_train.ppo import PPOAgent
from mtrain_env.mexican_train.core.config import GameConfig

__all__ = ["PUCT_POLICY", "PUCTAgent", "PUCTPolicyAgent", "softmax_priors"]

#: the expert-iteration network shipped with the package (see docs/champion.md, "Where the strength is")
PUCT_POLICY = Path(__file__).resolve().parent.parent / "policies" / "ismcts_puct.npz"


def softmax_priors(logits: np.ndarray, temperature: float) -> np.ndarray:
    """Probabilities ``softmax(logits / temperature)`` of a vector of legal actions' logits."""
    z = np.asarray(logits, np.float64) / temperature
    z = np.exp(z - z.max())
    return z / z.sum()


class PUCTAgent(ISMCTSAgent):
    """ISMCTS whose root is PUCT over a learned policy's priors (see the module docstring).

    Args:
        seed: seeds the worlds.
        sims: iterations per decision (default 200); ``ms``: milliseconds instead.
        c: UCB constant below the root (pips a round).
        c_puct: weight of the prior at the root (pips a round per unit of prior).
        temperature: softens (``> 1``) or sharpens the network's policy before use.
        path: the policy file (default :data:`PUCT_POLICY`).
        opponents: as ``ismcts``'s; default ``"chain"`` (the opponents play the chain policy
            in the tree: measured stronger, see docs/champion.md, "Where the strength is").
    """

    name = "ismcts_puct"

    def __init__(
        self,
        seed: int | None = None,
        sims: int | None = None,
        ms: float | None = None,
        c: float = 30.0,
        c_puct: float = 40.0,
        temperature: float = 1.0,
        path: str | Path | None = None,
        opponents: str = "chain",
    ) -> None:
        super().__init__(seed, sims=sims, ms=ms, c=c, opponents=opponents)
        if c_puct <= 0:
            raise ValueError(f"c_puct must be > 0, got {c_puct}")
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self._c_puct = float(c_puct)
        self.temperature = float(temperature)
        self.path = str(PUCT_POLICY if path is None else path)
        self._net = PPOAgent(path=self.path)  # loads the file on first use, in every worker

    def check_game(self, config: GameConfig) -> None:
        self._net.check_game(config)

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "c_puct": self._c_puct,
            "temperature": self.temperature,
            "path": self.path,
        }

    def c_puct(self) -> float:
        return self._c_puct

    def root_priors(self, decision: Decision) -> np.ndarray:
        """The network's policy over the legal actions (in ``decision.legal_actions`` order),
        from the ``ppo`` agent's numpy forward pass (no torch at play time)."""
        logits = self._net.policy.masked_logits(decision.observation, decision.action_mask)
        legal = np.asarray(decision.legal_actions, np.int64)
        return softmax_priors(logits[legal], self.temperature)


class PUCTPolicyAgent(PPOAgent):
    """The ismcts_puct network alone, argmax over the legal actions (no search): the fast player."""

    name = "ismcts_puct_policy"

    def __init__(
        self, seed: int | None = None, path: str | Path | None = None, deterministic: bool = True
    ) -> None:
        super().__init__(seed, path=PUCT_POLICY if path is None else path, deterministic=deterministic)
