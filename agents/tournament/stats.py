"""Tournament statistics over duplicate deals: CIs, pairwise tables, variance reduction.

Rounds played on one deal are strongly correlated (same hands, same boneyard), so every
interval here is computed over **deal-level** values: for each deal, an agent's mean
over all the seat-rounds it played on that deal; the deals are independent draws. The
95% interval is Student's ``t`` over those deal means.

Variance reduction. For agents ``a`` and ``b`` let ``g`` be the difference of their mean
penalties within one game (one rotation of one deal) and ``D`` the mean of ``g`` over the
games of a deal. The duplicate estimate has standard error ``SE_dup = sd(D) / sqrt(#deals)``.
Had the same ``#games`` been played on independent deals, each game's ``g`` would vary
with its own deal, with the marginal variance ``Var(g)``, estimated by the sample variance
of all ``g`` (pooled over deals and rotations), so ``SE_ind = sd(g) / sqrt(#games)``.
``variance_ratio = SE_ind^2 / SE_dup^2`` is how many times more games independent deals
need for the same precision: the comparison at equal playing time. (The pooled variance
of clustered ``g`` slightly underestimates ``Var(g)``, by a factor ``1 - O(1/#deals)``.)

Duplicate play removes the luck of who got which hand (rotations make it cancel) but
samples fewer distinct deals; when an agent's edge itself varies a lot from deal to deal,
the second effect can win and the ratio drops below 1. ``variance_ratio_same_deals``
compares with as many independent deals as duplicate ones, each played once
(``sd(g) / sqrt(#deals)``): the gain per deal generated, not per game played.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from agents.tournament.results import Row
from mtrain_env.mexican_train.core.scoring import session_winners

#: confidence level of every interval
LEVEL = 0.95


# ------------------------------------------------------------ t distribution
def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta ``I_x(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """CDF of Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _betai(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """Quantile of Student's t (bisection on :func:`t_cdf`; exact to ~1e-12)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if df > 1e7:
        return statistics.NormalDist().inv_cdf(p)
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


# ------------------------------------------------------------------ estimates
@dataclass(frozen=True)
class Estimate:
    """A mean with its standard error and ``LEVEL`` confidence interval over ``n`` values."""

    mean: float
    se: float
    lo: float
    hi: float
    n: int

    def to_dict(self) -> dict[str, float | int | None]:
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(self).items()}

    def __str__(self) -> str:
        if math.isnan(self.lo):
            return f"{self.mean:.2f}"
        return f"{self.mean:.2f} [{self.lo:.2f}, {self.hi:.2f}]"


def mean_ci(
    values: Sequence[float], level: float = LEVEL, bounds: tuple[float, float] | None = None
) -> Estimate:
    """Mean and t-interval of independent ``values`` (``nan`` bounds when ``n < 2``).

    ``bounds`` clips the interval to the possible range (rates: ``(0, 1)``).
    """
    n = len(values)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, math.nan, 0)
    mean = math.fsum(values) / n
    if n < 2:
        return Estimate(mean, math.nan, math.nan, math.nan, n)
    var = math.fsum((x - mean) ** 2 for x in values) / (n - 1)
    se = math.sqrt(var / n)
    half = t_quantile(0.5 + level / 2.0, n - 1) * se
    lo, hi = mean - half, mean + half
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return Estimate(mean, se, lo, hi, n)


def ratio_ci(num: Sequence[float], den: Sequence[float], level: float = LEVEL) -> Estimate:
    """``mean(num) / mean(den)`` over paired values, with a delta-method t-interval.

    The share of a gap one agent closes (its gain over the bound's, deal by deal): the
    residuals ``num - r * den`` carry the pairing, so deal luck common to both cancels.
    ``nan`` bounds when ``n < 2`` or ``mean(den)`` is 0.
    """
    n = len(num)
    if n != len(den):
        raise ValueError(f"ratio_ci: {n} numerators but {len(den)} denominators")
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, math.nan, 0)
    mean_den = math.fsum(den) / n
    if mean_den == 0.0:
        return Estimate(math.nan, math.nan, math.nan, math.nan, n)
    ratio = math.fsum(num) / n / mean_den
    if n < 2:
        return Estimate(ratio, math.nan, math.nan, math.nan, n)
    residuals = [a - ratio * b for a, b in zip(num, den, strict=True)]
    se = sample_sd(residuals) / math.sqrt(n) / abs(mean_den)
    half = t_quantile(0.5 + level / 2.0, n - 1) * se
    return Estimate(ratio, se, ratio - half, ratio + half, n)


def sample_sd(values: Sequence[float]) -> float:
    """Sample standard deviation (``ddof=1``; ``nan`` for fewer than two values)."""
    n = len(values)
    if n < 2:
        return math.nan
    mean = math.fsum(values) / n
    return math.sqrt(math.fsum((x - mean) ** 2 for x in values) / (n - 1))


# ---------------------------------------------------------------------- games
@dataclass
class Game:
    """One game (one rotation of one deal of one lineup): per round, per seat results."""

    deal: int
    lineup: int
    rotation: int
    agents: tuple[str, ...]  #: agent label by seat
    penalty: list[list[int]]  #: [round][seat], pips left (R24)
    scores: list[list[float]]  #: [round][seat], the engine's round scores
    went_out: list[list[int]]
    lowest_share: list[list[float]]

    def seats_of(self, label: str) -> list[int]:
        return [s for s, a in enumerate(self.agents) if a == label]

    def mean_of(self, label: str, table: list[list[int]] | list[list[float]]) -> float:
        """Mean of ``table`` over the agent's seats and all rounds of this game."""
        seats = self.seats_of(label)
        return math.fsum(r[s] for r in table for s in seats) / (len(seats) * len(table))

    def session_win_share(self, positive: bool) -> list[float]:
        """R25 session result by seat: ``1/k`` for each of ``k`` winners after the tie-breaks."""
        winners = session_winners(self.scores, len(self.agents), positive)
        return [1.0 / len(winners) if s in winners else 0.0 for s in range(len(self.agents))]


def group_games(rows: Iterable[Row]) -> list[Game]:
    """Rows -> games in the fixed order ``(deal, lineup, rotation)``; checks completeness."""
    by_game: dict[tuple[int, int, int], list[Row]] = defaultdict(list)
    for row in rows:
        by_game[(row.deal, row.lineup, row.rotation)].append(row)
    games = []
    for key in sorted(by_game):
        block = sorted(by_game[key], key=lambda r: (r.round, r.seat))
        n_seats = 1 + max(r.seat for r in block)
        n_rounds = 1 + max(r.round for r in block)
        if len(block) != n_seats * n_rounds:
            raise ValueError(
                f"game {key} has {len(block)} rows, expected {n_rounds} rounds x {n_seats} seats"
            )
        agents = tuple(r.agent for r in block[:n_seats])

        def table(attr: str, block: list[Row] = block, n_seats: int = n_seats) -> list[list]:
            return [[getattr(r, attr) for r in block[i : i + n_seats]] for i in range(0, len(block), n_seats)]

        games.append(
            Game(
                deal=key[0],
                lineup=key[1],
                rotation=key[2],
                agents=agents,
                penalty=table("penalty"),
                scores=table("score"),
                went_out=table("went_out"),
                lowest_share=table("lowest_share"),
            )
        )
    return games


def _by_deal(games: Sequence[Game]) -> dict[int, list[Game]]:
    out: dict[int, list[Game]] = defaultdict(list)
    for g in games:
        out[g.deal].append(g)
    return dict(sorted(out.items()))


def _mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs)


# ------------------------------------------------------------------ per agent
def agent_stats(games: Sequence[Game], labels: Sequence[str], positive: bool = False) -> list[dict]:
    """Per agent: mean penalty per round, rate of going out, rate of finishing lowest
    (ties shared), and for sessions the mean session score and R25 win rate; each an
    :class:`Estimate` over deal-level means.
    """
    deals = _by_deal(games)
    sessions = bool(games) and len(games[0].penalty) > 1
    out = []
    for label in labels:
        per_deal: dict[str, list[float]] = defaultdict(list)
        seat_rounds = 0
        for deal_games in deals.values():
            mine = [g for g in deal_games if label in g.agents]
            if not mine:
                continue
            per_deal["penalty"].append(_mean([g.mean_of(label, g.penalty) for g in mine]))
            per_deal["went_out"].append(_mean([g.mean_of(label, g.went_out) for g in mine]))
            per_deal["lowest"].append(_mean([g.mean_of(label, g.lowest_share) for g in mine]))
            seat_rounds += sum(len(g.seats_of(label)) * len(g.penalty) for g in mine)
            if sessions:
                totals = []
                wins = []
                for g in mine:
                    share = g.session_win_share(positive)
                    for s in g.seats_of(label):
                        totals.append(math.fsum(r[s] for r in g.scores))
                        wins.append(share[s])
                per_deal["session_score"].append(_mean(totals))
                per_deal["session_win"].append(_mean(wins))
        entry: dict = {
            "agent": label,
            "deals": len(per_deal["penalty"]),
            "seat_rounds": seat_rounds,
            "mean_penalty": mean_ci(per_deal["penalty"]),
            "went_out_rate": mean_ci(per_deal["went_out"], bounds=(0.0, 1.0)),
            "lowest_rate": mean_ci(per_deal["lowest"], bounds=(0.0, 1.0)),
        }
        if sessions:
            entry["session_score"] = mean_ci(per_deal["session_score"])
            entry["session_win_rate"] = mean_ci(per_deal["session_win"], bounds=(0.0, 1.0))
        out.append(entry)
    return out


# ------------------------------------------------------------------- pairwise
def pairwise(games: Sequence[Game], labels: Sequence[str]) -> list[dict]:
    """For each pair ``a < b`` (label order), from the games where both sat:

    * ``mean_diff``: mean penalty per round of ``a`` minus ``b`` (negative: ``a`` better),
      an :class:`Estimate` over deal-level differences;
    * ``a_beats_b_deals``: share of deals where ``a``'s deal mean is lower (ties 1/2);
    * ``a_beats_b_rounds``: share of rounds where ``a``'s mean over its seats is lower (ties 1/2);
    * ``variance``: the duplicate vs independent-deal standard errors (module docstring).
    """
    deals = _by_deal(games)
    out = []
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            deal_diffs: list[float] = []
            game_diffs: list[float] = []
            deal_wins: list[float] = []
            round_wins: list[float] = []
            for deal_games in deals.values():
                both = [g for g in deal_games if a in g.agents and b in g.agents]
                if not both:
                    continue
                diffs = [g.mean_of(a, g.penalty) - g.mean_of(b, g.penalty) for g in both]
                game_diffs.extend(diffs)
                dd = _mean(diffs)
                deal_diffs.append(dd)
                deal_wins.append(_win(dd))
                for g in both:
                    sa, sb = g.seats_of(a), g.seats_of(b)
                    for r in g.penalty:
                        round_wins.append(_win(_mean([r[s] for s in sa]) - _mean([r[s] for s in sb])))
            out.append(
                {
                    "a": a,
                    "b": b,
                    "deals": len(deal_diffs),
                    "games": len(game_diffs),
                    "mean_diff": mean_ci(deal_diffs),
                    "a_beats_b_deals": _mean(deal_wins) if deal_wins else math.nan,
                    "a_beats_b_rounds": _mean(round_wins) if round_wins else math.nan,
                    "variance": variance_reduction(deal_diffs, game_diffs),
                }
            )
    return out


def _win(diff: float) -> float:
    return 1.0 if diff < 0 else 0.5 if diff == 0 else 0.0


def variance_reduction(deal_diffs: Sequence[float], game_diffs: Sequence[float]) -> dict[str, float | int]:
    """Duplicate vs independent-deal standard errors of a mean difference (module docstring).

    ``deal_diffs``: per deal, the mean difference over its games; ``game_diffs``: the
    difference in each game (all deals pooled).
    """
    n_deals, n_games = len(deal_diffs), len(game_diffs)
    se_dup = sample_sd(deal_diffs) / math.sqrt(n_deals) if n_deals >= 2 else math.nan
    se_ind = sample_sd(game_diffs) / math.sqrt(n_games) if n_games >= 2 else math.nan
    ratio = (se_ind / se_dup) ** 2 if se_dup > 0 else math.nan
    se_ind_deals = sample_sd(game_diffs) / math.sqrt(n_deals) if n_games >= 2 and n_deals else math.nan
    return {
        "deals": n_deals,
        "games": n_games,
        "se_duplicate": se_dup,
        "se_independent": se_ind,
        "variance_ratio": ratio,
        "se_reduction": 1.0 - se_dup / se_ind if se_ind > 0 else math.nan,
        "independent_games_for_same_se": n_games * ratio,
        "se_independent_same_deals": se_ind_deals,
        "variance_ratio_same_deals": (se_ind_deals / se_dup) ** 2 if se_dup > 0 else math.nan,
    }
