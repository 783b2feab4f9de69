"""The tournament harness (agents/tournament): duplicate seating, files, determinism,
resume after a kill, statistics and the duplicate-deal variance reduction.

Test agents live here (``tests.tournament.test_tournament:LowestTileFirst``) so that spawned worker
processes and the CLI subprocess can import them by path.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from agents.mexican_train.base import Agent, Decision
from agents.tournament import (
    COLUMNS,
    AgentFailedError,
    AgentSpec,
    ConfigMismatchError,
    DamagedResultsError,
    ResultsFile,
    Row,
    TournamentConfig,
    read_results,
    run_tournament,
)
from agents.tournament.cli import bench, config_from_args, cores_note, register
from agents.tournament.games import MexicanTrainGame
from agents.tournament.harness import make_plan
from agents.tournament.rating import game_ranks
from agents.tournament.seating import make_lineups, rotations, seating
from agents.tournament.stats import agent_stats, group_games, mean_ci, pairwise, t_quantile
from mtrain_env.mexican_train.core.config import VARIANT_FLAGS, GameConfig
from mtrain_env.mexican_train.env import raw_env
from tests import REPO

LOWEST = "tests.tournament.test_tournament:LowestTileFirst"
HIGHEST = "tests.tournament.test_tournament:HighestTileFirst"


class _ByPips(Agent):
    """Plays the legal tile with the fewest (or most) pips; else draws; else passes."""

    sign = 1

    def act(self, decision: Decision) -> int:
        plays = []
        others = []
        for action in decision.legal_actions:
            a = decision.codec.decode_action(action)
            if a.kind == "play":
                plays.append((self.sign * sum(a.tile), action))
            else:
                others.append((a.kind != "draw", action))  # DRAW before PASS
        return min(plays)[1] if plays else min(others)[1]


class LowestTileFirst(_ByPips):
    """A weak deterministic agent: keeps its heavy tiles (R24 penalty) to the end."""

    name = "lowest_first"
    sign = 1


class HighestTileFirst(_ByPips):
    """A greedy-ish deterministic agent: sheds its heaviest tile first."""

    name = "highest_first"
    sign = -1


class AlwaysPass(Agent):
    """Broken on purpose: passes even when PASS is illegal."""

    name = "always_pass"

    def act(self, decision: Decision) -> int:
        return int(decision.codec.PASS)


class Crashes(Agent):
    """Broken on purpose: raises inside ``act`` (a plugin's bug)."""

    name = "crashes"

    def act(self, decision: Decision) -> int:
        raise ZeroDivisionError("a bug in the agent")


GAME_KEYS = ("num_players", "max_pips", "hand_size", "rules", "rounds")


def _config(tmp: Path | None, **kw) -> TournamentConfig:
    """A small tournament; game keywords (``num_players``, ``rounds``, flags...) build its GameConfig."""
    base = {"agents": ["random", LOWEST], "deals": 3, "seed": 7, "progress": False}
    game = {"num_players": 3, **kw.pop("flags", {})}
    for key in list(kw):
        if key in GAME_KEYS or key in VARIANT_FLAGS:
            game[key] = kw.pop(key)
    base.update(kw)
    return TournamentConfig(out_dir=tmp, game=GameConfig.make(**game), **base)


# ------------------------------------------------------------------- seating
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_duplicate_rotations_seat_every_agent_at_every_seat(players: int) -> None:
    """Each deal's games seat every agent at every seat (so each plays every hand, R4),
    for cycled lineups (|A| <= P) and for the P-subsets when |A| > P."""
    for num_agents in range(1, players + 3):
        for lineup in make_lineups(num_agents, players):
            assert len(lineup) == players
        pairs = Counter()
        for lineup in make_lineups(num_agents, players):
            for r in range(rotations(lineup)):
                for seat, agent in enumerate(seating(lineup, r)):
                    pairs[(agent, seat)] += 1
        everyone = {(a, s) for a in range(num_agents) for s in range(players)}
        assert set(pairs) == everyone, (num_agents, players)
        if num_agents <= players:
            # balanced: an agent holding k seats of the lineup sits k times at each seat
            lineup = make_lineups(num_agents, players)[0]
            for (agent, _seat), count in pairs.items():
                assert count * players == lineup.count(agent) * rotations(lineup)


def test_rotation_period_skips_repeated_seatings() -> None:
    """``a b a b`` has two distinct seatings; four different agents need four."""
    assert rotations((0, 1, 0, 1)) == 2
    assert rotations((0, 1, 2, 3)) == 4
    assert rotations((0, 1, 0)) == 3
    assert rotations((0, 0, 0)) == 1
    assert seating((0, 1, 2, 3), 1) == (3, 0, 1, 2)


def test_explicit_lineup_is_validated() -> None:
    with pytest.raises(ValueError, match="no seat"):
        make_plan(_config(None, agents=["random", LOWEST], lineup=["random", "random", "random"]))
    with pytest.raises(ValueError, match="unknown agents"):
        make_plan(_config(None, agents=["random", LOWEST], lineup=["random", "nobody", "random"]))
    plan = make_plan(_config(None, agents=["random", LOWEST], lineup=["random", "LowestTileFirst", "random"]))
    assert plan.lineups == ((0, 1, 0),)


# ---------------------------------------------------------------- smoke runs
def _rows_by(rows: list[Row], *keys: str) -> dict[tuple, list[Row]]:
    out: dict[tuple, list[Row]] = defaultdict(list)
    for r in rows:
        out[tuple(getattr(r, k) for k in keys)].append(r)
    return out


@pytest.mark.parametrize("players", [2, 3, 4])
def test_small_tournament_writes_sane_files(tmp_path: Path, players: int) -> None:
    """random vs lowest-tile-first: results.csv, summary.json, ratings.csv and PNGs with
    contents that agree with each other and with the rules (R24 penalties, ties shared)."""
    config = _config(tmp_path, num_players=players, deals=3)
    result = run_tournament(config)
    plan = result.plan
    gc = GameConfig.make(num_players=players)
    rows = read_results(tmp_path / "results.csv")
    with open(tmp_path / "results.csv", encoding="utf-8") as f:
        assert tuple(next(csv.reader(f))) == COLUMNS
    assert rows == result.rows
    assert len(rows) == 3 * plan.games_per_deal * players
    set_pips = sum(a + b for a, b in gc.tiles.tiles) - 2 * gc.max_pips  # the engine is never in a hand
    for deal, block in _rows_by(rows, "deal").items():
        # the same deal and opener in every rotation; every agent at every seat
        assert len({r.deal_seed for r in block}) == 1, deal
        assert len({r.first_player for r in block}) == 1, deal
        assert {(r.agent, r.seat) for r in block} == {(a, s) for a in plan.labels for s in range(players)}
    for key, block in _rows_by(rows, "deal", "lineup", "rotation", "round").items():
        assert sorted(r.seat for r in block) == list(range(players)), key
        pips = [r.penalty for r in block]
        assert min(pips) >= 0 and sum(pips) <= set_pips
        assert math.isclose(sum(r.lowest_share for r in block), 1.0)
        for r in block:
            assert r.score == r.penalty  # penalty scoring (R24)
            assert r.lowest == (r.penalty == min(pips))
            assert r.rank == 1 + sum(p < r.penalty for p in pips)
            assert not r.went_out or r.penalty == 0
            assert r.actions >= 1
        # a round ends when someone goes out or when blocked (R23); blocked rounds have no empty hand
        assert sum(r.went_out for r in block) <= players

    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["seed"] == 7 and summary["config"]["num_players"] == players
    assert set(summary["versions"]) >= {"python", "numpy", "pettingzoo", "mtrain_env", "openskill"}
    assert summary["throughput"]["rounds_per_second"] > 0
    assert summary["throughput"]["rounds_played"] == 3 * plan.games_per_deal
    lineup = plan.lineups[0]
    share_total = 0.0
    for i, a in enumerate(summary["agents"]):
        mine = [r.penalty for r in rows if r.agent == a["agent"]]
        # equal seat-rounds per deal, so the mean of deal means is the plain mean
        assert math.isclose(a["mean_penalty"]["mean"], sum(mine) / len(mine))
        assert a["mean_penalty"]["lo"] <= a["mean_penalty"]["mean"] <= a["mean_penalty"]["hi"]
        assert a["mean_penalty"]["n"] == 3
        assert a["rating"]["sigma"] < 25 / 3  # openskill's prior sigma shrinks with games
        share_total += lineup.count(i) * a["lowest_rate"]["mean"]
    assert math.isclose(share_total, 1.0)  # one lowest finisher per round, ties shared
    assert len(summary["pairwise"]) == 1 and len(summary["variance_reduction"]["pairs"]) == 1
    assert summary["variance_reduction"]["pairs"][0]["se_duplicate"] >= 0

    with open(tmp_path / "ratings.csv", encoding="utf-8") as f:
        assert sum(1 for _ in f) == 1 + (3 * plan.games_per_deal + 1) * 2
    for name in ("penalty.png", "rating.png"):
        with Image.open(tmp_path / name) as im:
            assert im.format == "PNG" and im.size[0] > 300 and im.size[1] > 100
    written = json.loads((tmp_path / "summary.json").read_text())["files"]
    assert (written["penalty_plot"], written["rating_plot"]) == (
        str(tmp_path / "penalty.png"),
        str(tmp_path / "rating.png"),
    )
    assert "penalty/round" in (tmp_path / "table.txt").read_text()


def test_session_tournament_follows_r6_and_r25(tmp_path: Path) -> None:
    """Full sessions (R25): N + 1 rounds per game, the opener rotating each round (R6),
    R25 session results whose shares sum to one per game."""
    result = run_tournament(_config(tmp_path, num_players=2, max_pips=6, rounds=7, deals=2, plots=False))
    rows = result.rows
    games = _rows_by(rows, "deal", "lineup", "rotation")
    assert len(games) == 2 * 2
    for key, block in games.items():
        assert sorted({r.round for r in block}) == list(range(7)), key
        first = {r.round: r.first_player for r in block}
        assert all(first[k] == (first[0] + k) % 2 for k in range(7)), first  # R6
    agents = {a["agent"]: a for a in result.agents}
    assert math.isclose(sum(a["session_win_rate"]["mean"] for a in agents.values()), 1.0)
    for label, a in agents.items():
        totals = [sum(r.score for r in block if r.agent == label) for block in games.values()]
        assert math.isclose(a["session_score"]["mean"], sum(totals) / len(totals))
    assert "session win%" in result.table


def test_engine_holder_preset_runs() -> None:
    """cardinal (engine_holder_opens, R5 variant): the holder opens, so no first player is forced."""
    result = run_tournament(_config(None, rules="cardinal", deals=2))
    assert len(result.rows) == 2 * 3 * 3
    assert len(result.agents) == 2


def test_an_illegal_action_stops_the_run_naming_the_agent() -> None:
    """Agent bugs are errors, never silently scored (the env raises on illegal actions)."""
    with pytest.raises(RuntimeError, match=r"'AlwaysPass' at seat .* illegal action"):
        run_tournament(
            _config(None, agents=["random", "tests.tournament.test_tournament:AlwaysPass"], deals=1)
        )


@pytest.mark.parametrize("workers", [1, 2])
def test_an_agent_that_raises_stops_the_run_naming_it_with_its_traceback(workers: int) -> None:
    """An exception inside a plugin's ``act`` becomes one AgentFailedError naming the entrant,
    seat and deal, carrying the agent's own traceback, also out of a process pool."""
    config = _config(
        None, agents=["random", "tests.tournament.test_tournament:Crashes"], deals=2, workers=workers
    )
    says = r"'Crashes' at seat \d \(deal 0, rotation 0\) raised ZeroDivisionError"
    with pytest.raises(AgentFailedError, match=says) as err:
        run_tournament(config)
    assert 'raise ZeroDivisionError("a bug in the agent")' in err.value.details
    assert "in act" in err.value.details


def test_bench_reports_a_crashing_agent_in_a_line_and_exit_code_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``mtrain bench``: the agent's traceback, then one line naming it; exit code 1 (not a
    usage error); the finished deals stay saved for a rerun."""
    out = tmp_path / "run"
    argv = ["--agents", "random", "tests.tournament.test_tournament:Crashes", "--deals", "2"]
    assert bench(_bench_args([*argv, "--players", "2", "--out", str(out), "--no-progress"])) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and "ZeroDivisionError: a bug in the agent" in err
    assert "mtrain bench: agent 'Crashes' at seat" in err and "rerun the same command" in err
    assert (out / "run.json").exists() and not (out / ".lock").exists()


def test_sessions_are_duplicated_after_round_0() -> None:
    """The env deals rounds 1.. from its seeded generator only, so a session replayed with
    other play gets the same later deals (what duplicate sessions rely on)."""
    config = GameConfig.make(num_players=3, max_pips=9, rounds=3)
    deal = MexicanTrainGame().deal_options(config, np.random.default_rng(1))["deal"]
    seen = []
    for play_seed in (1, 2):
        env = raw_env(num_players=3, max_pips=9, rounds=3)
        env.reset(seed=99, options={"deal": deal, "first_player": 1})
        rng = np.random.default_rng(play_seed)
        steps = 0
        while not env.state_obj.round_scores:
            env.step(int(rng.choice(env.legal_actions())))
            steps += 1
        s = env.state_obj
        seen.append((steps, list(s.hands), list(s.boneyard)))
    assert seen[0][0] != seen[1][0]  # round 0 was played differently...
    assert seen[0][1:] == seen[1][1:]  # ...and round 1 is dealt the same


# --------------------------------------------------------------- determinism
def test_same_seed_same_csv_whatever_the_worker_count(tmp_path: Path) -> None:
    """Deal and agent seeds come from (seed, deal, rotation, seat): 1 or 2 spawned workers
    write byte-identical results and equal aggregates."""
    one = run_tournament(_config(tmp_path / "w1", deals=4, workers=1, plots=False))
    two = run_tournament(_config(tmp_path / "w2", deals=4, workers=2, plots=False))
    assert two.throughput["workers"] == 2
    assert (tmp_path / "w1/results.csv").read_bytes() == (tmp_path / "w2/results.csv").read_bytes()
    assert one.aggregates() == two.aggregates()
    other = run_tournament(_config(None, deals=4, seed=8))
    assert [r.penalty for r in other.rows] != [r.penalty for r in one.rows]


def test_bench_plays_on_every_usable_cpu_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``--workers`` a bench uses one process per CPU this process may run on (its
    affinity mask, not the machine's core count), never more than the deals; the files
    are those of ``--workers 1`` (as the test above pins for the harness)."""
    import agents.tournament.harness as harness

    assert _bench_args(["--agents", "random"]).workers == 0
    monkeypatch.setattr(harness.os, "cpu_count", lambda: 64)
    if hasattr(os, "process_cpu_count"):
        monkeypatch.setattr(harness.os, "process_cpu_count", lambda: 2)
    else:
        monkeypatch.setattr(harness.os, "sched_getaffinity", lambda pid: {0, 5})
    assert harness.usable_cpus() == 2
    assert harness.worker_processes(0, deals=100) == 2 and harness.worker_processes(0, deals=1) == 1
    argv = ["--agents", "random", LOWEST, "--players", "2", "--deals", "3", "--no-progress", "--no-plots"]
    argv += ["--max-pips", "6"]
    assert bench(_bench_args([*argv, "--out", str(tmp_path / "all")])) == 0
    assert bench(_bench_args([*argv, "--out", str(tmp_path / "one"), "--workers", "1"])) == 0
    summary = json.loads((tmp_path / "all/summary.json").read_text())
    assert summary["throughput"]["workers"] == 2
    assert (tmp_path / "all/results.csv").read_bytes() == (tmp_path / "one/results.csv").read_bytes()


# -------------------------------------------------------------------- resume
def test_resume_after_kill_plays_each_deal_exactly_once(tmp_path: Path) -> None:
    """SIGKILL a CLI run mid-way, tear its last write, rerun: every deal id appears once
    and results and aggregates equal those of an uninterrupted run."""
    deals = 40
    kw = {"agents": ["random", LOWEST], "num_players": 4, "deals": deals, "seed": 3, "plots": False}
    clean = run_tournament(_config(tmp_path / "clean", **kw))
    per_deal = clean.plan.rows_per_deal
    killed = tmp_path / "killed"
    cmd = [sys.executable, "-m", "training.app", "bench", "--agents", "random", LOWEST, "--players", "4"]
    cmd += ["--deals", str(deals), "--seed", "3", "--out", str(killed), "--no-progress", "--no-plots"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    results = killed / "results.csv"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        sums = killed / "results.sha256"  # a deal counts once its checksum is written
        if sums.exists() and sums.read_text().count("\n") >= 3:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate()
    assert proc.returncode == -signal.SIGKILL, err.decode()  # killed, not finished
    done = {r.deal for r in read_results(results)}
    assert 3 <= len(done) < deals
    # a kill in the middle of a write: half a deal and a torn line
    missing = min(set(range(deals)) - done)
    clean_lines = (tmp_path / "clean/results.csv").read_text().splitlines()
    torn = [line for line in clean_lines[1:] if line.startswith(f"{missing},")][: per_deal // 2]
    # the kill itself may have torn the last line: the simulated tear replaces that one
    # (appended after it, the two would make a damaged line mid-file, which no kill writes)
    text = results.read_text(encoding="utf-8")
    results.write_text(text[: text.rfind("\n") + 1], encoding="utf-8")
    with open(results, "a", encoding="utf-8") as f:
        f.write("\n".join(torn) + "\n" + torn[0][:7])

    resumed = run_tournament(_config(killed, **kw))
    assert resumed.throughput["deals_resumed"] == len(done)
    rows = read_results(results)
    counts = Counter(r.deal for r in rows)
    assert sorted(counts) == list(range(deals)) and set(counts.values()) == {per_deal}
    keys = Counter((r.deal, r.lineup, r.rotation, r.round, r.seat) for r in rows)
    assert max(keys.values()) == 1
    assert results.read_bytes() == (tmp_path / "clean/results.csv").read_bytes()
    assert resumed.aggregates() == clean.aggregates()


def test_pool_workers_exit_quietly_when_the_parent_is_killed(tmp_path: Path) -> None:
    """SIGKILL a ``mtrain bench`` with a worker pool mid-run: its workers, which share its
    stderr, end without a word (no BrokenPipe traceback when a result has nowhere to go)."""
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "training.app", "bench", "--agents", "random", LOWEST, "--players", "4"]
    cmd += ["--deals", "400", "--workers", "2", "--out", str(out), "--no-progress", "--no-plots"]
    proc = subprocess.Popen(
        cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        sums = out / "results.sha256"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if sums.exists() and sums.read_text().count("\n") >= 2:  # the workers are playing
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=60)  # EOF once every worker has closed stderr too
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # no worker outlives the test, whatever happened
    assert proc.returncode == -signal.SIGKILL
    assert sums.read_text().count("\n") >= 2, "killed before the workers played"
    assert "Traceback" not in err.decode(), err.decode()


def test_resume_refuses_another_config_and_extends_deals(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_tournament(_config(out, deals=2, plots=False))
    with pytest.raises(ConfigMismatchError, match="seed"):
        run_tournament(_config(out, deals=2, seed=8, plots=False))
    with pytest.raises(ConfigMismatchError, match="one_tile_opening"):
        run_tournament(_config(out, deals=2, flags={"one_tile_opening": True}, plots=False))
    extended = run_tournament(_config(out, deals=4, plots=False))
    assert extended.throughput["deals_resumed"] == 2 and extended.throughput["deals_played"] == 2
    fresh = run_tournament(_config(None, deals=4))
    assert extended.rows == fresh.rows
    with pytest.raises(ConfigMismatchError, match="deals"):
        run_tournament(_config(out, deals=3, plots=False))
    assert (
        run_tournament(_config(out, deals=1, overwrite=True, plots=False)).rows
        == fresh.rows[: len(fresh.rows) // 4]
    )


def test_timing_covers_every_deal_timed_across_invocations(tmp_path: Path) -> None:
    """ms/dec of an extended run, and of a rerun that plays nothing, is over every deal any
    invocation timed (``timing.jsonl``), as a fresh run's is (the decision counts are a
    function of the seed); a line cut short by a kill leaves its deal untimed, named in
    the table; ``--overwrite`` starts the ledger again."""

    def timed(result: Any) -> list[int]:
        return [a["decisions_timed"] for a in result.agents]

    out = tmp_path / "run"
    fresh = run_tournament(_config(None, deals=4))
    run_tournament(_config(out, deals=2, plots=False))
    extended = run_tournament(_config(out, deals=4, plots=False))
    assert timed(extended) == timed(fresh) and all(n > 0 for n in timed(fresh))
    again = run_tournament(_config(out, deals=4, plots=False))
    assert again.throughput["deals_played"] == 0 and timed(again) == timed(fresh)
    assert all(a["ms_per_decision"] is not None for a in again.agents)
    assert again.throughput["deals_timed"] == 4 and "deals timed" not in again.table
    ledger = out / "timing.jsonl"
    ledger.write_text(ledger.read_text()[:-5])  # the last deal's line, cut short by a kill
    cut = run_tournament(_config(out, deals=4, plots=False))
    assert cut.throughput["deals_timed"] == 3 and all(
        c < f for c, f in zip(timed(cut), timed(fresh), strict=True)
    )
    assert "ms/dec: the time inside act over the 3 of 4 deals timed (timing.jsonl)" in cut.table
    redone = run_tournament(_config(out, deals=1, overwrite=True, plots=False))
    assert redone.throughput["deals_timed"] == 1 and len(ledger.read_text().splitlines()) == 1


# ---------------------------------------------------------------- statistics
def test_t_quantiles_match_the_printed_tables() -> None:
    """Student t 97.5% points from standard tables (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2)."""
    for df, expected in [(1, 12.706), (2, 4.303), (4, 2.776), (10, 2.228), (30, 2.042), (100, 1.984)]:
        assert round(t_quantile(0.975, df), 3) == expected
    assert math.isclose(t_quantile(0.975, 1e9), 1.959964, abs_tol=1e-6)
    assert math.isclose(t_quantile(0.025, 4), -t_quantile(0.975, 4))


def test_mean_ci_hand_computed() -> None:
    """[1..5]: mean 3, s^2 = 2.5, SE = sqrt(0.5), half-width t(0.975, 4) * SE = 2.776445 * 0.707107."""
    e = mean_ci([1, 2, 3, 4, 5])
    assert e.mean == 3 and e.n == 5
    assert math.isclose(e.se, math.sqrt(0.5))
    assert math.isclose(e.lo, 3 - 1.963243, abs_tol=1e-5) and math.isclose(e.hi, 3 + 1.963243, abs_tol=1e-5)
    assert math.isnan(mean_ci([4.0]).lo)
    # seven 0s and a 1: mean 1/8, s^2 = 1/8, SE = 1/8, t(0.975, 7) = 2.364624; the low end clips at 0
    rate = mean_ci([0, 0, 0, 0, 0, 0, 0, 1], bounds=(0.0, 1.0))
    assert rate.lo == 0.0 and math.isclose(rate.hi, 0.125 + 2.364624 * 0.125, rel_tol=1e-6)


def _row(deal: int, rotation: int, rnd: int, seat: int, agent: str, pips: int, others: list[int]) -> Row:
    low = min(others)
    share = 1 / others.count(low) if pips == low else 0.0
    return Row(
        deal=deal,
        lineup=0,
        rotation=rotation,
        round=rnd,
        seat=seat,
        agent=agent,
        deal_seed=0,
        agent_seed=0,
        first_player=0,
        penalty=pips,
        score=float(pips),
        went_out=int(pips == 0),
        lowest=int(pips == low),
        lowest_share=share,
        rank=1 + sum(p < pips for p in others),
        actions=1,
    )


def _hand_games(results: dict[int, list[tuple[int, int]]]) -> list[Row]:
    """2 seats, agents a/b; ``results[deal] = [(a pips, b pips) per rotation]``; rotation r
    puts a at seat r (seating((0, 1), r))."""
    rows = []
    for deal, games in results.items():
        for rot, (pa, pb) in enumerate(games):
            by_seat = {rot % 2: ("a", pa), (rot + 1) % 2: ("b", pb)}
            for seat in (0, 1):
                rows.append(_row(deal, rot, 0, seat, by_seat[seat][0], by_seat[seat][1], [pa, pb]))
    return rows


def test_cis_are_over_deal_means_hand_computed() -> None:
    """Deal means of a: 10, 21, 29 -> mean 20, s^2 = 91, SE = sqrt(91/3), t(0.975, 2) = 4.302653;
    a - b deal differences -3, -8, -1 -> mean -4, s^2 = 13; game differences -4 -2 -10 -6 4 -6
    -> s^2 = 22.4. Row-level SEs would differ (6 correlated values per agent)."""
    rows = _hand_games({0: [(10, 14), (10, 12)], 1: [(20, 30), (22, 28)], 2: [(30, 26), (28, 34)]})
    games = group_games(rows)
    stats = {s["agent"]: s for s in agent_stats(games, ["a", "b"])}
    a = stats["a"]["mean_penalty"]
    assert a.mean == 20 and a.n == 3
    assert math.isclose(a.se, math.sqrt(91 / 3))
    assert math.isclose(a.hi - a.mean, 4.302653 * math.sqrt(91 / 3), rel_tol=1e-6)
    assert math.isclose(stats["a"]["lowest_rate"].mean, 5 / 6)  # a lowest in 5 of 6 games, 1 per deal mean
    (pair,) = pairwise(games, ["a", "b"])
    assert pair["mean_diff"].mean == -4 and math.isclose(pair["mean_diff"].se, math.sqrt(13 / 3))
    assert pair["a_beats_b_deals"] == 1.0 and math.isclose(pair["a_beats_b_rounds"], 5 / 6)
    v = pair["variance"]
    assert math.isclose(v["se_duplicate"], math.sqrt(13 / 3))
    assert math.isclose(v["se_independent"], math.sqrt(22.4 / 6))
    assert math.isclose(v["se_independent_same_deals"], math.sqrt(22.4 / 3))
    assert math.isclose(v["variance_ratio"], (22.4 / 6) / (13 / 3))


def test_ranks_single_round_and_r25_session() -> None:
    """Single round: by pips, ties share the best rank. Session: R25 total, then most zero
    rounds, then the lowest non-zero round."""
    rows = [_row(0, 0, 0, s, "x", p, [5, 0, 5, 9]) for s, p in enumerate([5, 0, 5, 9])]
    assert game_ranks(group_games(rows)[0]) == [2, 1, 2, 4]
    # totals 15 and 15, one zero round each; lowest non-zero 5 vs 7 -> seat 0 wins (R25)
    scores = [[0, 0], [10, 7], [5, 8]]
    rows = [_row(0, 0, k, s, "ab"[s], scores[k][s], scores[k]) for k in range(3) for s in range(2)]
    (game,) = group_games(rows)
    assert game_ranks(game) == [1, 2]
    assert game.session_win_share(positive=False) == [1.0, 0.0]


# -------------------------------------------------------- variance reduction
def test_duplicate_deals_cancel_hand_luck_exactly_for_twins() -> None:
    """Two copies of one deterministic agent: with rotated seats every deal's difference is
    exactly 0 (the luck of the hands cancels), while single games differ."""
    result = run_tournament(_config(None, agents=[HIGHEST, HIGHEST], num_players=2, deals=8))
    (v,) = result.variance_reduction["pairs"]
    assert v["se_duplicate"] == 0.0
    assert v["se_independent"] > 1.0


def test_duplicate_deals_reduce_variance_stronger_vs_weaker() -> None:
    """random vs highest-tile-first (4 seats, 24 deals): the stronger agent is recognised
    (CI of the difference excludes 0) and duplicate deals give a smaller SE than as many
    independent deals each played once.

    At equal playing time (as many independent games) the gain is small for these agents
    (ratios 0.8-1.6 over seeds; see the report): the edge itself varies from deal to deal,
    so that comparison is reported, not asserted."""
    result = run_tournament(_config(None, agents=["random", HIGHEST], num_players=4, deals=24, seed=0))
    (pair,) = result.pairwise
    assert pair["mean_diff"]["lo"] > 0  # random keeps more pips
    v = pair["variance"]
    assert v["se_duplicate"] < v["se_independent_same_deals"]
    assert v["variance_ratio_same_deals"] > 1.0
    assert "Variance reduction" in result.table


# ------------------------------------------------------------------------ CLI
def _bench_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["bench", *argv])


def test_cli_arguments_build_the_config() -> None:
    argv = "--agents random mc[rollouts=8] --players 3 --deals 5 --out x --session --max-pips 9"
    argv += " --flag one_tile_opening --flag blank_penalty=false --agent-param mc.extend=2"
    args = _bench_args(argv.split())
    config = config_from_args(args)
    assert config.agents == (AgentSpec("random"), AgentSpec("mc", {"rollouts": 8, "extend": 2}))
    assert config.game.rounds == 10 and config.num_players == 3 and config.deals == 5
    assert config.game.one_tile_opening and not config.game.blank_penalty
    assert args.func.__name__ == "bench"
    with pytest.raises(ValueError, match="no agent named"):
        config_from_args(_bench_args(["--agents", "random", "--agent-param", "mc.extend=2", "--out", "x"]))


def test_cli_refuses_a_mismatched_out_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:

    base = ["--agents", "random", LOWEST, "--players", "2", "--deals", "2", "--out", str(tmp_path)]
    base += ["--no-progress", "--no-plots", "--max-pips", "6"]
    assert bench(_bench_args([*base, "--seed", "1"])) == 0
    assert "Throughput" in capsys.readouterr().out
    assert bench(_bench_args([*base, "--seed", "2"])) == 2
    assert "different tournament configuration" in capsys.readouterr().err
    assert bench(_bench_args(["--agents", "nobody", "--out", str(tmp_path / "x")])) == 2
    assert "unknown agent" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "x")


def test_bench_without_out_writes_one_directory_per_configuration_and_resumes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``--out``: the files go to ``results/AGENTS_Pp_seedS_HASH`` (said on stderr); the
    same command finds it again and resumes (more deals extend it), another seed or other
    rules get a directory of their own instead of a refusal."""
    monkeypatch.chdir(tmp_path)
    argv = ["--agents", "random", LOWEST, "--players", "2", "--no-progress", "--no-plots", "--max-pips", "6"]
    assert bench(_bench_args([*argv, "--deals", "2"])) == 0
    first = capsys.readouterr()
    (made,) = (tmp_path / "results").iterdir()
    assert re.fullmatch(r"random\+LowestTileFirst_2p_seed0_[0-9a-f]{8}", made.name), made.name
    assert f"mtrain bench: no --out given: results go to results/{made.name}\n" in first.err
    assert f"results/{made.name}/results.csv" in first.out
    assert bench(_bench_args([*argv, "--deals", "3"])) == 0
    assert json.loads((made / "summary.json").read_text())["throughput"]["deals_resumed"] == 2
    assert bench(_bench_args([*argv, "--deals", "2", "--seed", "1"])) == 0
    assert bench(_bench_args([*argv, "--deals", "2", "--rules", "wikipedia"])) == 0
    names = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert len(names) == 3 and made.name in names and any("_seed1_" in n for n in names)
    sub = argparse.ArgumentParser().add_subparsers()
    register(sub)
    assert "[--out OUT]" in sub.choices["bench"].format_usage()  # optional, its default in --help:
    assert "results/AGENTS_Pp_seedS_HASH" in " ".join(sub.choices["bench"].format_help().split())


def test_a_second_bench_on_a_directory_in_use_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """While a run holds ``--out`` (a requeued job, the same command in a second terminal:
    both appended to results.csv, and every rerun was refused after), another is refused
    at once, exit 2, one line naming the holder, nothing written."""
    from mtrain_env.tilegame.files import run_lock

    out = tmp_path / "run"
    argv = ["--agents", "random", LOWEST, "--players", "2", "--deals", "2", "--out", str(out)]
    argv += ["--no-progress", "--no-plots", "--max-pips", "6"]
    with run_lock(out):
        assert bench(_bench_args(argv)) == 2
        err = capsys.readouterr().err
        in_use = f"{out} is in use by pid {os.getpid()} (one run writes a directory at a time)"
        assert err == f"mtrain bench: --out: {in_use}\n"
        assert sorted(p.name for p in out.iterdir()) == [".lock"]
    assert bench(_bench_args(argv)) == 0  # free again


def test_a_finished_or_interrupted_bench_leaves_no_lock_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--out`` holds the run's files only: the lock that kept a second run out goes with the
    run, whether it finished or was stopped by Ctrl-C (exit 130, resumable)."""
    import agents.tournament as tournament

    out = tmp_path / "run"

    def argv(deals: int) -> list[str]:
        return ["--agents", "random", LOWEST, "--players", "2", "--deals", str(deals), "--out", str(out),
                "--no-progress", "--no-plots", "--max-pips", "6"]  # fmt: skip

    assert bench(_bench_args(argv(2))) == 0
    names = {p.name for p in out.iterdir()}
    assert ".lock" not in names and {"results.csv", "summary.json"} <= names

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(tournament, "play_deals", interrupted)
    assert bench(_bench_args(argv(4))) == 130
    assert "interrupted" in capsys.readouterr().out
    names = {p.name for p in out.iterdir()}
    assert ".lock" not in names and "results.csv" in names


def test_an_interrupted_extension_leaves_no_stale_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deals about to be added make the old report wrong: it is removed first, so a run
    interrupted before its new report leaves none (other tools read summary.json); the
    report files are written whole; a rerun writes them again."""
    import agents.tournament as tournament

    out = tmp_path / "run"
    run_tournament(_config(out, deals=2))
    report = {"summary.json", "table.txt", "ratings.csv", "penalty.png", "rating.png"}
    assert report <= {p.name for p in out.iterdir()}

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(tournament, "play_deals", interrupted)
        with pytest.raises(KeyboardInterrupt):
            run_tournament(_config(out, deals=4))
    names = {p.name for p in out.iterdir()}
    assert not report & names and "results.csv" in names and not [n for n in names if n.endswith(".tmp")]
    again = run_tournament(_config(out, deals=4))
    assert report <= {p.name for p in out.iterdir()} and again.throughput["deals_resumed"] == 2


def test_agent_spec_parsing() -> None:
    assert AgentSpec.parse("mc[rollouts=64,depth=2,mode=fast]") == AgentSpec(
        "mc", {"rollouts": 64, "depth": 2, "mode": "fast"}
    )
    assert AgentSpec.parse("mc[rollouts=64]").default_label() == "mc[rollouts=64]"
    with pytest.raises(ValueError):
        AgentSpec.parse("mc[rollouts]")
    assert make_plan(_config(None, agents=["random", "random"])).labels == ("random", "random#2")
    assert replace(_config(None), seed=1).seed == 1


def test_reference_policy_plays_in_spawned_workers(tmp_path: Path) -> None:
    """``ppo`` is known in fresh worker processes (they import only ``agents``), and the
    reference policy plays the same games on 1 and 2 workers."""
    kw = {"agents": ["ppo", "planner"], "num_players": 4, "deals": 2, "seed": 5, "plots": False}
    one = run_tournament(_config(tmp_path / "w1", workers=1, **kw))
    two = run_tournament(_config(tmp_path / "w2", workers=2, **kw))
    assert (tmp_path / "w1/results.csv").read_bytes() == (tmp_path / "w2/results.csv").read_bytes()
    assert {r.agent for r in two.rows} == {"ppo", "planner"} and one.aggregates() == two.aggregates()


# ------------------------------------------------------------ block dominoes
def test_block_tournament_pairs_agents_and_rotates_the_pairs(tmp_path: Path) -> None:
    """The same harness plays partnership block dominoes: partners are the same agent
    (every two agents meet as ``a b a b``), each deal is played with the pairs swapped,
    a seat's cost is its pair's points (B10-B12), and the CSV does not depend on workers."""
    from mtrain_env import block

    def config(out: Path, workers: int) -> TournamentConfig:
        return TournamentConfig(
            agents=["classic", "greedy", "random"],
            game=block.GameConfig.make(),
            deals=4,
            seed=3,
            workers=workers,
            out_dir=out,
            progress=False,
            plots=False,
        )

    one = run_tournament(config(tmp_path / "w1", 1))
    two = run_tournament(config(tmp_path / "w2", 2))
    assert (tmp_path / "w1" / "results.csv").read_bytes() == (tmp_path / "w2" / "results.csv").read_bytes()
    assert one.aggregates() == two.aggregates()
    assert [list(li) for li in one.plan.lineups] == [[0, 1, 0, 1], [0, 2, 0, 2], [1, 2, 1, 2]]
    assert one.plan.games_per_deal == 3 * 2  # three meetings, the pairs swapped once
    for key, block_rows in _rows_by(one.rows, "deal", "lineup", "rotation").items():
        by_seat = {r.seat: r for r in block_rows}
        assert by_seat[0].agent == by_seat[2].agent and by_seat[1].agent == by_seat[3].agent, key
        assert by_seat[0].penalty == by_seat[2].penalty and by_seat[1].penalty == by_seat[3].penalty
        assert min(by_seat[0].penalty, by_seat[1].penalty) == 0  # only the losing pair scores
    assert "pair points/hand" in one.table
    with pytest.raises(ValueError, match="match=True"):
        TournamentConfig(agents=["random"], game=block.GameConfig.make(match=True))


@pytest.mark.parametrize(
    ("seats", "line", "message"),
    [
        ({1: {"score": 0.5}}, 3, r"seat 1's score 0.5 is not its cost \d+ \(B10-B12\)"),
        ({2: {"penalty": 7, "score": 7.0}}, 4, r"partners 0 and 2 score \d+ and 7 \(B2, B12\)"),
        (
            {
                s: {"penalty": 200, "score": 200.0, "went_out": 0} if s % 2 else {"went_out": 0}
                for s in range(4)
            },
            3,
            r"seat 1's 200 points are more than a hand holds \(168, B12\)",
        ),
        (
            {s: {"penalty": 5, "score": 5.0, "went_out": 0} for s in range(4)},
            2,
            r"the points \[5, 5, 5, 5\]: the pair that won the hand scores none \(B10, B11\)",
        ),
        ({3: {"actions": 113}}, 5, r"the round's seats took \d+ actions .*\(112 actions: B8, B9, B11\)"),
    ],
    ids=["score", "partners", "points", "winners-score", "actions"],
)
def test_block_rows_that_contradict_their_hand_are_refused(
    tmp_path: Path, seats: dict[int, dict[str, Any]], line: int, message: str
) -> None:
    """A block hand's rows, forged with their checksum and derived columns recomputed, are
    refused where they contradict B10-B12 or the longest hand, naming the line and the rule."""
    from mtrain_env import block

    def config() -> TournamentConfig:
        game = block.GameConfig.make()
        return TournamentConfig(
            agents=["random"], game=game, deals=1, seed=3, out_dir=out, progress=False, plots=False
        )

    out = tmp_path / "run"
    run_tournament(config())
    rows = read_results(out / "results.csv")
    ResultsFile(out / "results.csv").rewrite(_forged_round(rows, _edit(seats)))
    with pytest.raises(
        DamagedResultsError, match=rf"^{re.escape(str(out / 'results.csv'))}:{line}: {message}"
    ):
        run_tournament(config())


def test_bench_cli_plays_block_and_refuses_mexican_train_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--game", "block", "--agents", "classic", "random", "--deals", "2", "--no-plots", "--no-progress"]
    assert bench(_bench_args([*argv, "--out", str(tmp_path / "b")])) == 0
    assert "block dominoes, 4 players" in capsys.readouterr().out
    assert bench(_bench_args([*argv, "--max-pips", "9", "--out", str(tmp_path / "c")])) == 2
    err = capsys.readouterr().err
    assert "--max-pips" in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "c").exists()


def test_bench_cli_says_how_it_filled_the_seats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--agents", "planner", "greedy", "--players", "3", "--deals", "1", "--no-plots", "--no-progress"]
    assert bench(_bench_args([*argv, "--out", str(tmp_path / "x")])) == 0
    assert "seats filled by cycling the agent list (planner greedy planner)" in capsys.readouterr().err


def test_bench_warns_when_workers_times_threads_exceed_the_cores() -> None:
    """``threads=2`` on 2 workers asks 4 threads of 2 cores: said, with the --workers that fits
    (workers counted as started: no more than the deals)."""
    args = _bench_args(["--agents", "mc[threads=2]", "planner", "--deals", "1", "--out", "unused"])
    plan = make_plan(config_from_args(args))
    note = cores_note(plan, workers=2, deals=10, cores=2)
    assert note is not None and "4 threads on 2 core(s)" in note and "--workers 1" in note
    assert cores_note(plan, workers=1, deals=10, cores=2) is None
    assert cores_note(plan, workers=0, deals=10, cores=4) is not None  # 0 = one worker per core
    assert cores_note(plan, workers=2, deals=1, cores=2) is None  # one deal starts one process
    single = make_plan(
        config_from_args(_bench_args(["--agents", "mc", "planner", "--deals", "1", "--out", "unused"]))
    )
    assert cores_note(single, workers=2, deals=10, cores=2) is None


def test_bench_cli_prints_the_cores_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("agents.tournament.cli.usable_cpus", lambda: 1)
    argv = ["--agents", "mc[sims=8,threads=2]", "planner", "--deals", "1", "--no-plots", "--no-progress"]
    assert bench(_bench_args([*argv, "--out", str(tmp_path / "x")])) == 0
    assert "1 worker(s) x threads=2 = 2 threads on 1 core(s)" in capsys.readouterr().err


# ------------------------------------------------------------ damaged results
def _edit_line(path: Path, number: int, edit: Callable[[list[str]], list[str]]) -> None:
    lines = path.read_text().splitlines(keepends=True)
    fields = lines[number - 1].rstrip("\n").split(",")
    lines[number - 1] = ",".join(edit(fields)) + "\n"
    path.write_text("".join(lines))


def _set(column: str, value: str) -> Callable[[list[str]], list[str]]:
    i = COLUMNS.index(column)
    return lambda fields: [*fields[:i], value, *fields[i + 1 :]]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_set("penalty", "999999"), "disagree with the round's penalties"),
        (_set("actions", "999"), "do not match their checksum"),
        (_set("penalty", "-4"), "'penalty' is negative"),
        (_set("score", "nan"), "'score'"),
        (_set("deal", "-1"), "'deal' is negative"),
        (_set("lowest_share", "2.0"), "lowest_share"),
        (_set("rank", "x"), "'rank'"),
        (_set("went_out", "7"), "'went_out' must be 0 or 1"),
        (lambda fields: [*fields, "extra"], "expected 16 fields"),
        (lambda f: _set("lowest", "1" if f[COLUMNS.index("lowest")] == "0" else "0")(f), "disagree"),
    ],
)
def test_a_damaged_results_file_is_refused_naming_file_and_line(
    tmp_path: Path, edit: Callable[[list[str]], list[str]], message: str
) -> None:
    """Anything changed in results.csv after the run wrote it is refused, with the file
    and the line: never averaged in (a penalty of 999999 once moved a mean by 600 pips)."""
    out = tmp_path / "run"
    run_tournament(_config(out, deals=3, plots=False))
    _edit_line(out / "results.csv", 5, edit)
    with pytest.raises(DamagedResultsError, match=message) as err:
        run_tournament(_config(out, deals=3, plots=False))
    assert "results.csv" in str(err.value) or "results.sha256" in str(err.value)
    with pytest.raises(DamagedResultsError):
        read_results(out / "results.csv")


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("results.csv", lambda p: p.write_bytes(p.read_bytes()[:60] + b"\xff\xfe" + p.read_bytes()[60:])),
        ("results.sha256", lambda p: p.write_bytes(b"\xff" + p.read_bytes())),
        ("results.csv", lambda p: (p.unlink(), p.mkdir())),
        ("run.json", lambda p: (p.unlink(), p.mkdir())),
        ("run.json", lambda p: p.write_bytes(b"\x80garbage")),
        ("results.csv", lambda p: p.write_text(p.read_text() + "x" * 200_000 + ",1\n")),
    ],
    ids=["csv-not-utf8", "sums-not-utf8", "csv-a-directory", "run-a-directory", "run-garbage", "huge-field"],
)
def test_unreadable_run_files_are_refused_naming_the_file(
    tmp_path: Path, name: str, damage: Callable[[Path], Any]
) -> None:
    """Bytes that are not UTF-8, a directory in a file's place, a field past csv's size
    limit: one DamagedResultsError naming the file (they were tracebacks on resume)."""
    out = tmp_path / "run"
    run_tournament(_config(out, deals=2, plots=False))
    damage(out / name)
    with pytest.raises(DamagedResultsError) as err:
        run_tournament(_config(out, deals=2, plots=False))
    assert str(out / name) in str(err.value) and "\n" not in str(err.value)


def test_rows_consistent_with_a_forged_checksum_are_still_checked_against_the_plan(tmp_path: Path) -> None:
    """A row relabelled to another agent, with its checksum recomputed, is still refused:
    the plan derives every seat's agent and seeds."""
    out = tmp_path / "run"
    run_tournament(_config(out, deals=2, plots=False))
    rows = read_results(out / "results.csv")
    forged = [r._replace(agent="random") if r.agent != "random" else r for r in rows]
    ResultsFile(out / "results.csv").rewrite(forged)
    with pytest.raises(DamagedResultsError, match="should be"):
        run_tournament(_config(out, deals=2, plots=False))


def _forged_round(rows: list[Any], change: Callable[[list[Any]], list[Any]]) -> list[Any]:
    """``rows`` with the first round's rows changed by ``change``, its lowest / lowest_share /
    rank worked out again from the penalties (so only the fact the change breaks is wrong)."""
    n = next((i for i, r in enumerate(rows) if (r.lineup, r.rotation, r.round) != (0, 0, 0)), len(rows))
    head = change(list(rows[:n]))
    costs = [r.penalty for r in head]
    low = min(costs)
    head = [
        r._replace(
            lowest=int(r.penalty == low),
            lowest_share=1.0 / costs.count(low) if r.penalty == low else 0.0,
            rank=1 + sum(c < r.penalty for c in costs),
        )
        for r in head
    ]
    return head + list(rows[n:])


def _edit(seats: dict[int, dict[str, Any]]) -> Callable[[list[Any]], list[Any]]:
    return lambda head: [r._replace(**seats.get(r.seat, {})) for r in head]


def _went_out_with_pips(head: list[Any]) -> list[Any]:
    seat = max(head, key=lambda r: r.penalty).seat
    return _edit({seat: {"went_out": 1}})(head)


def _two_out(head: list[Any]) -> list[Any]:
    return _edit(
        {0: {"penalty": 0, "score": 0.0, "went_out": 1}, 1: {"penalty": 0, "score": 0.0, "went_out": 1}}
    )(head)


def _more_pips(head: list[Any]) -> list[Any]:
    worst = max(head, key=lambda r: r.penalty)
    return _edit({worst.seat: {"penalty": 10_000, "score": 10_000.0}})(head)


def _first_player(head: list[Any]) -> list[Any]:
    return _edit({1: {"first_player": (head[0].first_player + 1) % len(head)}})(head)


@pytest.mark.parametrize(
    ("change", "line", "message"),
    [
        (_went_out_with_pips, None, r"seat \d went out with a cost of \d+: .*\(R24\)"),
        (_two_out, 3, r"seats \[0, 1\] went out in one round: the round ends when the first does \(R23"),
        (
            _edit({2: {"score": 1e9}}),
            4,
            r"seat 2's score 1000000000.0 is not \d+\.0 \(R24: the score is the penalty\)",
        ),
        (_first_player, 3, r"seat 1's first_player \d is not seat 0's \d: one seat opens a round \(R6"),
        (
            _edit({1: {"actions": 999_999_999}}),
            3,
            r"the round's seats took \d+ actions .*more than the longest possible round "
            r"\({actions} actions: R15, R16, R23\)",
        ),
        (_more_pips, None, r"the round's penalties \[.*\] add up to more than the set's {pips} pips \(R24\)"),
    ],
    ids=["went-out-with-pips", "two-out", "score", "first-player", "actions", "pips"],
)
def test_rows_that_contradict_their_round_are_refused_with_a_recomputed_checksum(
    tmp_path: Path, change: Callable[[list[Any]], list[Any]], line: int | None, message: str
) -> None:
    """Rows forged consistently with their checksums (and with the round's derived columns)
    are still refused when they contradict what a round implies, naming the file, the line
    and the fact: never averaged in."""
    out = tmp_path / "run"
    run_tournament(_config(out, deals=2, plots=False))
    rows = read_results(out / "results.csv")
    forged = _forged_round(rows, change)
    ResultsFile(out / "results.csv").rewrite(forged)
    if line is None:  # the changed row
        line = 2 + next(
            i
            for i, (a, b) in enumerate(zip(rows, forged, strict=True))
            if a.penalty != b.penalty or a.went_out != b.went_out
        )
    c = GameConfig.make(num_players=3)
    message = message.format(actions=c.max_round_actions, pips=c.tiles.hand_value(c.tiles.full))
    with pytest.raises(
        DamagedResultsError, match=rf"^{re.escape(str(out / 'results.csv'))}:{line}: {message}"
    ):
        run_tournament(_config(out, deals=2, plots=False))


def test_results_of_positive_scoring_are_checked_for_the_winners_share(tmp_path: Path) -> None:
    """R24 positive_scoring: a seat's score is its share of the others' pips; a forged
    score that is the penalty instead is refused."""
    out = tmp_path / "run"
    run_tournament(_config(out, deals=1, plots=False, flags={"positive_scoring": True}))
    rows = read_results(out / "results.csv")
    assert any(r.score != r.penalty for r in rows)
    ResultsFile(out / "results.csv").rewrite([r._replace(score=float(r.penalty)) for r in rows])
    with pytest.raises(DamagedResultsError, match=r"is not .* \(R24, positive_scoring"):
        run_tournament(_config(out, deals=1, plots=False, flags={"positive_scoring": True}))


def test_rows_or_checksums_removed_or_added_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_tournament(_config(out, deals=3, plots=False))
    csv_path, sums = out / "results.csv", out / "results.sha256"
    text, sums_text = csv_path.read_text(), sums.read_text()
    lines = text.splitlines(keepends=True)
    per_deal = (len(lines) - 1) // 3
    # the first deal's rows removed, its checksum kept
    csv_path.write_text(lines[0] + "".join(lines[1 + per_deal :]))
    with pytest.raises(DamagedResultsError, match="has a checksum but no rows"):
        run_tournament(_config(out, deals=3, plots=False))
    # the checksum file gone
    csv_path.write_text(text)
    sums.unlink()
    with pytest.raises(DamagedResultsError, match=r"results.sha256 is missing"):
        run_tournament(_config(out, deals=3, plots=False))
    # a deal's checksum removed from the middle: rows nobody vouches for
    sums.write_text("".join(sums_text.splitlines(keepends=True)[i] for i in (0, 2)))
    with pytest.raises(DamagedResultsError, match="has no checksum"):
        run_tournament(_config(out, deals=3, plots=False))


def test_a_removed_results_file_with_its_checksums_left_is_refused(tmp_path: Path) -> None:
    """Deleting results.csv while results.sha256 still vouches for its deals is the same
    damage as deleting some of its rows: refused, not silently played again."""
    out = tmp_path / "run"
    run_tournament(_config(out, deals=2, plots=False))
    (out / "results.csv").unlink()
    with pytest.raises(DamagedResultsError, match=r"results.csv is missing but .*results.sha256 vouches"):
        run_tournament(_config(out, deals=2, plots=False))
    assert not (out / "results.csv").exists()


def test_a_deal_written_but_not_checksummed_is_replayed_identically(tmp_path: Path) -> None:
    """A kill between a deal's rows and its checksum: the deal is dropped and played again,
    and the files end byte-identical to an uninterrupted run's."""
    clean = tmp_path / "clean"
    run_tournament(_config(clean, deals=3, plots=False))
    out = tmp_path / "run"
    run_tournament(_config(out, deals=3, plots=False))
    sums = out / "results.sha256"
    sums.write_text("".join(sums.read_text().splitlines(keepends=True)[:2]))
    resumed = run_tournament(_config(out, deals=3, plots=False))
    assert resumed.throughput["deals_resumed"] == 2 and resumed.throughput["deals_played"] == 1
    for name in ("results.csv", "results.sha256"):
        assert (out / name).read_bytes() == (clean / name).read_bytes()


def test_the_bench_cli_refuses_a_damaged_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--agents", "random", LOWEST, "--players", "2", "--deals", "2", "--max-pips", "6"]
    argv += ["--no-progress", "--no-plots", "--out", str(tmp_path)]
    assert bench(_bench_args(argv)) == 0
    capsys.readouterr()
    _edit_line(tmp_path / "results.csv", 3, _set("penalty", "999999"))
    assert bench(_bench_args(argv)) == 2
    err = capsys.readouterr().err
    assert re.search(r"results.csv:[23]: ", err) and "999999" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("seed", range(6))
def test_missing_deals_are_the_ids_not_done_in_order(seed: int) -> None:
    """:class:`MissingDeals` is ``[d for d in range(deals) if d not in done]``, whatever the
    finished deals (a prefix, gaps, more than ``deals``): length, order, indexing, slices."""
    from agents.tournament.harness import MissingDeals

    rng = np.random.default_rng(seed)
    deals = int(rng.integers(0, 30))
    done = {int(d) for d in rng.choice(40, size=int(rng.integers(0, 25)), replace=False)}
    expected = [d for d in range(deals) if d not in done]
    missing = MissingDeals(deals, done)
    assert list(missing) == expected and len(missing) == len(expected) and bool(missing) == bool(expected)
    assert [missing[i] for i in range(-len(expected), len(expected))] == expected + expected
    assert missing[1:-1:2] == expected[1:-1:2]
    with pytest.raises(IndexError):
        missing[len(expected)]


def test_a_huge_deal_count_starts_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--deals 10**12`` hands the player a lazy sequence of every id (it used to list them
    first: gigabytes and no progress bar); resumed, the finished deals are skipped."""
    import agents.tournament as tournament

    seen: list[tuple[int, list[int], int]] = []

    class StopError(Exception):
        pass

    def first_ids(plan: Any, deal_ids: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append((len(deal_ids), list(deal_ids[:3]), deal_ids[-1]))
        raise StopError

    out = tmp_path / "run"
    run_tournament(_config(out, deals=2, plots=False))
    monkeypatch.setattr(tournament, "play_deals", first_ids)
    with pytest.raises(StopError):
        run_tournament(_config(out, deals=10**12, plots=False))
    assert seen == [(10**12 - 2, [2, 3, 4], 10**12 - 1)]
