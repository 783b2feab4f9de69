"""The README's main job (``mtrain demo``): a rendered game, then a short tournament."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.demo import DEFAULT_AGENTS
from agents.mexican_train.ppo import REFERENCE_POLICY
from training.app import main


def test_demo_plays_a_rendered_game_then_a_tournament(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--agents", "planner", "random", "--deals", "2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Seats: player_0 = planner, player_1 = random" in text
    assert "   5  player_" in text  # one line per turn
    assert "to play:" not in text  # the table is rendered only with --verbose
    assert "Round over after" in text
    assert "penalty/round [95% CI]" in text  # the tournament table
    for name in ("results.csv", "summary.json", "penalty.png", "rating.png"):
        assert (out / name).is_file(), name


def test_demo_agents_may_be_specs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Seats given as specs (``mc[z=2,sims=8]``) play the game and the tournament, labelled
    as ``mtrain bench`` labels them (keys sorted); two seats of one spec are one agent."""
    out = tmp_path / "demo"
    agents = ["mc[z=2,sims=8]", "mc[z=2,sims=8]", "planner"]
    assert main(["demo", "--agents", *agents, "--deals", "1", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "player_0 = mc[z=2,sims=8]" in text
    assert "mc[sims=8,z=2] - planner" in text
    assert (out / "results.csv").is_file()


@pytest.mark.parametrize("seat", [0, 1])
def test_an_agent_that_raises_ends_the_demo_with_its_traceback_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seat: int
) -> None:
    """A plugin seat's bug in the shown game: the agent's traceback, one line naming it and
    its seat, exit status 1 (not a usage error: its options were fine)."""
    agents = ["planner", "planner"]
    agents[seat] = "tests.tournament.test_tournament:Crashes"
    assert main(["demo", "--agents", *agents, "--deals", "1", "--out", str(tmp_path / "d")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and 'raise ZeroDivisionError("a bug in the agent")' in err
    assert err.rstrip().endswith(f"at seat {seat} raised ZeroDivisionError: a bug in the agent")


def test_demo_verbose_renders_the_table_after_every_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--agents", "random", "random", "--deals", "0", "--verbose"]) == 0
    text = capsys.readouterr().out
    lines = [line for line in text.splitlines() if line[:4].strip().isdigit()]
    assert text.count("to play:") >= len(lines) - 1  # a table after every step but the last


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--agents", "random"], "R3"),
        (["--agents", "random", "planer"], "--agents"),
        (["--agents", "random", "random", "--rules", "nope"], "--rules"),
        (["--agents", "random", "random", "--deals", "-1"], "--deals"),
        (["--agents", "random", "mc[sims=x]"], "--agents: mc: sims must be an int or None, got 'x'"),
        (["--agents", "random", "ppo[path=nowhere.npz]"], "no policy file at nowhere.npz"),
    ],
)
def test_demo_refuses_bad_input_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    out = tmp_path / "never"
    assert main(["demo", *argv, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert flag in captured.err and len(captured.err.strip().splitlines()) == 1
    assert captured.out == "" and not out.exists()


def test_demo_default_lineup_has_the_reference_policy() -> None:
    assert DEFAULT_AGENTS[0] == "ppo"
    assert REFERENCE_POLICY.is_file(), "the reference policy the demo and notebooks use is missing"
