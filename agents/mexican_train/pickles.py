"""Reading run state pickled before the package layout changed.

Checkpoints hold pickled agents (the single-agent wrapper's opponents): a pickle names
each object's class by module path, and the modules moved when the layout became
``mtrain_env/{tilegame,mexican_train,block}`` and ``agents/mexican_train``. :func:`loads`
and :func:`load` map the old paths to the new ones, so a run checkpointed by an earlier
version resumes. They read only a run's own ``state.pkl`` (see :mod:`training.train`: the
trainer wrote it, and resume checks its sha256 first); nothing else is unpickled. (Policy
files are not pickles at all, and model archives name
``training.policy.GuardedMaskablePolicy``, which still exists.)
"""

from __future__ import annotations

import io
import pickle
from typing import IO, Any

#: module paths of earlier versions -> where those modules live now
RENAMED_MODULES: dict[str, str] = {
    **{f"agents.{m}": f"agents.mexican_train.{m}" for m in ("greedy", "planner", "chains", "mc", "features")},
    "agents.ppo": "agents.mexican_train.ppo",
    "agents.random_agent": "agents.mexican_train.random_agent",
    "agents.base": "agents.mexican_train.base",  # Agent and Decision (the generic part stayed)
    "mtrain_env.core.tiles": "mtrain_env.tilegame.tiles",
    **{
        f"mtrain_env.core.{m}": f"mtrain_env.mexican_train.core.{m}"
        for m in ("config", "dealing", "public", "rules", "scoring", "serialize", "state")
    },
    "mtrain_env.env": "mtrain_env.mexican_train.env",
    "training.league": "agents.mexican_train.league",  # the pool moved down with the single-agent env
}
#: classes renamed within their module: (old module, old name) -> new name
RENAMED_CLASSES: dict[tuple[str, str], str] = {("mtrain_env.core.public", "PublicState"): "PublicView"}


class _RenamingUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        new_name = RENAMED_CLASSES.get((module, name), name)
        if module == "agents.base" and name in ("BaseAgent", "SeatDecision"):
            return super().find_class(module, name)
        return super().find_class(RENAMED_MODULES.get(module, module), new_name)


def load(file: IO[bytes]) -> Any:
    """``pickle.load`` that also reads pickles naming the old module paths."""
    return _RenamingUnpickler(file).load()


def loads(data: bytes) -> Any:
    """``pickle.loads`` that also reads pickles naming the old module paths."""
    return load(io.BytesIO(data))
