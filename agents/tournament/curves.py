"""``python -m agents.tournament.curves``: strength against thinking time, one tournament a budget.

For each point (an agent spec such as ``mc[sims=100]``) a duplicate-deal tournament "the
point + (P - 1) x ``planner``" is played (same seed, so the same deals, for every point;
resumed from ``OUT/<label>`` when rerun), and the point's pips a round better than the
planners (their pairwise mean difference, 95% CI over deals) is set against its
milliseconds a decision. The time axis comes from a separate timing run
(:func:`agents.tournament.bench_search.time_agents`: the points take turns on the same
positions, so a load swing of the shared machine hits them alike); the harness's own
figure, taken while the tournaments shared the machine, is kept as ``ms_in_tournament``.
``OUT/curves.csv`` holds the figures, ``OUT/curves.png`` the plot (log time axis, one line
per agent name). A cheating point
(``oracle``) is drawn as a separate marker: a bound, not a curve.

    python -m agents.tournament.curves --out runs/curves --deals 200 --seed 2029 --workers 2 \\
        --points 'mc[sims=25]' 'mc[sims=50]' 'mc[sims=100]' 'mc[sims=200]' 'mc[sims=400]' oracle

Rerun with more points (``ismcts[sims=200]``, ``champion[ms=100]``, ...) and fewer
``--deals`` into the same ``--out``: the points already played on at least that many
deals are read back as they are, and every point is timed again in the one timing run.
``--run LABEL=DIR`` reads a point from a tournament played elsewhere (``mtrain bench
--out DIR`` with the same seed and players, at least ``--deals`` deals) instead of playing
it; a run that does not match exits 2.
"""

from __future__ import annotations

import csv
import io
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.registry import agent_class
from agents.tournament import AgentSpec, TournamentConfig, run_tournament
from agents.tournament.bench_search import positions, time_agents
from agents.tournament.harness import checked_agent
from agents.tournament.plots import _figure
from agents.tournament.report import SUMMARY_FILE
from mtrain_env.cli import int_at_least, refuse_output
from mtrain_env.mexican_train import GameConfig
from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.files import atomic_write
from mtrain_env.tilegame.interrupts import run_main

#: the agent every point is measured against, in the other P - 1 seats
BASELINE = "planner"

FIELDS = (
    "label",
    "agent",
    "ms_per_decision",
    "ms_in_tournament",
    "gain",
    "gain_lo",
    "gain_hi",
    "rounds",
    "cheats",
)


def run_point(
    spec: AgentSpec,
    out: Path,
    deals: int,
    seed: int,
    players: int,
    workers: int,
    summary: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Play (or resume) the point's tournament; its row of ``curves.csv``. A point already
    played on at least ``deals`` deals (same seed) is read as it is: a costly point can be
    played on more deals than the rest, and a cheap one on fewer. With ``summary`` (a
    tournament played elsewhere: :func:`played_run`) nothing is played."""
    label = spec.default_label()
    if summary is not None:
        return _row(spec, label, summary)
    summary_path = out / label / SUMMARY_FILE
    cached = _readable_summary(summary_path)
    if cached is not None and point_mismatch(cached, label, deals, seed, players) is None:
        return _row(spec, label, cached)
    config = TournamentConfig(
        agents=[spec, AgentSpec(BASELINE)],
        game=GameConfig.make(num_players=players),
        deals=deals,
        seed=seed,
        lineup=[label] + [BASELINE] * (players - 1),
        workers=workers,
        out_dir=out / label,
        plots=False,
    )
    run_tournament(config)
    return _row(spec, label, json_text.read_object(summary_path))


def _readable_summary(path: Path) -> dict[str, Any] | None:
    """The point's own earlier ``summary.json``, or None when there is none or it is not a
    JSON object (a damaged file: the point is then played again, resuming its results)."""
    if not path.is_file():
        return None
    try:
        return json_text.read_object(path)
    except (OSError, ValueError):
        return None


def point_mismatch(summary: dict[str, Any], label: str, deals: int, seed: int, players: int) -> str | None:
    """Why the tournament ``summary`` is not the point ``label`` of these curves (a
    "``label`` + (players - 1) x planner" tournament of the default double-12 rules, played
    with ``seed`` on at least ``deals`` deals), or None when it is."""
    try:
        played = summary["config"]
        seated, lineups = [a["agent"] for a in summary["agents"]], played["lineups"]
        facts = (played["seed"], played["num_players"], played["deals"], played["game_config"])
    except (KeyError, TypeError) as err:
        return f"summary.json is not a tournament summary ({err!r})"
    if (
        facts[:2] != (seed, players)
        or facts[2] < deals
        or facts[3] != GameConfig.make(num_players=players).to_dict()
    ):
        return (
            f"played with seed {facts[0]}, {facts[1]} players, {facts[2]} deals (or other rules); these "
            f"curves need seed {seed}, {players} players (default double-12 rules), >= {deals} deals"
        )
    if lineups != [[label] + [BASELINE] * (players - 1)]:
        point = f"{label} + {players - 1} x {BASELINE}"
        return f"that tournament seats {', '.join(seated)} as {lineups}; a point is {point}"
    return None


def played_run(run_dir: Path, label: str, deals: int, seed: int, players: int) -> dict[str, Any]:
    """The summary of the finished tournament in ``run_dir`` as the point ``label``;
    ``ValueError`` naming why it is not that point (:func:`point_mismatch`)."""
    path = run_dir / SUMMARY_FILE
    if not path.is_file():
        raise ValueError(f"--run {label}={run_dir}: no finished tournament there (no {SUMMARY_FILE})")
    try:
        summary = json_text.read_object(path)
    except (OSError, ValueError) as err:
        text = f"{SUMMARY_FILE} is not a readable JSON object ({err})"
        raise ValueError(f"--run {label}={run_dir}: {text}") from None
    reason = point_mismatch(summary, label, deals, seed, players)
    if reason is not None:
        raise ValueError(f"--run {label}={run_dir}: {reason}")
    return summary


def parse_runs(texts: Sequence[str], labels: Sequence[str]) -> dict[str, Path]:
    """``LABEL=DIR`` arguments as ``{label: dir}``; ``ValueError`` for a label that is not
    one of the points'. The label ends at its closing bracket, if it has one (labels such
    as ``mc[sims=200]`` hold ``=``)."""
    runs = {}
    for text in texts:
        cut = text.find("]=") + 1 if "]=" in text else text.find("=")
        if cut <= 0:
            raise ValueError(f"--run {text!r}: expected LABEL=DIR")
        label, run_dir = text[:cut], text[cut + 1 :]
        if label not in labels:
            raise ValueError(f"--run {text!r}: {label!r} is not one of the points ({', '.join(labels)})")
        runs[label] = Path(run_dir)
    return runs


def _row(spec: AgentSpec, label: str, summary: dict[str, Any]) -> dict[str, Any]:
    """The point's row of ``curves.csv`` from its tournament's summary (ms: timed later)."""
    me = next(a for a in summary["agents"] if a["agent"] == label)
    pair = next(p for p in summary["pairwise"] if {p["a"], p["b"]} == {label, BASELINE})
    sign = -1.0 if pair["a"] == label else 1.0  # gain = planner's penalty - the point's
    diff = pair["mean_diff"]
    gain = sign * diff["mean"]
    # fewer than 2 deals have no interval: a zero-width one
    bounds = sorted(gain if diff[k] is None else sign * diff[k] for k in ("lo", "hi"))
    ms = me["ms_per_decision"]  # None when every deal was read back from disk
    return {
        "label": label,
        "agent": spec.name,
        "ms_per_decision": None,  # from the timing run
        "ms_in_tournament": None if ms is None else round(float(ms), 3),
        "gain": round(gain, 3),
        "gain_lo": round(bounds[0], 3),
        "gain_hi": round(bounds[1], 3),
        "rounds": me["seat_rounds"],
        "cheats": bool(getattr(agent_class(spec.name), "cheats", False)),
    }


#: the budget knobs: points differing only in these are drawn on one line
BUDGET_KNOBS = ("sims", "ms", "rollouts")


def family(label: str) -> tuple[str, str]:
    """``(line, budget)`` of a point label: ``"ismcts[c=30,sims=200]"`` -> ``("ismcts[c=30]",
    "sims=200")``; the points of one line differ only in their budget knobs."""
    name, _, rest = label.partition("[")
    params = [p for p in rest.rstrip("]").split(",") if p]
    budget = [p for p in params if p.split("=")[0] in BUDGET_KNOBS]
    other = [p for p in params if p not in budget]
    return (f"{name}[{','.join(other)}]" if other else name), ",".join(budget)


def plot(rows: Sequence[dict[str, Any]], path: Path, title: str) -> None:
    """Gain on planner (pips a round) against ms a decision, log x; one line per agent and
    non-budget parameters (:func:`family`), each point labelled with its budget."""
    fig = _figure(7.0, 4.2)
    ax = fig.add_subplot()
    lines = sorted({family(r["label"])[0] for r in rows if not r["cheats"]})
    for line in lines:
        pts = sorted(
            (r for r in rows if family(r["label"])[0] == line and not r["cheats"]),
            key=lambda r: r["ms_per_decision"],
        )
        xs = [r["ms_per_decision"] for r in pts]
        ys = [r["gain"] for r in pts]
        err = [[r["gain"] - r["gain_lo"] for r in pts], [r["gain_hi"] - r["gain"] for r in pts]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=line)
        for r in pts:
            ax.annotate(
                family(r["label"])[1],
                (r["ms_per_decision"], r["gain"]),
                fontsize=7,
                textcoords="offset points",
                xytext=(4, -10),
            )
    for r in rows:
        if r["cheats"]:
            ax.errorbar(
                [r["ms_per_decision"]],
                [r["gain"]],
                yerr=[[r["gain"] - r["gain_lo"]], [r["gain_hi"] - r["gain"]]],
                marker="*",
                markersize=12,
                capsize=3,
                linestyle="none",
                label=f"{r['label']} (cheats: sees all hands)",
            )
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("ms per decision (log)")
    ax.set_ylabel("pips per round better than planner")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.savefig(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineErrorParser(prog="curves", description=__doc__.splitlines()[0])
    parser.add_argument("--points", nargs="+", required=True, help="agent specs, e.g. 'mc[sims=100]'")
    parser.add_argument("--out", required=True, help="directory of the runs, curves.csv and curves.png")
    parser.add_argument("--deals", type=int_at_least(1), default=200)
    parser.add_argument("--seed", type=int_at_least(0), default=2029)
    parser.add_argument("--players", type=int_at_least(2), default=4)
    parser.add_argument("--workers", type=int_at_least(1), default=1)
    parser.add_argument("--timing-games", type=int_at_least(1), default=4, help="planner games timed on")
    parser.add_argument(
        "--run",
        nargs="+",
        default=[],
        metavar="LABEL=DIR",
        help="read the point LABEL from the tournament in DIR (mtrain bench --out DIR) instead of playing it",
    )
    args = parser.parse_args(argv)
    refuse_output(parser, "--out", args.out, "directory")
    try:
        specs = [AgentSpec.parse(text) for text in args.points]
        game = GameConfig.make(num_players=args.players)
        for spec in specs:
            checked_agent(spec, game)
    except ValueError as err:
        parser.error(f"--points: {err}")
    labels = [s.default_label() for s in specs]
    if BASELINE in labels:  # its tournament would seat planner against itself under one label
        parser.error(
            f"--points: {BASELINE} is the baseline every point is measured against  (0 by definition)"
        )
    try:
        played = {
            label: played_run(run_dir, label, args.deals, args.seed, args.players)
            for label, run_dir in parse_runs(args.run, labels).items()
        }
    except ValueError as err:
        parser.error(str(err))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = [
        run_point(s, out, args.deals, args.seed, args.players, args.workers, played.get(label))
        for s, label in zip(specs, labels, strict=True)
    ]
    snaps = positions(args.timing_games, args.seed, args.players)
    for row, times in zip(rows, time_agents(specs, snaps, args.players, args.seed), strict=True):
        row["ms_per_decision"] = round(statistics.fmean(times), 3)
    text = io.StringIO()
    writer = csv.DictWriter(text, FIELDS)
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(out / "curves.csv", text.getvalue())
    lineup = f"X + {args.players - 1} x planner"
    deals = sorted({r["rounds"] // args.players for r in rows})
    counts = f"{deals[0]}" if len(deals) == 1 else f"{deals[0]}-{deals[-1]}"
    title = f"{args.players} players, double-12: {lineup}, {counts} duplicate deals a point, seed {args.seed}"
    plot(rows, out / "curves.png", title)
    w = max(len(r["label"]) for r in rows) + 1
    print(f"{'point':{w}s} {'ms/dec':>8s} {'rounds':>7s} {'pips/round better than planner [95% CI]':>40s}")
    print(f"{'':{w}s} {'(timed)':>8s}")
    for r in rows:
        mark = "  (cheats)" if r["cheats"] else ""
        ci = f"[{r['gain_lo']:.2f}, {r['gain_hi']:.2f}]"
        print(f"{r['label']:{w}s} {r['ms_per_decision']:8.2f} {r['rounds']:7d} {r['gain']:8.2f} {ci}{mark}")
    print(f"wrote {out / 'curves.csv'} and {out / 'curves.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m agents.tournament.curves"))
