"""Periodic evaluation of the learner against fixed heuristics on duplicate deals.

For each opponent name, the learner plays ``deals`` seeded deals; each deal is replayed
once per seat with the learner moved one seat on (rotation ``r``: learner in seat ``r``,
the opponent agent in every other seat), so the learner plays every hand of the deal
once — the duplicate format that removes most of the luck of the deal from the
comparison. The learner plays deterministically (argmax over legal logits, the ``ppo``
agent).

Two backends, one result type (:class:`EvalResult`):

* ``"harness"``: the tournament harness (:func:`agents.tournament.run_tournament`), with
  the learner as ``agents.mexican_train.ppo:PPOAgent`` reading a policy file;
* ``"local"``: a minimal loop in this module with the same seating, used when the
  harness is not installed or when the policy is only in memory;
* ``"auto"`` (default): the harness when importable and a policy file is given, else local.

Numbers: ``learner_score`` / ``opponent_score`` are mean round scores per seat (penalty
pips, R24; the positive score under ``positive_scoring``); ``diff`` = learner minus
opponent per deal (negative = the learner sheds more), with its standard error over
deals; ``lowest_rate`` the share of rounds the learner finishes lowest (ties shared).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents import decision_for, make_agent
from agents.mexican_train.base import Agent
from mtrain_env.mexican_train.env import raw_env

BACKENDS = ("auto", "harness", "local")


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
    mean_reward: float  #: learner's mean episode reward (env reward mode; local backend only)
    backend: str

    def as_row(self, step: int) -> dict[str, Any]:
        """A learning-curve CSV row."""
        return {"step": int(step), **asdict(self)}


def _seed(*words: int) -> int:
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1)[0])


def _se(values: Sequence[float]) -> float:
    if len(values) < 2:
        return math.nan
    return float(np.std(values, ddof=1) / math.sqrt(len(values)))


def evaluate_local(
    learner: Agent,
    opponent: str,
    deals: int,
    seed: int,
    env_kwargs: Mapping[str, Any] | None = None,
    opponent_params: Mapping[str, Any] | None = None,
) -> EvalResult:
    """The learner against ``opponent`` in every other seat, duplicate deals (module docstring)."""
    env = raw_env(**dict(env_kwargs or {}))
    n = env.config.num_players
    deal_diffs: list[float] = []
    learner_scores: list[float] = []
    opponent_scores: list[float] = []
    lowest: list[float] = []
    rewards: list[float] = []
    games = 0
    for deal in range(deals):
        deal_seed = _seed(seed, 0, deal)
        deal_learner: list[float] = []
        deal_opp: list[float] = []
        for rotation in range(n):
            players: list[Agent] = []
            for s in range(n):
                if s == rotation:
                    learner.reset(_seed(seed, 1, deal, rotation, s))
                    players.append(learner)
                else:
                    opp = make_agent(
                        opponent, seed=_seed(seed, 1, deal, rotation, s), **dict(opponent_params or {})
                    )
                    players.append(opp)
            env.reset(seed=deal_seed)
            learner_id = env.possible_agents[rotation]
            total = 0.0
            while not env.terminations[learner_id]:
                agent_id = env.agent_selection
                seat = env.agent_name_mapping[agent_id]
                env.step(players[seat].act(decision_for(env, agent_id)))
                total += float(env.rewards[learner_id])
            rewards.append(total)
            for row in env.state_obj.round_scores:
                games += 1
                mine = float(row[rotation])
                others = [float(x) for s, x in enumerate(row) if s != rotation]
                deal_learner.append(mine)
                deal_opp.extend(others)
                best = max(row) if env.config.positive_scoring else min(row)
                ties = sum(1 for x in row if x == best)
                lowest.append(1.0 / ties if mine == best else 0.0)
        learner_scores.extend(deal_learner)
        opponent_scores.extend(deal_opp)
        deal_diffs.append(float(np.mean(deal_learner) - np.mean(deal_opp)))
    return EvalResult(
        opponent=opponent,
        deals=deals,
        games=games,
        learner_score=float(np.mean(learner_scores)),
        opponent_score=float(np.mean(opponent_scores)),
        diff=float(np.mean(deal_diffs)),
        diff_se=_se(deal_diffs),
        lowest_rate=float(np.mean(lowest)),
        mean_reward=float(np.mean(rewards)),
        backend="local",
    )


def _harness_available() -> bool:
    try:
        from agents.tournament import run_tournament  # noqa: F401
    except ImportError:
        return False
    return True


def _value(x: Any) -> float:
    """A float from a harness estimate (an ``Estimate``, its dict, or a number)."""
    if x is None:
        return math.nan
    if isinstance(x, Mapping):
        return float(x["mean"]) if x.get("mean") is not None else math.nan
    if hasattr(x, "mean"):
        return float(x.mean)
    return float(x)


def _score(entry: Mapping[str, Any]) -> float:
    """An agent's mean round score from a harness summary entry (the key was renamed once)."""
    for key in ("mean_penalty", "mean_pips", "mean_score"):
        if key in entry:
            return _value(entry[key])
    raise KeyError(f"no mean score in the harness summary entry (keys: {sorted(entry)})")


def _se_of(x: Any) -> float:
    if isinstance(x, Mapping):
        return float(x["se"]) if x.get("se") is not None else math.nan
    return float(getattr(x, "se", math.nan))


def evaluate_harness(
    policy_path: str | Path,
    opponent: str,
    deals: int,
    seed: int,
    env_kwargs: Mapping[str, Any] | None = None,
    opponent_params: Mapping[str, Any] | None = None,
) -> EvalResult:
    """Like :func:`evaluate_local`, played by the tournament harness (in this process)."""
    from agents.tournament import AgentSpec, TournamentConfig, run_tournament

    kw = dict(env_kwargs or {})
    n = int(kw.pop("num_players", 4))
    max_pips = int(kw.pop("max_pips", 12))
    hand_size = kw.pop("hand_size", None)
    rules = str(kw.pop("rules", "pagat"))
    rounds = int(kw.pop("rounds", 1))
    kw.pop("reward", None)
    learner = AgentSpec("agents.mexican_train.ppo:PPOAgent", {"path": str(policy_path)}, label="learner")
    opp = AgentSpec(opponent, dict(opponent_params or {}), label=opponent)
    config = TournamentConfig(
        agents=[learner, opp],
        num_players=n,
        max_pips=max_pips,
        hand_size=hand_size,
        rules=rules,
        flags=kw,
        rounds_per_game=rounds,
        lineup=["learner"] + [opponent] * (n - 1),
        deals=deals,
        seed=seed,
        workers=1,
        out_dir=None,
        progress=False,
        plots=False,
    )
    result = run_tournament(config)
    stats = {a["agent"]: a for a in result.agents}
    pair = next(p for p in result.pairwise if {p.get("a"), p.get("b")} == {"learner", opponent})
    sign = 1.0 if pair.get("a") == "learner" else -1.0
    return EvalResult(
        opponent=opponent,
        deals=deals,
        games=int(stats["learner"].get("seat_rounds", deals * n * rounds)),
        learner_score=_score(stats["learner"]),
        opponent_score=_score(stats[opponent]),
        diff=sign * _value(pair["mean_diff"]),
        diff_se=_se_of(pair["mean_diff"]),
        lowest_rate=_value(stats["learner"]["lowest_rate"]),
        mean_reward=math.nan,
        backend="harness",
    )


def evaluate(
    opponents: Sequence[str],
    deals: int,
    seed: int,
    env_kwargs: Mapping[str, Any] | None = None,
    policy_path: str | Path | None = None,
    policy: Any = None,
    backend: str = "auto",
) -> list[EvalResult]:
    """The learner (a policy file, or an in-memory policy) against each heuristic in ``opponents``.

    The one entry point the trainer calls; ``backend`` picks the harness or the local loop
    (module docstring).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    use_harness = backend == "harness" or (
        backend == "auto" and policy_path is not None and _harness_available()
    )
    if use_harness and policy_path is None:
        raise ValueError("the harness backend needs a policy file")
    from agents.mexican_train.ppo import PPOAgent

    results = []
    for opponent in opponents:
        if use_harness:
            assert policy_path is not None
            results.append(evaluate_harness(policy_path, opponent, deals, seed, env_kwargs))
        else:
            learner = PPOAgent(path=policy_path, policy=policy, deterministic=True)
            results.append(evaluate_local(learner, opponent, deals, seed, env_kwargs))
    return results
