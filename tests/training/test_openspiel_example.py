"""training/openspiel/example.py: OpenSpiel's MCTS on determinizations and NFSP on 2-player double-6.

The fast test plays a few games of the determinized MCTS; the slow one runs the documented
command and checks its results: MCTS beats uniform random (95 % CI above 0); NFSP at this
budget is not significantly better than random (README), so its check is only that it is
not worse (CI reaching above 0) and its figures are well formed.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("pyspiel")

from training.openspiel.example import DeterminizedMCTS, load_game, main, play_vs_random


def test_determinized_mcts_plays_legal_games() -> None:
    game = load_game()
    result = play_vs_random(game, lambda g: DeterminizedMCTS(game, 2, 8, seed=g).step, 4, 0, "mcts")
    assert result.games == 4
    assert -1.0 <= result.low <= result.mean <= result.high <= 1.0 or math.isinf(result.high)


def test_bad_budgets_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        main(["--games", "0"])
    assert err.value.code == 2
    assert "--games must be >= 1" in capsys.readouterr().err


@pytest.mark.slow
def test_the_documented_run_beats_random() -> None:
    mcts_result, nfsp_result = main([])
    assert mcts_result.games == nfsp_result.games == 100
    assert mcts_result.low > 0, mcts_result
    assert -1.0 < nfsp_result.low <= nfsp_result.mean <= nfsp_result.high < 1.0, nfsp_result
    assert nfsp_result.high > 0, nfsp_result
