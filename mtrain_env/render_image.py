"""Placeholder picture; replaced by the Pillow renderer."""

from __future__ import annotations

import numpy as np

from mtrain_env.core.rules import MexicanTrain
from mtrain_env.core.state import GameState


def draw_table(game: MexicanTrain, s: GameState) -> np.ndarray:
    return np.zeros((10, 10, 3), dtype=np.uint8)
