"""Behaviours of the tournament harness that mutation testing found unpinned.

Each test pins a statistic, a pairing or a refusal of ``agents/tournament/{stats,results,
seating,rating,paired,report}.py`` that a mutant changed without any other test failing.
Every expectation is derived by hand
(the arithmetic stands in the docstring or beside the assert), never copied from the
code's output.

Student t points used below, from closed forms: ``t(0.975, 1) = tan(0.475 pi)``
(the Cauchy quantile) and ``t(p, 2) = (2p - 1) / sqrt(2 p (1 - p))``.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.tournament import paired
from agents.tournament.games import GAMES
from agents.tournament.harness import PlayStats, TournamentConfig, make_plan
from agents.tournament.rating import Ratings, game_ranks, rate_games
from agents.tournament.report import (
    aggregates,
    build_summary,
    describe,
    format_table,
    jsonable,
    remove_report,
    versions,
    write_outputs,
)
from agents.tournament.results import (
    HEADER,
    DamagedResultsError,
    ResultsFile,
    Row,
    _Block,
    _check_against_plan,
    check_round,
    checksum,
    parse_row,
)
from agents.tournament.seating import (
    agent_seed,
    deal_seed,
    derive_seed,
    make_lineups,
    partner_lineups,
    rotations,
    seating,
    session_seed,
)
from agents.tournament.stats import (
    Estimate,
    agent_stats,
    group_games,
    mean_ci,
    pairwise,
    ratio_ci,
    sample_sd,
    t_cdf,
    t_quantile,
    variance_reduction,
)
from agents.tournament.timing import Timing
from mtrain_env.mexican_train.core.config import GameConfig

T975_DF1 = math.tan(0.475 * math.pi)  # 12.7062...


def _t_df2(p: float) -> float:
    return (2 * p - 1) / math.sqrt(2 * p * (1 - p))


T975_DF2 = _t_df2(0.975)  # 4.3026...


# ------------------------------------------------------------------ builders
def _round_rows(
    deal: int,
    rotation: int,
    rnd: int,
    agents: tuple[str, ...],
    pips: list[int],
    *,
    lineup: int = 0,
    scores: list[float] | None = None,
) -> list[Row]:
    """One round's rows, the derived columns (lowest, share, rank) worked out from ``pips``."""
    low = min(pips)
    ties = pips.count(low)
    return [
        Row(
            deal=deal,
            lineup=lineup,
            rotation=rotation,
            round=rnd,
            seat=seat,
            agent=agent,
            deal_seed=0,
            agent_seed=0,
            first_player=0,
            penalty=p,
            score=float(p) if scores is None else scores[seat],
            went_out=int(p == 0),
            lowest=int(p == low),
            lowest_share=1.0 / ties if p == low else 0.0,
            rank=1 + sum(1 for q in pips if q < p),
            actions=1,
        )
        for seat, (agent, p) in enumerate(zip(agents, pips, strict=True))
    ]


# ---------------------------------------------------------------- t and CIs
def test_t_cdf_at_the_centre_and_the_infinities() -> None:
    """The t distribution is symmetric about 0 (cdf 1/2 there) and a cdf runs from 0 to 1."""
    for df in (1.0, 3.0, 30.0):
        assert t_cdf(0.0, df) == 0.5
        assert t_cdf(math.inf, df) == 1.0
        assert t_cdf(-math.inf, df) == 0.0
    # df = 1 is the Cauchy distribution: cdf(t) = 1/2 + atan(t) / pi
    for t in (-3.0, -0.5, 0.25, 2.0, 40.0):
        assert math.isclose(t_cdf(t, 1.0), 0.5 + math.atan(t) / math.pi, rel_tol=1e-12)


def test_t_quantile_closed_forms() -> None:
    """Quantiles at df 1 and 2 equal their closed forms to ~1e-12, on both tails."""
    for p in (0.6, 0.9, 0.975, 0.995):
        assert math.isclose(t_quantile(p, 1), math.tan(math.pi * (p - 0.5)), rel_tol=1e-11)
        assert math.isclose(t_quantile(p, 2), _t_df2(p), rel_tol=1e-11)
        assert math.isclose(t_quantile(1 - p, 2), -_t_df2(p), rel_tol=1e-11)
    assert abs(t_quantile(0.5, 3)) < 1e-12  # the median, by the symmetry about 0
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=rf"^p must be in \(0, 1\), got {bad}$"):
            t_quantile(bad, 3)


def test_mean_ci_other_level_and_clipping_at_the_top() -> None:
    """[0, 2]: mean 1, s^2 = 2, SE = 1; a 90% interval uses t(0.95, 1) = tan(0.45 pi);
    a rate of seven 1s and a 0 clips its high end at 1."""
    e = mean_ci([0.0, 2.0], level=0.90)
    half = math.tan(0.45 * math.pi)
    assert (e.mean, e.se, e.n) == (1.0, 1.0, 2)
    assert math.isclose(e.lo, 1 - half) and math.isclose(e.hi, 1 + half)
    rate = mean_ci([1, 1, 1, 1, 1, 1, 1, 0], bounds=(0.0, 1.0))
    # mean 7/8, s^2 = 1/8, SE = 1/8; the low end 7/8 - t(0.975, 7)/8 is not clipped
    assert rate.hi == 1.0 and 0.0 < rate.lo < 0.875
    assert math.isclose(rate.lo, 0.875 - t_quantile(0.975, 7) / 8)
    empty = mean_ci([])
    assert empty.n == 0 and all(math.isnan(x) for x in (empty.mean, empty.se, empty.lo, empty.hi))
    one = mean_ci([4.0])
    assert (one.mean, one.n) == (4.0, 1) and all(math.isnan(x) for x in (one.se, one.lo, one.hi))


def test_ratio_ci_edge_cases_and_a_hand_computed_interval() -> None:
    """num [1, 3] over den [1, 1]: ratio 2, residuals num - 2 den = [-1, 1], sd sqrt(2),
    SE = sqrt(2)/sqrt(2)/1 = 1, half-width t(0.975, 1). Negative denominators: the SE
    divides by |mean(den)|. No values, a zero mean denominator, or one pair: no interval."""
    e = ratio_ci([1.0, 3.0], [1.0, 1.0])
    assert (e.mean, e.se, e.n) == (2.0, 1.0, 2)
    assert math.isclose(e.lo, 2 - T975_DF1) and math.isclose(e.hi, 2 + T975_DF1)
    neg = ratio_ci([-1.0, -3.0], [-1.0, -1.0])
    assert (neg.mean, neg.se) == (2.0, 1.0) and math.isclose(neg.hi, 2 + T975_DF1)
    none = ratio_ci([], [])
    assert none.n == 0 and all(math.isnan(x) for x in (none.mean, none.se, none.lo, none.hi))
    zero = ratio_ci([1.0, 2.0], [1.0, -1.0])
    assert zero.n == 2 and all(math.isnan(x) for x in (zero.mean, zero.se, zero.lo, zero.hi))
    one = ratio_ci([3.0], [2.0])
    assert one.n == 1 and one.mean == 1.5 and all(math.isnan(x) for x in (one.se, one.lo, one.hi))


def test_sample_sd_and_estimate_rendering() -> None:
    assert math.isnan(sample_sd([5.0])) and math.isnan(sample_sd([]))
    assert sample_sd([1.0, 2.0]) == pytest.approx(math.sqrt(0.5))  # ss 1/2 over 1
    assert sample_sd([1.0, 2.0, 3.0, 4.0]) == pytest.approx(math.sqrt(5 / 3))  # ss 5 over 3
    e = Estimate(1.234, 0.5, 0.25, 2.5, 4)
    assert str(e) == "1.23 [0.25, 2.50]"
    assert str(Estimate(3.0, math.nan, math.nan, math.nan, 1)) == "3.00"
    assert Estimate(3.0, math.nan, math.nan, math.nan, 1).to_dict() == {
        "mean": 3.0,
        "se": None,
        "lo": None,
        "hi": None,
        "n": 1,
    }


# ------------------------------------------------------------------ sessions
def test_session_win_share_splits_ties_and_follows_positive_scoring() -> None:
    """R25: a tie after every tie-break shares the win (1/k each); positive scoring ranks
    the highest total first."""
    # totals 10, 10, 12; zero rounds 1, 1, 0; lowest non-zero 10, 10 -> seats 0 and 1 tie
    scores = [[0.0, 10.0, 5.0], [10.0, 0.0, 7.0]]
    rows = [r for k in range(2) for r in _round_rows(0, 0, k, ("a", "b", "c"), [0, 0, 0], scores=scores[k])]
    (game,) = group_games(rows)
    assert game.session_win_share(positive=False) == [0.5, 0.5, 0.0]
    assert game.session_win_share(positive=True) == [0.0, 0.0, 1.0]  # 12 is the most points


# --------------------------------------------------------------------- paired
def _paired_run(path: Path, agent: str, games: dict[int, list[tuple[int, int]]], seed: int = 1000) -> Path:
    """A 4-seat run: per deal, per game (rotation r puts ``agent`` at seat r), the agent's
    pips and each of 3 planners' pips."""
    path.mkdir()
    lines = ["deal,lineup,rotation,round,seat,agent,deal_seed,penalty\n"]
    for deal, per_game in games.items():
        for rot, (mine, theirs) in enumerate(per_game):
            for seat in range(4):
                who, pen = (agent, mine) if seat == rot else ("planner", theirs)
                lines.append(f"{deal},0,{rot},0,{seat},{who},{seed + deal},{pen}\n")
    (path / "results.csv").write_text("".join(lines))
    return path


def test_deal_gains_average_every_game_of_a_deal(tmp_path: Path) -> None:
    """Two rotations of deal 0: the agent keeps 10 and 20 pips (mean 15), the planners 30
    and 40 (mean 35): gain 35 - 15 = 20."""
    run = _paired_run(tmp_path / "a", "x", {0: [(10, 30), (20, 40)], 1: [(5, 5), (5, 9)]})
    assert paired.deal_gains(run) == ("x", {(0, "1000"): 20.0, (1, "1001"): 2.0})


def test_a_results_file_without_the_needed_columns_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    (run / "results.csv").write_text("deal,agent\n0,x\n")
    with pytest.raises(ValueError, match=r"no deal_seed, penalty column \(not a tournament's results\)"):
        paired.deal_gains(run)


def test_lone_agent_ranks_labels_missing_from_run_json_last(tmp_path: Path) -> None:
    """At 2 players run.json decides; a label it does not list is never the tested one."""
    (tmp_path / "run.json").write_text(json.dumps({"agents": [{"label": "ppo"}]}))
    assert paired.lone_agent(tmp_path, {"planner": 3, "ppo": 3}) == "ppo"
    with pytest.raises(ValueError, match=r"planner and ppo sit equally often"):
        paired.lone_agent(tmp_path / "nowhere", {"ppo": 3, "planner": 3})


def test_paired_prints_both_gains_and_names_itself_in_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A gains 20, 10, 15; B gains 10, 12, 14: B's line is mean 12, s^2 = 4, SE = 2/sqrt(3),
    half-width t(0.975, 2) * SE; differences 10, -2, 1. One pair: no "of N pairs"."""
    a = _paired_run(tmp_path / "a", "champion", {0: [(10, 30)], 1: [(20, 30)], 2: [(5, 20)]})
    b = _paired_run(tmp_path / "b", "mc", {0: [(20, 30)], 1: [(18, 30)], 2: [(6, 20)]})
    assert paired.main([str(a), str(b)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "3 deals in both runs (pips a round better than the baseline, 95% CI over deals)"
    half = T975_DF2 * 2 / math.sqrt(3)
    assert lines[2] == f"{'mc':<28} 12.00 [{12 - half:.2f}, {12 + half:.2f}]"
    missing = tmp_path / "missing"
    with pytest.raises(SystemExit) as err:
        paired.main([str(a), str(missing)])
    assert err.value.code == 2
    expected = f"python -m agents.tournament.paired: {missing}: no results.csv (not a tournament directory)\n"
    assert capsys.readouterr().err == expected


# ----------------------------------------------------- per agent and pairwise
def _two_seat_games() -> list[Row]:
    """Agents a, b, c on 2 seats, lineups (a, b) and (a, c), each rotated; b and c never meet.

    ========  ===========  ===========  ===========  ===========
    deal      L0 R0 (a,b)  L0 R1 (b,a)  L1 R0 (a,c)  L1 R1 (c,a)
    ========  ===========  ===========  ===========  ===========
    0         0, 6         4, 2         3, 3         0, 5
    1         7, 1         8, 2         4, 8         6, 0
    ========  ===========  ===========  ===========  ===========
    """
    table = {
        0: [(("a", "b"), [0, 6]), (("b", "a"), [4, 2]), (("a", "c"), [3, 3]), (("c", "a"), [0, 5])],
        1: [(("a", "b"), [7, 1]), (("b", "a"), [8, 2]), (("a", "c"), [4, 8]), (("c", "a"), [6, 0])],
    }
    rows = []
    for deal, games in table.items():
        for k, (agents, pips) in enumerate(games):
            rows += _round_rows(deal, k % 2, 0, agents, pips, lineup=k // 2)
    return rows[::-1]  # any row order: games are grouped and sorted


def test_agent_stats_over_deal_means_when_agents_skip_games() -> None:
    """a's game means: deal 0 -> 0, 2, 3, 5 (mean 2.5), deal 1 -> 7, 2, 4, 0 (3.25): mean
    2.875, SE = |2.5 - 3.25| / 2 (n = 2). Out rate: one empty hand of 4 games in each deal.
    Lowest: deal 0 -> 1, 1, 1/2 (tie), 0; deal 1 -> 0, 1, 1, 1: (0.625 + 0.75) / 2.
    c plays only lineup 1: deal means 1.5 and 7, out rates 1/2 and 0 (CI clipped to [0, 1])."""
    games = group_games(_two_seat_games())
    assert [(g.deal, g.lineup, g.rotation) for g in games] == [
        (d, lineup, r) for d in (0, 1) for lineup in (0, 1) for r in (0, 1)
    ]
    assert games[1].agents == ("b", "a") and games[1].penalty == [[4, 2]]
    stats = {s["agent"]: s for s in agent_stats(games, ["a", "b", "c"])}
    a, b, c = stats["a"], stats["b"], stats["c"]
    assert (a["deals"], a["seat_rounds"], b["seat_rounds"], c["seat_rounds"]) == (2, 8, 4, 4)
    assert a["mean_penalty"].mean == 2.875 and a["mean_penalty"].se == 0.375
    assert math.isclose(a["mean_penalty"].hi, 2.875 + T975_DF1 * 0.375)
    assert (a["went_out_rate"].mean, a["went_out_rate"].se) == (0.25, 0.0)
    assert a["lowest_rate"].mean == pytest.approx(0.6875) and a["lowest_rate"].n == 2
    assert b["mean_penalty"].mean == 4.75  # (6 + 4) / 2 and (1 + 8) / 2
    assert c["mean_penalty"].mean == 4.25 and c["mean_penalty"].se == 2.75
    assert c["went_out_rate"].mean == 0.25 and (c["went_out_rate"].lo, c["went_out_rate"].hi) == (0.0, 1.0)
    # c lowest: deal 0 -> 1/2 (tie), 1; deal 1 -> 0, 0: mean 0.375, SE 0.375, clipped to [0, 1]
    assert c["lowest_rate"].mean == 0.375 and (c["lowest_rate"].lo, c["lowest_rate"].hi) == (0.0, 1.0)
    assert "session_score" not in a  # single rounds


def test_pairwise_pairs_only_the_games_both_played() -> None:
    """a - b: deal 0 games -6, -2 (deal mean -4), deal 1 games 6, -6 (0, a tie: 1/2);
    a - c: deal 0 games 0 (a tie), 5 -> 2.5; deal 1 games -4, -6 -> -5.
    b and c never sit together: no deals, no estimate."""
    ab, ac, bc = pairwise(group_games(_two_seat_games()), ["a", "b", "c"])
    assert (ab["a"], ab["b"], ab["deals"], ab["games"]) == ("a", "b", 2, 4)
    assert (ab["mean_diff"].mean, ab["mean_diff"].se) == (-2.0, 2.0)
    assert ab["a_beats_b_deals"] == 0.75 and ab["a_beats_b_rounds"] == 0.75
    assert (ac["mean_diff"].mean, ac["mean_diff"].se) == (-1.25, 3.75)
    assert ac["a_beats_b_deals"] == 0.5 and ac["a_beats_b_rounds"] == 0.625
    # game differences 0, 5, -4, -6: mean -1.25, squares about it sum to 70.75 (3 df)
    v = ac["variance"]
    assert (v["deals"], v["games"], v["se_duplicate"]) == (2, 4, 3.75)
    assert math.isclose(v["se_independent"], math.sqrt(70.75 / 3 / 4))
    assert (bc["deals"], bc["games"], bc["mean_diff"].n) == (0, 0, 0)
    assert math.isnan(bc["a_beats_b_deals"]) and math.isnan(bc["a_beats_b_rounds"])


def test_agents_and_pairs_absent_from_the_first_deal_still_count() -> None:
    """Deal 0 seats a and b only, deal 1 b and c only: c's one deal has mean (0 + 2) / 2;
    b - c in deal 1: games 4 - 0 and 2 - 2, mean 2."""
    rows = _round_rows(0, 0, 0, ("a", "b"), [1, 3]) + _round_rows(0, 1, 0, ("b", "a"), [5, 2])
    rows += _round_rows(1, 0, 0, ("b", "c"), [4, 0]) + _round_rows(1, 1, 0, ("c", "b"), [2, 2])
    games = group_games(rows)
    a, b, c = agent_stats(games, ["a", "b", "c"])
    assert (a["deals"], b["deals"], c["deals"], c["seat_rounds"]) == (1, 2, 1, 2)
    assert c["mean_penalty"].mean == 1.0 and c["mean_penalty"].n == 1
    ab, ac, bc = pairwise(games, ["a", "b", "c"])
    assert (ab["deals"], ac["deals"], bc["deals"], bc["games"]) == (1, 0, 1, 2)
    assert bc["mean_diff"].mean == 2.0 and bc["a_beats_b_rounds"] == 0.25  # lost one, tied one
    (empty,) = agent_stats([], ["a"])
    assert (empty["deals"], empty["seat_rounds"], empty["mean_penalty"].n) == (0, 0, 0)
    assert "session_score" not in empty


def test_agent_stats_of_sessions_with_either_scoring() -> None:
    """Two 2-round sessions a deal. Deal 0: (a, b) scores 5, 10 then 7, 0 (totals 12, 10);
    rotated, (b, a) 3, 3 then 0, 0 (a tie after every R25 tie-break). Deal 1: a totals 0,
    b 18 in both games. Positive scoring: a's wins 1, 1/2 then 0, 0 (mean 0.375, SE 0.375,
    the interval clipped to [0, 1]); penalty scoring: 0, 1/2 then 1, 1."""
    table = {
        0: [(("a", "b"), [[5, 10], [7, 0]]), (("b", "a"), [[3, 3], [0, 0]])],
        1: [(("a", "b"), [[0, 9], [0, 9]]), (("b", "a"), [[9, 0], [9, 0]])],
    }
    rows = []
    for deal, per_game in table.items():
        for rot, (agents, rounds) in enumerate(per_game):
            for k, pips in enumerate(rounds):
                rows += _round_rows(deal, rot, k, agents, pips, scores=[float(p) for p in pips])
    games = group_games(rows)
    a, b = agent_stats(games, ["a", "b"], positive=True)
    assert a["session_win_rate"].mean == 0.375 and a["session_win_rate"].se == 0.375
    assert (a["session_win_rate"].lo, a["session_win_rate"].hi) == (0.0, 1.0)
    assert b["session_win_rate"].mean == 0.625
    assert a["session_score"].mean == (7.5 + 0) / 2 and b["session_score"].mean == (6.5 + 18) / 2
    assert a["seat_rounds"] == 2 * 2 * 2
    pa, pb = agent_stats(games, ["a", "b"])  # penalty scoring by default
    assert pa["session_win_rate"].mean == 0.625 and pb["session_win_rate"].mean == 0.375


def test_an_agent_on_two_seats_is_averaged_over_them() -> None:
    """Lineup (a, b, a), 2 rounds: pips (2, 5, 4) then (0, 3, 6). a's mean over its seats
    and rounds (2 + 4 + 0 + 6) / 4 = 3, b's 4; by round a's seat mean 3 beats 5, then ties 3."""
    rows = _round_rows(0, 0, 0, ("a", "b", "a"), [2, 5, 4]) + _round_rows(0, 0, 1, ("a", "b", "a"), [0, 3, 6])
    (game,) = group_games(rows)
    assert game.seats_of("a") == [0, 2] and game.mean_of("a", game.penalty) == 3.0
    (pair,) = pairwise([game], ["a", "b"])
    assert pair["mean_diff"].mean == -1.0 and pair["a_beats_b_rounds"] == 0.75
    (a, b) = agent_stats([game], ["a", "b"])
    assert (a["seat_rounds"], b["seat_rounds"]) == (4, 2)
    assert a["mean_penalty"].mean == 3.0 and b["mean_penalty"].mean == 4.0
    with pytest.raises(ValueError, match=r"game \(0, 0, 0\) has 5 rows, expected 2 rounds x 3 seats"):
        group_games(rows[1:])


def test_variance_reduction_every_field_by_hand() -> None:
    """Deal differences -3, -8, -1 (s^2 13); game differences -4 -2 -10 -6 4 -6 (s^2 22.4):
    SE_dup = sqrt(13/3), SE_ind = sqrt(22.4/6), SE_ind(same deals) = sqrt(22.4/3)."""
    v = variance_reduction([-3.0, -8.0, -1.0], [-4.0, -2.0, -10.0, -6.0, 4.0, -6.0])
    se_dup, se_ind, se_same = math.sqrt(13 / 3), math.sqrt(22.4 / 6), math.sqrt(22.4 / 3)
    assert (v["deals"], v["games"]) == (3, 6)
    assert v["se_duplicate"] == pytest.approx(se_dup) and v["se_independent"] == pytest.approx(se_ind)
    assert v["variance_ratio"] == pytest.approx(22.4 / 6 / (13 / 3))
    assert v["se_reduction"] == pytest.approx(1 - se_dup / se_ind)
    assert v["independent_games_for_same_se"] == pytest.approx(6 * 22.4 / 6 / (13 / 3))
    assert v["se_independent_same_deals"] == pytest.approx(se_same)
    assert v["variance_ratio_same_deals"] == pytest.approx(22.4 / 13)
    # one deal: no duplicate SE, hence no ratio; the games still give an independent SE
    one = variance_reduction([1.5], [1.0, 2.0])
    assert math.isnan(one["se_duplicate"]) and math.isnan(one["variance_ratio"])
    assert one["se_independent"] == pytest.approx(0.5) and math.isnan(one["se_reduction"])
    assert one["se_independent_same_deals"] == pytest.approx(math.sqrt(0.5))
    assert math.isnan(one["variance_ratio_same_deals"])
    # SE_dup = sd(0, 1) / sqrt(2) = 1/2 and SE_ind = sd(0, 0, 1, 1) / 2 = sqrt(1/3) / 2: ratio 1/3
    # and SE_ind(same deals) = sqrt(1/3) / sqrt(2): ratio 2/3
    small = variance_reduction([0.0, 1.0], [0.0, 0.0, 1.0, 1.0])
    assert small["se_duplicate"] == pytest.approx(0.5) and small["variance_ratio"] == pytest.approx(1 / 3)
    assert small["se_reduction"] == pytest.approx(1 - 0.5 / (math.sqrt(1 / 3) / 2))
    assert small["variance_ratio_same_deals"] == pytest.approx(2 / 3)
    # identical deal differences: SE_dup = 0, the ratio is undefined, not infinite
    flat = variance_reduction([2.0, 2.0], [1.0, 3.0, 3.0, 1.0])
    assert flat["se_duplicate"] == 0.0 and math.isnan(flat["variance_ratio"])
    still = variance_reduction([1.0, 1.0], [1.0, 1.0, 1.0, 1.0])  # no spread at all
    assert still["se_independent"] == 0.0 and math.isnan(still["se_reduction"])
    none = variance_reduction([], [])
    assert (none["deals"], none["games"]) == (0, 0) and math.isnan(none["se_independent_same_deals"])


# ------------------------------------------------------------- results files
@dataclass(frozen=True)
class _Plan:
    """Two agents on 2 seats, lineup (x, y): both rotations of every deal (rotation 1 seats
    y at seat 0), or without duplicate play one game a deal, rotated by the deal."""

    seed: int = 5
    labels: tuple[str, ...] = ("x", "y")
    lineups: tuple[tuple[int, ...], ...] = ((0, 1),)
    num_players: int = 2
    rounds: int = 1
    duplicate: bool = True

    def games(self, deal: int) -> list[tuple[int, int]]:
        return [(0, 0), (0, 1)] if self.duplicate else [(0, deal % 2)]

    def round_problem(self, rows: Sequence[Row]) -> tuple[int, str] | None:
        return GAMES["mexican_train"].round_problem(GameConfig.make(num_players=2), rows)


SEATED = {0: ("x", "y"), 1: ("y", "x")}  # seat s holds lineup[(s - rotation) mod 2]


def _deal_rows(deal: int, pips: tuple[int, int] = (3, 5)) -> list[Row]:
    rows = []
    for rot, agents in SEATED.items():
        for r in _round_rows(deal, rot, 0, agents, list(pips)):
            rows.append(
                r._replace(deal_seed=deal_seed(5, deal), agent_seed=agent_seed(5, deal, 0, rot, r.seat))
            )
    return rows


def _results(tmp_path: Path, deals: int = 2) -> ResultsFile:
    results = ResultsFile(tmp_path / "results.csv")
    results.create()
    for deal in range(deals):
        results.append(deal, _deal_rows(deal))
    return results


def _fields(row: Row) -> list[str]:
    return [repr(v) if isinstance(v, float) else str(v) for v in row]


def test_results_round_trip_and_a_kill_mid_deal_drops_only_that_deal(tmp_path: Path) -> None:
    results = _results(tmp_path)
    rows = _deal_rows(0) + _deal_rows(1)
    assert results.read(_Plan()) == (rows, False)
    # a kill while deal 2 was written: two whole lines, a torn third, no checksum
    with open(results.path, "a", encoding="utf-8") as f:
        f.write(",".join(_fields(_deal_rows(2)[0])) + "\n" + ",".join(_fields(_deal_rows(2)[1])) + "\n2,0,1")
    assert results.read(_Plan()) == (rows, True)
    # a kill that tore deal 2's very first line: nothing of it is read
    results.rewrite(rows)
    with open(results.path, "a", encoding="utf-8") as f:
        f.write("2,0,")
    assert results.read(_Plan()) == (rows, True)
    # ... or a kill after the rows, before the checksum: the deal is dropped too
    results.rewrite(rows)
    with open(results.path, "a", encoding="utf-8") as f:
        f.write("".join(",".join(_fields(r)) + "\n" for r in _deal_rows(2)))
    assert results.read(_Plan()) == (rows, True)
    # a checksum line torn by a kill: its deal was not vouched for, so it is replayed
    rows3 = rows + _deal_rows(2)
    results.rewrite(rows3)
    sums = results.sums_path.read_text()
    results.sums_path.write_text(sums[:-10])
    assert results.read(_Plan()) == (rows, True)
    results.sums_path.unlink()
    with pytest.raises(
        DamagedResultsError,
        match=r"results.sha256 is missing: the checksums of .*results.csv "
        r"cannot be verified \(use a new --out or --overwrite\)$",
    ):
        results.read()
    results.path.unlink()
    results.path.mkdir()
    with pytest.raises(DamagedResultsError, match=r"results.csv: cannot read it \(Is a directory\)$"):
        results.read()


def test_rewrite_groups_rows_by_deal_with_one_checksum_each(tmp_path: Path) -> None:
    results = _results(tmp_path, deals=0)
    rows = _deal_rows(1) + _deal_rows(0)
    results.rewrite(rows)
    text = results.path.read_text()
    blocks = text[len(HEADER) :].splitlines(keepends=True)
    assert text.startswith(HEADER) and len(blocks) == 8
    assert results.sums_path.read_text() == (
        f"1 {checksum(''.join(blocks[:4]))}\n0 {checksum(''.join(blocks[4:]))}\n"
    )
    assert results.read()[0] == _deal_rows(0) + _deal_rows(1)  # read back in deal order
    results.remove()
    assert not results.path.exists() and not results.sums_path.exists()
    results.remove()  # nothing left to remove is not an error
    assert not results.exists()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            lambda t, s: ("deal,lineup\n" + t.split("\n", 1)[1], s),
            "does not start with the header deal,lineup,rotation,round,seat,agent,deal_seed,agent_seed,"
            "first_player,penalty,score,went_out,lowest,lowest_share,rank,actions; it was written by "
            "another version of the harness or is not a results file",
        ),
        (
            lambda t, s: (t, s + "9 " + "0" * 64 + "\n"),
            r"deal 9 has a checksum but no rows in .*results.csv "
            r"\(rows were removed after they were written\)",
        ),
        (lambda t, s: (t, s.replace("0 ", "x ", 1)), "not a '<deal> <sha256>' line"),
        (lambda t, s: (t, s.replace("0 ", "\u00b2 ", 1)), "not a '<deal> <sha256>' line"),
        (lambda t, s: (t, s[:65] + s[66:]), "results.sha256:1: not a '<deal> <sha256>' line"),
        (lambda t, s: (t, s + s.splitlines(keepends=True)[0]), "results.sha256:3: not a"),
        (
            lambda t, s: (t + t.split("\n")[1] + "\n", s),
            "results.csv:10: rows of deal 0 appear in two places",
        ),
        (
            lambda t, s: (t, s.splitlines(keepends=True)[1]),
            r"results.csv:2: deal 0 has no checksum in .* \(rows were added after the run wrote them\)",
        ),
    ],
    ids=[
        "header",
        "orphan-sum",
        "deal-not-int",
        "deal-superscript",
        "short-digest",
        "repeated",
        "two-places",
        "unvouched",
    ],
)
def test_damaged_results_or_checksums_are_refused(
    tmp_path: Path, damage: Callable[[str, str], tuple[str, str]], message: str
) -> None:
    results = _results(tmp_path)
    text, sums = damage(results.path.read_text(), results.sums_path.read_text())
    results.path.write_text(text)
    results.sums_path.write_text(sums)
    with pytest.raises(DamagedResultsError, match=message):
        results.read()


def test_rows_are_checked_against_the_plan(tmp_path: Path) -> None:
    """The plan derives each seat's agent and seeds, the seat-rounds of a deal, and bounds
    first_player and rank by the number of seats."""
    results = _results(tmp_path, deals=1)
    good = _deal_rows(0)
    tied = _deal_rows(0, (4, 4))  # every seat lowest: a repeated row keeps its round consistent
    cases: list[tuple[list[Row], str]] = [
        (
            good[:3],
            r"holds 3 rows, not the 4 seat-rounds this run plays for a deal \(rows were added, removed",
        ),
        ([*tied[:3], tied[2]], "holds 4 rows, not the 4 seat-rounds"),
        ([good[0]._replace(agent="y"), *good[1:]], "seat 0 of deal 0 should be 'x'"),
        ([good[0]._replace(deal_seed=1), *good[1:]], "should be 'x' with seeds"),
        ([good[0]._replace(agent_seed=good[1].agent_seed), *good[1:]], "should be 'x' with seeds"),
        ([*(r._replace(first_player=2) for r in good[:2]), *good[2:]], "first_player or rank beyond"),
    ]
    for rows, message in cases:
        results.rewrite(rows)
        assert results.read()[0] == rows  # the file itself is sound
        with pytest.raises(DamagedResultsError, match=message) as err:
            results.read(_Plan())
        assert str(err.value).startswith(f"{results.path}:2")  # the file and the deal's line
    # one game a deal, rotated by the deal: deal 1 is rotation 1 only
    (tmp_path / "independent").mkdir()
    results = _results(tmp_path / "independent", deals=0)
    results.rewrite([r for d in (0, 1) for r in _deal_rows(d) if r.rotation == d])
    assert len(results.read(_Plan(duplicate=False))[0]) == 4
    results.rewrite([r for d in (0, 1) for r in _deal_rows(d) if r.rotation == 0])
    with pytest.raises(DamagedResultsError, match="deal 1: holds 2 rows, not the 2 seat-rounds"):
        results.read(_Plan(duplicate=False))
    # rank 3 of 2 seats is caught by the plan; the round check then also disagrees
    with pytest.raises(DamagedResultsError, match="beyond the seats"):
        _check_against_plan(
            _Plan(), _Block(0, 2, [good[0]._replace(rank=3), *good[1:]], [2, 3, 4, 5], ""), tmp_path
        )


def _raw(**changes: Any) -> list[str]:
    return _fields(_round_rows(0, 0, 0, ("x", "y"), [3, 5])[0]._replace(**changes))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (_raw()[:-1], "expected 16 fields, got 15"),
        ([*_raw()[:3], "1.5", *_raw()[4:]], "column 'round': '1.5' is not a valid value"),
        ([*_raw()[:10], "inf", *_raw()[11:]], "column 'score': 'inf'"),
        (_raw(lineup=-1), "column 'lineup' is negative"),
        (_raw(rotation=-1), "column 'rotation' is negative"),
        (_raw(round=-1), "column 'round' is negative"),
        (_raw(seat=-1), "column 'seat' is negative"),
        (_raw(deal_seed=-1), "column 'deal_seed' is negative"),
        (_raw(agent_seed=-1), "column 'agent_seed' is negative"),
        (_raw(first_player=-1), "column 'first_player' is negative"),
        (_raw(actions=-1), "column 'actions' is negative"),
        (_raw(lowest=2), "column 'lowest' must be 0 or 1, got 2"),
        (_raw(lowest_share=-0.5), r"column 'lowest_share' must be in \[0, 1\], got -0.5"),
        (_raw(lowest_share=1.5), r"column 'lowest_share' must be in \[0, 1\], got 1.5"),
        (_raw(rank=0), "column 'rank' must be >= 1, got 0"),
    ],
)
def test_parse_row_refuses_each_bad_column_naming_it(raw: list[str], message: str) -> None:
    with pytest.raises(DamagedResultsError, match=f"^f.csv:7: {message}"):
        parse_row(raw, "f.csv:7")


def test_parse_row_accepts_the_extremes() -> None:
    row = parse_row(_raw(lowest_share=1.0, rank=1, actions=0, went_out=1, lowest=0), "f")
    assert (row.lowest_share, row.rank, row.actions, row.went_out, row.lowest) == (1.0, 1, 0, 1, 0)
    assert parse_row(_raw(lowest_share=0.0), "f").lowest_share == 0.0


def test_check_round_derives_lowest_share_and_rank_from_the_penalties() -> None:
    """Penalties 4, 0, 0, 9: seats 1 and 2 tie lowest (share 1/2 each, rank 1); seat 0
    ranks 3 (two smaller), seat 3 ranks 4."""
    rows = [r._replace(went_out=0) for r in _round_rows(0, 0, 0, ("a", "b", "c", "d"), [4, 0, 0, 9])]
    assert [(r.lowest, r.lowest_share, r.rank) for r in rows] == [
        (0, 0.0, 3),
        (1, 0.5, 1),
        (1, 0.5, 1),
        (0, 0.0, 4),
    ]
    check_round(rows, ["l1", "l2", "l3", "l4"])
    changes: list[tuple[int, dict[str, Any]]] = [
        (0, {"rank": 2}),
        (3, {"rank": 3}),
        (1, {"lowest_share": 1.0}),
        (0, {"lowest": 1}),
    ]
    for i, change in changes:
        bad = [r._replace(**change) if k == i else r for k, r in enumerate(rows)]
        with pytest.raises(DamagedResultsError, match=f"^l{i + 1}: seat {i}'s lowest/lowest_share/rank"):
            check_round(bad, ["l1", "l2", "l3", "l4"])


# -------------------------------------------------------------------- seating
def test_partner_lineups_pair_every_two_agents_as_a_b_a_b() -> None:
    assert partner_lineups(1, 4) == [(0, 0, 0, 0)]  # one agent alone plays itself
    assert partner_lineups(2, 4) == [(0, 1, 0, 1)]
    assert partner_lineups(3, 4) == [(0, 1, 0, 1), (0, 2, 0, 2), (1, 2, 1, 2)]
    assert [rotations(li) for li in partner_lineups(3, 4)] == [2, 2, 2]  # the pairs swap hands once


def test_each_rotation_moves_every_agent_one_seat_clockwise() -> None:
    """Seat s holds lineup[(s - r) mod P]: rotation r + 1 is rotation r shifted by one seat."""
    for lineup in [(0, 1, 2, 3), (0, 1, 0), (2, 0, 1, 1, 3)]:
        p = len(lineup)
        assert seating(lineup, 0) == lineup
        for r in range(2 * p):
            now, later = seating(lineup, r), seating(lineup, r + 1)
            assert all(later[s] == now[(s - 1) % p] for s in range(p)), (lineup, r)
    assert make_lineups(2, 3) == [(0, 1, 0)] and make_lineups(3, 3) == [(0, 1, 2)]
    assert make_lineups(4, 3) == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]


def test_seeds_follow_the_seed_sequence_recipe() -> None:
    """Results files are verified against these seeds on resume, so the recipe is part of
    the file format: ``SeedSequence([seed, tag, ...])``'s first 64-bit word, with tag 0 for
    deals, 1 for sessions and 2 for agents."""

    def recipe(*words: int) -> int:
        return int(np.random.SeedSequence(list(words)).generate_state(1, np.uint64)[0])

    assert derive_seed(7, 3) == recipe(7, 3) != derive_seed(3, 7)  # order-sensitive
    assert deal_seed(11, 4) == recipe(11, 0, 4)
    assert session_seed(11, 4) == recipe(11, 1, 4)
    assert agent_seed(11, 4, 1, 2, 3) == recipe(11, 2, 4, 1, 2, 3)
    assert len({deal_seed(11, d) for d in range(5)} | {session_seed(11, d) for d in range(5)}) == 10
    seeds = {
        agent_seed(11, d, li, r, s) for d in range(2) for li in range(2) for r in range(2) for s in range(3)
    }
    assert len(seeds) == 2 * 2 * 2 * 3


# --------------------------------------------------------------------- rating
def test_ratings_follow_openskill_game_by_game_and_average_an_agents_seats() -> None:
    """Game 1 (a, b): a keeps fewer pips; game 2 (a, b, a): b wins, a's two seats are rated
    as separate teams from a's current rating and a moves to the mean of their posteriors.
    The expectation is openskill's PlackettLuce applied by hand, step by step."""
    from openskill.models import PlackettLuce

    g1 = group_games(_round_rows(0, 0, 0, ("a", "b"), [1, 9]))[0]
    g2 = group_games(_round_rows(1, 0, 0, ("a", "b", "a"), [6, 2, 4]))[0]
    ratings = rate_games([g1, g2], ["a", "b", "c"])
    model = PlackettLuce()
    prior = model.rating()
    # fresh rating objects per team: openskill updates the objects it is given
    a1, b1 = (t[0] for t in model.rate([[model.rating()], [model.rating()]], ranks=[1.0, 2.0]))
    seats = model.rate(
        [
            [model.rating(mu=a1.mu, sigma=a1.sigma)],
            [model.rating(mu=b1.mu, sigma=b1.sigma)],
            [model.rating(mu=a1.mu, sigma=a1.sigma)],
        ],
        ranks=[3.0, 1.0, 2.0],
    )
    a2_mu, a2_sigma = (seats[0][0].mu + seats[2][0].mu) / 2, (seats[0][0].sigma + seats[2][0].sigma) / 2
    assert ratings.labels == ("a", "b", "c") and ratings.mu.shape == ratings.sigma.shape == (3, 3)
    assert ratings.mu[0].tolist() == [prior.mu] * 3 and ratings.sigma[0].tolist() == [prior.sigma] * 3
    assert ratings.mu[1].tolist() == pytest.approx([a1.mu, b1.mu, prior.mu])
    assert ratings.sigma[1].tolist() == pytest.approx([a1.sigma, b1.sigma, prior.sigma])
    assert ratings.mu[2].tolist() == pytest.approx([a2_mu, seats[1][0].mu, prior.mu])
    assert ratings.sigma[2].tolist() == pytest.approx([a2_sigma, seats[1][0].sigma, prior.sigma])
    final = {r["agent"]: r for r in ratings.final()}
    assert final["b"]["mu"] == pytest.approx(seats[1][0].mu)
    assert final["a"]["sigma"] == pytest.approx(a2_sigma)
    assert final["a"]["ordinal"] == pytest.approx(a2_mu - 3 * a2_sigma)
    assert final["c"] == {
        "agent": "c",
        "mu": prior.mu,
        "sigma": prior.sigma,
        "ordinal": prior.mu - 3 * prior.sigma,
    }


def test_a_tie_moves_nobody_apart_and_sessions_rank_by_r25() -> None:
    tie = group_games(_round_rows(0, 0, 0, ("a", "b"), [4, 4]))[0]
    assert game_ranks(tie) == [1, 1]
    ratings = rate_games([tie], ["a", "b"])
    assert ratings.mu[1, 0] == ratings.mu[1, 1] and ratings.sigma[1, 0] < ratings.sigma[0, 0]
    # positive scoring: totals 12 and 10 -> the 12 ranks first
    scores = [[5.0, 10.0], [7.0, 0.0]]
    rows = [r for k in range(2) for r in _round_rows(0, 0, k, ("a", "b"), [0, 0], scores=scores[k])]
    (game,) = group_games(rows)
    assert game_ranks(game, positive=True) == [1, 2] and game_ranks(game) == [2, 1]
    ranked = rate_games([game], ["a", "b"], positive=True)
    assert ranked.mu[1, 0] > ranked.mu[0, 0] > ranked.mu[1, 1]
    by_penalty = rate_games([game], ["a", "b"])  # penalty scoring by default: 10 beats 12
    assert by_penalty.mu[1, 1] > by_penalty.mu[0, 1] > by_penalty.mu[1, 0]


# --------------------------------------------------------------------- report
def _summary(**throughput: object) -> dict[str, Any]:
    """A hand-built summary of 2 agents: y (mean 3.5) ranks above x (mean 7.25) in the table."""

    def est(mean: float | None, lo: float | None = None, hi: float | None = None) -> dict[str, Any]:
        return {"mean": mean, "se": None, "lo": lo, "hi": hi, "n": 3}

    def agent(name: str, pen: dict[str, Any], ms: float | None) -> dict[str, Any]:
        return {
            "agent": name,
            "mean_penalty": pen,
            "went_out_rate": est(0.25, 0.0, 0.5),
            "lowest_rate": est(0.5),
            "rating": {"mu": 26.0, "sigma": 1.5, "ordinal": 21.5},
            "ms_per_decision": ms,
            "decisions_timed": 40,
        }

    variance = {
        "a": "x",
        "b": "y",
        "deals": 3,
        "games": 6,
        "se_duplicate": 0.5,
        "se_independent": 0.4,
        "se_independent_same_deals": 0.7,
        "variance_ratio": 0.64,
        "variance_ratio_same_deals": 1.96,
    }
    return {
        "description": "a test run",
        "config": {"rounds_per_game": 1, "deals": 3, "workers": 2},
        "versions": {"python": "3"},
        "agents": [agent("x", est(7.25, 6.0, 8.5), None), agent("y", est(3.5), 1.234)],
        "pairwise": [
            {
                "a": "x",
                "b": "y",
                "mean_diff": est(3.75, 1.0, 6.5),
                "a_beats_b_deals": 0.5,
                "deals": 3,
                "a_beats_b_rounds": 0.25,
            }
        ],
        "variance_reduction": {"pairs": [variance]},
        "throughput": {
            "rounds_played": 12,
            "seconds": 3.0,
            "rounds_per_second": 4.0,
            "workers": 2,
            "deals_resumed": 0,
            "deals_timed": 3,
            **throughput,
        },
    }


def test_format_table_orders_agents_and_prints_estimates_pairs_and_throughput() -> None:
    lines = format_table(_summary()).splitlines()
    assert lines[0] == "a test run" and lines[1] == ""
    header, y, x = (line.split("  ") for line in lines[2:5])
    assert [c.strip() for c in header if c] == [
        "agent",
        "penalty/round [95% CI]",
        "out% [CI]",
        "lowest% [CI]",
        "mu ± sigma",
        "ordinal",
        "ms/dec",
    ]
    assert [c.strip() for c in y if c] == [
        "y",
        "3.5",
        "25.0% [0.0, 50.0]",
        "50.0%",
        "26.00 ± 1.50",
        "21.50",
        "1.23",
    ]
    assert [c.strip() for c in x if c][:2] == ["x", "7.2 [6.0, 8.5]"] and x[-1].strip() == "-"
    assert len(lines[2]) == len(lines[3]) == len(lines[4])  # columns padded to one width
    # the agent column is left-aligned (width of "agent"), the figures right-aligned
    assert lines[3].startswith("y      ") and lines[3][: 5 + 2 + len("penalty/round [95% CI]")].endswith(
        " 3.5"
    )
    assert lines[5:8] == [
        "",
        "Pairwise (a - b: mean penalty per round, 95% CI; a beats b in % of deals / rounds):",
        "  x - y: 3.8 [1.0, 6.5]; 50.0% of 3 deals, 25.0% of rounds",
    ]
    assert lines[8:11] == [
        "",
        "Variance reduction (SE of the a - b mean difference; duplicate deals vs independent deals,",
        "  as many deals each played once / as many games; ratio = variance ratio):",
    ]
    assert lines[-2] == ""
    text = "\n".join(lines)
    assert "  x - y: 3.8 [1.0, 6.5]; 50.0% of 3 deals, 25.0% of rounds" in text
    assert (
        "  x vs y: duplicate 0.500 (3 deals); independent 0.700 for 3 deals (1.96x), "
        "0.400 for 6 games (0.64x)" in text
    )
    assert lines[-1] == "Throughput: 12 rounds in 3.0 s = 4.0 rounds/s on 2 worker(s)"
    ray = format_table(_summary(backend="ray", deals_resumed=2, rounds_per_second=None, deals_timed=2))
    assert (
        ray.splitlines()[-2]
        == "Throughput: 12 rounds in 3.0 s = - on 2 Ray actor(s) (2 deals resumed from disk)"
    )
    assert ray.splitlines()[-1] == "ms/dec: the time inside act over the 2 of 3 deals timed (timing.jsonl)"


def test_format_table_of_sessions() -> None:
    """Sessions add the session score and the R25 win rate (a rate: in percent)."""
    s = _summary()
    s["config"]["rounds_per_game"] = 2
    del s["throughput"]["deals_timed"]  # older summaries: every deal timed
    for a in s["agents"]:
        a["session_score"] = {"mean": 12.0, "lo": 10.0, "hi": 14.0}
        a["session_win_rate"] = {"mean": 0.375, "lo": 0.0, "hi": 1.0}
    s["agents"][0]["session_score"] = {"mean": None, "lo": None, "hi": None}
    lines = format_table(s).splitlines()
    assert [c.strip() for c in lines[2].split("  ") if c][4:6] == ["session score [CI]", "session win% [CI]"]
    assert [c.strip() for c in lines[3].split("  ") if c][4:6] == ["12.0 [10.0, 14.0]", "37.5% [0.0, 100.0]"]
    assert [c.strip() for c in lines[4].split("  ") if c][4] == "-"  # no estimate
    assert not lines[-1].startswith("ms/dec")


def test_format_table_without_pairs_or_with_one_deal() -> None:
    s = _summary()
    s["variance_reduction"]["pairs"][0]["variance_ratio_same_deals"] = None  # SE_dup 0: no ratio
    assert "(3 deals); independent 0.700 for 3 deals (inf), 0.400" in format_table(s)
    s["variance_reduction"]["pairs"][0]["se_duplicate"] = None
    assert "  x vs y: needs at least 2 deals" in format_table(s)
    s["pairwise"] = []
    assert "Pairwise" not in format_table(s) and "Variance" not in format_table(s)
    s["config"]["game"] = "block"  # the block game's words
    assert "pair points/hand [95% CI]" in format_table(s)


def test_jsonable_and_aggregates() -> None:
    """NaN and infinities become null (JSON has neither), estimates dicts, tuples lists."""
    e = Estimate(1.0, math.nan, math.nan, math.inf, 1)
    assert jsonable({1: (e, -math.inf, [math.nan, 2.5]), "k": "v"}) == {
        "1": [{"mean": 1.0, "se": None, "lo": None, "hi": None, "n": 1}, None, [None, 2.5]],
        "k": "v",
    }
    s = _summary()
    s["files"] = {"results": "r"}
    kept = aggregates(s)
    assert set(kept) == {"description", "config", "agents", "pairwise", "variance_reduction"}
    assert kept["config"] == {"rounds_per_game": 1, "deals": 3}
    assert "ms_per_decision" not in kept["agents"][0] and "decisions_timed" not in kept["agents"][1]
    assert kept["agents"][0]["rating"]["mu"] == 26.0 and s["config"]["workers"] == 2  # the input is kept


def test_write_outputs_writes_the_rating_history(tmp_path: Path) -> None:
    ratings = Ratings(("x", "y"), np.array([[25.0, 25.0], [26.5, 23.5]]), np.array([[8.0, 8.0], [7.0, 7.5]]))
    summary = _summary()
    files = write_outputs(tmp_path, summary, "the table", ratings, plots=False)
    assert (tmp_path / "ratings.csv").read_bytes() == (
        b"game,agent,mu,sigma\n0,x,25.0,8.0\n0,y,25.0,8.0\n1,x,26.5,7.0\n1,y,23.5,7.5\n"  # \n, not \r\n
    )
    assert (tmp_path / "table.txt").read_text() == "the table\n"
    assert json.loads((tmp_path / "summary.json").read_text())["files"] == files == summary["files"]
    assert files == {
        name: str(tmp_path / file)
        for name, file in [
            ("results", "results.csv"),
            ("run", "run.json"),
            ("summary", "summary.json"),
            ("table", "table.txt"),
            ("ratings", "ratings.csv"),
        ]
    }
    remove_report(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_build_summary_schema_and_the_time_per_decision() -> None:
    """summary.json is read back by other tools: its keys are an interface.
    ms/dec = 1000 x seconds in act / decisions (0.5 s over 250 -> 2 ms); none timed -> null."""
    config = TournamentConfig(
        agents=["random", "greedy"], game=GameConfig.make(num_players=2), deals=7, seed=3, progress=False
    )
    plan = make_plan(config)
    est = Estimate(1.0, 0.5, 0.0, 2.0, 7)
    agents = [{"agent": label, "mean_penalty": est} for label in plan.labels]
    variance = {"se_duplicate": 0.5, "variance_ratio": math.inf}
    pairs = [{"a": "random", "b": "greedy", "mean_diff": est, "variance": variance}]
    ratings = Ratings(plan.labels, np.array([[25.0, 25.0], [27.0, 23.0]]), np.array([[8.0, 8.0], [6.0, 7.0]]))
    play = PlayStats(deals=5, rounds=10, actions=300, seconds=2.0, workers=2, backend="ray")
    timing = Timing(think_seconds=[0.5, 0.0], decisions=[250, 0], deals=6)
    s = build_summary(config, plan, agents, pairs, ratings, play, timing, deals_resumed=2)
    assert s["description"].endswith(", single rounds, 7 deals (2 games each), seed 3")
    assert s["seed"] == 3 and set(s["versions"]) >= {"python", "numpy", "openskill", "matplotlib"}
    random, greedy = s["agents"]
    assert random["mean_penalty"] == {"mean": 1.0, "se": 0.5, "lo": 0.0, "hi": 2.0, "n": 7}
    assert (random["name"], random["params"], random["agent_params"]) == ("random", {}, plan.agent_params[0])
    assert random["rating"] == {"mu": 27.0, "sigma": 6.0, "ordinal": 27.0 - 18.0}
    assert (random["decisions_timed"], random["ms_per_decision"]) == (250, 2.0)
    assert (greedy["decisions_timed"], greedy["ms_per_decision"]) == (0, None)
    assert s["config"] == {
        "agents": [{"name": n, "label": n, "params": {}} for n in ("random", "greedy")],
        "game": "mexican_train",
        "game_config": plan.game,
        "num_players": 2,
        "rounds_per_game": 1,
        "deals": 7,
        "seed": 3,
        "duplicate": True,
        "lineups": [["random", "greedy"]],
        "games_per_deal": 2,
        "workers": 2,
    }
    assert s["pairwise"][0]["variance"]["variance_ratio"] is None  # inf is not JSON
    assert s["variance_reduction"]["pairs"] == [
        {"a": "random", "b": "greedy", "se_duplicate": 0.5, "variance_ratio": None}
    ]
    assert s["variance_reduction"]["method"].startswith("SE of the mean penalty difference a - b")
    t = s["throughput"]
    assert (t["deals_played"], t["deals_resumed"], t["deals_timed"], t["rounds_played"]) == (5, 2, 6, 10)
    assert (t["actions"], t["seconds"], t["rounds_per_second"], t["actions_per_second"]) == (
        300,
        2.0,
        5.0,
        150.0,
    )
    assert (t["workers"], t["backend"]) == (2, "ray") and t["cpu_count"] >= 1
    sessions = make_plan(replace(config, game=GameConfig.make(num_players=2, rounds=3), duplicate=False))
    assert describe(sessions, 4).endswith(", 3-round sessions, 4 deals (independent (no rotation)), seed 3")


def test_versions_name_missing_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(dist: str) -> str:
        raise importlib.metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    found = versions()
    assert set(found) == {"python", "numpy", "pettingzoo", "mtrain_env", "openskill", "matplotlib"}
    assert {v for k, v in found.items() if k != "python"} == {"not installed"}
