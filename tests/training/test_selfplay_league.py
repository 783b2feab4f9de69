"""Self-play against league opponents (``--opponents planner --opponent-share P``).

* opponent seats play the batched planner's moves and never enter the trained batch (both learners);
* the share of league games is honoured, every league game has 1..n-1 opponent seats, or
  exactly ``opponent_seats`` (one learner seat against the lineup at ``n - 1``);
* the seat book credits a round's rewards to the learner's seats only (hand-checked);
* a run with opponents resumes bit for bit from a checkpoint;
* bad settings get one-line errors naming the option.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch as th

pytest.importorskip("numba")

from tests.selfplay_support import checkpoint_round_trip
from training.app import main as mtrain
from training.checks import ConfigError
from training.selfplay.learner import SelfPlayConfig, SelfPlayPPO
from training.selfplay.seatbook import SeatBook

LEAGUE = {
    "num_players": 4,
    "max_pips": 6,
    "num_games": 8,
    "steps": 12,
    "hidden": 16,
    "pair_hidden": 8,
    "minibatch": 32,
    "epochs": 1,
    "opponents": "planner",
    "opponent_share": 0.5,
}


def _params(learner: SelfPlayPPO) -> dict[str, th.Tensor]:
    return {k: v.clone() for k, v in learner.net.state_dict().items()}


def test_opponent_seats_play_the_planner_and_are_never_recorded() -> None:
    learner = SelfPlayPPO(SelfPlayConfig(seed=1, **LEAGUE))
    assert learner.collector.planner is not None
    recorded: list[tuple[np.ndarray, np.ndarray]] = []
    league_moves: list[tuple[np.ndarray, np.ndarray]] = []
    record, act = learner.collector.book.record, learner.collector.planner.act

    def spy_record(games: np.ndarray, seats: np.ndarray, *rest: Any) -> np.ndarray:
        recorded.append((games.copy(), seats.copy()))
        assert not learner.collector.opponent[games, seats].any()  # a learner seat, when it acted
        return record(games, seats, *rest)

    def spy_act(states: np.ndarray, games: np.ndarray) -> np.ndarray:
        out = act(states, games)
        league_moves.append((games.copy(), out.copy()))
        assert learner.collector.opponent[games, learner.collector.seat[games]].all()
        return out

    learner.collector.book.record = spy_record  # type: ignore[method-assign]
    learner.collector.planner.act = spy_act  # type: ignore[method-assign]
    total = 0.0
    for _ in range(3):
        total += learner.iterate()["league_decisions"]
    league = learner.config.league_games
    assert league == 4
    assert sum(g.size for g, _ in league_moves) == total
    moved = np.concatenate([g for g, _ in league_moves])
    assert moved.size > 50 and moved.max() < league  # only league games have opponent seats
    seen = np.concatenate([g for g, _ in recorded])
    assert set(seen.tolist()) == set(range(8))  # learner seats of every game were trained on


def test_the_share_is_honoured_and_each_league_game_keeps_a_learner_seat() -> None:
    for share, games in ((0.25, 2), (1.0, 8), (0.5, 4)):
        learner = SelfPlayPPO(SelfPlayConfig(seed=2, **{**LEAGUE, "opponent_share": share}))
        assert learner.config.league_games == games
        for _ in range(3):
            learner.collect()
            opp = learner.collector.opponent
            assert not opp[games:].any()
            per_game = opp[:games].sum(1)
            assert per_game.min() >= 1 and per_game.max() <= 3  # 1..n-1 opponents
    # the draw itself: every size 1..n-1 and every seat, about uniformly
    sizes, seats = np.zeros(4, int), np.zeros(4, int)
    for _ in range(300):
        learner.collector._draw_opponents(np.arange(games))
        sizes += np.bincount(learner.collector.opponent[:games].sum(1), minlength=4)
        seats += learner.collector.opponent[:games].sum(0)
    assert sizes[0] == 0 and sizes[1:].min() > 0.25 * 300 * games
    assert seats.min() > 0.8 * seats.mean()


@pytest.mark.parametrize("fixed", [1, 3])
def test_a_fixed_number_of_opponent_seats_is_kept_every_round(fixed: int) -> None:
    settings = {**LEAGUE, "opponent_share": 1.0, "opponent_seats": fixed}
    learner = SelfPlayPPO(SelfPlayConfig(seed=3, **settings))
    seats = np.zeros(4, int)
    rounds_before = learner.rounds
    for _ in range(4):
        learner.collect()
        assert (learner.collector.opponent.sum(1) == fixed).all()
        seats += learner.collector.opponent.sum(0)
    assert learner.rounds > rounds_before  # rounds ended, so the seats were redrawn
    for _ in range(200):
        learner.collector._draw_opponents(np.arange(8))
        assert (learner.collector.opponent.sum(1) == fixed).all()
        seats += learner.collector.opponent.sum(0)
    assert seats.min() > 0.8 * seats.mean()  # which seats: about uniform


def test_credit_goes_to_the_learner_seats_only() -> None:
    """One game, 4 seats; seats 1 and 3 are opponents (never recorded). Seat 0 decides
    twice, seat 2 once; the round ends with rewards (3, -1, -4, 2)."""
    book = SeatBook(1, 4, obs_size=2, num_actions=3, capacity=8)
    book.begin()
    g = np.array([0])
    obs, mask = np.zeros((1, 2), np.float32), np.ones((1, 3), np.bool_)

    def rec(seat: int, value: float) -> int:
        idx = book.record(g, np.array([seat]), obs, mask, np.array([1]), np.zeros(1), np.array([value]))
        return int(idx[0])

    a = rec(0, 0.5)
    book.credit(np.zeros((1, 4)), np.array([False]))
    b = rec(2, -1.0)
    book.credit(np.zeros((1, 4)), np.array([False]))
    c = rec(0, 1.0)
    book.credit(np.array([[3.0, -1.0, -4.0, 2.0]]), np.array([True]))
    assert book.reward[[a, b, c]].tolist() == [0.0, -4.0, 3.0]  # seats 1 and 3 got nothing
    assert book.size == 3 and (book.last == -1).all()
    batch = book.finish(gamma=1.0, lam=1.0)
    # a: 0 + V(c) - V(a) + A(c) = 0 + 1.0 - 0.5 + (3 - 1.0); b: -4 - (-1); c: 3 - 1
    np.testing.assert_allclose(batch.advantage, [2.5, -3.0, 2.0])
    np.testing.assert_allclose(batch.returns, [3.0, -4.0, 3.0])


def test_close_ends_a_chain_handed_to_an_opponent() -> None:
    book = SeatBook(2, 3, obs_size=1, num_actions=2, capacity=8)
    book.begin()
    one = np.ones((1, 1), np.float32), np.ones((1, 2), np.bool_)
    i = int(book.record(np.array([1]), np.array([2]), *one, np.array([0]), np.zeros(1), np.zeros(1))[0])
    book.close(np.array([1, 0]), np.array([2, 1]))  # (0, 1) has no decision: nothing to close
    assert book.done[i] and (book.last == -1).all()
    book.credit(np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]), np.array([False, True]))
    assert book.reward[i] == 0.0  # the rest of the episode is not that decision's


def test_resume_with_opponents_is_exact(tmp_path) -> None:
    config = SelfPlayConfig(seed=7, **LEAGUE)
    straight = SelfPlayPPO(config)
    for _ in range(3):
        straight.iterate()
    _, resumed = checkpoint_round_trip(lambda: SelfPlayPPO(config), tmp_path / "c.pt")
    for _ in range(2):
        resumed.iterate()
    a, b = _params(straight), _params(resumed)
    assert all(th.equal(a[k], b[k]) for k in a)
    np.testing.assert_array_equal(straight.collector.env.states, resumed.collector.env.states)
    np.testing.assert_array_equal(straight.collector.opponent, resumed.collector.opponent)
    assert (straight.trained, straight.rounds) == (resumed.trained, resumed.rounds)


def test_league_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"^opponents: must be one of none, planner"):
        SelfPlayConfig(opponents="mc")
    with pytest.raises(ConfigError, match=r"^opponent_share: needs opponents"):
        SelfPlayConfig(opponent_share=0.5)
    with pytest.raises(ConfigError, match=r"^opponent_share: must give at least one"):
        SelfPlayConfig(opponents="planner", num_games=4)
    with pytest.raises(ConfigError, match=r"^opponent_share: must be a number in \[0.0, 1.0\]"):
        SelfPlayConfig(opponents="planner", opponent_share=1.5)
    assert SelfPlayConfig().league_games == 0
    with pytest.raises(ConfigError, match=r"^opponent_seats: must be in 0..3 \(0: drawn 1..n-1\), got 4"):
        SelfPlayConfig(opponents="planner", opponent_share=1.0, opponent_seats=4)
    with pytest.raises(ConfigError, match=r"^opponent_seats: needs opponents"):
        SelfPlayConfig(opponent_seats=1)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--opponents", "mc"], "mtrain selfplay: --opponents: opponents must be one of none, planner"),
        (["--opponent-share", "0.5"], "mtrain selfplay: --opponent-share: opponent_share needs opponents"),
        (
            ["--opponents", "planner", "--opponent-share", "2"],
            "mtrain selfplay: --opponent-share: opponent_share must be a number in [0.0, 1.0], got 2.0",
        ),
        (
            ["--opponents", "planner", "--opponent-share", "1", "--opponent-seats", "-1"],
            "mtrain selfplay: --opponent-seats: opponent_seats must be in 0..3 (0: drawn 1..n-1), got -1",
        ),
    ],
)
def test_cli_league_errors_are_one_line(tmp_path, capsys, argv: list[str], message: str) -> None:
    assert mtrain(["selfplay", "--out", str(tmp_path / "run"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert not (tmp_path / "run").exists()
