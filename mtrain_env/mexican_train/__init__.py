"""Mexican Train: the pure rules core (:mod:`mtrain_env.mexican_train.core`) and its AEC env.

``mtrain_env.mexican_train.env(**config)`` (also ``mtrain_env.env``) is the wrapped env,
``raw_env`` the bare one, registered as ``mexican_train_v0``. The adapter pieces around
the core: :mod:`~.codec` (actions), :mod:`~.observation` (the flat observation),
:mod:`~.rewards`, :mod:`~.env`, :mod:`~.render` and :mod:`~.render_image`.
"""

from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.env import env, raw_env

__all__ = ["GameConfig", "MexicanTrain", "env", "raw_env"]
