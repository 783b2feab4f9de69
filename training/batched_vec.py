"""An SB3 ``VecEnv`` over the compiled batched API, for MaskablePPO self-play.

:class:`BatchedVecEnv` steps ``num_envs`` Mexican Train games in one jitted call
(:class:`~mtrain_env.mexican_train.compiled.batch.BatchedMexicanTrain`, needs numba) for
ONE shared policy: in each game the agent is the seat on turn, as in
:class:`~mtrain_env.mexican_train.batched.MexicanTrainVectorEnv` (whose docstring has the
mapping). SB3 sees:

* observations: the ``(B, D)`` float32 observation of each game's seat on turn (a ``Box``,
  for ``MlpPolicy``); its legal actions through ``env_method("action_masks")`` (one int8
  row per game, what sb3-contrib's ``MaskablePPO`` stacks), answered from the last step
  without any extra work;
* rewards: the reward of the seat that acted (the round's result at a round's end, else 0);
  every seat's is in ``infos[i]["rewards"]`` when a round ends (the acting seat in
  ``infos[i]["acting_seat"]``);
* dones: an episode ended; the returned observation is already the next episode's first
  (SB3's own autoreset convention, Gymnasium's SAME_STEP) and
  ``infos[i]["terminal_observation"]`` the last one of the seat that moved.

Seeding: ``seed(s)`` (what ``model.set_random_seed`` calls) makes the next ``reset`` use
``s`` for the whole batch (game ``i``: ``derived_seed(s, i)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn

from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain

__all__ = ["BatchedVecEnv"]


class BatchedVecEnv(VecEnv):
    """``num_envs`` games of one config for one shared MaskablePPO policy (see the module doc).

    Keywords are those of ``raw_env`` (``num_players``, ``max_pips``, ``rules``, ``rounds``,
    ``reward``, variant flags).
    """

    render_mode = None

    def __init__(self, num_envs: int, **kwargs: Any) -> None:
        self.batch = BatchedMexicanTrain(num_envs, copy=True, **kwargs)
        obs_space = spaces.Box(low=0.0, high=self.batch.layout.high, dtype=np.float32)
        super().__init__(self.batch.num_games, obs_space, spaces.Discrete(self.batch.num_actions))
        self._actions: np.ndarray | None = None
        self._mask = np.zeros((self.num_envs, self.batch.num_actions), np.int8)
        self._seat = np.zeros(self.num_envs, np.int64)

    # --------------------------------------------------------------- stepping
    def reset(self) -> VecEnvObs:
        seed = self._seeds[0]
        obs, self._mask, self._seat, info = self.batch.reset(seed=seed)
        self._reset_seeds()
        self.reset_infos = [{"seed": info["seed"]} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() needs a step_async(actions) first")
        acting = self._seat
        obs, self._mask, self._seat, rewards, terminated, info = self.batch.step(self._actions)
        self._actions = None
        own = rewards[np.arange(self.num_envs), acting]
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(info["round_over"]).tolist():
            infos[i]["rewards"] = rewards[i]
            infos[i]["acting_seat"] = int(acting[i])
            if terminated[i]:
                infos[i]["terminal_observation"] = info["final_obs"][i]
                infos[i]["TimeLimit.truncated"] = False
        return obs, own, terminated, infos

    def close(self) -> None:
        pass

    # ---------------------------------------------------------- env plumbing
    def action_masks(self) -> np.ndarray:
        """The ``(B, A)`` int8 masks of the seats on turn."""
        return np.array(self._mask, copy=True)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        """``"action_masks"``: one mask row per game (the only per-game method there is)."""
        if method_name != "action_masks":
            raise AttributeError(f"BatchedVecEnv games have no method {method_name!r} (only 'action_masks')")
        return [self._mask[i].copy() for i in self._get_indices(indices)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute shared by every game (this object's), once per index."""
        value = getattr(self, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(f"the games of a BatchedVecEnv share one config; cannot set {attr_name!r}")

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """The next ``reset`` seeds the batch with ``seed`` (game i: ``derived_seed(seed, i)``)."""
        if seed is None:
            seed = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
        self._seeds = [seed] * self.num_envs
        return self._seeds
