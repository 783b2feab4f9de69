"""``mtrain demo``: the README's main job.

1. One seeded 4-player round between the reference policy and the baselines
   (``ppo planner greedy random`` by default), the table rendered after every step (ansi;
   only the hand of the seat on turn is shown, R15 hidden information), then the scores.
2. A short duplicate-deal tournament between the same agents (:mod:`agents.tournament`),
   its table printed and its CSV / JSON / PNG plots written to ``--out``.

``mtrain demo --agents random random random random --deals 0`` is the plain game of
random players.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from agents import decision_for, make_agent

DEFAULT_AGENTS = ("ppo", "planner", "greedy", "random")


def register(subparsers: Any) -> None:
    """Add the ``demo`` subcommand to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "demo",
        help="a rendered game between the reference policy and the baselines, then a short tournament",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--agents", nargs="+", default=list(DEFAULT_AGENTS), help="one registered agent per seat")
    p.add_argument("--rules", default="pagat")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--every", type=int, default=1, help="print the table every N steps")
    p.add_argument("--deals", type=int, default=25, help="duplicate deals of the tournament (0: none)")
    p.add_argument("--workers", type=int, default=1, help="tournament processes (0 = every core)")
    p.add_argument("--out", default="results/demo", help="tournament output directory (overwritten)")
    p.set_defaults(func=demo)


def play_game(names: list[str], rules: str, seed: int, every: int) -> list[float]:
    """Play and print one round between agents ``names`` (seat order); returns the penalties."""
    import mtrain_env

    env = mtrain_env.env(num_players=len(names), rules=rules, render_mode="ansi")
    env.reset(seed=seed)
    players = {f"player_{i}": make_agent(name, seed=seed + i) for i, name in enumerate(names)}
    codec = env.unwrapped.codec
    print("Seats: " + ", ".join(f"{seat} = {name}" for seat, name in zip(players, names, strict=True)))
    print(env.render())
    steps = 0
    seat_names = dict(zip(players, names, strict=True))
    for seat in env.agent_iter():
        _obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = players[seat].act(decision_for(env, seat))
        env.step(action)
        steps += 1
        if every > 0 and steps % every == 0:
            print(f"\n-- step {steps}: {seat} ({seat_names[seat]}) plays {codec.describe(action)}")
            print(env.render())
    state = env.unwrapped.state_obj
    print(f"\nRound over after {steps} steps ({'blocked' if state.blocked else 'a player went out'}).")
    for i, score in enumerate(state.scores):
        print(f"  player_{i} ({names[i]}): {score:g} penalty pips")
    return [float(s) for s in state.scores]


def demo(args: argparse.Namespace) -> int:
    """The game, then the tournament."""
    from agents.tournament import AgentSpec, TournamentConfig, run_tournament

    names = list(args.agents)
    if not 2 <= len(names) <= 8:
        print(
            f"mtrain demo: --agents takes one agent per seat, 2 to 8 (R3), got {len(names)}", file=sys.stderr
        )
        return 2
    play_game(names, args.rules, args.seed, args.every)
    if args.deals <= 0:
        return 0
    distinct = list(dict.fromkeys(names))
    print(f"\nTournament: {args.deals} duplicate deals, each played from every seat rotation ...")
    result = run_tournament(
        TournamentConfig(
            agents=[AgentSpec(name) for name in distinct],
            num_players=len(names),
            rules=args.rules,
            deals=args.deals,
            seed=args.seed,
            lineup=names,
            workers=args.workers,
            out_dir=args.out,
            overwrite=True,
        )
    )
    print(result.table)
    print()
    for name, path in result.files.items():
        print(f"  {name}: {path}")
    return 0
