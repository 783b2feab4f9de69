"""A shared check: a tournament writes the same ``results.csv`` on 1 and 2 workers."""

from __future__ import annotations

from pathlib import Path

from agents.tournament import AgentSpec, TournamentConfig, run_tournament


def results_on_workers(
    out: Path, agents: list[AgentSpec], lineup: list[str], workers: int, deals: int = 2, seed: int = 13
) -> bytes:
    """The ``results.csv`` bytes of ``deals`` duplicate deals of ``lineup`` on ``workers``."""
    config = TournamentConfig(
        agents=agents,
        deals=deals,
        seed=seed,
        workers=workers,
        out_dir=out,
        plots=False,
        progress=False,
        lineup=lineup,
    )
    run_tournament(config)
    return (out / "results.csv").read_bytes()


def same_csv_on_one_and_two_workers(tmp_path: Path, agents: list[AgentSpec], lineup: list[str]) -> bytes:
    """The CSV of one worker, after asserting two workers write the same bytes."""
    one = results_on_workers(tmp_path / "w1", agents, lineup, 1)
    assert one == results_on_workers(tmp_path / "w2", agents, lineup, 2)
    return one
