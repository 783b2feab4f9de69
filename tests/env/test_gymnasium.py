"""The single-agent env as Gymnasium's ``mtrain_env/MexicanTrain-v0``.

* ``import mtrain_env`` registers the id without importing any agent (a string entry
  point), and ``gymnasium.make`` builds the env with torch and SB3 unimportable;
* the made env passes Gymnasium's and SB3's env checkers, takes the raw env's keywords
  directly, exposes ``action_masks()`` through Gymnasium's wrappers (MaskablePPO trains on
  it without an illegal move) and is deterministic per seed;
* the old import path ``training.single_agent`` still works, and a checkpoint naming
  ``training.league.OpponentSpec`` loads in the agents layer.
"""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest

import mtrain_env
from agents.mexican_train import pickles
from agents.mexican_train.league import OpponentSpec
from agents.mexican_train.single_agent import SingleAgentEnv
from tests.isolated import BLOCK_IMPORTS, run_script

ENV_ID = "mtrain_env/MexicanTrain-v0"
SMALL: dict[str, Any] = {"num_players": 3, "max_pips": 6}


def make(**kwargs: Any) -> gymnasium.Env:
    return gymnasium.make(ENV_ID, **{**SMALL, "opponents": ["planner", "greedy"], **kwargs})


def test_the_id_is_registered_with_a_string_entry_point() -> None:
    spec = gymnasium.spec(ENV_ID)
    assert spec.entry_point == mtrain_env.GYMNASIUM_ENVS[ENV_ID]
    assert spec.entry_point == "agents.mexican_train.single_agent:SingleAgentEnv"
    env = make()
    assert type(env.unwrapped) is SingleAgentEnv
    assert env.unwrapped.num_players == 3 and env.unwrapped.raw.config.max_pips == 6
    assert env.unwrapped.league.heuristics == {"planner": 1.0, "greedy": 1.0}


#: a fresh interpreter: torch and SB3 blocked, ``import mtrain_env`` then ``gymnasium.make``
_MAKE_WITHOUT_TORCH = (
    BLOCK_IMPORTS
    + """
import gymnasium
import mtrain_env

agents_after_import = sorted(m for m in sys.modules if m.partition(".")[0] == "agents")
env_id = "mtrain_env:mtrain_env/MexicanTrain-v0"  # gymnasium's "module:id" form imports the module
env = gymnasium.make(env_id, opponents=["planner", "random"], num_players=2, max_pips=6)
obs, info = env.reset(seed=1)
steps = 0
done = False
while not done:
    action = int(env.get_wrapper_attr("action_masks")().nonzero()[0][0])
    obs, reward, terminated, truncated, info = env.step(action)
    done = terminated or truncated
    steps += 1
result = {"agents": agents_after_import, "tried": tried, "steps": steps, "opponents": info["opponents"]}
print(json.dumps(result))
"""
)


def test_import_loads_no_agent_and_make_needs_no_torch() -> None:
    result = run_script(_MAKE_WITHOUT_TORCH, "torch,stable_baselines3,sb3_contrib,pyspiel,open_spiel")
    assert result["agents"] == [] and result["tried"] == []
    assert result["steps"] > 0 and result["opponents"] in (["planner"], ["random"])


def test_the_made_env_passes_gymnasium_and_sb3_checkers() -> None:
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checkers' random actions are illegal: reported as warnings
        check_env(make().unwrapped, skip_render_check=True)
        check_env(make(render_mode="ansi").unwrapped)
        sb3_check_env(make().unwrapped)
        sb3_check_env(make(num_players=4, max_pips=12, rounds=2).unwrapped)


def _trajectory(env: gymnasium.Env, seed: int) -> list[tuple[Any, ...]]:
    """A whole episode, the learner playing the last legal action."""
    obs, info = env.reset(seed=seed)
    steps: list[tuple[Any, ...]] = [(obs.tobytes(), info["seat"], tuple(info["opponents"]))]
    while True:
        mask = env.get_wrapper_attr("action_masks")()
        np.testing.assert_array_equal(mask, info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[-1]))
        steps.append((obs.tobytes(), reward, terminated, truncated))
        if terminated or truncated:
            return steps


def test_same_seed_same_episode_and_seeds_differ() -> None:
    a, b = make(), make()
    first = _trajectory(a, seed=11)
    assert _trajectory(b, seed=11) == first
    assert _trajectory(a, seed=11) == first  # a second reset with the seed replays it
    assert any(_trajectory(a, seed=s) != first for s in (12, 13))


def test_raw_env_keywords_and_env_kwargs_are_one_configuration() -> None:
    by_keyword = make(num_players=2, rules="cardinal", rounds=2)
    config = {"num_players": 2, "max_pips": 6, "rules": "cardinal", "rounds": 2}
    by_dict = gymnasium.make(ENV_ID, env_kwargs=config)
    assert by_keyword.unwrapped.env_kwargs == by_dict.unwrapped.env_kwargs
    with pytest.raises(TypeError, match="num_players given both"):
        gymnasium.make(ENV_ID, env_kwargs={"num_players": 2}, num_players=3)
    with pytest.raises(ValueError, match="num_players"):
        make(num_players=9)


def test_maskable_ppo_trains_on_the_made_env_without_an_illegal_move() -> None:
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: make(illegal_action="raise") for _ in range(2)])
    assert is_masking_supported(venv)
    venv.seed(5)
    venv.reset()
    masks = get_action_masks(venv)
    assert masks.shape == (2, venv.action_space.n) and masks.any(axis=1).all()
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(64)  # an illegal action would raise (illegal_action="raise")
    assert model.num_timesteps >= 64


def test_old_import_paths_and_checkpoints_still_work() -> None:
    import training.single_agent

    assert training.single_agent.SingleAgentEnv is SingleAgentEnv
    spec = OpponentSpec("heuristic", "greedy")
    old = pickle.dumps(spec, protocol=0).replace(b"cagents.mexican_train.league\n", b"ctraining.league\n")
    assert b"ctraining.league\n" in old
    assert pickles.loads(old) == spec


def test_an_opponent_that_cannot_play_the_table_is_refused_when_made() -> None:
    """A 4-player network among a 3-player table's opponents: ``ValueError`` at ``make``,
    not at the first reset that draws it; the table's own networks are accepted."""
    with pytest.raises(ValueError, match=r"trained for another table \(338 inputs, 457 actions\)"):
        gymnasium.make(ENV_ID, num_players=3, opponents=["planner", "ppo"])
    env = gymnasium.make(ENV_ID, num_players=3, opponents=["champion_policy"])
    env.reset(seed=0)


def test_sb3_builds_the_env_from_its_id() -> None:
    """SB3's ``make_vec_env`` (and so ``MaskablePPO("MlpPolicy", ENV_ID)``) asks for
    ``render_mode="rgb_array"``; the env draws the learner's view as a picture."""
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(ENV_ID, n_envs=2, seed=3, env_kwargs={**SMALL, "opponents": ["planner"]})
    obs = venv.reset()
    assert obs.shape == (2, *venv.observation_space.shape)
    frames = venv.get_images()
    assert len(frames) == 2 and all(f.ndim == 3 and f.shape[2] == 3 and f.dtype == np.uint8 for f in frames)
    env = make(render_mode="rgb_array")
    env.reset(seed=1)
    frame = env.render()
    learner_view = env.unwrapped.raw.render()  # the raw env's picture of the seat on turn: the learner
    np.testing.assert_array_equal(frame, learner_view)
    with pytest.raises(ValueError, match=r"render_mode must be None or one of \['ansi', 'rgb_array'\]"):
        SingleAgentEnv(SMALL, render_mode="human")  # (gymnasium.make wraps it in HumanRendering)


@pytest.mark.parametrize(
    ("action", "error"),
    [(lambda a: a + 0.9, TypeError), (lambda a: str(a), TypeError), (lambda a: np.array([a]), TypeError),
     (lambda a: 10**6, ValueError), (lambda a: -1, ValueError)],
    ids=["float", "str", "1-d array", "above the space", "negative"],
)  # fmt: skip
def test_a_step_takes_integers_of_the_space_as_the_aec_env_does(action: Any, error: type[Exception]) -> None:
    """Not an integer: ``TypeError``; out of ``Discrete(n)``: ``ValueError``; the episode goes
    on (a caller's bug is not a move). A numpy integer or a 0-d array plays."""
    env = make(illegal_action="terminate")
    env.reset(seed=2)
    legal = int(np.flatnonzero(env.get_wrapper_attr("action_masks")())[0])
    with pytest.raises(error, match="action space Discrete"):
        env.step(action(legal))
    _, _, _, _, info = env.step(np.array(legal, dtype=np.int16))
    assert "illegal_action" not in info


def test_an_illegal_action_ends_the_episode_with_an_empty_mask() -> None:
    """``illegal_action="terminate"`` leaves the table mid-round; the mask says it is over."""
    env = make(illegal_action="terminate")
    _, info = env.reset(seed=2)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -1.0 and info["illegal_action"]
    assert not env.get_wrapper_attr("action_masks")().any() and not info["action_mask"].any()
