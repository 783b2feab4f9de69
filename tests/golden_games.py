"""The golden replays of tests/golden/: a few fixed games, like OpenSpiel's playthroughs.

Each game is played by seeded agents through the play loop and saved as a replay file;
``tests/core/test_golden.py`` plays them again and diffs the bytes, and re-simulates the
stored files, so any change of the rules (or of these agents) shows as a diff. After a
deliberate change, regenerate them and review the diff::

    PYTHONPATH=. python -m tests.golden_games        # (or: make golden)
    git diff --stat tests/golden/
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.play import play_game
from agents.registry import make_agent
from mtrain_env.replay import Replay, ReplayRecorder, dumps_replay, make_env, write_replay

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"


@dataclass(frozen=True)
class GoldenGame:
    """One fixed game: the game, its config and reward mode, the seed, the agents by seat."""

    name: str
    game: str
    config: dict[str, Any]
    seed: int
    agents: tuple[str, ...]
    agent_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    reward: str | None = None

    @property
    def path(self) -> Path:
        return GOLDEN_DIR / f"{self.name}.jsonl"


GOLDEN: tuple[GoldenGame, ...] = (
    GoldenGame(
        "mt_2p_double6_pagat", "mexican_train", {"num_players": 2, "max_pips": 6}, 1, ("planner", "random")
    ),
    GoldenGame(
        "mt_4p_double12_wikipedia_mc",
        "mexican_train",
        {"num_players": 4, "rules": "wikipedia"},
        2,
        ("planner", "mc", "greedy", "random"),
        agent_params={"mc": {"rollouts": 8, "engine": "compiled"}},
        reward="penalty",
    ),
    GoldenGame(
        "mt_6p_double12_cardinal_variants",
        "mexican_train",
        {"num_players": 6, "rules": "cardinal", "one_tile_opening": True, "blank_penalty": True},
        3,
        ("greedy", "planner", "random", "greedy", "planner", "random"),
    ),
    GoldenGame(
        "mt_3p_double6_session_positive",
        "mexican_train",
        {"num_players": 3, "max_pips": 6, "rounds": 7, "positive_scoring": True},
        4,
        ("planner", "greedy", "random"),
        reward="win",
    ),
    GoldenGame("block_4p_001", "block", {}, 5, ("classic", "greedy", "classic", "greedy")),
    GoldenGame(
        "block_2p_openspiel", "block", {"num_players": 2, "rules": "openspiel"}, 6, ("classic", "random")
    ),
)


def play(golden: GoldenGame) -> Replay:
    """Play ``golden`` (seat ``i`` seeded ``seed * 100 + i``) and return its replay."""
    env = make_env(golden.game, {}, golden.reward, **golden.config)
    agents = [
        make_agent(name, seed=golden.seed * 100 + i, game=golden.game, **golden.agent_params.get(name, {}))
        for i, name in enumerate(golden.agents)
    ]
    env.reset(seed=golden.seed)
    recorder = ReplayRecorder(env, golden.seed, golden.agents)
    play_game(env, agents, seed=golden.seed, observer=recorder)
    return recorder.replay


def text(golden: GoldenGame) -> str:
    """The replay file's text of a fresh play of ``golden``."""
    return dumps_replay(play(golden))


def main() -> int:
    """Regenerate every golden replay; say which changed."""
    for golden in GOLDEN:
        replay = play(golden)
        old = golden.path.read_text(encoding="utf-8") if golden.path.exists() else None
        write_replay(golden.path, replay)
        state = "unchanged" if old == dumps_replay(replay) else ("new" if old is None else "CHANGED")
        print(f"{golden.path.relative_to(GOLDEN_DIR.parent.parent)}: {len(replay.steps)} decisions, {state}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
