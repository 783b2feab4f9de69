"""Tournaments between agents on duplicate deals, with resumable runs and a report.

Python API::

    from agents.tournament import AgentSpec, TournamentConfig, run_tournament
    from mtrain_env import mexican_train

    result = run_tournament(TournamentConfig(
        agents=[AgentSpec("greedy"), AgentSpec("mc", {"rollouts": 64}), "random"],
        game=mexican_train.GameConfig.make(num_players=4, max_pips=12, rules="pagat",
                                           one_tile_opening=True,
                                           rounds=1),  # 13 = a full double-12 session (R25)
        deals=500, seed=0, workers=2, out_dir="results/x",
    ))
    print(result.table)
    result.agents            # per-agent stats (mean penalty/round with 95% CI, rates, rating)
    result.pairwise          # a vs b: mean difference with CI, share of deals won
    result.variance_reduction

The same harness plays partnership block dominoes (``game=mtrain_env.block.GameConfig.make()``,
block agents, one hand per game; see :mod:`agents.tournament.games`).

Command line: ``mtrain bench --agents greedy random --players 4 --deals 500 --seed 0
--workers 2 --out results/x`` (``--game block`` for block dominoes; see
:mod:`agents.tournament.cli`). ``--backend ray [--address HOST:6379]`` (``backend="ray"``)
plays the deals on Ray actors, locally or on a cluster, with the same ``results.csv``
(:mod:`agents.tournament.ray_backend`).

Files in ``out_dir``: ``results.csv`` (one row per seat per round, see
:class:`~agents.tournament.results.Row`) and ``results.sha256`` (a checksum per deal),
``run.json`` (the run's identity, checked on resume), ``summary.json``, ``table.txt``,
``ratings.csv`` (mu/sigma after every game), ``penalty.png`` and ``rating.png``. Play and
resume: :mod:`agents.tournament.harness`; seats and seeds: :mod:`agents.tournament.seating`;
the results file and its checks: :mod:`agents.tournament.results`; each game's part:
:mod:`agents.tournament.games`; statistics: :mod:`agents.tournament.stats`; ratings:
:mod:`agents.tournament.rating`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.tournament.harness import (
    AgentFailedError,
    AgentSpec,
    DealResult,
    MissingDeals,
    Plan,
    TournamentConfig,
    make_plan,
    play_deals,
    prepare_out_dir,
)
from agents.tournament.rating import Ratings, rate_games
from agents.tournament.report import aggregates, build_summary, format_table, remove_report, write_outputs
from agents.tournament.results import (
    COLUMNS,
    RESULTS_FILE,
    ConfigMismatchError,
    DamagedResultsError,
    ResultsFile,
    Row,
    read_results,
)
from agents.tournament.stats import agent_stats, group_games, pairwise
from agents.tournament.timing import TIMING_FILE, Timing, TimingLedger
from mtrain_env.tilegame.files import run_lock


@dataclass
class TournamentResult:
    """What :func:`run_tournament` returns (``summary`` is what ``summary.json`` holds)."""

    config: TournamentConfig
    plan: Plan
    rows: list[Row]
    summary: dict[str, Any]
    ratings: Ratings
    table: str
    files: dict[str, str]

    @property
    def agents(self) -> list[dict[str, Any]]:
        return self.summary["agents"]

    @property
    def pairwise(self) -> list[dict[str, Any]]:
        return self.summary["pairwise"]

    @property
    def variance_reduction(self) -> dict[str, Any]:
        return self.summary["variance_reduction"]

    @property
    def throughput(self) -> dict[str, Any]:
        return self.summary["throughput"]

    def aggregates(self) -> dict[str, Any]:
        """The summary without timing, versions and paths (equal for equal results)."""
        return aggregates(self.summary)


def run_tournament(config: TournamentConfig) -> TournamentResult:
    """Play (or resume) a tournament and compute its report.

    Raises ``ValueError`` for a bad configuration and :class:`ConfigMismatchError` when
    ``out_dir`` holds the results of a different configuration. An interrupted run keeps
    every finished deal on disk; calling again with the same config plays the rest.
    With ``workers > 1`` the pool uses the ``spawn`` start method: in a script, call this
    under ``if __name__ == "__main__":``.
    """
    plan = make_plan(config)
    if config.out_dir is None:
        return _run(config, plan, None)
    with run_lock(config.out_dir):  # one run writes a directory at a time: DirectoryInUseError
        return _run(config, plan, Path(config.out_dir))


def _run(config: TournamentConfig, plan: Plan, out: Path | None) -> TournamentResult:
    """:func:`run_tournament` once ``out`` (if any) is this process's."""
    rows: list[Row] = []
    if out is not None:
        rows = prepare_out_dir(out, plan, config.deals, config.overwrite)
    done = {r.deal for r in rows}
    missing = MissingDeals(config.deals, done)  # lazy: --deals 10**12 starts at once
    if out is not None and missing:
        remove_report(out)  # it describes results that are about to change: none beats a stale one
    progress = _progress_bar(config, len(done)) if config.progress else None
    results = ResultsFile(out / RESULTS_FILE) if out is not None else None
    ledger = TimingLedger(out / TIMING_FILE) if out is not None else None
    new_rows: list[Row] = []

    def sink(res: DealResult) -> None:
        if results is not None and ledger is not None:
            results.append(res.deal, res.rows)
            ledger.append(res.deal, res.think_seconds, res.decisions)
        new_rows.extend(res.rows)

    try:
        play = play_deals(
            plan, missing, config.workers, sink, progress, config.replays_dir, config.backend, config.address
        )
    finally:
        if progress is not None:
            progress.close()
    all_rows = results.read(plan)[0] if results is not None else sorted(new_rows)
    games = group_games(all_rows)
    positive = plan.adapter.positive(plan.game_config)
    per_agent = agent_stats(games, plan.labels, positive)
    pairs = pairwise(games, plan.labels)
    ratings = rate_games(games, plan.labels, positive)
    timing = (
        ledger.totals({r.deal for r in all_rows}, len(plan.names))
        if ledger is not None
        else Timing(play.think_seconds, play.decisions, play.deals)
    )
    summary = build_summary(config, plan, per_agent, pairs, ratings, play, timing, deals_resumed=len(done))
    table = format_table(summary)
    files = write_outputs(out, summary, table, ratings, config.plots) if out is not None else {}
    return TournamentResult(config, plan, all_rows, summary, ratings, table, files)


def _progress_bar(config: TournamentConfig, initial: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=config.deals, initial=initial, unit="deal", file=sys.stderr, dynamic_ncols=True)


__all__ = [
    "COLUMNS",
    "AgentFailedError",
    "AgentSpec",
    "ConfigMismatchError",
    "DamagedResultsError",
    "Evaluation",
    "ResultsFile",
    "Row",
    "TournamentConfig",
    "TournamentResult",
    "evaluate",
    "read_results",
    "run_tournament",
]


from agents.tournament.evaluate import Evaluation, evaluate  # noqa: E402  (it runs run_tournament above)
