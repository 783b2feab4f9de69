"""Scripted-deal tests for the end of a round and scoring: RULES.md R2, R23, R24, R25."""

from __future__ import annotations

import pytest

import mtrain_env
from mtrain_env.mexican_train.core.scoring import session_winners
from tests.scripted import act, deal_env, legal, line, play_out, rest_of_set, tile


def _pips(tiles: list[str]) -> int:
    return sum(sum(tile(t)) for t in tiles)


# --------------------------------------------------------------------------- R23

# Everything is dealt (empty boneyard, seat 1 takes the rest of the set). All six 6-x
# tiles go down so that every train ends in 6, where nobody has a tile left:
#
#   opening   train 0: [6|6] 6-0 0-1 1-6        train 1: [6|6] 6-2 2-3 3-6
#   turn 2    seat 0 6-4 @mex, seat 1 4-5 @mex, seat 0 5-6 @mex
#             Mexican: [6|6] 6-4 4-5 5-6      -> every open end is 6: blocked
SEAT0 = ["6-0", "0-1", "1-6", "6-4", "5-6", "0-0"]
SEAT1 = ["6-2", "2-3", "3-6", "4-5"]


def _to_the_last_six(bone: list[str]) -> tuple[mtrain_env.raw_env, list[str]]:
    rest = [t for t in rest_of_set(6, SEAT0, SEAT1) if t not in bone]
    env = deal_env([SEAT0, SEAT1 + rest], bone)
    act(env, "6-0 @0", "0-1 @0", "1-6 @0", "PASS")
    act(env, "6-2 @1", "2-3 @1", "3-6 @1")
    assert legal(env) == {"PASS"}
    act(env, "PASS", "6-4 @mex", "4-5 @mex")
    d = env.state_dict()
    assert d["phase"] == "NORMAL"  # seat 0 can still play: not blocked (R23 "only then")
    assert legal(env) == {"5-6 @0", "5-6 @mex"}
    act(env, "5-6 @mex")
    return env, rest


def test_r23_blocked_exactly_when_boneyard_empty_and_nobody_can_play() -> None:
    """R23: after 5-6 every end is 6, no hand holds a 6 and the boneyard is empty: the
    round ends at once (no pass round), scored R24: seat 0 keeps 0-0 (0), seat 1 the rest."""
    env, rest = _to_the_last_six([])
    d = env.state_dict()
    assert d["trains"] == [line("6-0 0-1 1-6"), line("6-2 2-3 3-6")]
    assert d["mexican_train"] == line("6-4 4-5 5-6")
    assert all(env.terminations.values())
    assert d["phase"] == "GAME_OVER" and d["blocked"] is True
    assert d["scores"] == [0, _pips(rest)]
    assert d["markers"] == [False, False]  # ended before anyone had to pass


def test_r23_not_blocked_while_the_boneyard_holds_a_tile() -> None:
    """R23: the same table with one tile (3-3) left to draw: seat 1 draws and passes;
    only then, the boneyard empty, is the round blocked."""
    env, rest = _to_the_last_six(["3-3"])
    d = env.state_dict()
    assert d["phase"] == "NORMAL" and not any(env.terminations.values())
    assert legal(env) == {"DRAW"}
    act(env, "DRAW")
    assert legal(env) == {"PASS"}
    act(env, "PASS")
    d = env.state_dict()
    assert d["phase"] == "GAME_OVER" and d["blocked"] is True
    assert d["markers"] == [False, True]
    assert d["scores"] == [0, _pips([*rest, "3-3"])]


@pytest.mark.parametrize("no_double_satisfaction", [False, True])
def test_r23_blocked_by_a_double_nobody_can_cover(no_double_satisfaction: bool) -> None:
    """R23 + R20: a binding unsatisfied double restricts every seat to it, so the round is
    blocked when no hand holds its number, even though 6-x tiles would fit the Mexican.
    Without satisfaction (variant ``no_double_satisfaction``) play goes on.

        train 0: [6|6] 6-5 5-0 0-2 2-5 5-1 1-3 3-5 5-5 | pending   (every 5 is down)
        train 1: [6|6] 6-4 4-5
        Mexican: [6|6]            seat 1 holds 6-0 6-1 6-2 6-3 ...; boneyard empty
    """
    chain = ["6-5", "5-0", "0-2", "2-5", "5-1", "1-3", "3-5", "5-5"]
    env = deal_env(
        [[*chain, "0-0"], ["6-4", "4-5"]], rest_to=1, no_double_satisfaction=no_double_satisfaction
    )
    act(env, *(f"{t} @0" for t in chain))
    assert legal(env) == {"PASS"}
    act(env, "PASS", "6-4 @1", "4-5 @1", "PASS")  # the last first turn
    d = env.state_dict()
    if no_double_satisfaction:
        assert d["phase"] == "NORMAL" and d["pending_doubles"] == []
        assert legal(env) == {"PASS"}  # seat 0's 0-0 fits nothing; seat 1 can still play
        return
    assert d["pending_doubles"] == [0]
    assert d["phase"] == "GAME_OVER" and d["blocked"] is True
    rest = rest_of_set(6, [*chain, "0-0"], ["6-4", "4-5"])
    assert d["scores"] == [0, _pips(rest)]


# --------------------------------------------------------------------------- R2, R24


def test_r2_r24_penalty_is_the_pips_left_and_zero_for_the_winner() -> None:
    """R2/R24: a tile is worth a + b (0-0 is 0, 5-5 is 10); the seat that went out scores 0.

    train 0: [6|6] 6-1 1-3 (out)      seat 1 keeps 0-0 5-5 2-4 = 0 + 10 + 6 = 16
    """
    env = deal_env([["6-1", "1-3"], ["6-2", "0-0", "5-5", "2-4"]], reward="penalty")
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS")
    assert not any(env.terminations.values())
    act(env, "1-3 @0")  # seat 0 goes out in a normal turn: the round ends at once
    d = env.state_dict()
    assert d["blocked"] is False
    assert d["round_scores"] == [[0, 16]] and d["scores"] == [0, 16]
    scale = 3 * 6  # hand_size * max_pips
    assert env.rewards == {"player_0": 0.0, "player_1": pytest.approx(-16 / scale)}


def test_r24_zero_sum_rewards_for_every_seat() -> None:
    """R24 + rewards: the default zero-sum reward is (mean - own penalty) / scale, for all."""
    env = deal_env([["6-1", "1-3"], ["6-2", "0-0", "5-5", "2-4"], ["6-3", "1-1"]])
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS", "6-3 @2", "PASS", "1-3 @0")
    assert env.state_dict()["scores"] == [0, 16, 2]
    mean = 18 / 3
    assert env.rewards == pytest.approx(
        {"player_0": mean / 18, "player_1": (mean - 16) / 18, "player_2": (mean - 2) / 18}
    )
    assert sum(env.rewards.values()) == pytest.approx(0)


# --------------------------------------------------------------------------- R25


def test_r25_session_is_n_plus_1_rounds_with_cumulative_scores() -> None:
    """R25: a double-6 session is 7 rounds, engines 6..0; scores add up round by round."""
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=5, rounds=7, reward="win")
    env.reset(seed=4)
    engines = []
    for k in range(7):
        d = env.state_dict()
        assert d["round"] == k and len(d["round_scores"]) == k
        engines.append(d["engine"][0])
        while env.state_dict()["round"] == k and not all(env.terminations.values()):
            assert not any(env.terminations.values())
            env.step(env.legal_actions()[0])
    assert engines == [6, 5, 4, 3, 2, 1, 0]
    d = env.state_dict()
    assert d["phase"] == "GAME_OVER" and len(d["round_scores"]) == 7
    assert d["scores"] == [sum(r[p] for r in d["round_scores"]) for p in range(2)]
    winners = session_winners(d["round_scores"], 2, positive=False)
    totals = d["scores"]
    assert all(totals[w] == min(totals) for w in winners)
    if len(winners) == 1:
        assert env.rewards[f"player_{winners[0]}"] == 1.0


def test_r25_more_rounds_than_engines_raises() -> None:
    """R25: a double-6 session has at most 7 rounds."""
    with pytest.raises(ValueError, match="R25"):
        mtrain_env.raw_env(num_players=2, max_pips=6, rounds=8)
    play_out_env = mtrain_env.raw_env(num_players=2, max_pips=6, rounds=7)
    play_out_env.reset(seed=0)
    play_out(play_out_env)
    assert len(play_out_env.state_dict()["round_scores"]) == 7


@pytest.mark.parametrize(
    ("table", "winners"),
    [
        ([[5, 10], [3, 0]], [0]),  # lowest total: 8 vs 10
        ([[0, 5], [10, 5]], [0]),  # totals 10 / 10; seat 0 has a round at 0, seat 1 none
        ([[0, 0], [4, 5], [6, 5]], [0]),  # 10 / 10, one zero each; lowest non-zero 4 < 5
        ([[0, 0], [5, 4], [5, 6]], [1]),  # the same, mirrored
        ([[0, 3], [3, 0], [4, 4]], [0, 1]),  # tied on every key
        ([[4, 3, 3], [5, 4, 4]], [1, 2]),  # three seats: 9, 7, 7 -> two tied winners
    ],
)
def test_r25_session_winners_and_tie_breaks(table: list[list[float]], winners: list[int]) -> None:
    """R25: lowest total; then most rounds at 0; then the lowest non-zero single round."""
    assert session_winners(table, len(table[0]), positive=False) == winners


def test_r25_session_winners_positive_scoring_mirrors() -> None:
    """R25 with ``positive_scoring``: highest total wins (ties: most rounds won, best round)."""
    assert session_winners([[10, 0], [0, 8]], 2, positive=True) == [0]
    assert session_winners([[10, 0], [0, 10]], 2, positive=True) == [0, 1]
    assert session_winners([[10, 0], [0, 5], [0, 5]], 2, positive=True) == [1]
