"""How long each agent thought, per deal, kept beside the results across invocations.

``results.csv`` holds only what a seed decides (the same bytes on any number of workers), so
the time inside ``act`` goes to its own ledger, ``timing.jsonl``: one JSON line per deal
played, ``{"deal": d, "think_seconds": [...], "decisions": [...]}`` (per agent index),
appended as each deal is saved. A resumed or extended run, or a rerun that plays nothing,
reports the timing of every deal in the results that some invocation timed, not only of the
deals it played itself (``decisions_timed`` says how many decisions that is).

The ledger is a measurement, not a result: a line cut short by a kill (the last one) is
skipped, a line that is not a timing entry is skipped with a warning naming it, and the
deals they held count as untimed. A deal timed twice (played again after its results were
dropped) counts its last line.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from mtrain_env.tilegame import json_text

TIMING_FILE = "timing.jsonl"


@dataclass(frozen=True)
class Timing:
    """Time inside ``act`` and decisions, per agent index, summed over the deals timed."""

    think_seconds: list[float]
    decisions: list[int]
    deals: int  #: how many deals of the results these cover


class TimingLedger:
    """``timing.jsonl`` of one tournament directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)

    def append(self, deal: int, think_seconds: Sequence[float], decisions: Sequence[int]) -> None:
        """Add one deal's timing (one line, flushed: a kill loses at most that line)."""
        entry = {"deal": deal, "think_seconds": list(think_seconds), "decisions": list(decisions)}
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def totals(self, deals: Collection[int], agents: int) -> Timing:
        """The timing of those of ``deals`` the ledger holds, for ``agents`` agent indices."""
        last: dict[int, tuple[list[float], list[int]]] = {}
        wanted = set(deals)
        for deal, seconds, decisions in self._entries(agents):
            if deal in wanted:
                last[deal] = (seconds, decisions)
        think = [0.0] * agents
        count = [0] * agents
        for seconds, decisions in last.values():
            for i in range(agents):
                think[i] += seconds[i]
                count[i] += decisions[i]
        return Timing(think, count, len(last))

    def _entries(self, agents: int) -> list[tuple[int, list[float], list[int]]]:
        if not self.path.is_file():
            return []
        text = self.path.read_text(encoding="utf-8", errors="replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        elif lines:
            lines.pop()  # the last line was cut short by a kill: no timing for that deal
        entries = []
        for number, line in enumerate(lines, 1):
            entry = _parse(line, agents)
            if entry is None:
                print(f"warning: {self.path}:{number}: not a timing entry, skipped", file=sys.stderr)
                continue
            entries.append(entry)
        return entries


def _parse(line: str, agents: int) -> tuple[int, list[float], list[int]] | None:
    """``(deal, think_seconds, decisions)`` of one ledger line, or None if it is not one."""
    try:
        entry = json_text.loads(line)
    except ValueError:  # not JSON, or nested past the recursion limit
        return None
    if not isinstance(entry, dict):
        return None
    deal, seconds, decisions = entry.get("deal"), entry.get("think_seconds"), entry.get("decisions")
    if not (isinstance(deal, int) and not isinstance(deal, bool) and deal >= 0):
        return None
    if not (isinstance(seconds, list) and isinstance(decisions, list)):
        return None
    if len(seconds) != agents or len(decisions) != agents:
        return None
    if not all(
        isinstance(s, (int, float)) and not isinstance(s, bool) and 0 <= s < float("inf") for s in seconds
    ):
        return None
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in decisions):
        return None
    return deal, [float(s) for s in seconds], decisions
