"""Tests written from a mutation-testing pass over the env's encoding, codec and rewards.

Each test pins documented behaviour (the module docstrings, the guide's env page,
RULES.md) that the fast env tests did not pin: a mutant of
``observation.py``, ``codec.py``, ``rewards.py`` or ``env.py`` survived them.
"""

from __future__ import annotations

import pickle
import re
import warnings
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from mtrain_env import env, raw_env
from mtrain_env.mexican_train.codec import ActionCodec
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.rewards import round_rewards
from tests.scripted import act, deal_env, rest_of_set

# ------------------------------------------------------------------------- rewards


def _config(num_players: int, *, positive: bool = False) -> GameConfig:
    """Double-6, 3 tiles a hand: scale = hand_size * max_pips = 18."""
    return GameConfig.make(num_players=num_players, max_pips=6, hand_size=3, positive_scoring=positive)


SCALE = 3 * 6


def test_r24_zero_sum_is_mean_minus_own_penalty_over_scale() -> None:
    """zero_sum: (mean(penalty) - penalty_i) / scale, from the LAST row only; sums to 0."""
    rows = [[50.0, 0.0, 7.0], [0.0, 12.0, 3.0]]  # the first row is an earlier round
    got = round_rewards("zero_sum", _config(3), rows, episode_over=False)
    mean = 15 / 3
    assert got == pytest.approx([(mean - 0) / SCALE, (mean - 12) / SCALE, (mean - 3) / SCALE])
    assert sum(got) == pytest.approx(0.0)


def test_r24_zero_sum_under_positive_scoring_rewards_the_score() -> None:
    """positive_scoring: the round score replaces minus the penalty (higher is better)."""
    got = round_rewards("zero_sum", _config(2, positive=True), [[10.0, 0.0]], episode_over=True)
    assert got == pytest.approx([5 / SCALE, -5 / SCALE])


def test_r24_penalty_mode_is_minus_own_penalty_over_scale() -> None:
    rows = [[99.0, 99.0, 99.0], [0.0, 9.0, 4.0]]
    got = round_rewards("penalty", _config(3), rows, episode_over=False)
    assert got == pytest.approx([0.0, -9 / SCALE, -4 / SCALE])
    pos = round_rewards("penalty", _config(2, positive=True), [[0.0, 6.0]], episode_over=False)
    assert pos == pytest.approx([0.0, 6 / SCALE])


def test_r25_win_mode_pays_only_when_the_episode_ends() -> None:
    rows = [[0.0, 9.0, 4.0]]
    assert round_rewards("win", _config(3), rows, episode_over=False) == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        # one winner of four: +1 for it, the three losers share -1
        ([[4.0, 0.0, 9.0, 9.0]], [-1 / 3, 1.0, -1 / 3, -1 / 3]),
        # two tied winners share +1, two losers share -1
        ([[0.0, 5.0, 0.0, 8.0]], [0.5, -0.5, 0.5, -0.5]),
        # three winners, one loser takes the whole -1
        ([[1.0, 1.0, 1.0, 9.0]], [1 / 3, 1 / 3, 1 / 3, -1.0]),
        # all tied: 0 each
        ([[2.0, 2.0, 2.0, 2.0]], [0.0, 0.0, 0.0, 0.0]),
        # a session: lowest total wins (R25), totals 5 / 4 / 9 / 9
        ([[0.0, 4.0, 9.0, 0.0], [5.0, 0.0, 0.0, 9.0]], [-1 / 3, 1.0, -1 / 3, -1 / 3]),
    ],
)
def test_r25_win_mode_winners_share_plus_one_losers_share_minus_one(
    rows: list[list[float]], expected: list[float]
) -> None:
    got = round_rewards("win", _config(4), rows, episode_over=True)
    assert got == pytest.approx(expected)
    assert sum(got) == pytest.approx(0.0)


def test_r25_win_mode_under_positive_scoring_the_highest_total_wins() -> None:
    got = round_rewards("win", _config(3, positive=True), [[0.0, 13.0, 0.0]], episode_over=True)
    assert got == pytest.approx([-0.5, 1.0, -0.5])


def test_an_unknown_reward_mode_is_refused_naming_the_modes() -> None:
    with pytest.raises(ValueError, match=r"reward must be one of .*zero_sum.*got 'wins'"):
        round_rewards("wins", _config(2), [[0.0, 1.0]], episode_over=True)


# --------------------------------------------------------------------------- codec


def _codec(num_players: int = 3) -> ActionCodec:
    return ActionCodec(GameConfig.make(num_players=num_players, max_pips=6, hand_size=3))


def test_describe_names_the_tile_and_the_relative_train() -> None:
    """``describe``: "(a, b) on own train" / "on train +k" / "on Mexican train", DRAW, PASS."""
    codec = _codec(3)
    # tile_id(a, b) = a * (2N + 3 - a) / 2 + (b - a) with N = 6; action = tile_id * (n + 1) + train
    tid = 3 * (15 - 3) // 2 + (5 - 3)
    assert codec.describe(tid * 4 + 0) == "(3, 5) on own train"
    assert codec.describe(tid * 4 + 1) == "(3, 5) on train +1"
    assert codec.describe(tid * 4 + 2) == "(3, 5) on train +2"
    assert codec.describe(tid * 4 + 3) == "(3, 5) on Mexican train"
    assert codec.describe(28 * 4) == "DRAW"
    assert codec.describe(28 * 4 + 1) == "PASS"


@pytest.mark.parametrize("tile", [(1.5, 2), ("1", 2), (1, 2, 3), None])
def test_encode_action_names_itself_when_the_tile_is_malformed(tile: Any) -> None:
    with pytest.raises(TypeError, match="encode_action"):
        _codec().encode_action(tile, 0)


@pytest.mark.parametrize("train", [1.0, "1", None, True])
def test_encode_action_refuses_a_train_that_is_not_an_int_showing_it(train: Any) -> None:
    with pytest.raises(TypeError, match=rf"train must be an int, got {re.escape(repr(train))}"):
        _codec().encode_action((1, 2), train)


@pytest.mark.parametrize("train", [-1, 4])
def test_encode_action_refuses_a_train_out_of_range_showing_the_range(train: int) -> None:
    """3 seats: trains 0 (own), 1..2 (the next seats) and 3 (the Mexican train)."""
    with pytest.raises(ValueError, match=rf"0 \(own\) \.\. 2 \(other seats\) or 3 \(Mexican\), got {train}"):
        _codec().encode_action((1, 2), train)


# ----------------------------------------------------------------------------- env

BACKEND_IDS = ["python", "compiled"]


@pytest.mark.parametrize("backend", BACKEND_IDS)
def test_r24_every_seat_is_told_the_round_result(backend: str) -> None:
    """At a round's end every agent's info holds the public result (R23, R24, R25).

    Seat 1 opens (first_player=1), seat 0 goes out in round 0 of a 2-round session under
    positive_scoring: seat 1 shows 0-0 5-5 (10 pips, R24), seat 0 scores them (``000``).
    """
    env = deal_env(
        [["6-1", "1-3"], ["6-2", "0-0", "5-5", "2-4"]],
        first_player=1,
        rounds=2,
        positive_scoring=True,
        backend=backend,
    )
    act(env, "6-2 @1", "PASS", "6-1 @0", "PASS", "2-4 @1", "1-3 @0")
    expected = {
        "round": 0,
        "first_player": 1,
        "blocked": False,
        "went_out": [True, False],
        "hands": [[], [[0, 0], [5, 5]]],
        "pips": [0, 10],
        "scores": [10, 0],
    }
    for agent in env.possible_agents:
        assert env.infos[agent]["round_result"] == expected
    assert not any(env.terminations.values())  # the session goes on to round 1
    assert env.rewards == pytest.approx({"player_0": 5 / SCALE, "player_1": -5 / SCALE})


# ---------------------------------------------------------------------- observation


@pytest.mark.parametrize("kwargs", [{}, {"num_players": 3, "max_pips": 9, "rounds": 2}])
def test_observation_bounds_are_0_1_except_counts_and_scores(kwargs: dict[str, Any]) -> None:
    """Values in [0, 1] except counts and session scores, which may exceed 1 (env docstring).

    ``boneyard_count`` (tiles in the boneyard / tiles in the set) never exceeds 1, so its
    bound is 1; a train's length, the pending doubles, an opponent's hand (after draws) and
    the session scores can.
    """
    env = raw_env(**kwargs)
    space = env.observation_space("player_0")
    assert isinstance(space, spaces.Dict)
    box = space["observation"]
    assert isinstance(box, spaces.Box)
    layout = env.observation_layout
    assert box.dtype == np.float32
    assert np.all(box.low == 0.0)
    may_exceed = {"train_length", "pending_count", "opponent_hand_count", "scores"}
    for name, view in layout.items():
        high = box.high[view.slice]
        if name in may_exceed:
            assert np.all(high > 1.0), name
        else:
            assert np.all(high == 1.0), name


@pytest.mark.parametrize("backend", BACKEND_IDS)
def test_r6_the_first_player_option_picks_who_opens(backend: str) -> None:
    """R6: round 0 starts with seat 0; ``options["first_player"]`` names another seat."""
    env = raw_env(backend=backend)
    env.reset(seed=0)
    assert env.agent_selection == "player_0"
    for seat in (1, 2, 3):
        env.reset(seed=0, options={"first_player": seat})
        assert env.agent_selection == f"player_{seat}"
        assert env.state_dict()["first_player"] == seat


@pytest.mark.parametrize("seat", [4, -1])
def test_r6_a_first_player_that_is_not_a_seat_is_refused_naming_r6(seat: int) -> None:
    env = raw_env()
    with pytest.raises(ValueError, match=rf"R6: options\['first_player'\] must be a seat 0\.\.3, got {seat}"):
        env.reset(seed=0, options={"first_player": seat})


def test_an_unknown_backend_is_refused_naming_the_backends() -> None:
    with pytest.raises(ValueError, match=r"backend must be one of \('python', 'compiled'\), got 'numba'"):
        raw_env(backend="numba")


def test_raw_env_defaults_are_the_documented_ones() -> None:
    """4 seats, double-12 (T = 91), pagat, one round, zero_sum, python backend, no render."""
    env = raw_env()
    c = env.config
    assert (c.num_players, c.max_pips, c.rules, c.rounds) == (4, 12, "pagat", 1)
    assert (env.reward_mode, env.render_mode, env.backend) == ("zero_sum", None, "python")
    assert type(env) is raw_env
    assert (env.DRAW, env.PASS) == (91 * 5, 91 * 5 + 1)
    action_space = env.action_space("player_0")
    assert isinstance(action_space, spaces.Discrete) and action_space.n == 91 * 5 + 2


@pytest.mark.parametrize("backend", BACKEND_IDS)
def test_a_pickled_env_keeps_every_constructor_argument(backend: str) -> None:
    """EzPickle: the copy is rebuilt from the same keywords (flags included)."""
    env = raw_env(
        num_players=3,
        max_pips=9,
        hand_size=5,
        rules="wikipedia",
        rounds=2,
        reward="penalty",
        render_mode="ansi",
        backend=backend,
        opening_draw=True,
    )
    copy = pickle.loads(pickle.dumps(env))
    assert type(copy) is type(env)
    assert copy.config == env.config
    c = copy.config
    assert (c.num_players, c.max_pips, c.hand_size, c.rules, c.rounds, c.opening_draw) == (
        3,
        9,
        5,
        "wikipedia",
        2,
        True,
    )
    assert (copy.reward_mode, copy.render_mode, copy.backend) == ("penalty", "ansi", backend)


@pytest.mark.parametrize("backend", BACKEND_IDS)
def test_r24_win_reward_through_the_env_at_the_end_of_a_one_round_game(backend: str) -> None:
    """reward="win", rounds=1: the seat that went out wins (+1), the other loses (-1)."""
    env = deal_env([["6-1", "1-3"], ["6-2", "0-0", "5-5", "2-4"]], reward="win", backend=backend)
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS")
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}
    act(env, "1-3 @0")
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}


@pytest.mark.parametrize("backend", BACKEND_IDS)
def test_r5_seeking_the_engine_is_flagged_seek_engine_only(backend: str) -> None:
    """engine_holder_opens, engine in the boneyard (R5): every seat sees the phase flags
    seek_engine/opening/normal/owes_tile/has_drawn = 1/0/0/0/0, an empty table and every
    train at the station (open end = the engine's pips)."""
    env = deal_env([["1-2"], ["3-4"]], engine_holder_opens=True, backend=backend)
    assert env.state_dict()["phase"] == "SEEK_ENGINE"
    layout = env.layout
    for _ in range(2):  # before and after the first seat's draw
        for agent in env.possible_agents:
            v = layout.split(env.observe(agent)["observation"])
            assert v["phase"].tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
            assert not v["table"].any() and not v["train_started"].any()
            assert v["train_end"].argmax(axis=1).tolist() == [6, 6, 6]
            assert v["engine"].argmax() == 6
        act(env, "DRAW")


@pytest.mark.parametrize("backend", BACKEND_IDS)
def test_the_final_observation_has_no_phase_flag_and_the_true_trains(backend: str) -> None:
    """Seat 0 goes out with its first tile (R9 chain ended by PASS): in the observations
    after the game's end no phase flag is set (none of seek_engine/opening/normal applies)
    and ``train_started`` still tells which trains have left the station."""
    env = deal_env([["6-1"], ["0-0", "1-2"]], backend=backend)
    act(env, "6-1 @0", "PASS")
    assert all(env.terminations.values())
    layout = env.layout
    started = {"player_0": [1.0, 0.0, 0.0], "player_1": [0.0, 1.0, 0.0]}  # own, next, Mexican
    for agent in env.possible_agents:
        v = layout.split(env.observe(agent)["observation"])
        assert v["phase"].tolist() == [0.0] * 5
        assert v["train_started"].tolist() == started[agent]


@pytest.mark.parametrize("backend", BACKEND_IDS)
def test_a_round_result_restored_from_a_snapshot_is_seen_by_one_step_only(backend: str) -> None:
    """A round's result is in the infos of the step that ended it only, also when the env
    was restored at that moment and the round paid nothing (``win`` mid-session: 0 each)."""
    env = deal_env([["6-1", "1-3"], ["6-2", "0-0", "5-5", "2-4"]], rounds=2, reward="win", backend=backend)
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS", "1-3 @0")
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}
    restored = raw_env(num_players=2, max_pips=6, hand_size=3, rounds=2, reward="win", backend=backend)
    restored.load_state_dict(env.state_dict())
    assert all("round_result" in info for info in restored.infos.values())
    restored.step(restored.legal_actions()[0])
    assert not any("round_result" in info for info in restored.infos.values())


def test_an_illegal_action_through_env_ends_the_game_offender_minus_one() -> None:
    """README: an action in the space but illegal ends the game; offender -1, others 0."""
    wrapped = env(num_players=3, max_pips=6, hand_size=3)
    wrapped.reset(seed=0)
    base = wrapped.unwrapped
    assert isinstance(base, raw_env)
    legal = set(base.legal_actions())
    illegal = next(a for a in range(base.PASS + 1) if a not in legal)
    offender = wrapped.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped.step(illegal)
    assert all(wrapped.terminations.values())
    assert wrapped.rewards == {a: (-1.0 if a == offender else 0.0) for a in wrapped.possible_agents}


@pytest.mark.parametrize("backend", BACKEND_IDS)
def test_the_first_action_past_the_space_is_a_value_error(backend: str) -> None:
    """README: an integer out of range (``n`` of ``Discrete(n)``) is a ``ValueError``, before
    any change, on both backends."""
    base = raw_env(num_players=2, max_pips=6, hand_size=3, backend=backend)
    base.reset(seed=0)
    before = base.state_dict()
    n = base.PASS + 1
    with pytest.raises(ValueError, match=rf"Discrete\({n}\)"):
        base.step(n)
    assert base.state_dict() == before


@pytest.mark.parametrize("backend", BACKEND_IDS)
def test_r23_a_blocked_round_is_reported_blocked(backend: str) -> None:
    """R23: everything dealt (empty boneyard) and every open end is 6 where nobody holds a
    6: the round ends blocked, nobody went out, and the result says so.

    train 0: [6|6] 6-0 0-1 1-6, train 1: [6|6] 6-2 2-3 3-6, Mexican: [6|6] 6-4 4-5 5-6.
    """
    seat0 = ["6-0", "0-1", "1-6", "6-4", "5-6", "0-0"]
    seat1 = ["6-2", "2-3", "3-6", "4-5"]
    env = deal_env([seat0, seat1 + rest_of_set(6, seat0, seat1)], backend=backend)
    act(env, "6-0 @0", "0-1 @0", "1-6 @0", "PASS", "6-2 @1", "2-3 @1", "3-6 @1")
    act(env, "PASS", "6-4 @mex", "4-5 @mex", "5-6 @mex")
    result = env.infos["player_0"]["round_result"]
    assert result["blocked"] is True
    assert result["went_out"] == [False, False]
