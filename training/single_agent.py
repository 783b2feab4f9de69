"""The single-agent env for training: :class:`EnvFactory` builds it in vectorised-env workers.

The env itself, :class:`~agents.mexican_train.single_agent.SingleAgentEnv`, lives in the
agents layer (it needs agents for the opponents, never torch) and is Gymnasium's
``"mtrain_env/MexicanTrain-v0"``; its names stay importable from here.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.mexican_train.league import League
from agents.mexican_train.single_agent import ILLEGAL_MODES, SEAT_MODES, SingleAgentEnv, finite_high

__all__ = ["ILLEGAL_MODES", "SEAT_MODES", "EnvFactory", "SingleAgentEnv", "finite_high"]


@dataclass(frozen=True)
class EnvFactory:
    """A picklable ``() -> SingleAgentEnv`` for vectorised envs (keywords as :class:`SingleAgentEnv`).

    In a worker process it pins torch (imported later, for snapshot opponents) to one
    thread: each worker runs its envs sequentially, and extra threads only contend for
    the cores. This module does not import torch, so workers start quickly.
    """

    env_kwargs: Mapping[str, Any]
    league_state: Mapping[str, Any]
    league_root: str | None = None
    seat: str | int = "random"
    illegal_action: str = "raise"
    shaping: float = 0.0
    gamma: float = 1.0
    snapshot_deterministic: bool = False
    features: str = "env"

    def __call__(self) -> SingleAgentEnv:
        if multiprocessing.parent_process() is not None:
            os.environ["OMP_NUM_THREADS"] = "1"
            if "torch" in sys.modules:
                sys.modules["torch"].set_num_threads(1)
        return SingleAgentEnv(
            env_kwargs=self.env_kwargs,
            opponents=League.from_state_dict(self.league_state),
            seat=self.seat,
            league_root=self.league_root,
            illegal_action=self.illegal_action,
            shaping=self.shaping,
            gamma=self.gamma,
            snapshot_deterministic=self.snapshot_deterministic,
            features=self.features,
        )
