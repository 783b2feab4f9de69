"""``python -m agents.tournament.exact_gap``: how far the one-ply bounds fall short of the exact optimum.

The ``oracle`` agents (CHEATS) are one-ply searches on the true state, and each better
continuation has raised their score (docs/champion.md, steps 19 to 21), so none says
where perfect information stops. Late in a round the exact answer can be found
(:func:`agents.mexican_train.exact.exact_results_on`): with every hand and the draws
known and the others' policy fixed, the seat's choices alone decide its result. This
command takes positions from games of ``planner`` seats (for each seat of each game, its
first decision with a choice once it holds at most T tiles, for each ``--tiles`` T),
solves each exactly, and plays the rest of the round out from it by each level of
:meth:`~agents.mexican_train.value_leaf.ValueLeaves.improved_values`:

* level 0, the table's self-play network (argmax), the seat's later choices of
  ``oracle[rollout=policy]``'s playouts;
* level 1, the policy ``oracle[rollout=policy]`` plays (greedy on level 0's playouts);
* level 2, ``oracle[rollout=search]``'s; level ``k``, ``oracle[rollout=search,levels=k-1]``'s.

Each level's SHORTFALL at a position is the optimum's result less the level's (>= 0; a
negative one is a bug and stops the run), in pips a round, with a 95% CI over positions.
Positions whose tree exceeds ``--max-nodes`` are skipped and counted (the solved ones lean
to the smaller trees). ``--others planner`` has the other seats play the planner's own
moves (the lineup's opponents exactly: the optimum is the real ceiling against them);
the default is the chain policy the oracles search with. ``OUT/exact_gap.csv`` has a row
a position, ``OUT/exact_gap.png`` the mean shortfall against the level.

    python -m agents.tournament.exact_gap --games 20 --seed 2071 --tiles 6 8 10 \\
        --levels 0 1 2 3 --out runs/exact
"""

from __future__ import annotations

import csv
import io
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from agents.mexican_train.exact import exact_results_on
from agents.mexican_train.oracle import CheatDecision
from agents.tournament.bench_search import planner_turns
from agents.tournament.plots import _figure
from agents.tournament.stats import mean_ci
from mtrain_env.cli import int_at_least, players_or_exit, refuse_output
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.files import atomic_write
from mtrain_env.tilegame.interrupts import run_main

FIELDS = ("game", "seat", "tiles", "held", "moves", "nodes_budget", "solved", "exact", "exact_s")
#: what plays the rest of the round at each level (the table's rows)
LEVEL_NAMES = {
    0: "network (argmax)",
    1: "oracle[rollout=policy]",
    2: "oracle[rollout=search]",
}


def level_name(level: int) -> str:
    """The agent whose continuation a level is."""
    return LEVEL_NAMES.get(level, f"oracle[rollout=search,levels={level - 1}]")


def late_positions(games: int, seed: int, players: int, tiles: Sequence[int]) -> list[dict[str, Any]]:
    """For each game ``seed + g`` of ``planner`` seats, each seat and each ``T`` in ``tiles``:
    the seat's first decision with more than one legal move once it holds at most ``T``
    tiles, as ``{game, seat, tiles, held, decision, state, moves}`` (``state`` the true
    state, ``moves`` the legal moves)."""
    out = []
    taken: set[tuple[int, int, int]] = set()  # (game, seat, T) already found
    for g, env, agent_id in planner_turns(games, seed, players):
        decision = CheatDecision(env, agent_id)
        state = decision.true_state()
        held = state.hands[decision.seat].bit_count()
        if len(decision.legal_actions) < 2:
            continue
        for t in sorted(tiles):
            if held <= t and (g, decision.seat, t) not in taken:
                taken.add((g, decision.seat, t))
                moves = [decision.to_move(a) for a in decision.legal_actions]
                out.append(
                    {"game": seed + g, "seat": decision.seat, "tiles": t, "held": held,
                     "decision": decision, "state": state, "moves": moves}
                )  # fmt: skip
    return out


def measure(
    positions: Sequence[dict[str, Any]], levels: Sequence[int], max_nodes: int, others: str
) -> list[dict[str, Any]]:
    """Each position's exact optimum and every level's result (rows of ``exact_gap.csv``)."""
    from agents.mexican_train.champion import table_policy
    from agents.mexican_train.value_leaf import ValueLeaves, load_value_net
    from mtrain_env.mexican_train.compiled import rollout
    from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain

    caches: dict[Any, tuple[Any, Any, Any]] = {}
    rows = []
    for p in tqdm(positions, desc="positions", leave=False):
        config = p["decision"].game.config
        if config not in caches:
            leaves = ValueLeaves(load_value_net(table_policy(config)), config, depth=None)
            caches[config] = (
                CompiledMexicanTrain(config),
                leaves,
                rollout.scratch(planner=others == "planner"),
            )
        game, leaves, sc = caches[config]
        root = game.to_compiled(p["state"])
        seat = p["decision"].seat
        started = time.perf_counter()
        exact = exact_results_on(root, game.tables, seat, p["moves"], sc, max_nodes=max_nodes)
        row: dict[str, Any] = {k: p[k] for k in ("game", "seat", "tiles", "held")}
        row |= {"moves": len(p["moves"]), "nodes_budget": max_nodes, "solved": exact is not None}
        row["exact_s"] = round(time.perf_counter() - started, 3)
        if exact is None:
            rows.append(row)
            continue
        row["exact"] = max(exact)
        for level in levels:
            value = float(leaves.improved_values(root[None, :], game.tables, seat, sc, level)[0])
            if value > row["exact"] + 1e-6:
                raise RuntimeError(
                    f"level {level} beat the exact optimum at game {p['game']} seat {seat} "
                    f"({value} > {row['exact']}): a bug in the search or the solver"
                )
            row[f"level{level}"] = value
        rows.append(row)
    return rows


def summary(rows: Sequence[dict[str, Any]], tiles: Sequence[int], levels: Sequence[int]) -> str:
    """The table printed: per ``T``, positions solved and each level's mean shortfall."""
    lines = []
    for t in tiles:
        at = [r for r in rows if r["tiles"] == t]
        solved = [r for r in at if r["solved"]]
        if not solved:
            lines.append(f"T={t}: none of {len(at)} positions solved within the budget")
            continue
        lines.append(
            f"T={t}: {len(solved)} of {len(at)} positions solved (held {_held(solved)} tiles); "
            f"exact optimum {mean_ci([r['exact'] for r in solved])} pips a round"
        )
        for level in levels:
            shortfalls = [r["exact"] - r[f"level{level}"] for r in solved]
            optimal = np.mean([x < 1e-6 for x in shortfalls])
            name = level_name(level)
            lines.append(
                f"  level {level}  {name:36s} shortfall {mean_ci(shortfalls)}   optimal at {optimal:.0%}"
            )
    return "\n".join(lines)


def _held(rows: Sequence[dict[str, Any]]) -> str:
    held = [r["held"] for r in rows]
    return f"{min(held)}-{max(held)}"


def plot(rows: Sequence[dict[str, Any]], tiles: Sequence[int], levels: Sequence[int], path: Path) -> None:
    """Mean shortfall (95% CI) against the level, one line per ``T``."""
    fig = _figure(6.5, 4.0)
    ax = fig.add_subplot()
    for t in tiles:
        solved = [r for r in rows if r["tiles"] == t and r["solved"]]
        if not solved:
            continue
        est = [mean_ci([r["exact"] - r[f"level{level}"] for r in solved]) for level in levels]
        means = [e.mean for e in est]
        errs = [[e.mean - e.lo for e in est], [e.hi - e.mean for e in est]]
        ax.errorbar(
            levels, means, yerr=np.nan_to_num(errs), marker="o", capsize=3, label=f"seat holds <= {t} tiles"
        )
    ax.set_xticks(list(levels))
    ax.set_xlabel("level of the continuation (0 network, 1 oracle[rollout=policy], 2 rollout=search, ...)")
    ax.set_ylabel("shortfall from the exact optimum (pips)")
    ax.set_title("How far each continuation plays from the exact optimum (true state)")
    ax.axhline(0, color="grey", lw=0.8)
    ax.legend()
    fig.savefig(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineErrorParser(prog="exact_gap", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory of exact_gap.csv and exact_gap.png")
    parser.add_argument("--games", type=int_at_least(1), default=20)
    parser.add_argument("--seed", type=int_at_least(0), default=2071)
    parser.add_argument("--players", type=int_at_least(2), default=4)
    parser.add_argument("--tiles", type=int_at_least(1), nargs="+", default=[6, 8, 10])
    parser.add_argument("--levels", type=int_at_least(0), nargs="+", default=[0, 1, 2, 3])
    parser.add_argument(
        "--max-nodes", type=int_at_least(1), default=300_000, help="the solver's budget a position"
    )
    parser.add_argument(
        "--others", choices=("chain", "planner"), default="chain", help="the other seats' policy"
    )
    args = parser.parse_args(argv)
    refuse_output(parser, "--out", args.out, "directory")
    players_or_exit(parser, args.players)
    try:
        import numba  # noqa: F401
    except ImportError:
        parser.exit(2, "exact_gap runs on the compiled engine: pip install 'mtrain_env[fast]'\n")
    tiles, levels = sorted(set(args.tiles)), sorted(set(args.levels))
    positions = late_positions(args.games, args.seed, args.players, tiles)
    rows = measure(positions, levels, args.max_nodes, args.others)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fields = [*FIELDS, *(f"level{level}" for level in levels)]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fields)
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(out / "exact_gap.csv", buf.getvalue())
    plot(rows, tiles, levels, out / "exact_gap.png")
    print(
        f"{len(positions)} positions of {args.games} planner games "
        f"(seed {args.seed}, {args.players} players), "
        f"the others by the {args.others} policy, solver budget {args.max_nodes} positions"
    )
    print(summary(rows, tiles, levels))
    print(f"wrote {out / 'exact_gap.csv'} and {out / 'exact_gap.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m agents.tournament.exact_gap"))
