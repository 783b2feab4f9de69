"""``results.csv``: a tournament's rows, written deal by deal and checked when read back.

One row per seat per round (:class:`Row`), in deal order; each deal's rows are written
in one block (``write``, ``flush``, ``fsync``), then a line ``<deal> <sha256>`` of that
block's exact text is appended to ``results.sha256`` (also synced). A run that is
killed can therefore leave at most one deal at the end of the file without its checksum
(or a line torn in two): that is the only damage repaired, by dropping that deal, which
is played again identically. Everything else is refused with the file, the line and
what is wrong (:class:`DamagedResultsError`):

* a line that does not parse (wrong field count, a column that is not its type);
* a value out of its range (negative pips, a rank beyond the seats, a share outside
  [0, 1], a non-finite score), or a round whose ``lowest`` / ``lowest_share`` / ``rank``
  disagree with its own penalties, whose seats name two first players, or in which two
  seats went out or a seat went out with a cost;
* a deal block whose text no longer matches its checksum, a checksum with no rows, rows
  of one deal in two places;
* against the run's plan (on resume): a deal id out of range, a game or seat the plan
  does not play, an agent label or seed that is not the one the plan derives for that
  seat, a deal with missing or extra rows; and a round that contradicts the game's rules
  under the plan's config (:meth:`~agents.tournament.games.TournamentGame.round_problem`:
  a score that is not the one the costs imply, costs beyond the set's pips, more actions
  than the longest possible round).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol, get_type_hints

from agents.tournament.seating import agent_seed, deal_seed, seating
from mtrain_env.tilegame.files import atomic_write, os_error_text

RESULTS_FILE = "results.csv"


class Row(NamedTuple):
    """One seat's result in one round: a line of ``results.csv``."""

    deal: int  #: deal id, 0..deals-1
    lineup: int  #: index into the run's lineups
    rotation: int  #: agents shifted clockwise by this many seats (0..P-1)
    round: int  #: round of the game (0 for single rounds; 0..rounds-1 in a session)
    seat: int
    agent: str  #: agent label
    deal_seed: int  #: seed of the round-0 deal (the same in every rotation)
    agent_seed: int  #: seed given to this seat's ``agent.reset()`` for this game
    first_player: int  #: seat that opened this round (R6; block: the hand's opener)
    #: the seat's cost of the round, lower is better: pips left in hand (Mexican Train,
    #: R24, blank_penalty aware) or the points its pair scored (block, B10-B12)
    penalty: int
    score: float  #: the engine's round score (= penalty, or the positive_scoring share)
    went_out: int  #: 1 if the hand was emptied
    lowest: int  #: 1 if the penalty is the round's minimum (ties included)
    lowest_share: float  #: 1/k for the k seats tied lowest, else 0
    rank: int  #: 1 + seats with a strictly smaller penalty
    actions: int  #: actions this seat took in the round (draws and passes included)


#: ``results.csv`` columns: one row per seat per round
COLUMNS: tuple[str, ...] = Row._fields
HEADER = ",".join(COLUMNS) + "\n"


class RunPlan(Protocol):
    """What checking rows against a run needs of its plan (:class:`agents.tournament.harness.Plan`)."""

    @property
    def seed(self) -> int: ...

    @property
    def labels(self) -> tuple[str, ...]: ...

    @property
    def lineups(self) -> tuple[tuple[int, ...], ...]: ...

    @property
    def num_players(self) -> int: ...

    @property
    def rounds(self) -> int: ...

    def games(self, deal: int) -> list[tuple[int, int]]: ...

    def round_problem(self, rows: Sequence[Row]) -> tuple[int, str] | None:
        """What one round's rows (seat order) contradict of the game's rules (see
        :meth:`agents.tournament.games.TournamentGame.round_problem`)."""
        ...


class ConfigMismatchError(ValueError):
    """The output directory holds results of a different tournament configuration."""


class DamagedResultsError(ConfigMismatchError):
    """A results file was changed after it was written (or is not one): refused, never mixed in."""


def rows_to_csv(rows: Sequence[Sequence[Any]]) -> str:
    """CSV text of rows (floats by ``repr``, so the text is exact and deterministic)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerows(rows)
    return buf.getvalue()


def checksum(text: str) -> str:
    """The sha256 of a deal block's exact text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_results(path: str | os.PathLike[str]) -> list[Row]:
    """The verified rows of a ``results.csv`` (its ``results.sha256`` beside it)."""
    return ResultsFile(Path(path)).read()[0]


# ----------------------------------------------------------------- parsing
def _as_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value


_PARSE: dict[Any, Callable[[str], Any]] = {int: int, float: _as_float, str: str}
#: text -> value converters of the columns, from the ``Row`` annotations
_PARSERS: tuple[tuple[str, Callable[[str], Any]], ...] = tuple(
    (name, _PARSE[kind]) for name, kind in get_type_hints(Row).items()
)
#: columns that must be >= 0, and those that are 0/1 flags
_NON_NEGATIVE = ("deal", "lineup", "rotation", "round", "seat", "deal_seed", "agent_seed", "first_player",
                 "penalty", "actions")  # fmt: skip
_FLAGS = ("went_out", "lowest")


def parse_row(raw: list[str], where: str) -> Row:
    """A :class:`Row` from CSV fields; :class:`DamagedResultsError` naming ``where`` and the column."""
    if len(raw) != len(COLUMNS):
        raise DamagedResultsError(f"{where}: expected {len(COLUMNS)} fields, got {len(raw)}")
    values = []
    for (name, parse), text in zip(_PARSERS, raw, strict=True):
        try:
            values.append(parse(text))
        except ValueError:
            raise DamagedResultsError(f"{where}: column {name!r}: {text!r} is not a valid value") from None
    row = Row._make(values)
    for name in _NON_NEGATIVE:
        if getattr(row, name) < 0:
            raise DamagedResultsError(f"{where}: column {name!r} is negative ({getattr(row, name)})")
    for name in _FLAGS:
        if getattr(row, name) not in (0, 1):
            raise DamagedResultsError(f"{where}: column {name!r} must be 0 or 1, got {getattr(row, name)}")
    if not 0.0 <= row.lowest_share <= 1.0:
        raise DamagedResultsError(f"{where}: column 'lowest_share' must be in [0, 1], got {row.lowest_share}")
    if row.rank < 1:
        raise DamagedResultsError(f"{where}: column 'rank' must be >= 1, got {row.rank}")
    return row


def standings(costs: Sequence[int]) -> list[tuple[int, float, int]]:
    """Per seat of one round, its derived columns from the round's costs: ``lowest`` (1 at
    the minimum, ties included), ``lowest_share`` (1/k among k tied lowest) and ``rank``
    (1 + seats with a strictly smaller cost)."""
    low = min(costs)
    ties = costs.count(low)
    return [
        (int(c == low), 1.0 / ties if c == low else 0.0, 1 + sum(1 for x in costs if x < c)) for c in costs
    ]


def check_round(rows: Sequence[Row], where: Sequence[str]) -> None:
    """The facts of one round that every game shares hold; ``where[i]`` names row ``i``'s line.

    One seat opened it (R6; block B5, B6), at most one seat went out, and that seat's cost
    is 0 (R23, R24: it holds no pips; block B10: its pair won, the losers score); the
    derived columns (``lowest``, ``lowest_share``, ``rank``) agree with the penalties.
    """
    for r, line in zip(rows, where, strict=True):
        if r.first_player != rows[0].first_player:
            raise DamagedResultsError(
                f"{line}: seat {r.seat}'s first_player {r.first_player} is not seat {rows[0].seat}'s "
                f"{rows[0].first_player}: one seat opens a round (R6, B5, B6)"
            )
        if r.went_out and r.penalty != 0:
            raise DamagedResultsError(
                f"{line}: seat {r.seat} went out with a cost of {r.penalty}: the seat that goes out "
                "holds no pips (R24) and its pair scores none (B10)"
            )
    out = [i for i, r in enumerate(rows) if r.went_out]
    if len(out) > 1:
        raise DamagedResultsError(
            f"{where[out[1]]}: seats {[rows[i].seat for i in out]} went out in one round: "
            "the round ends when the first does (R23, B10)"
        )
    costs = [r.penalty for r in rows]
    for r, line, expected in zip(rows, where, standings(costs), strict=True):
        if (r.lowest, r.lowest_share, r.rank) != expected:
            raise DamagedResultsError(
                f"{line}: seat {r.seat}'s lowest/lowest_share/rank {(r.lowest, r.lowest_share, r.rank)} "
                f"disagree with the round's penalties {costs} (expected {expected})"
            )


# -------------------------------------------------------------------- file
@dataclass
class _Block:
    """One deal's consecutive lines in the file."""

    deal: int
    first_line: int
    rows: list[Row]
    lines: list[int]  #: the file line of each row
    text: str


class ResultsFile:
    """A ``results.csv`` and the ``results.sha256`` beside it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sums_path = path.with_suffix(".sha256")

    def exists(self) -> bool:
        return self.path.exists()

    def create(self) -> None:
        """An empty results file (header only) and no checksums."""
        atomic_write(self.path, HEADER)
        atomic_write(self.sums_path, "")

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
        self.sums_path.unlink(missing_ok=True)

    def append(self, deal: int, rows: Sequence[Row]) -> None:
        """Write one deal's rows, then its checksum, each synced before the next."""
        text = rows_to_csv(rows)
        for path, chunk in ((self.path, text), (self.sums_path, f"{deal} {checksum(text)}\n")):
            with open(path, "a", encoding="utf-8") as f:
                f.write(chunk)
                f.flush()
                os.fsync(f.fileno())

    def rewrite(self, rows: Sequence[Row]) -> None:
        """Both files holding exactly ``rows`` (whole deals, in deal order)."""
        blocks: dict[int, list[Row]] = {}
        for r in rows:
            blocks.setdefault(r.deal, []).append(r)
        texts = {deal: rows_to_csv(block) for deal, block in blocks.items()}
        atomic_write(self.path, HEADER + "".join(texts.values()))
        atomic_write(self.sums_path, "".join(f"{deal} {checksum(text)}\n" for deal, text in texts.items()))

    def read(self, plan: RunPlan | None = None) -> tuple[list[Row], bool]:
        """The rows of every verified deal, and whether a deal cut short by a kill was dropped.

        With ``plan`` every row is also checked against the run it claims to belong to.
        """
        text = read_text(self.path)
        dropped = False
        if text and not text.endswith("\n"):
            text = text[: text.rfind("\n") + 1]  # a line torn by a kill
            dropped = True
        if not text.startswith(HEADER):
            raise DamagedResultsError(
                f"{self.path}: does not start with the header {HEADER.strip()}; it was written by another "
                "version of the harness or is not a results file (use a new --out or --overwrite)"
            )
        blocks = self._blocks(text)
        sums = self._checksums()
        for deal in sums:
            if deal not in blocks:
                raise DamagedResultsError(
                    f"{self.sums_path}: deal {deal} has a checksum but no rows in {self.path} "
                    "(rows were removed after they were written)"
                )
        unchecked = [b for b in blocks.values() if b.deal not in sums]
        if unchecked:
            last = max(blocks.values(), key=lambda b: b.first_line)
            if len(unchecked) > 1 or unchecked[0] is not last:
                b = next(b for b in unchecked if b is not last)  # the first that is not the torn end
                raise DamagedResultsError(
                    f"{self.path}:{b.first_line}: deal {b.deal} has no checksum in {self.sums_path} "
                    "(rows were added after the run wrote them)"
                )
            del blocks[last.deal]  # written, then killed before its checksum: played again
            dropped = True
        for b in blocks.values():  # only verified deals from here: a dropped one may be torn
            self._check_rounds(b)
            if checksum(b.text) != sums[b.deal]:
                raise DamagedResultsError(
                    f"{self.path}:{b.first_line}: the rows of deal {b.deal} do not match their checksum "
                    f"in {self.sums_path}: the file was edited after it was written"
                )
        if plan is not None:
            for b in blocks.values():
                _check_against_plan(plan, b, self.path)
        rows = [r for deal in sorted(blocks) for r in blocks[deal].rows]
        return rows, dropped

    def _blocks(self, text: str) -> dict[int, _Block]:
        blocks: dict[int, _Block] = {}
        current: _Block | None = None
        lines = text.splitlines(keepends=True)
        for number, line in enumerate(lines[1:], start=2):
            where = f"{self.path}:{number}"
            try:
                (raw,) = list(csv.reader([line]))
            except csv.Error as err:  # a field past csv's size limit, a NUL byte
                raise DamagedResultsError(f"{where}: not a CSV line ({err})") from None
            row = parse_row(raw, where)
            if current is None or row.deal != current.deal:
                if row.deal in blocks:
                    raise DamagedResultsError(f"{where}: rows of deal {row.deal} appear in two places")
                current = blocks[row.deal] = _Block(row.deal, number, [], [], "")
            current.rows.append(row)
            current.lines.append(number)
            current.text += line
        return blocks

    def _check_rounds(self, block: _Block) -> None:
        for numbered in _rounds(block):
            check_round([r for _, r in numbered], [f"{self.path}:{n}" for n, _ in numbered])

    def _checksums(self) -> dict[int, str]:
        if not self.sums_path.exists():
            raise DamagedResultsError(
                f"{self.sums_path} is missing: the checksums of {self.path} cannot be verified "
                "(use a new --out or --overwrite)"
            )
        sums: dict[int, str] = {}
        text = read_text(self.sums_path)
        if text and not text.endswith("\n"):
            text = text[: text.rfind("\n") + 1]  # a checksum line torn by a kill: its deal is replayed
        for number, line in enumerate(text.splitlines(), start=1):
            deal_text, _, digest = line.partition(" ")
            number_ok = deal_text.isascii() and deal_text.isdigit()  # not "²", which int() refuses
            if not number_ok or len(digest) != 64 or int(deal_text) in sums:
                where = f"{self.sums_path}:{number}"
                raise DamagedResultsError(f"{where}: not a '<deal> <sha256>' line ({line!r})")
            sums[int(deal_text)] = digest
        return sums


def _rounds(block: _Block) -> list[list[tuple[int, Row]]]:
    """A deal's rows grouped by round (lineup, rotation, round), each with its file line."""
    by_round: dict[tuple[int, int, int], list[tuple[int, Row]]] = {}
    for number, r in zip(block.lines, block.rows, strict=True):
        by_round.setdefault((r.lineup, r.rotation, r.round), []).append((number, r))
    return list(by_round.values())


def read_text(path: Path) -> str:
    """A results file's text; :class:`DamagedResultsError` (a ``ValueError``) naming it if it
    is not UTF-8 or cannot be read (a directory in its place, permissions, an I/O error)."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise DamagedResultsError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except OSError as err:
        raise DamagedResultsError(f"{path}: cannot read it ({os_error_text(err)})") from None


def _check_against_plan(plan: RunPlan, block: _Block, path: Path) -> None:
    """Every row of one deal is the row the plan derives for it; the deal is complete."""
    where = f"{path}:{block.first_line}: deal {block.deal}"
    expected_keys = {
        (lineup, rotation, rnd, seat)
        for lineup, rotation in plan.games(block.deal)
        for rnd in range(plan.rounds)
        for seat in range(plan.num_players)
    }
    keys = [(r.lineup, r.rotation, r.round, r.seat) for r in block.rows]
    if len(keys) != len(set(keys)) or set(keys) != expected_keys:
        raise DamagedResultsError(
            f"{where}: holds {len(keys)} rows, not the {len(expected_keys)} seat-rounds this run plays "
            "for a deal (rows were added, removed or relabelled)"
        )
    dseed = deal_seed(plan.seed, block.deal)
    for number, r in zip(block.lines, block.rows, strict=True):
        seats = seating(plan.lineups[r.lineup], r.rotation)
        label = plan.labels[seats[r.seat]]
        aseed = agent_seed(plan.seed, block.deal, r.lineup, r.rotation, r.seat)
        if (r.agent, r.deal_seed, r.agent_seed) != (label, dseed, aseed):
            raise DamagedResultsError(
                f"{path}:{number}: seat {r.seat} of deal {block.deal} should be {label!r} "
                f"with seeds {dseed}/{aseed}, the row says {r.agent!r} with {r.deal_seed}/{r.agent_seed}"
            )
        if not 0 <= r.first_player < plan.num_players or r.rank > plan.num_players:
            raise DamagedResultsError(f"{path}:{number}: first_player or rank beyond the seats")
    for numbered in _rounds(block):
        numbered.sort(key=lambda x: x[1].seat)  # complete: every seat once (checked above)
        problem = plan.round_problem([r for _, r in numbered])
        if problem is not None:
            i, fact = problem
            raise DamagedResultsError(f"{path}:{numbered[i][0]}: {fact}")
