"""``python -m training.agreement A B``: are a search's deviations from its prior reproducible?

A search such as ``champion`` keeps its prior's move (its network's) unless its rollouts say
another is better. Whether those deviations are worth imitating (``training/distill_mc.py``)
depends on whether they are the position's or the rollouts' noise. This plays ``--games``
one-round games, agent ``A`` in seat ``g mod players`` of game ``g`` (deal ``seed + g``) and
``--opponent`` in the others, and at each of A's decisions with a choice asks three agents:

* the prior (``--prior``, default ``champion_policy``: the champion's network alone);
* ``A``, whose move is played;
* ``B``, another search (``A`` itself with more ``sims=``, or the same spec), reset at each
  game with another seed (``--b-seed-offset``) so its worlds differ from A's.

It prints how often A deviates from the prior, and of those deviations how often B makes
the same move, or keeps the prior's. Two searches that read the position alike agree on
most deviations; deviations that are noise come back about as often to the prior. Where A
is a search that reports its values (``mc``, ``champion``: ``last_values``), the
deviations are also split by A's own estimate of their gain over the prior's move
(:data:`GAIN_BINS`, pips a round): a search whose estimates are sound reproduces its large
estimated gains more often than its small ones. Exit 2 on a bad spec. ``--out F.json``
keeps every position's three moves and A's estimated gain.

    python -m training.agreement champion 'champion[sims=1600]' --games 300 --seed 940000
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.mexican_train.base import Decision
from mtrain_env.cli import int_at_least, players_or_exit, refuse_output
from mtrain_env.mexican_train import env as make_env
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.files import atomic_write
from mtrain_env.tilegame.interrupts import run_main
from training.choices import play_choices
from training.distill_mc import agent_from_spec

__all__ = ["GAIN_BINS", "Agreement", "agreement", "main"]

#: the edges (pips a round) of the bins of A's estimated gain over the prior's move
GAIN_BINS = (2.0, 4.0, 8.0)


@dataclass(frozen=True)
class Agreement:
    """The three moves at each of A's decisions with a choice, and A's estimate of its move's
    gain over the prior's (``None`` where A keeps the prior's move or reports no values)."""

    prior: list[int]
    a: list[int]
    b: list[int]
    gains: list[float | None]

    def summary(self) -> dict[str, float | int]:
        """Counts and shares: A's and B's deviations from the prior, and B on A's deviations."""
        n = len(self.a)
        rows = list(zip(self.prior, self.a, self.b, strict=True))
        dev = [(p, a, b) for p, a, b in rows if a != p]
        kept = [(p, a, b) for p, a, b in rows if a == p]
        return {
            "positions": n,
            "a_deviates": len(dev),
            "a_deviates_share": len(dev) / n if n else 0.0,
            "b_deviates": sum(b != p for p, _a, b in rows),
            "b_same_when_a_deviates": sum(b == a for _p, a, b in dev) / len(dev) if dev else 0.0,
            "b_prior_when_a_deviates": sum(b == p for p, _a, b in dev) / len(dev) if dev else 0.0,
            "b_prior_when_a_keeps": sum(b == p for p, _a, b in kept) / len(kept) if kept else 0.0,
        }

    def by_gain(self) -> list[dict[str, Any]]:
        """A's deviations whose estimated gain is known, per bin of :data:`GAIN_BINS`: the
        bin's bounds (``low <= gain < high``; None: unbounded), how many there are and the
        share B reproduces (None for an empty bin)."""
        edges: list[float | None] = [None, *GAIN_BINS, None]
        out = []
        for lo, hi in itertools.pairwise(edges):
            same = [
                b == a
                for p, a, b, gain in zip(self.prior, self.a, self.b, self.gains, strict=True)
                if a != p and gain is not None and (lo is None or gain >= lo) and (hi is None or gain < hi)
            ]
            out.append(
                {"low": lo, "high": hi, "count": len(same), "b_same": sum(same) / len(same) if same else None}
            )
        return out


def agreement(
    a_spec: str,
    b_spec: str,
    prior_spec: str = "champion_policy",
    opponent_spec: str = "planner",
    games: int = 100,
    seed: int = 940_000,
    players: int = 4,
    b_seed_offset: int = 7_777_777,
    progress: bool = False,
) -> Agreement:
    """Play the games (module docstring) and return every position's three moves."""
    a, b, prior, opponent = (agent_from_spec(s) for s in (a_spec, b_spec, prior_spec, opponent_spec))
    moves = Agreement([], [], [], [])
    env = make_env(num_players=players)
    bar: Any = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=games, unit="game", file=sys.stderr, dynamic_ncols=True)
    for g in range(games):
        deal = seed + g
        a.reset(deal)
        b.reset(deal + b_seed_offset)
        prior.reset(deal)
        opponent.reset(deal)
        seat = g % players

        def choose(decision: Decision, seat: int = seat) -> int:
            if decision.seat != seat:
                return int(opponent.act(decision))
            moves.prior.append(int(prior.act(decision)))
            moves.b.append(int(b.act(decision)))
            move = int(a.act(decision))
            moves.a.append(move)
            moves.gains.append(_estimated_gain(a, move, moves.prior[-1]))
            return move

        play_choices(env, deal, choose)
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    return moves


def _estimated_gain(search: Any, move: int, prior_move: int) -> float | None:
    """``search``'s estimate of ``move``'s gain over ``prior_move`` at its last decision (its
    ``last_values``), or None when the moves are the same or it has no value for either."""
    values = getattr(search, "last_values", None) or {}
    if move == prior_move or move not in values or prior_move not in values:
        return None
    return float(values[move] - values[prior_move])


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineErrorParser(prog="python -m training.agreement", description=__doc__.splitlines()[0])
    parser.add_argument("a", help="the search whose moves are played (agent spec)")
    parser.add_argument("b", help="the second search, with its own worlds (agent spec)")
    parser.add_argument("--prior", default="champion_policy", help="the agent whose move A keeps by default")
    parser.add_argument("--opponent", default="planner", help="who plays the other seats")
    parser.add_argument("--games", type=int_at_least(1), default=100)
    parser.add_argument("--seed", type=int_at_least(0), default=940_000)
    parser.add_argument("--players", type=int_at_least(2), default=4)
    parser.add_argument("--b-seed-offset", type=int_at_least(0), default=7_777_777)
    parser.add_argument("--out", type=Path, default=None, help="JSON file of every position's moves")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    try:
        for spec in (args.a, args.b, args.prior, args.opponent):
            agent_from_spec(spec)
        if args.out is not None and not args.out.parent.is_dir():
            raise ValueError(f"--out {args.out}: no directory {args.out.parent}")
    except (ValueError, TypeError) as err:
        parser.error(str(err))
    refuse_output(parser, "--out", args.out)
    players_or_exit(parser, args.players)
    moves = agreement(
        args.a,
        args.b,
        args.prior,
        args.opponent,
        args.games,
        args.seed,
        args.players,
        args.b_seed_offset,
        progress=not args.no_progress,
    )
    summary = moves.summary()
    by_gain = moves.by_gain()
    if args.out is not None:
        saved = {"args": vars(args) | {"out": str(args.out)}, **asdict(moves), **summary}
        atomic_write(args.out, json.dumps(saved | {"by_gain": by_gain}))
    s = summary
    print(f"A = {args.a}, B = {args.b} (its own worlds), prior = {args.prior}")
    print(f"{s['positions']} decisions of A with a choice ({args.games} games, seed {args.seed})")
    print(
        f"  A plays another move than the prior: {s['a_deviates']} ({s['a_deviates_share']:.3f}); "
        f"B: {s['b_deviates']}"
    )
    print(
        f"  where A deviates, B plays A's move: {s['b_same_when_a_deviates']:.3f}, "
        f"the prior's: {s['b_prior_when_a_deviates']:.3f}"
    )
    print(f"  where A keeps the prior's move, B keeps it too: {s['b_prior_when_a_keeps']:.3f}")
    bins = [row for row in by_gain if row["count"]]
    if bins:
        print("  where A deviates, by A's estimated gain over the prior's move (pips a round):")
        for row in bins:
            low = "" if row["low"] is None else f"{row['low']:g} <= "
            high = "" if row["high"] is None else f" < {row['high']:g}"
            print(f"    {low}gain{high}: {row['count']} deviations, B plays A's move at {row['b_same']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m training.agreement"))
