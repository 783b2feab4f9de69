"""A pair-rated mini tournament for partnership dominoes.

``python -m agents.block.bench --hands 2000 --seed 0 [--agents random greedy classic]``

Every two agents meet: both seats of a pair are played by the same agent (two seeded
instances). Full matches to the target (B13) are played in DUPLICATE: each match seed is
played twice with the pairs swapped, on the same deal sequence (the env's generator only
deals), so the luck of the tiles cancels. ``--hands`` is the budget of hands per meeting.

Printed per meeting and per agent: the mean NET points per hand (the points the other pair
scored minus the points this pair scored; positive is good) and the match win rate, each
with a 95% interval over duplicate units (one match seed, both orientations: independent
draws), using the normal approximation (there are hundreds of units).
"""

from __future__ import annotations

import itertools
import math
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from agents.block import make_agent
from agents.block.base import BlockAgent
from agents.play import play_game
from agents.registry import agent_names
from mtrain_env.block import GameConfig, raw_env
from mtrain_env.cli import int_at_least
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.interrupts import run_main

__all__ = ["BenchResult", "Meeting", "bench", "main", "play_match"]

Z95 = 1.959964


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and 95% half-width (normal approximation; 0 with fewer than two values)."""
    m = statistics.fmean(values) if values else float("nan")
    if len(values) < 2:
        return m, 0.0
    return m, Z95 * statistics.stdev(values) / math.sqrt(len(values))


def play_match(env: raw_env, seats: Sequence[BlockAgent], seed: int) -> tuple[list[tuple[int, int]], int]:
    """One match (``env`` built with ``match=True``): per-hand points by pair, and the losing pair."""
    record = play_game(env, seats, seed=seed, agent_seeds=[seed * 8 + k for k in range(len(seats))])
    hands = [rnd.result for rnd in record.rounds]
    return [(h["points"][0], h["points"][1]) for h in hands], int(hands[-1]["match_loser"])


@dataclass
class Meeting:
    """Results of agent ``a`` against agent ``b``, seen from ``a``."""

    a: str
    b: str
    hands: int = 0
    matches: int = 0
    net: list[float] = field(default_factory=list)  #: a's net points per hand, per duplicate unit
    wins: list[float] = field(default_factory=list)  #: a's match win rate per duplicate unit


@dataclass
class BenchResult:
    meetings: list[Meeting]

    def per_agent(self) -> dict[str, tuple[list[float], list[float], int]]:
        """agent -> (net per unit, win rate per unit, hands) over all its meetings."""
        out: dict[str, tuple[list[float], list[float], int]] = {}
        for m in self.meetings:
            for name, sign in ((m.a, 1.0), (m.b, -1.0)):
                net, wins, hands = out.get(name, ([], [], 0))
                net = net + [sign * x for x in m.net]
                wins = wins + [x if sign > 0 else 1.0 - x for x in m.wins]
                out[name] = (net, wins, hands + m.hands)
        return out

    def table(self) -> str:
        lines = [
            f"{'meeting':24s} {'hands':>6s} {'matches':>7s}  {'net pts/hand (A)':>22s}  {'A match wins':>18s}"
        ]
        for m in self.meetings:
            net, net_h = mean_ci(m.net)
            win, win_h = mean_ci(m.wins)
            lines.append(
                f"{m.a + ' vs ' + m.b:24s} {m.hands:6d} {m.matches:7d}  {net:+9.2f} +- {net_h:5.2f}"
                f"        {100 * win:5.1f}% +- {100 * win_h:4.1f}"
            )
        lines.append("")
        lines.append(f"{'pair (agent)':24s} {'hands':>6s}  {'net pts/hand':>22s}  {'match win rate':>18s}")
        ranked = sorted(self.per_agent().items(), key=lambda kv: -statistics.fmean(kv[1][0]))
        for name, (net_v, wins_v, hands) in ranked:
            net, net_h = mean_ci(net_v)
            win, win_h = mean_ci(wins_v)
            lines.append(
                f"{name:24s} {hands:6d}  {net:+9.2f} +- {net_h:5.2f}"
                f"        {100 * win:5.1f}% +- {100 * win_h:4.1f}"
            )
        return "\n".join(lines)


def bench(
    names: Sequence[str], hands: int, seed: int = 0, progress: bool = False, **config: Any
) -> BenchResult:
    """Every pair of ``names`` plays duplicate matches until ``hands`` hands per meeting;
    ``progress``: a bar on stderr (hands of every meeting)."""
    config = {"match": True, **config}
    env = raw_env(**config)
    n = env.config.num_players
    meetings = []
    pairs = list(itertools.combinations(names, 2))
    bar = tqdm(total=hands * len(pairs), unit="hand", file=sys.stderr, disable=not progress, mininterval=1.0)
    for a, b in pairs:
        meeting = Meeting(a, b)
        unit = 0
        while meeting.hands < hands:
            match_seed = seed * 1_000_003 + unit
            net_sum, unit_hands, wins = 0.0, 0, 0.0
            for a_pair in (0, 1):  # duplicate: the same deals with the pairs swapped
                seats = [make_agent(a if q % 2 == a_pair else b) for q in range(n)]
                results, loser = play_match(env, seats, match_seed)
                for pts in results:
                    net_sum += pts[1 - a_pair] - pts[a_pair]
                unit_hands += len(results)
                wins += 0.5 if loser != a_pair else 0.0
                meeting.matches += 1
            bar.update(min(unit_hands, hands - meeting.hands))  # a match's last hands overshoot
            meeting.hands += unit_hands
            meeting.net.append(net_sum / unit_hands)
            meeting.wins.append(wins)
            unit += 1
        meetings.append(meeting)
    bar.close()
    return BenchResult(meetings)


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineErrorParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int_at_least(1), default=2000, help="hands per meeting (budget)")
    parser.add_argument("--seed", type=int_at_least(0), default=0)
    parser.add_argument(
        "--agents",
        nargs="+",
        choices=agent_names("block"),
        default=["random", "greedy", "classic"],
        metavar="AGENT",
        help=f"two or more of {', '.join(agent_names('block'))} (default: all three)",
    )
    parser.add_argument("--players", type=int, choices=(2, 4), default=4)
    parser.add_argument("--target", type=int, default=None, help="match target (default 100, B13)")
    args = parser.parse_args(argv)
    if len(args.agents) < 2:
        parser.error(f"--agents: every two agents meet: name two or more, got {' '.join(args.agents)}")
    if args.target is not None:
        try:
            GameConfig.make(target=args.target)
        except ValueError as err:
            parser.error(f"--target: {err}")
    result = bench(
        args.agents, args.hands, args.seed, progress=True, num_players=args.players, target=args.target
    )
    print(result.table())
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m agents.block.bench"))
