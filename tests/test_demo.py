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
    assert (
        main(["demo", "--agents", "planner", "random", "--deals", "2", "--every", "5", "--out", str(out)])
        == 0
    )
    text = capsys.readouterr().out
    assert "Seats: player_0 = planner, player_1 = random" in text
    assert "-- step 5: player_" in text  # the table is rendered as the game goes
    assert "Round over after" in text
    assert "penalty/round [95% CI]" in text  # the tournament table
    for name in ("results.csv", "summary.json", "penalty.png", "rating.png"):
        assert (out / name).is_file(), name


def test_demo_refuses_a_bad_seat_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--agents", "random"]) == 2
    assert "R3" in capsys.readouterr().err


def test_demo_default_lineup_has_the_reference_policy() -> None:
    assert DEFAULT_AGENTS[0] == "ppo"
    assert REFERENCE_POLICY.is_file(), "the reference policy the demo and notebooks use is missing"
