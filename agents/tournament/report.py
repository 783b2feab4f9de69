"""The tournament summary: a JSON-ready dict, the printed table, and the files of a run."""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import platform
from pathlib import Path
from typing import Any

from agents.tournament.games import GAMES
from agents.tournament.harness import Plan, PlayStats, TournamentConfig
from agents.tournament.rating import Ratings
from agents.tournament.results import rows_to_csv
from agents.tournament.stats import Estimate
from agents.tournament.timing import Timing
from mtrain_env.tilegame.files import atomic_write

SUMMARY_FILE = "summary.json"
TABLE_FILE = "table.txt"
RATINGS_FILE = "ratings.csv"
PENALTY_PLOT = "penalty.png"
RATING_PLOT = "rating.png"

VARIANCE_METHOD = (
    "SE of the mean penalty difference a - b per pair: "
    "se_duplicate = sd(deal-level differences)/sqrt(deals); "
    "independent deals: sd(game-level differences, all deals pooled) over sqrt(games) (se_independent: "
    "the same number of games, i.e. equal playing time) or over sqrt(deals) (se_independent_same_deals: "
    "as many deals, each played once); variance_ratio* = (SE_independent/SE_duplicate)^2. "
    "See agents/tournament/stats.py."
)


def versions() -> dict[str, str]:
    """Versions of Python and the packages that shape the results."""
    out = {"python": platform.python_version()}
    for dist in ("numpy", "pettingzoo", "mtrain_env", "openskill", "matplotlib"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def jsonable(x: Any) -> Any:
    """Estimates to dicts, NaN/inf to ``None``, tuples to lists (recursively)."""
    if isinstance(x, Estimate):
        return jsonable(x.to_dict())
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def describe(plan: Plan, deals: int) -> str:
    """One line naming the format of a run."""
    adapter = plan.adapter
    word = adapter.round_word
    kind = f"single {word}s" if plan.rounds == 1 else f"{plan.rounds}-{word} sessions"
    mode = f"{plan.games_per_deal} games each" if plan.duplicate else "independent (no rotation)"
    return f"{adapter.describe(plan.game_config)}, {kind}, {deals} deals ({mode}), seed {plan.seed}"


def measure_words(summary: dict[str, Any]) -> tuple[str, str]:
    """``(cost, round)`` words of a summary's game: ``("penalty", "round")`` for Mexican Train."""
    adapter = GAMES[summary["config"].get("game", "mexican_train")]
    return adapter.cost_label, adapter.round_word


def build_summary(
    config: TournamentConfig,
    plan: Plan,
    agents: list[dict[str, Any]],
    pairs: list[dict[str, Any]],
    ratings: Ratings,
    play: PlayStats,
    timing: Timing,
    deals_resumed: int,
) -> dict[str, Any]:
    """The JSON summary of a run (see the README section of :mod:`agents.tournament`):
    ``play`` is this invocation's throughput, ``timing`` the agents' time in ``act`` over
    every deal timed (:mod:`agents.tournament.timing`)."""
    final = {r["agent"]: r for r in ratings.final()}
    entries = []
    for i, a in enumerate(agents):
        decisions = timing.decisions[i]
        entries.append(
            {
                **a,
                "name": plan.names[i],
                "params": plan.params[i],
                "agent_params": plan.agent_params[i],
                "rating": {k: v for k, v in final[a["agent"]].items() if k != "agent"},
                "decisions_timed": decisions,
                "ms_per_decision": 1000.0 * timing.think_seconds[i] / decisions if decisions else None,
            }
        )
    return jsonable(
        {
            "description": describe(plan, config.deals),
            "config": {
                "agents": [
                    {"name": n, "label": lab, "params": p}
                    for n, lab, p in zip(plan.names, plan.labels, plan.params, strict=True)
                ],
                "game": plan.game_name,
                "game_config": plan.game,
                "num_players": plan.num_players,
                "rounds_per_game": plan.rounds,
                "deals": config.deals,
                "seed": plan.seed,
                "duplicate": plan.duplicate,
                "lineups": [[plan.labels[i] for i in li] for li in plan.lineups],
                "games_per_deal": plan.games_per_deal,
                "workers": play.workers,
            },
            "seed": plan.seed,
            "versions": versions(),
            "agents": entries,
            "pairwise": pairs,
            "variance_reduction": {
                "method": VARIANCE_METHOD,
                "pairs": [{"a": p["a"], "b": p["b"], **p["variance"]} for p in pairs],
            },
            "throughput": {
                "deals_played": play.deals,
                "deals_resumed": deals_resumed,
                "deals_timed": timing.deals,  #: the deals behind ms/dec (this and earlier invocations)
                "rounds_played": play.rounds,
                "actions": play.actions,
                "seconds": play.seconds,
                "rounds_per_second": play.rounds_per_second,
                "actions_per_second": play.actions_per_second,
                "workers": play.workers,
                "backend": play.backend,
                "cpu_count": os.cpu_count(),
            },
        }
    )


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _est(e: dict[str, Any], pct: bool = False) -> str:
    scale, unit = (100.0, "%") if pct else (1.0, "")
    if e["mean"] is None:
        return "-"
    if e["lo"] is None:
        return f"{scale * e['mean']:.1f}{unit}"
    return f"{scale * e['mean']:.1f}{unit} [{scale * e['lo']:.1f}, {scale * e['hi']:.1f}]"


def _variance_line(v: dict[str, Any]) -> str:
    if v["se_duplicate"] is None or v["se_independent"] is None:
        return "needs at least 2 deals"

    def ratio(x: float | None) -> str:
        return "inf" if x is None else f"{x:.2f}x"

    return (
        f"duplicate {v['se_duplicate']:.3f} ({v['deals']} deals); independent "
        f"{v['se_independent_same_deals']:.3f} for {v['deals']} deals "
        f"({ratio(v['variance_ratio_same_deals'])}), "
        f"{v['se_independent']:.3f} for {v['games']} games ({ratio(v['variance_ratio'])})"
    )


def format_table(summary: dict[str, Any]) -> str:
    """The readable report printed at the end of a run (also saved as ``table.txt``)."""
    agents = sorted(summary["agents"], key=lambda a: a["mean_penalty"]["mean"])
    sessions = summary["config"]["rounds_per_game"] > 1
    cost, rnd = measure_words(summary)
    header = ["agent", f"{cost}/{rnd} [95% CI]", "out% [CI]", "lowest% [CI]"]
    if sessions:
        header += ["session score [CI]", "session win% [CI]"]
    header += ["mu ± sigma", "ordinal", "ms/dec"]
    body = []
    for a in agents:
        line = [
            a["agent"],
            _est(a["mean_penalty"]),
            _est(a["went_out_rate"], True),
            _est(a["lowest_rate"], True),
        ]
        if sessions:
            line += [_est(a["session_score"]), _est(a["session_win_rate"], True)]
        r = a["rating"]
        ms = a["ms_per_decision"]
        line += [
            f"{r['mu']:.2f} ± {r['sigma']:.2f}",
            f"{r['ordinal']:.2f}",
            "-" if ms is None else f"{ms:.2f}",
        ]
        body.append(line)
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    out = [summary["description"], ""]
    for row in [header, *body]:
        out.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    if summary["pairwise"]:
        out += ["", f"Pairwise (a - b: mean {cost} per {rnd}, 95% CI; a beats b in % of deals / {rnd}s):"]
        for p in summary["pairwise"]:
            out.append(
                f"  {p['a']} - {p['b']}: {_est(p['mean_diff'])}; "
                f"{_pct(p['a_beats_b_deals'])} of {p['deals']} deals, {_pct(p['a_beats_b_rounds'])} of {rnd}s"
            )
        out += [
            "",
            "Variance reduction (SE of the a - b mean difference; duplicate deals vs independent deals,",
            "  as many deals each played once / as many games; ratio = variance ratio):",
        ]
        for v in summary["variance_reduction"]["pairs"]:
            out.append(f"  {v['a']} vs {v['b']}: {_variance_line(v)}")
    t = summary["throughput"]
    rps = t["rounds_per_second"]
    out += [
        "",
        f"Throughput: {t['rounds_played']} {rnd}s in {t['seconds']:.1f} s = "
        + ("-" if rps is None else f"{rps:.1f} {rnd}s/s")
        + f" on {t['workers']} {'Ray actor' if t.get('backend') == 'ray' else 'worker'}(s)"
        + (f" ({t['deals_resumed']} deals resumed from disk)" if t["deals_resumed"] else ""),
    ]
    deals = summary["config"]["deals"]
    timed = t.get("deals_timed", deals)
    if timed != deals:
        out.append(f"ms/dec: the time inside act over the {timed} of {deals} deals timed (timing.jsonl)")
    return "\n".join(out)


#: the files :func:`write_outputs` derives from the results (rewritten at the end of a run)
REPORT_FILES = (SUMMARY_FILE, TABLE_FILE, RATINGS_FILE, PENALTY_PLOT, RATING_PLOT)


def remove_report(out: Path) -> None:
    """Remove the report of the results as they were, before deals are added or replaced:
    a run interrupted before its new report leaves none, never one of other results."""
    for name in REPORT_FILES:
        (out / name).unlink(missing_ok=True)


def write_outputs(
    out: Path, summary: dict[str, Any], table: str, ratings: Ratings, plots: bool
) -> dict[str, str]:
    """Write summary.json, table.txt, ratings.csv and the PNGs; returns name -> path."""
    files = {
        "results": str(out / "results.csv"),
        "run": str(out / "run.json"),
        "summary": str(out / SUMMARY_FILE),
        "table": str(out / TABLE_FILE),
        "ratings": str(out / RATINGS_FILE),
    }
    rows = [
        [k, label, repr(float(ratings.mu[k, i])), repr(float(ratings.sigma[k, i]))]
        for k in range(ratings.mu.shape[0])
        for i, label in enumerate(ratings.labels)
    ]
    ratings_csv = rows_to_csv([["game", "agent", "mu", "sigma"], *rows])
    atomic_write(out / RATINGS_FILE, ratings_csv)  # whole files only, also when interrupted
    if plots:
        from agents.tournament.plots import plot_penalty, plot_ratings

        cost, rnd = measure_words(summary)
        plot_penalty(summary["agents"], out / PENALTY_PLOT, summary["description"], f"mean {cost} per {rnd}")
        plot_ratings(ratings, out / RATING_PLOT, summary["description"])
        files["penalty_plot"] = str(out / PENALTY_PLOT)
        files["rating_plot"] = str(out / RATING_PLOT)
    summary["files"] = files
    atomic_write(out / SUMMARY_FILE, json.dumps(summary, indent=2) + "\n")
    atomic_write(out / TABLE_FILE, table + "\n")
    return files


def aggregates(summary: dict[str, Any]) -> dict[str, Any]:
    """The deterministic part of a summary (everything but timing, versions and paths)."""
    keep: dict[str, Any] = {k: v for k, v in summary.items() if k not in ("throughput", "versions", "files")}
    keep["config"] = {k: v for k, v in summary["config"].items() if k != "workers"}
    keep["agents"] = [
        {k: v for k, v in a.items() if k not in ("ms_per_decision", "decisions_timed")}
        for a in summary["agents"]
    ]
    return keep
