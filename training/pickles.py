"""Reading run state pickled by earlier versions: now :mod:`agents.mexican_train.pickles`
(this name stays importable)."""

from agents.mexican_train.pickles import RENAMED_CLASSES, RENAMED_MODULES, load, loads

__all__ = ["RENAMED_CLASSES", "RENAMED_MODULES", "load", "loads"]
