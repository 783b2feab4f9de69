"""``python -m agents.tournament.ladder``: several "X + (P - 1) x baseline" runs as one ladder.

Each ``--table LABEL RUN [RUN ...]`` names runs of one table size on the same deals (one
agent against copies of a baseline each, as :mod:`agents.tournament.paired` reads them).
Every run's lone agent is placed by its gain over the baseline (pips a round, 95% CI over
deals), so a ladder such as planner -> mc -> champion -> hand-seeing oracle -> oracle
reads as one picture per table. Writes ``OUT.csv`` (table, agent, deals, gain and
interval, whether the agent cheats) and ``OUT.png``; agents whose class declares ``cheats``
(``oracle``) are drawn as stars. Exit 2 on a directory that is not a tournament or whose
lone agent cannot be told.

    python -m agents.tournament.ladder --out docs/headroom \\
        --table "2 players" runs/ex/mc200_p2_2051 runs/ex/champ_p2_2051 runs/ex/oracle_p2_2051
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.registry import agent_class
from agents.tournament.harness import AgentSpec
from agents.tournament.paired import deal_gains
from agents.tournament.plots import _figure
from agents.tournament.stats import mean_ci
from mtrain_env.cli import refuse_output
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.files import atomic_write
from mtrain_env.tilegame.interrupts import run_main

__all__ = ["ladder_rows", "main", "plot_ladder"]

FIELDS = ("table", "agent", "deals", "gain", "gain_lo", "gain_hi", "cheats")
TITLE = "pips a round better than the baseline, 95% CI over duplicate deals (stars cheat)"


def ladder_rows(tables: Sequence[tuple[str, Sequence[Path]]]) -> list[dict[str, Any]]:
    """One row per run: its table's label, lone agent, deals, gain with its interval, and
    whether the agent cheats (its registered class says so, as in ``curves``)."""
    rows = []
    for label, runs in tables:
        for run in runs:
            agent, gains = deal_gains(run)
            est = mean_ci(list(gains.values()))
            rows.append(
                {
                    "table": label,
                    "agent": agent,
                    "deals": est.n,
                    "gain": est.mean,
                    "gain_lo": est.lo,
                    "gain_hi": est.hi,
                    "cheats": bool(getattr(agent_class(AgentSpec.parse(agent).name), "cheats", False)),
                }
            )
    return rows


def plot_ladder(rows: Sequence[dict[str, Any]], path: Path, title: str) -> None:
    """One panel per table: each agent's gain with its 95% CI, weakest at the bottom."""
    tables = list(dict.fromkeys(r["table"] for r in rows))
    most = max(sum(r["table"] == t for r in rows) for t in tables)
    fig = _figure(max(7.5, 4.0 * len(tables)), 1.4 + 0.42 * most)  # one table: room for its labels
    axes = fig.subplots(1, len(tables), squeeze=False)[0]
    for ax, table in zip(axes, tables, strict=True):
        mine = sorted((r for r in rows if r["table"] == table), key=lambda r: r["gain"])
        for y, r in enumerate(mine):
            ax.errorbar(
                [r["gain"]],
                [y],
                xerr=[[r["gain"] - r["gain_lo"]], [r["gain_hi"] - r["gain"]]],
                fmt="*" if r["cheats"] else "o",
                markersize=10 if r["cheats"] else 6,
                capsize=3,
                color="tab:red" if r["cheats"] else "tab:blue",
            )
        ax.set_yticks(range(len(mine)), [f"{r['agent']} ({r['deals']})" for r in mine], fontsize=7)
        ax.axvline(0.0, color="grey", linewidth=0.8)
        ax.set_xlim(left=min(0.0, min(r["gain_lo"] for r in mine)) - 1.0)
        ax.set_title(table, fontsize=9)
        ax.set_xlabel("gain, pips a round", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
        ax.margins(y=0.15)
    fig.suptitle(title, fontsize=9)
    fig.savefig(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineErrorParser(
        prog="python -m agents.tournament.ladder", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", required=True, type=Path, help="OUT.csv and OUT.png are written")
    parser.add_argument(
        "--table",
        nargs="+",
        action="append",
        required=True,
        metavar="LABEL RUN",
        help="a label, then the run directories of that table (repeat per table)",
    )
    parser.add_argument("--title", default=TITLE, help="the figure's title")
    args = parser.parse_args(argv)
    refuse_output(parser, "--out", args.out)
    tables: list[tuple[str, list[Path]]] = []
    for label, *runs in args.table:
        if not runs:
            parser.error(f"--table {label!r}: no run directories after the label")
        for run in runs:
            if not (Path(run) / "results.csv").is_file():
                parser.error(f"--table {label!r}: {run}: no results.csv (not a tournament directory)")
        tables.append((label, [Path(r) for r in runs]))
    try:
        rows = ladder_rows(tables)
    except ValueError as err:
        parser.error(str(err))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = args.out.with_suffix(".csv"), args.out.with_suffix(".png")
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=FIELDS)
    writer.writeheader()
    for r in rows:
        writer.writerow({k: (f"{r[k]:.3f}" if isinstance(r[k], float) else r[k]) for k in FIELDS})
    atomic_write(csv_path, buf.getvalue())
    plot_ladder(rows, png_path, args.title)
    wt, wa = (max(len(r[k]) for r in rows) for k in ("table", "agent"))
    for r in rows:
        gain = f"{r['gain']:6.2f} [{r['gain_lo']:.2f}, {r['gain_hi']:.2f}]"
        print(f"{r['table']:<{wt}}  {r['agent']:<{wa}}  {gain}  ({r['deals']} deals)")
    print(f"wrote {csv_path} and {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m agents.tournament.ladder"))
