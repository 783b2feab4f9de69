"""The batched API (``compiled/batch.py``) against the AEC ``raw_env``, and its properties.

* Trajectories: game ``i`` of a batch reset with seed ``s`` and ``raw_env`` reset with
  ``derived_seed(s, i)`` (later episodes: ``reset()`` with no seed) give the same seat on
  turn, observation and mask at every decision, the same rewards for every seat and the
  same terminations after every step, and the terminal observation of the seat that moved,
  over random legal play across presets, flags, set sizes, seats, sessions and every
  reward mode.
* Properties (hypothesis): tiles are conserved and every state is one the pure snapshot
  loader accepts; the seat to act always has a legal action; ``zero_sum`` rewards sum to
  0; rewards only at a round's end; autoreset starts a fresh episode in the same step;
  every episode terminates within the bound the rules put on its length.
* Bad input: wrong dtypes, shapes, out-of-range and illegal actions raise naming the game
  and the rule, and no game of the batch changes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mtrain_env
from mtrain_env.mexican_train.compiled import engine
from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain, derived_seed
from mtrain_env.mexican_train.core.serialize import state_from_dict, state_to_dict
from mtrain_env.mexican_train.observation import ObservationEncoder

CONFIGS = [
    pytest.param({"num_players": 2, "max_pips": 6}, "zero_sum", id="2p-d6"),
    pytest.param({"num_players": 4}, "zero_sum", id="4p-d12"),
    pytest.param({"num_players": 3, "max_pips": 6, "rounds": 3}, "penalty", id="3p-d6-session3-penalty"),
    pytest.param({"num_players": 2, "max_pips": 6, "rounds": 7}, "win", id="2p-d6-full-session-win"),
    pytest.param({"num_players": 4, "max_pips": 9, "rounds": 2}, "win", id="4p-d9-session2-win"),
    pytest.param({"rules": "cardinal", "num_players": 5, "max_pips": 9}, "zero_sum", id="cardinal-5p"),
    pytest.param({"rules": "wikipedia", "num_players": 3, "max_pips": 6}, "penalty", id="wikipedia-3p"),
    pytest.param(
        {"num_players": 3, "max_pips": 6, "positive_scoring": True, "rounds": 2}, "win", id="positive-win"
    ),
    pytest.param(
        {"num_players": 3, "max_pips": 6, "positive_scoring": True, "blank_penalty": True},
        "zero_sum",
        id="pos",
    ),
    pytest.param(
        {"num_players": 4, "max_pips": 9, "satisfy_in_reverse_order": True, "one_double_per_turn": True},
        "zero_sum",
        id="reverse-one-double",
    ),
    pytest.param({"num_players": 8, "max_pips": 9, "opening_draw": True}, "penalty", id="8p-opening-draw"),
    pytest.param({"num_players": 6, "max_pips": 15, "hand_size": 3}, "zero_sum", id="6p-d15-h3"),
]


def play_against_envs(kwargs: dict[str, Any], reward: str, games: int, steps: int, seed: int) -> int:
    """Step a batch and ``games`` raw envs in lockstep with the same random legal actions,
    asserting equality at every step; returns the episodes finished."""
    batch = BatchedMexicanTrain(games, reward=reward, **kwargs)
    obs, mask, seat, _ = batch.reset(seed=seed)
    envs = [mtrain_env.raw_env(reward=reward, **kwargs) for _ in range(games)]
    for i, env in enumerate(envs):
        env.reset(seed=derived_seed(seed, i))
    rng = np.random.default_rng(seed)
    finished = 0
    for _ in range(steps):
        actions = np.empty(games, np.int64)
        for i, env in enumerate(envs):
            agent = env.agent_selection
            assert agent == f"player_{seat[i]}"
            seen = env.observe(agent)
            assert seen["observation"].tobytes() == obs[i].tobytes()
            assert np.array_equal(seen["action_mask"], mask[i])
            actions[i] = rng.choice(np.flatnonzero(mask[i]))
        acting = seat.copy()
        obs, mask, seat, rewards, terminated, info = batch.step(actions)
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            expected = np.array([env.rewards[a] for a in env.possible_agents], np.float32)
            assert np.array_equal(rewards[i], expected), (rewards[i], expected)
            assert bool(terminated[i]) == all(env.terminations.values())
            assert bool(info["round_over"][i]) == ("round_result" in env.infos[env.agent_selection])
            if terminated[i]:
                final = env.observe(f"player_{acting[i]}")["observation"]
                assert info["final_obs"][i].tobytes() == final.tobytes()
                env.reset()  # the next episode continues from the game's own generator
                finished += 1
    return finished


@pytest.mark.parametrize(("kwargs", "reward"), CONFIGS)
def test_trajectories_equal_the_aec_env(kwargs: dict[str, Any], reward: str) -> None:
    finished = play_against_envs(kwargs, reward, games=3, steps=250, seed=len(str(kwargs)))
    if kwargs.get("max_pips", 12) <= 9 and kwargs.get("rounds", 1) <= 3:
        assert finished > 0  # autoreset was exercised


def test_a_batch_of_one_game_equals_the_aec_env_with_its_final_observations() -> None:
    """B = 1, the smallest batch: every step, reward and terminal observation as the env's."""
    assert play_against_envs({"num_players": 2, "max_pips": 6}, "zero_sum", games=1, steps=150, seed=4) > 0


def test_a_game_does_not_depend_on_the_batch_size() -> None:
    """Game i plays the same whatever B is (``derived_seed`` takes no batch size)."""
    small = BatchedMexicanTrain(2, num_players=3, max_pips=6)
    big = BatchedMexicanTrain(5, num_players=3, max_pips=6)
    o1, m1, s1, _ = small.reset(seed=11)
    o2, m2, s2, _ = big.reset(seed=11)
    for _ in range(60):
        assert np.array_equal(o1, o2[:2]) and np.array_equal(m1, m2[:2]) and np.array_equal(s1, s2[:2])
        acts = np.array([np.flatnonzero(m)[-1] for m in m2])
        o1, m1, s1, *_ = small.step(acts[:2])
        o2, m2, s2, *_ = big.step(acts)
    assert not np.array_equal(o2[0], o2[2])  # different seeds, different games


# ------------------------------------------------------------------------ properties


def assert_valid(batch: BatchedMexicanTrain, mask: np.ndarray, seat: np.ndarray, obs: np.ndarray) -> None:
    """Every game: tiles conserved, a loadable state, the seat on turn with a legal action."""
    T = batch.config.num_tiles
    n = batch.num_players
    encoder = ObservationEncoder(batch.game.reference, batch.layout)
    for i, s in enumerate(batch.states):
        loc = s[engine.S_LOC : engine.S_LOC + T]
        assert (loc != engine.LOC_NOWHERE).all()  # R1: every tile somewhere
        for p in range(n):
            assert np.count_nonzero(loc == p) == s[engine.S_HAND_COUNT + p]
        bone = s[engine.S_BONEYARD : engine.S_BONEYARD + s[engine.S_BONE_LEN]]
        assert sorted(bone.tolist()) == np.flatnonzero(loc == engine.LOC_BONEYARD).tolist()
        for t in range(n + 1):
            assert np.count_nonzero(loc == engine.LOC_TRAIN + t) == s[engine.S_TRAIN_LEN + t]
        ps = batch.game_state(i)
        state_from_dict(batch.game.reference, state_to_dict(batch.game.reference, ps))  # validates
        assert seat[i] == ps.current and s[engine.S_PHASE] < engine.ROUND_OVER
        assert mask[i].sum() > 0
        assert obs[i].tobytes() == encoder.encode(ps, int(seat[i])).tobytes()


@st.composite
def batch_setups(draw: st.DrawFn) -> tuple[dict[str, Any], str, int, int, int]:
    pips = draw(st.sampled_from([6, 9]))
    kwargs: dict[str, Any] = {
        "num_players": draw(st.integers(2, 8)),
        "max_pips": pips,
        "rules": draw(st.sampled_from(["pagat", "wikipedia", "cardinal"])),
        "rounds": draw(st.integers(1, 3)),
    }
    for flag in ("positive_scoring", "one_double_per_turn", "marker_off_by_any_play_on_it"):
        if draw(st.booleans()):
            kwargs[flag] = True
    reward = draw(st.sampled_from(["zero_sum", "penalty", "win"]))
    return kwargs, reward, draw(st.integers(1, 6)), draw(st.integers(0, 2**32)), draw(st.integers(1, 150))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch_setups())
def test_batch_properties(setup: tuple[dict[str, Any], str, int, int, int]) -> None:
    kwargs, reward, games, seed, steps = setup
    batch = BatchedMexicanTrain(games, reward=reward, copy=True, **kwargs)
    obs, mask, seat, _ = batch.reset(seed=seed)
    assert_valid(batch, mask, seat, obs)
    rng = np.random.default_rng(seed)
    n = batch.num_players
    for _ in range(steps):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, mask, seat, rewards, terminated, info = batch.step(actions)
        assert rewards.shape == (games, n) and rewards.dtype == np.float32
        assert not rewards[~info["round_over"]].any()  # rewards only at a round's end
        assert not (terminated & ~info["round_over"]).any()
        if reward == "zero_sum":
            assert np.allclose(rewards.sum(axis=1), 0.0, atol=1e-5)
        if reward == "win":
            assert not rewards[~terminated].any()
            assert np.allclose(rewards.sum(axis=1), 0.0, atol=1e-5)
        for i in np.flatnonzero(terminated):  # autoreset: a fresh episode, same step
            s = batch.states[i]
            assert s[engine.S_ROUND] == 0 and s[engine.S_ROUNDS_SCORED] == 0
            assert s[engine.S_HISTORY] == 0
            assert not s[engine.S_SCORES : engine.S_SCORES + n].view(np.float64).any()
        assert_valid(batch, mask, seat, obs)


def episode_bound(config: Any) -> int:
    """An upper bound on an episode's decisions under the rules.

    In a round a seat lays each tile at most once (<= T plays) and draws each boneyard tile
    at most once (<= T draws); a turn with neither ends in a pass, and n such turns in a
    row block the round (R23), so there are at most n * (2T + 1) turns, each ending with at
    most one pass.
    """
    T, n = config.num_tiles, config.num_players
    return config.rounds * (2 * T + n * (2 * T + 1))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch_setups())
def test_every_episode_terminates_within_the_rules_bound(
    setup: tuple[dict[str, Any], str, int, int, int],
) -> None:
    """Termination: random legal play ends every game's episode (and autoreset starts the
    next) within :func:`episode_bound` decisions."""
    kwargs, reward, games, seed, _ = setup
    batch = BatchedMexicanTrain(games, reward=reward, **kwargs)
    bound = episode_bound(batch.config)
    _, mask, _, _ = batch.reset(seed=seed)
    rng = np.array([seed % 2**32 or 1], np.int64)
    actions = np.zeros(games, np.int64)
    length = np.zeros(games, np.int64)
    ended = np.zeros(games, np.bool_)
    for _ in range(bound + 1):
        engine.random_actions(mask, rng, actions)
        _, mask, _, _, terminated, _ = batch.step(actions)
        length += 1
        assert (length <= bound).all(), f"an episode ran past {bound} decisions"
        length[terminated] = 0
        ended |= terminated
        if ended.all():
            break
    assert ended.all()


# ------------------------------------------------------------------------- bad input


def test_bad_actions_name_the_game_and_change_nothing() -> None:
    batch = BatchedMexicanTrain(4, num_players=3, max_pips=9)
    with pytest.raises(RuntimeError, match="reset"):
        batch.step(np.zeros(4, np.int64))
    obs, mask, seat, _ = batch.reset(seed=3)
    good = np.array([np.flatnonzero(m)[0] for m in mask])
    before = [a.copy() for a in (batch.states, obs, mask, seat)]

    def unchanged() -> None:
        for a, b in zip(before, (batch.states, obs, mask, seat), strict=True):
            assert np.array_equal(a, b)

    for game in (0, 2):  # the first game too: the kernel's "no bad game" is -1, not 0
        illegal = good.copy()
        illegal[game] = int(np.flatnonzero(mask[game] == 0)[0])
        with pytest.raises(ValueError, match=rf"game {game} \(seat \d on turn\).*illegal.*R\d+"):
            batch.step(illegal)
        unchanged()
    for bad, pattern in (
        (np.where(np.arange(4) == 1, batch.num_actions, good), "game 1 .*outside Discrete"),
        (np.where(np.arange(4) == 3, -1, good), "game 3 .*outside Discrete"),
        (good[:3], r"shape \(4,\)"),
        (good.reshape(2, 2), r"shape \(4,\)"),
    ):
        with pytest.raises(ValueError, match=pattern):
            batch.step(bad)
        unchanged()
    huge = good.astype(np.uint64)
    huge[0] = 2**64 - 1  # would wrap to -1 as int64
    with pytest.raises(ValueError, match=r"game 0 .*outside"):
        batch.step(huge)
    for bad in (good.astype(np.float64), good.astype(bool), np.array([None] * 4), "0000"):
        with pytest.raises(TypeError, match="integer array"):
            batch.step(bad)
        unchanged()
    batch.step(good.astype(np.int16))  # any integer dtype holding legal actions is fine
    assert not np.array_equal(batch.states, before[0])


def test_bad_construction_and_seeds() -> None:
    with pytest.raises(ValueError, match="reward"):
        BatchedMexicanTrain(2, reward="shaped")
    with pytest.raises(ValueError, match="at least 1"):
        BatchedMexicanTrain(0)
    with pytest.raises(TypeError):
        BatchedMexicanTrain(2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="R3"):
        BatchedMexicanTrain(2, num_players=9)
    batch = BatchedMexicanTrain(2)
    with pytest.raises(ValueError, match="non-negative"):
        batch.reset(seed=-1)
    with pytest.raises(TypeError):
        batch.reset(seed=1.5)  # type: ignore[arg-type]
    _, _, _, info = batch.reset()
    assert isinstance(info["seed"], int)


def test_buffers_are_reused_unless_copy() -> None:
    shared = BatchedMexicanTrain(2, num_players=2, max_pips=6)
    fresh = BatchedMexicanTrain(2, num_players=2, max_pips=6, copy=True)
    o1, m1, *_ = shared.reset(seed=1)
    o2, _, *_ = fresh.reset(seed=1)
    first = o2.copy()
    acts = np.array([np.flatnonzero(m)[0] for m in m1])
    p1 = shared.step(acts)[0]
    p2 = fresh.step(acts)[0]
    assert p1 is o1 and p2 is not o2
    assert np.array_equal(o2, first) and np.array_equal(p1, p2)
