"""One call that scores an agent against opponents: :func:`evaluate`.

It seats the agent in one seat and the opponents in the others, plays duplicate deals with
every seat rotation through the same harness as ``mtrain bench`` (same arguments, same
numbers) and returns an :class:`Evaluation`: the agent's penalty pips a round, going-out and
lowest rates, and its paired gain over each opponent, each with a 95% interval over deals.

    from agents.tournament import evaluate
    result = evaluate("mc[sims=50]", opponents="planner", players=4, deals=100, seed=0)
    print(result)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agents.base import BaseAgent
from agents.custom import from_policy
from agents.spec import AgentSpec
from agents.tournament.harness import TournamentConfig
from mtrain_env.mexican_train import GameConfig

__all__ = ["Estimate", "Evaluation", "evaluate", "evaluation_config"]


@dataclass(frozen=True)
class Estimate:
    """A mean over duplicate deals with its 95% t-interval."""

    mean: float
    lo: float
    hi: float

    @classmethod
    def of(cls, stats: dict[str, Any], sign: float = 1.0) -> Estimate:
        lo, hi = sign * stats["lo"], sign * stats["hi"]
        return cls(sign * stats["mean"], min(lo, hi), max(lo, hi))

    def __str__(self) -> str:
        return f"{self.mean:.2f} [{self.lo:.2f}, {self.hi:.2f}]"


@dataclass(frozen=True)
class Evaluation:
    """What :func:`evaluate` measured (``result`` is the tournament itself)."""

    agent: str  #: the agent's label
    players: int
    deals: int
    rounds: int  #: rounds the agent played (deals x rotations x rounds a game)
    pips: Estimate  #: the agent's penalty pips a round (lower is better)
    went_out: Estimate  #: share of its rounds it went out in
    lowest: Estimate  #: share of its rounds it finished lowest in (ties shared)
    gains: dict[str, Estimate]  #: opponent label -> its penalty minus the agent's, a round
    result: Any  #: the :class:`~agents.tournament.TournamentResult`

    def table(self) -> str:
        """The evaluation as a few printable lines."""
        games = f"{self.players}-player games, {self.deals} duplicate deals ({self.rounds} rounds)"
        head = f"{self.agent} in {games}:"
        lines = [
            head,
            f"  penalty pips a round  {self.pips}",
            f"  went out              {_share(self.went_out)}",
            f"  finished lowest       {_share(self.lowest)}",
        ]
        lines += [f"  pips a round better than {label}: {gain}" for label, gain in self.gains.items()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _share(e: Estimate) -> str:
    return f"{e.mean:.1%} [{e.lo:.1%}, {e.hi:.1%}]"


def evaluation_config(
    agent: Any,
    opponents: str | AgentSpec | Sequence[str | AgentSpec] = "planner",
    players: int = 4,
    deals: int = 1000,
    seed: int = 0,
    game: Any = None,
    **options: Any,
) -> TournamentConfig:
    """The tournament :func:`evaluate` runs: ``agent`` in one seat, ``opponents`` (one spec
    for every other seat, or one per seat) in the others, duplicate deals, every rotation.
    ``options``: the other :class:`~agents.tournament.TournamentConfig` fields."""
    entrant = agent if isinstance(agent, (str, AgentSpec, BaseAgent)) else from_policy(agent)
    you = AgentSpec.of(entrant)
    config = game if game is not None else GameConfig.make(num_players=players)
    if game is not None and players != config.num_players:
        raise ValueError(f"players={players} but the game config seats {config.num_players}")
    n = int(config.num_players)
    others = [opponents] * (n - 1) if isinstance(opponents, (str, AgentSpec)) else list(opponents)
    if len(others) != n - 1:
        raise ValueError(f"opponents names {len(others)} seats; {n} players leave {n - 1} for the opponents")
    specs = [AgentSpec.of(o) for o in others]
    if any(s.agent is not None for s in specs):
        raise ValueError(
            "opponents must be agent specs (strings or AgentSpec); only the evaluated agent is an object"
        )
    you_label = you.label or you.default_label()
    entrants: dict[str, AgentSpec] = {}  # label -> spec: the same spec in two seats is one entrant
    lineup = [you_label]
    for spec in specs:
        label = spec.label or spec.default_label()
        if label == you_label:  # planner against planners
            label = f"{label} (opponent)"
        entrants.setdefault(label, AgentSpec(spec.name, dict(spec.params), label=label))
        lineup.append(label)
    return TournamentConfig(
        agents=[you, *entrants.values()], game=config, deals=deals, seed=seed, lineup=lineup, **options
    )


def evaluate(
    agent: Any,
    opponents: str | AgentSpec | Sequence[str | AgentSpec] = "planner",
    players: int = 4,
    deals: int = 1000,
    seed: int = 0,
    workers: int = 1,
    game: Any = None,
    out_dir: str | os.PathLike[str] | None = None,
    progress: bool = False,
) -> Evaluation:
    """Score ``agent`` (a spec such as ``"mc[sims=50]"``, an agent object, or anything
    :func:`agents.custom.from_policy` takes: a function ``(observation, mask) -> action``,
    an SB3 model, a torch module) against ``opponents`` on ``deals`` duplicate deals.

    ``opponents``: one spec for every other seat, or a list of one spec per other seat
    (``["mc", "planner", "greedy"]``). ``game`` replaces the default table of ``players``
    players (double-12, pagat rules, one round). ``out_dir`` keeps the results (resumable,
    as ``mtrain bench --out``). The numbers are those of ``mtrain bench`` with the same
    agents, lineup, deals and seed.
    """
    from agents.tournament import run_tournament

    config = evaluation_config(
        agent,
        opponents,
        players,
        deals,
        seed,
        game,
        workers=workers,
        out_dir=out_dir,
        progress=progress,
        plots=False,
    )
    result = run_tournament(config)
    you = result.plan.labels[0]
    row = next(a for a in result.agents if a["agent"] == you)
    gains = {}
    for pair in result.pairwise:
        if you in (pair["a"], pair["b"]):
            other = pair["b"] if pair["a"] == you else pair["a"]
            gains[other] = Estimate.of(pair["mean_diff"], 1.0 if pair["b"] == you else -1.0)
    return Evaluation(
        agent=you,
        players=result.plan.num_players,
        deals=int(row["deals"]),
        rounds=int(row["seat_rounds"]),
        pips=Estimate.of(row["mean_penalty"]),
        went_out=Estimate.of(row["went_out_rate"]),
        lowest=Estimate.of(row["lowest_rate"]),
        gains=gains,
        result=result,
    )
