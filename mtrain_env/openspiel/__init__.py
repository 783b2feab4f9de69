"""OpenSpiel games of the package: ``import mtrain_env.openspiel`` registers both with pyspiel.

* ``"mtrain_mexican_train"`` (:mod:`mtrain_env.openspiel.mexican_train`): Mexican Train.
* ``"mtrain_block_dominoes"`` (:mod:`mtrain_env.openspiel.block`): partnership block dominoes.

Both wrap the package's pure rules cores (no rule is re-implemented), deal and draw through
explicit chance nodes (one outcome per tile), and give OpenSpiel's algorithms the env's
observation tensors and perfect-recall information-state strings. Needs the ``openspiel``
extra; ``import mtrain_env`` never loads OpenSpiel.

    import pyspiel
    import mtrain_env.openspiel  # registers the games
    game = pyspiel.load_game("mtrain_mexican_train", {"players": 2, "max_pips": 6})
"""

from __future__ import annotations

from mtrain_env.openspiel import block, mexican_train

__all__ = ["GAME_NAMES", "block", "mexican_train"]

#: the registered short names
GAME_NAMES: tuple[str, ...] = (mexican_train.GAME_NAME, block.GAME_NAME)
