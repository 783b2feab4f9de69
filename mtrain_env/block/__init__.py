"""Partnership block dominoes (``reference/001``): a pure rules core and its AEC env.

``mtrain_env.block.env(**config)`` is the wrapped env (also ``mtrain_env.block_dominoes_env``),
``mtrain_env.block.raw_env`` the bare one, registered as ``partnership_dominoes_v0``.
Rules B1-B13: :mod:`mtrain_env.block.core.rules`; configuration: :mod:`mtrain_env.block.core.config`.
"""

from mtrain_env.block.core.config import BlockConfig
from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.block.env import env, raw_env

__all__ = ["BlockConfig", "BlockDominoes", "env", "raw_env"]
