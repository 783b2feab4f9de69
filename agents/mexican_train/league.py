"""The opponent pool ("league") the learner trains against.

Sampling scheme — for every opponent seat of every episode, independently, with the
episode's seeded generator:

* with probability ``p_heuristic``: a heuristic agent of :mod:`agents`, drawn in
  proportion to its weight (``heuristics={"greedy": 2, "random": 1}``);
* with probability ``p_latest``: the most recent frozen snapshot of the learner;
* with probability ``p_older``: a snapshot drawn uniformly among the older ones.

The three probabilities are renormalised over the categories that are not empty, so the
pool starts as pure heuristics and the snapshot share grows in as snapshots join. A
snapshot of the learner joins every ``snapshot_every`` environment steps (the trainer
asks :meth:`League.due`); at most ``max_snapshots`` are kept (the oldest leave first).

Heuristics keep the learner honest against fixed strategies (no forgetting how to beat
them); the latest snapshot is the self-play signal; older snapshots keep it from cycling
between strategies that each beat only the previous one.

The whole pool is plain data (:meth:`League.state_dict` is JSON), so it is saved in every
checkpoint and sent to the environment worker processes, which sample from their own
copy with their own generator. Snapshots are named by their file name in the league
directory (never a path: a run directory can be copied or moved); any other name is refused.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.registry import parse_spec, split_specs

HEURISTIC = "heuristic"
SNAPSHOT = "snapshot"


@dataclass(frozen=True)
class OpponentSpec:
    """One opponent: a registered heuristic agent, or a snapshot policy file."""

    kind: str  #: ``"heuristic"`` or ``"snapshot"``
    name: str  #: registry name (heuristic) or snapshot file name, relative to the league root
    params: tuple[tuple[str, Any], ...] = ()  #: constructor parameters (heuristics)

    @property
    def label(self) -> str:
        """Short readable label, e.g. ``greedy``, ``mc[sims=50]`` or ``snapshot:snap_000040960.pt``."""
        if self.kind != HEURISTIC:
            return f"{SNAPSHOT}:{self.name}"
        inner = ",".join(f"{k}={v}" for k, v in self.params)
        return f"{self.name}[{inner}]" if inner else self.name


def file_name(name: Any) -> str:
    """``name`` if it is a plain file name (no directory, not ``.`` or ``..``), else ``ValueError``."""
    if not isinstance(name, str) or name in ("", ".", "..") or Path(name).name != name or "\\" in name:
        raise ValueError(f"a snapshot is named by its file name in the league directory, got {name!r}")
    return name


@dataclass(frozen=True)
class Snapshot:
    """A frozen copy of the learner's policy that joined the pool at ``step``."""

    step: int
    file: str  #: file name relative to the league root

    def __post_init__(self) -> None:
        file_name(self.file)


@dataclass
class League:
    """Opponent pool with the sampling scheme of the module docstring.

    Args:
        heuristics: registry name -> sampling weight (> 0).
        p_heuristic: share of heuristic opponents.
        p_latest: share of the latest snapshot.
        p_older: share of the older snapshots (uniform among them).
        snapshot_every: environment steps between two snapshots (0 = never).
        max_snapshots: snapshots kept (the oldest leave first).
        heuristic_params: registry name -> constructor parameters.
    """

    heuristics: dict[str, float]
    p_heuristic: float = 0.5
    p_latest: float = 0.3
    p_older: float = 0.2
    snapshot_every: int = 100_000
    max_snapshots: int = 20
    heuristic_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    snapshots: list[Snapshot] = field(default_factory=list)
    next_snapshot_step: int = -1  #: set from ``snapshot_every`` on construction

    def __post_init__(self) -> None:
        if not self.heuristics:
            raise ValueError("a league needs at least one heuristic agent (the pool before any snapshot)")
        if any(w <= 0 for w in self.heuristics.values()):
            raise ValueError(f"heuristic weights must be > 0, got {self.heuristics}")
        probs = (self.p_heuristic, self.p_latest, self.p_older)
        if any(p < 0 for p in probs) or self.p_heuristic <= 0:
            raise ValueError(f"need p_heuristic > 0 and p_latest, p_older >= 0, got {probs}")
        if self.max_snapshots < 1:
            raise ValueError(f"max_snapshots must be >= 1, got {self.max_snapshots}")
        if self.next_snapshot_step < 0:
            self.next_snapshot_step = self.snapshot_every if self.snapshot_every > 0 else -1
        self.heuristics = {k: float(v) for k, v in self.heuristics.items()}

    # ---------------------------------------------------------------- sampling
    def category_probabilities(self) -> dict[str, float]:
        """Effective probabilities of ``heuristic`` / ``latest`` / ``older`` now (sum 1)."""
        raw = {
            "heuristic": self.p_heuristic,
            "latest": self.p_latest if self.snapshots else 0.0,
            "older": self.p_older if len(self.snapshots) > 1 else 0.0,
        }
        total = sum(raw.values())
        return {k: v / total for k, v in raw.items()}

    def sample(self, rng: np.random.Generator, count: int) -> list[OpponentSpec]:
        """``count`` opponents drawn independently with ``rng`` (see the module docstring)."""
        probs = self.category_probabilities()
        names = list(self.heuristics)
        weights = np.array([self.heuristics[k] for k in names], dtype=np.float64)
        weights /= weights.sum()
        cats = ("heuristic", "latest", "older")
        cat_p = np.array([probs[c] for c in cats])
        specs = []
        for _ in range(count):
            cat = cats[int(rng.choice(3, p=cat_p))]
            if cat == "heuristic":
                name = names[int(rng.choice(len(names), p=weights))]
                base, spec_params = parse_spec(name) if "[" in name else (name, {})  # "mc[sims=50]"
                params = tuple(sorted({**spec_params, **self.heuristic_params.get(name, {})}.items()))
                specs.append(OpponentSpec(HEURISTIC, base, params))
            elif cat == "latest":
                specs.append(OpponentSpec(SNAPSHOT, self.snapshots[-1].file))
            else:
                older = self.snapshots[:-1]
                specs.append(OpponentSpec(SNAPSHOT, older[int(rng.integers(len(older)))].file))
        return specs

    # --------------------------------------------------------------- snapshots
    def due(self, step: int) -> bool:
        """Whether a snapshot should join at environment step ``step``."""
        return self.next_snapshot_step >= 0 and step >= self.next_snapshot_step

    def add_snapshot(self, step: int, file: str) -> list[Snapshot]:
        """Add a snapshot taken at ``step``; returns the snapshots that left the pool."""
        self.snapshots.append(Snapshot(int(step), str(file)))
        if self.snapshot_every > 0:
            while self.next_snapshot_step <= step:
                self.next_snapshot_step += self.snapshot_every
        dropped = self.snapshots[: -self.max_snapshots] if len(self.snapshots) > self.max_snapshots else []
        self.snapshots = self.snapshots[-self.max_snapshots :]
        return dropped

    def files(self) -> list[str]:
        """Snapshot files currently in the pool."""
        return [s.file for s in self.snapshots]

    # ----------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable state (configuration and contents), keyed by the fields."""
        return asdict(self)

    @classmethod
    def from_state_dict(cls, d: Mapping[str, Any]) -> League:
        """Inverse of :meth:`state_dict`."""
        return cls(
            heuristics=dict(d["heuristics"]),
            p_heuristic=float(d["p_heuristic"]),
            p_latest=float(d["p_latest"]),
            p_older=float(d["p_older"]),
            snapshot_every=int(d["snapshot_every"]),
            max_snapshots=int(d["max_snapshots"]),
            heuristic_params={k: dict(v) for k, v in d.get("heuristic_params", {}).items()},
            snapshots=[Snapshot(int(s["step"]), str(s["file"])) for s in d["snapshots"]],
            next_snapshot_step=int(d["next_snapshot_step"]),
        )


def parse_weights(text: str) -> dict[str, float]:
    """``"greedy:2,random:1"`` (or ``"greedy,random"``, weight 1) -> ``{"greedy": 2.0, "random": 1.0}``.

    Names may be agent specs (``"mc[sims=50,z=2]:2"``: commas inside brackets stay) and
    ``module:Class`` paths of plugin agents (``"my.agents:Clever:3"``). Raises ``ValueError``
    saying which part is wrong: no names, an empty name, a name given twice, a weight that
    is not a finite number > 0. (Whether a name is a registered agent is checked by the
    trainer's configuration.)
    """
    out: dict[str, float] = {}
    for part in split_specs(text):
        name, raw = _name_and_weight(part)
        if not name:
            raise ValueError(
                f"an agent name is missing in {part!r} (expected NAME or NAME:WEIGHT, e.g. greedy:2)"
            )
        if name in out:
            raise ValueError(f"{name!r} is named twice in {text!r}")
        try:
            weight = 1.0 if raw is None else float(raw)
        except ValueError:
            weight = math.nan
        if not (math.isfinite(weight) and weight > 0):
            raise ValueError(f"the weight of {name!r} must be a number > 0, got {(raw or '').strip()!r}")
        out[name] = weight
    if not out:
        raise ValueError(f"no agent names in {text!r} (expected e.g. greedy:2,random:1)")
    return out


def _name_and_weight(part: str) -> tuple[str, str | None]:
    """``"greedy:2"`` -> ``("greedy", "2")``; ``"mc[sims=8]"`` -> ``("mc[sims=8]", None)``; the
    last ``:`` outside brackets starts the weight, unless it separates a module path from a
    class name (``"pkg.mod:Agent"``, a plugin agent without a weight)."""
    depth, colon = 0, -1
    for i, ch in enumerate(part):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == ":" and depth == 0:
            colon = i
    if colon < 0:
        return part.strip(), None
    head, tail = part[:colon].strip(), part[colon + 1 :].strip()
    plugin_class = tail.isidentifier() and "." in head and ":" not in head and "[" not in head
    return (part.strip(), None) if plugin_class else (head, tail)


def snapshot_path(root: str | Path, spec: OpponentSpec) -> Path:
    """The policy file of a snapshot opponent (inside ``root``: ``ValueError`` for a name
    that is not a plain file name)."""
    return Path(root) / file_name(spec.name)
