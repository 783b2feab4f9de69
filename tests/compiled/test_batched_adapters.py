"""The Gymnasium ``VectorEnv`` and SB3 ``VecEnv`` adapters of the batched API.

Both must give what the core batch gives for the same seed (observations, masks, the
acting seat's reward), follow SAME_STEP autoreset (terminal observation in the infos, the
next episode's first observation returned), and the SB3 one must train MaskablePPO (whose
masks come from ``env_method("action_masks")``; an illegal action would raise).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from gymnasium.vector import AutoresetMode

from mtrain_env.mexican_train.batched import MexicanTrainVectorEnv
from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain

KWARGS = {"num_players": 3, "max_pips": 6, "rounds": 2, "reward": "zero_sum"}


def test_vector_env_follows_the_core_batch() -> None:
    env = MexicanTrainVectorEnv(4, **KWARGS)
    core = BatchedMexicanTrain(4, copy=True, **KWARGS)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = env.reset(seed=9)
    c_obs, c_mask, c_seat, _ = core.reset(seed=9)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(200):
        assert obs in env.observation_space
        assert np.array_equal(obs["observation"], c_obs) and np.array_equal(obs["action_mask"], c_mask)
        assert np.array_equal(env.action_masks(), c_mask)
        assert np.array_equal(info["seat"], c_seat)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in c_mask])
        assert actions in env.action_space
        obs, reward, terminated, truncated, info = env.step(actions)
        c_obs, c_mask, new_seat, c_rewards, c_term, c_info = core.step(actions)
        assert np.array_equal(reward, c_rewards[np.arange(4), c_seat])  # the acting seat's
        assert np.array_equal(info["rewards"], c_rewards) and np.array_equal(info["acting_seat"], c_seat)
        assert np.array_equal(terminated, c_term) and not truncated.any()
        if terminated.any():
            ended += 1
            for i in range(4):
                assert info["_final_obs"][i] == terminated[i]
                if terminated[i]:
                    final = info["final_obs"][i]
                    assert np.array_equal(final["observation"], c_info["final_obs"][i])
                    assert not final["action_mask"].any()
        c_seat = new_seat
    assert ended > 0


def test_vector_env_refuses_per_game_seeds_and_options() -> None:
    env = MexicanTrainVectorEnv(2, num_players=2, max_pips=6)
    with pytest.raises(TypeError, match="one int"):
        env.reset(seed=[1, 2])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="options"):
        env.reset(seed=1, options={"deal": {}})
    env.reset(seed=1)
    with pytest.raises(ValueError, match="game 1"):
        env.step(np.array([int(np.flatnonzero(env.action_masks()[0])[0]), -5]))


def test_sb3_vec_env_trains_maskable_ppo() -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    from training.batched_vec import BatchedVecEnv

    venv = BatchedVecEnv(8, num_players=2, max_pips=6)
    venv.seed(3)
    obs = venv.reset()
    core = BatchedMexicanTrain(8, num_players=2, max_pips=6)
    c_obs, c_mask, *_ = core.reset(seed=3)
    assert np.array_equal(obs, c_obs)
    assert is_masking_supported(venv)
    assert np.array_equal(get_action_masks(venv), c_mask)
    assert len(venv.env_method("action_masks", indices=[2, 5])) == 2
    with pytest.raises(AttributeError):
        venv.env_method("render")
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=512)  # 2 rollouts of 8 x 32 decisions; an illegal action would raise
    assert model.num_timesteps >= 512
    # terminal observations and every seat's rewards reach SB3's infos
    venv.reset()
    done_seen = False
    for _ in range(100):
        actions = np.array([np.flatnonzero(m)[0] for m in get_action_masks(venv)])
        _, rewards, dones, infos = venv.step(actions)
        for i in np.flatnonzero(dones):
            done_seen = True
            assert infos[i]["terminal_observation"].shape == venv.observation_space.shape
            assert rewards[i] == infos[i]["rewards"][infos[i]["acting_seat"]]
            assert abs(float(infos[i]["rewards"].sum())) < 1e-5  # zero_sum, every seat
    assert done_seen
