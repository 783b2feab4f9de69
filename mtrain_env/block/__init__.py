"""Partnership block dominoes (``reference/001``): a pure rules core and its AEC env.

``mtrain_env.block.env(**config)`` is the wrapped env (also ``mtrain_env.block_dominoes_env``),
``mtrain_env.block.raw_env`` the bare one, registered as ``partnership_dominoes_v0`` (its
PettingZoo id; in code the game is "block", its rules class :class:`BlockDominoes`).
Rules B1-B13: :mod:`mtrain_env.block.core.rules`; configuration: :mod:`mtrain_env.block.core.config`.
The module names mirror :mod:`mtrain_env.mexican_train` (``GameConfig``, ``GameState``,
``PublicView``, ``ActionCodec``, ``ObservationEncoder``).
"""

from mtrain_env.block.core.config import GameConfig
from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.block.env import env, raw_env

#: the config's name before both games shared ``GameConfig`` (kept for existing code)
BlockConfig = GameConfig

__all__ = ["BlockConfig", "BlockDominoes", "GameConfig", "env", "raw_env"]
