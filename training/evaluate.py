"""Periodic evaluation of the learner against fixed heuristics, by the tournament harness.

For each opponent, the learner plays ``deals`` duplicate deals in the lineup
``learner + (n - 1) x opponent``; each deal is replayed once per seat rotation, so the
learner plays every hand of the deal once: the duplicate format that removes most of
the luck of the deal from the comparison. This is :func:`agents.tournament.run_tournament`
in this process (no files), so evaluation and ``mtrain bench`` are the same measurement.
The learner plays deterministically (argmax over legal logits, the ``ppo`` agent).

Numbers (:class:`EvalResult`): ``learner_score`` / ``opponent_score`` are mean penalty
pips per round per seat (R24); ``diff`` = learner minus opponent per deal (negative =
the learner sheds more), with its standard error over deals; ``lowest_rate`` the share
of rounds the learner finishes lowest (ties shared).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.tournament import AgentSpec, TournamentConfig, run_tournament
from mtrain_env.mexican_train import GameConfig

#: the learner's label in the evaluation tournaments
LEARNER = "learner"


@dataclass(frozen=True)
class EvalResult:
    """The learner against one heuristic over duplicate deals."""

    opponent: str
    deals: int
    games: int  #: rounds played per seat of the learner (deals x seats x rounds)
    learner_score: float
    opponent_score: float
    diff: float  #: learner minus opponent score per round (negative: learner better)
    diff_se: float
    lowest_rate: float

    def as_row(self, step: int) -> dict[str, Any]:
        """A learning-curve CSV row."""
        return {"step": int(step), **asdict(self)}


def evaluate_agent(
    learner: AgentSpec | str,
    opponent: str,
    deals: int,
    seed: int,
    game: GameConfig | Mapping[str, Any] | None = None,
) -> EvalResult:
    """``learner`` (an agent spec) against ``opponent`` in every other seat, duplicate deals
    (``game``: a GameConfig or ``GameConfig.make`` keywords; default the default game)."""
    game = game if game is not None else GameConfig()
    config = game if isinstance(game, GameConfig) else GameConfig.make(**game)
    n = config.num_players
    spec = AgentSpec.parse(learner) if isinstance(learner, str) else learner
    learner_spec = AgentSpec(spec.name, dict(spec.params), label=LEARNER)
    other = AgentSpec.parse(opponent)  # a name, or a spec such as "mc[sims=50]"
    other_spec = AgentSpec(other.name, dict(other.params), label=opponent)
    result = run_tournament(
        TournamentConfig(
            agents=[learner_spec, other_spec],
            game=config,
            lineup=[LEARNER] + [opponent] * (n - 1),
            deals=deals,
            seed=seed,
            workers=1,
            out_dir=None,
            progress=False,
            plots=False,
        )
    )
    stats = {a["agent"]: a for a in result.agents}
    (pair,) = result.pairwise
    sign = 1.0 if pair["a"] == LEARNER else -1.0
    return EvalResult(
        opponent=opponent,
        deals=deals,
        games=int(stats[LEARNER]["seat_rounds"]),
        learner_score=_value(stats[LEARNER]["mean_penalty"], "mean"),
        opponent_score=_value(stats[opponent]["mean_penalty"], "mean"),
        diff=sign * _value(pair["mean_diff"], "mean"),
        diff_se=_value(pair["mean_diff"], "se"),
        lowest_rate=_value(stats[LEARNER]["lowest_rate"], "mean"),
    )


def _value(estimate: Mapping[str, Any], key: str) -> float:
    """A float of a summary estimate (``None``, for an undefined one, is NaN)."""
    x = estimate[key]
    return math.nan if x is None else float(x)


def evaluate(
    opponents: Sequence[str],
    deals: int,
    seed: int,
    game: GameConfig | Mapping[str, Any] | None,
    policy_path: str | Path,
) -> list[EvalResult]:
    """The policy at ``policy_path`` (the ``ppo`` agent) against each heuristic in ``opponents``."""
    learner = AgentSpec("ppo", {"path": str(policy_path), "deterministic": True})
    return [evaluate_agent(learner, opponent, deals, seed, game) for opponent in opponents]
