"""Multiplayer ratings with uncertainty: openskill's Plackett-Luce over the games in order.

Games are rated one after another in the fixed order ``(deal, lineup, rotation)``, so the
ratings are reproducible and do not depend on worker count or finishing order. A single
round is ranked by penalty pips (fewer is better, ties share a rank); a session
(``rounds > 1``) by the R25 order of :func:`mtrain_env.mexican_train.core.scoring.session_sort_key`
(total, then rounds scored 0, then lowest non-zero round).

When ``|A| < P`` one agent holds several seats of a game. Each seat is then rated as a
separate one-player team starting from the agent's current rating, and the agent's new
``mu`` and ``sigma`` are the means over its seats (one game moves an agent once, however
many seats it held).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agents.tournament.stats import Game
from mtrain_env.mexican_train.core.scoring import session_sort_key

#: ordinal = mu - Z * sigma (openskill's default conservative estimate)
ORDINAL_Z = 3.0


@dataclass
class Ratings:
    """Rating history: row ``k`` is after ``k`` games (row 0 the prior); columns follow ``labels``."""

    labels: tuple[str, ...]
    mu: np.ndarray  #: shape (games + 1, agents)
    sigma: np.ndarray  #: shape (games + 1, agents)

    def final(self) -> list[dict[str, float | str]]:
        """Per agent: final ``mu``, ``sigma`` and ``ordinal = mu - 3 sigma``."""
        return [
            {
                "agent": label,
                "mu": float(self.mu[-1, i]),
                "sigma": float(self.sigma[-1, i]),
                "ordinal": float(self.mu[-1, i] - ORDINAL_Z * self.sigma[-1, i]),
            }
            for i, label in enumerate(self.labels)
        ]


def game_ranks(game: Game, positive: bool = False) -> list[int]:
    """Rank by seat (1 = best; equal results share the best rank among them)."""
    n = len(game.agents)
    if len(game.penalty) == 1:
        keys: list[tuple[float, ...]] = [(float(game.penalty[0][s]),) for s in range(n)]
    else:
        keys = [session_sort_key(game.scores, s, positive) for s in range(n)]
    return [1 + sum(1 for k in keys if k < keys[s]) for s in range(n)]


def rate_games(games: Sequence[Game], labels: Sequence[str], positive: bool = False) -> Ratings:
    """Plackett-Luce ratings after each game of ``games`` (in the given order)."""
    from openskill.models import PlackettLuce  # the train extra: imported when ratings are computed

    model = PlackettLuce()
    prior = model.rating()
    index = {label: i for i, label in enumerate(labels)}
    mu = np.empty((len(games) + 1, len(labels)))
    sigma = np.empty_like(mu)
    cur_mu = np.full(len(labels), prior.mu)
    cur_sigma = np.full(len(labels), prior.sigma)
    mu[0], sigma[0] = cur_mu, cur_sigma
    for k, game in enumerate(games, start=1):
        seats = [index[a] for a in game.agents]
        teams = [[model.rating(mu=float(cur_mu[i]), sigma=float(cur_sigma[i]))] for i in seats]
        new = model.rate(teams, ranks=[float(r) for r in game_ranks(game, positive)])
        sum_mu: dict[int, list[float]] = {}
        sum_sigma: dict[int, list[float]] = {}
        for i, team in zip(seats, new, strict=True):
            sum_mu.setdefault(i, []).append(team[0].mu)
            sum_sigma.setdefault(i, []).append(team[0].sigma)
        for i in sum_mu:
            cur_mu[i] = float(np.mean(sum_mu[i]))
            cur_sigma[i] = float(np.mean(sum_sigma[i]))
        mu[k], sigma[k] = cur_mu, cur_sigma
    return Ratings(tuple(labels), mu, sigma)
