"""The opponent pool, now :mod:`agents.mexican_train.league` (this name stays importable).

The pool moved to the agents layer with the single-agent env that samples from it (so the
Gymnasium env needs no torch). Checkpoints that pickled ``training.league.OpponentSpec``
still load: :mod:`agents.mexican_train.pickles` maps the old path to the new one.
"""

from agents.mexican_train.league import (
    HEURISTIC,
    SNAPSHOT,
    League,
    OpponentSpec,
    Snapshot,
    file_name,
    parse_weights,
    snapshot_path,
)

__all__ = [
    "HEURISTIC",
    "SNAPSHOT",
    "League",
    "OpponentSpec",
    "Snapshot",
    "file_name",
    "parse_weights",
    "snapshot_path",
]
