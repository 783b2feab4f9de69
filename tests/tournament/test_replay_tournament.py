"""Tournament replays: ``mtrain bench --save-replays DIR`` (agents/tournament/harness.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.tournament import AgentSpec, TournamentConfig, run_tournament
from agents.tournament.harness import make_plan, replay_name
from mtrain_env import block, mexican_train
from mtrain_env.replay import check_replay, read_replay
from training.app import main


def _config(out: Path, replays: Path | None, workers: int = 1, **kw: object) -> TournamentConfig:
    base: dict[str, object] = {
        "agents": ["planner", AgentSpec.parse("mc[rollouts=8]"), "random"],
        "game": mexican_train.GameConfig.make(num_players=3, max_pips=6, rounds=2),
        "deals": 2,
        "seed": 4,
        "workers": workers,
        "out_dir": out,
        "progress": False,
        "plots": False,
        "replays_dir": replays,
    }
    return TournamentConfig(**{**base, **kw})  # type: ignore[arg-type]


def test_one_replay_per_game_the_same_for_any_worker_count(tmp_path: Path) -> None:
    """Every game of every deal is saved, named by deal and seating; 1 or 2 workers write
    the same bytes; the CSV does not change with --save-replays; each file re-simulates and
    holds the very rounds the CSV was computed from."""
    one = run_tournament(_config(tmp_path / "w1", tmp_path / "r1"))
    run_tournament(_config(tmp_path / "w2", tmp_path / "r2", workers=2))
    run_tournament(_config(tmp_path / "w0", None))
    names = sorted(p.name for p in (tmp_path / "r1").iterdir())
    plan = one.plan
    expected = sorted(replay_name(plan, d, li, r) for d in range(2) for li, r in plan.games(d))
    assert names == expected and len(names) == 2 * 3
    assert names == sorted(p.name for p in (tmp_path / "r2").iterdir())
    for name in names:
        assert (tmp_path / "r1" / name).read_bytes() == (tmp_path / "r2" / name).read_bytes()
    csv = (tmp_path / "w1/results.csv").read_bytes()
    assert csv == (tmp_path / "w0/results.csv").read_bytes() == (tmp_path / "w2/results.csv").read_bytes()
    rows = {(r.deal, r.lineup, r.rotation, r.round, r.seat): r for r in one.rows}
    for d in range(2):
        for li, rot in plan.games(d):
            replay = read_replay(tmp_path / "r1" / replay_name(plan, d, li, rot))
            check_replay(replay)
            assert replay.finished and len(replay.rounds) == 2
            for k, result in enumerate(replay.rounds):
                for seat in range(3):
                    row = rows[(d, li, rot, k, seat)]
                    assert row.agent == replay.agents[seat]
                    assert row.penalty == result["pips"][seat]
    # the mc entrant annotates its own decisions only
    seen = False
    for name in names:
        replay = read_replay(tmp_path / "r1" / name)
        for step in replay.steps:
            if step.annotations is not None:
                seen = True
                assert replay.agents[step.seat].startswith("mc")
    assert seen


def test_deals_are_the_same_deal_in_every_rotation(tmp_path: Path) -> None:
    """Duplicate play: the rotations of a deal replay the same round-0 deal (header options)."""
    run_tournament(_config(tmp_path / "w", tmp_path / "r", deals=1))
    headers = [json.loads(p.read_text().splitlines()[0]) for p in sorted((tmp_path / "r").iterdir())]
    assert len({json.dumps(h["options"], sort_keys=True) for h in headers}) == 1
    assert len({tuple(h["agents"]) for h in headers}) == 3


def test_block_tournament_replays(tmp_path: Path) -> None:
    config = TournamentConfig(
        agents=["classic", "greedy"],
        game=block.GameConfig.make(),
        deals=1,
        out_dir=tmp_path / "w",
        progress=False,
        plots=False,
        replays_dir=tmp_path / "r",
    )
    run_tournament(config)
    files = sorted((tmp_path / "r").iterdir())
    assert [f.name for f in files] == sorted(
        replay_name(make_plan(config), 0, li, r) for li, r in make_plan(config).games(0)
    )
    for f in files:
        replay = read_replay(f)
        assert replay.game == "block"
        check_replay(replay)


def test_labels_become_safe_file_names() -> None:
    config = TournamentConfig(
        agents=[AgentSpec.parse("mc[rollouts=4,z=0.5]"), "random"],
        game=mexican_train.GameConfig.make(num_players=2),
    )
    plan = make_plan(config)
    name = replay_name(plan, 12, 0, 1)
    assert name == "deal00012_l0_r1_random-mc.rollouts=4.z=0.5.jsonl"


def test_bench_cli_save_replays_then_check_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "--agents", "greedy", "random", "--players", "2", "--max-pips", "6", "--deals", "2"]
    args += [
        "--out",
        str(tmp_path / "w"),
        "--no-progress",
        "--no-plots",
        "--save-replays",
        str(tmp_path / "r"),
    ]
    assert main(args) == 0
    capsys.readouterr()
    assert main(["replay", "check", str(tmp_path / "r")]) == 0
    assert "4 of 4 replay(s) re-simulate bit-exactly" in capsys.readouterr().out


@pytest.mark.slow
def test_every_replay_of_a_200_deal_tournament_re_simulates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's done-when line: the README's command, then `mtrain replay check` on every file."""
    out, replays = tmp_path / "run", tmp_path / "run" / "replays"
    args = ["bench", "--agents", "planner", "greedy", "random", "--deals", "200", "--seed", "0"]
    args += ["--out", str(out), "--no-plots", "--no-progress", "--save-replays", str(replays)]
    assert main(args) == 0
    files = sorted(replays.iterdir())
    assert len(files) == 200 * 4  # planner greedy random planner: 4 rotations per deal
    capsys.readouterr()
    assert main(["replay", "check", "--quiet", str(replays)]) == 0
    assert "800 of 800 replay(s) re-simulate bit-exactly" in capsys.readouterr().out
