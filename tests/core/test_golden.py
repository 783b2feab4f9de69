"""Golden replays (tests/golden/, tests/golden_games.py): any change of the rules shows as a diff.

Two checks per game: the stored actions still re-simulate to the stored round results and
final scores (a rules change fails here, whatever the agents do), and a fresh play by the
same seeded agents writes the same bytes (a rules or agent change fails here). Regenerate
on purpose with ``PYTHONPATH=. python -m tests.golden_games`` (``make golden``).
"""

from __future__ import annotations

import difflib

import pytest

from mtrain_env.replay import ReplayMismatchError, check_replay, read_replay
from tests.backends import NEEDS_NUMBA
from tests.golden_games import GOLDEN, GoldenGame, text

REGENERATE = "regenerate on purpose with `PYTHONPATH=. python -m tests.golden_games` and review the diff"


def test_the_golden_set_covers_both_games_seat_counts_and_a_session() -> None:
    games = [read_replay(g.path) for g in GOLDEN]
    assert {r.game for r in games} == {"mexican_train", "block"}
    assert {r.num_players for r in games} >= {2, 4, 6}
    assert any(r.config.get("rounds", 1) > 1 and len(r.rounds) > 1 for r in games)
    assert any(s.annotations for r in games for s in r.steps)
    assert all(r.finished for r in games)


@pytest.mark.parametrize("golden", GOLDEN, ids=lambda g: g.name)
def test_stored_golden_replays_re_simulate(golden: GoldenGame) -> None:
    replay = read_replay(golden.path)
    try:
        check_replay(replay)
    except ReplayMismatchError as err:
        pytest.fail(f"{golden.path.name}: the rules play this game differently now: {err}; {REGENERATE}")


@pytest.mark.parametrize("golden", GOLDEN, ids=lambda g: g.name)
def test_golden_replays_regenerate_identically(golden: GoldenGame) -> None:
    stored = golden.path.read_text(encoding="utf-8")
    fresh = text(golden)
    if fresh != stored:
        diff = difflib.unified_diff(
            stored.splitlines(),
            fresh.splitlines(),
            f"stored/{golden.path.name}",
            "regenerated",
            lineterm="",
            n=1,
        )
        pytest.fail(f"{golden.path.name} changed; {REGENERATE}:\n" + "\n".join(list(diff)[:40]))


@NEEDS_NUMBA
def test_golden_replays_re_simulate_on_the_compiled_engine() -> None:
    """The compiled rules engine plays the stored games exactly as the python one."""
    for golden in GOLDEN:
        check_replay(read_replay(golden.path), backend="compiled")
