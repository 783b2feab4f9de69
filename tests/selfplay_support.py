"""Shared set-up of the self-play tests: a small CLI run and a checkpoint round trip."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from training.selfplay.checkpoint import load_checkpoint, save_checkpoint

#: `mtrain selfplay` options of a run small enough for a unit test (3 players, double-6)
SMALL_RUN = [
    *["--players", "3", "--max-pips", "6", "--games", "6", "--rollout-steps", "12", "--hidden", "16"],
    *["--pair-hidden", "8", "--minibatch", "32", "--eval-every", "0", "--no-progress"],
]


def checkpoint_round_trip(make: Callable[[], Any], path: Path, before: int = 1) -> tuple[Any, Any]:
    """A learner iterated ``before`` times, then saved to ``path``; and a fresh learner
    restored from that file. Both made by ``make``."""
    first = make()
    for _ in range(before):
        first.iterate()
    save_checkpoint(first.state_dict(), path)
    resumed = make()
    resumed.load_state_dict(load_checkpoint(path))
    return first, resumed
