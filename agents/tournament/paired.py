"""``python -m agents.tournament.paired A B``: two "X + (P - 1) x baseline" runs on the same deals, compared.

Each run directory is one duplicate tournament whose lineup seats one agent against
copies of a baseline (e.g. ``champion[sims=200]`` + 3 x ``planner``, then ``mc[sims=200]``
+ 3 x ``planner``, same ``--seed`` and ``--deals``, hence the same deals). Per deal, an
agent's gain is the baselines' mean penalty a round minus its own (the harness's pairwise
figure); the deals being the same, the difference of the two gains is paired deal by deal,
which cancels most of the deal luck. Prints each gain and the difference A - B with 95%
t-intervals over deals. ``--share`` reads B as a bound (e.g. ``oracle``) and also prints the
share of the baseline -> B gap that A closes, ``mean(gain A) / mean(gain B)``, with a
delta-method interval over the same deals.
``--also A2 B2`` (repeatable) pools another pair of runs, e.g. the same two agents on another
seed: every pair's common deals count once, so the intervals are over all of them. Exit 2
when a pair does not share its deals, or its agents are not the first pair's.
"""

from __future__ import annotations

import csv
import io
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from agents.tournament.results import read_text
from agents.tournament.stats import mean_ci, ratio_ci
from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.interrupts import run_main


def lone_agent(run: Path, counts: dict[str, int]) -> str:
    """The agent seated once a table (``counts``: seats over the run). At 2 players both
    agents are: the agent under test is then the first of the run's ``--agents``
    (``run.json``; ``X + 1 x baseline``); ``ValueError`` without it, or without any game."""
    if not counts:
        raise ValueError(f"{run}: results.csv has no games yet")
    fewest = min(counts.values())
    lone = sorted(a for a, n in counts.items() if n == fewest)
    if len(lone) == 1:
        return lone[0]
    path = run / "run.json"
    if not path.is_file():
        raise ValueError(
            f"{run}: {' and '.join(lone)} sit equally often and no run.json says which is tested"
        )
    try:
        order = [str(a["label"]) for a in json_text.read_object(path)["agents"]]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: not the run.json of a tournament ({type(err).__name__}: {err})") from None
    return min(lone, key=lambda a: order.index(a) if a in order else len(order))


def deal_gains(run: Path) -> tuple[str, dict[tuple[int, str], float]]:
    """The run's lone agent (:func:`lone_agent`) and its gain per deal (keyed by deal index
    and deal seed)."""
    path = run / "results.csv"
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    rows = list(reader)
    missing = [c for c in ("agent", "deal", "deal_seed", "penalty") if c not in (reader.fieldnames or [])]
    if missing:
        raise ValueError(f"{path}: no {', '.join(missing)} column (not a tournament's results)")
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[r["agent"]] += 1
    if len(counts) > 2:  # the gain would be on an unnamed mix of the others
        seated = ", ".join(sorted(counts))
        raise ValueError(
            f"{path}: seats {len(counts)} agents ({seated}); a paired run seats one agent "
            "against copies of one baseline"
        )
    agent = lone_agent(run, counts)
    mine: dict[tuple[int, str], list[float]] = defaultdict(list)
    others: dict[tuple[int, str], list[float]] = defaultdict(list)
    for r in rows:
        key = (int(r["deal"]), r["deal_seed"])
        (mine if r["agent"] == agent else others)[key].append(float(r["penalty"]))
    gains = {k: sum(others[k]) / len(others[k]) - sum(mine[k]) / len(mine[k]) for k in mine}
    return agent, gains


def common_gains(a: Path, b: Path) -> tuple[str, str, dict[tuple[int, str], tuple[float, float]]]:
    """The two runs' agents and their gains on each deal both played (``ValueError`` if
    fewer than 2)."""
    name_a, gains_a = deal_gains(a)
    name_b, gains_b = deal_gains(b)
    common = sorted(gains_a.keys() & gains_b.keys())
    if len(common) < 2:
        raise ValueError(
            f"{a} and {b} share fewer than 2 deals: use the same --seed (their deal seeds differ)"
        )
    return name_a, name_b, {k: (gains_a[k], gains_b[k]) for k in common}


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineErrorParser(
        prog="python -m agents.tournament.paired", description=__doc__.splitlines()[0]
    )
    parser.add_argument("a", type=Path, help="run directory of agent A (holds results.csv)")
    parser.add_argument("b", type=Path, help="run directory of agent B, same seed and deals")
    parser.add_argument(
        "--share", action="store_true", help="B is a bound: print the share of its gain A reaches"
    )
    parser.add_argument(
        "--also",
        nargs=2,
        type=Path,
        action="append",
        default=[],
        metavar=("A2", "B2"),
        help="another pair of runs of the same two agents (e.g. another seed), pooled deal by deal",
    )
    args = parser.parse_args(argv)
    pairs = [(args.a, args.b), *[tuple(p) for p in args.also]]
    for run in (r for pair in pairs for r in pair):
        if not (run / "results.csv").is_file():
            parser.error(f"{run}: no results.csv (not a tournament directory)")
    pooled: dict[tuple[int, str], tuple[float, float]] = {}
    names: tuple[str, str] | None = None
    try:
        for a, b in pairs:
            name_a, name_b, gains = common_gains(a, b)
            if names is not None and (name_a, name_b) != names:
                raise ValueError(
                    f"--also {a} {b} compares {name_a} with {name_b}, not {names[0]} with {names[1]}"
                )
            if pooled.keys() & gains.keys():
                raise ValueError(f"--also {a} {b}: deals already counted (pool runs of another seed)")
            names = (name_a, name_b)
            pooled.update(gains)
    except ValueError as err:
        parser.error(str(err))
    assert names is not None
    name_a, name_b = names
    gains_a, gains_b = [g[0] for g in pooled.values()], [g[1] for g in pooled.values()]
    diffs = [x - y for x, y in zip(gains_a, gains_b, strict=True)]
    where = f" of {len(pairs)} pairs" if len(pairs) > 1 else ""
    print(
        f"{len(gains_a)} deals in both runs{where} (pips a round better than the baseline, 95% CI over deals)"
    )
    print(f"{name_a:<28} {mean_ci(gains_a)}")
    print(f"{name_b:<28} {mean_ci(gains_b)}")
    print(f"{name_a} - {name_b}: {mean_ci(diffs)}  (paired by deal)")
    if args.share:
        share = ratio_ci(gains_a, gains_b)
        print(f"{name_a} closes {share} of the baseline -> {name_b} gap  (ratio of mean gains)")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m agents.tournament.paired"))
