"""A Gymnasium 1.x ``VectorEnv`` over the compiled batched API (needs numba).

:class:`MexicanTrainVectorEnv` exposes ``num_envs`` games of
:class:`~mtrain_env.mexican_train.compiled.batch.BatchedMexicanTrain` as one vector env for
ONE shared policy (self-play): in each game the agent is whoever is on turn. Every step,
the policy sees the observation of each game's seat on turn and picks its relative action
(the ``raw_env`` codec); ``infos["seat"]`` says which seat that is.

* Observation space: the AEC env's per-agent ``Dict({"observation": Box(D) float32,
  "action_mask": Box(A) int8})``, batched: ``obs["observation"]`` is ``(B, D)``,
  ``obs["action_mask"]`` ``(B, A)`` (never all zero). Action space: ``MultiDiscrete``
  of ``Discrete(A)`` per game.
* Reward: the reward of the seat that ACTED in the step (the env's reward mode; it is
  non-zero only at a round's end). The other seats' rewards of that round are in
  ``infos["rewards"]`` ``(B, n)``, with ``infos["acting_seat"]``: a learner that credits
  every seat (zero-sum self-play) reads them there; one that learns from the acting seat
  only loses the round's result of the seats that did not move last.
* Autoreset: ``AutoresetMode.SAME_STEP``. The step that ends game ``i``'s episode returns
  ``terminations[i] = True`` and already the first observation of its next episode;
  ``infos["final_obs"][i]`` (where ``infos["_final_obs"][i]``) is the terminal observation
  of the seat that made the last move, with an all-zero mask. Truncations are never set.
* Seeds: ``reset(seed=s)`` seeds game ``i`` with ``derived_seed(s, i)``, the seed of the
  ``raw_env`` episode it plays (see :mod:`~mtrain_env.mexican_train.compiled.batch`).
* Bad actions raise ``TypeError``/``ValueError`` naming the game and the rule; nothing changes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain
from mtrain_env.tilegame.aec import dict_observation_space

__all__ = ["MexicanTrainVectorEnv"]


class MexicanTrainVectorEnv(VectorEnv):
    """``num_envs`` Mexican Train games, one shared policy acting for each game's seat on turn.

    Keywords are those of ``raw_env`` (``num_players``, ``max_pips``, ``rules``, ``rounds``,
    ``reward``, flags); ``copy=False`` returns the batch's reused buffers (faster).
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012

    def __init__(self, num_envs: int, *, copy: bool = True, **kwargs: Any) -> None:
        self.batch = BatchedMexicanTrain(num_envs, copy=copy, **kwargs)
        self.num_envs = self.batch.num_games
        self.single_observation_space = dict_observation_space(self.batch.layout.high, self.batch.num_actions)
        self.single_action_space = spaces.Discrete(self.batch.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        self._seat = np.zeros(self.num_envs, np.int64)
        self._zero_mask = np.zeros(self.batch.num_actions, np.int8)
        self._mask = np.zeros((self.num_envs, self.batch.num_actions), np.int8)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """New episodes in every game; ``seed`` is ONE int for the batch (or ``None``)."""
        if options:
            raise ValueError(f"reset takes no options, got {sorted(options)}")
        if isinstance(seed, (list, tuple)):
            raise TypeError("seed is one int for the whole batch; game i is seeded derived_seed(seed, i)")
        obs, mask, seat, info = self.batch.reset(seed=seed)
        self._seat = seat
        self._mask = mask
        return {"observation": obs, "action_mask": mask}, {"seat": seat, "seed": info["seed"]}

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        acting = np.array(self._seat, copy=True)
        obs, mask, seat, rewards, terminated, info = self.batch.step(actions)
        self._seat = seat
        self._mask = mask
        own = rewards[np.arange(self.num_envs), acting]
        infos: dict[str, Any] = {
            "seat": seat,
            "acting_seat": acting,
            "rewards": rewards,
            "round_over": info["round_over"],
        }
        if terminated.any():
            final = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(terminated):
                final[i] = {"observation": info["final_obs"][i].copy(), "action_mask": self._zero_mask}
            infos["final_obs"] = final
            infos["_final_obs"] = terminated.copy()
        return (
            {"observation": obs, "action_mask": mask},
            own,
            terminated,
            np.zeros(self.num_envs, np.bool_),
            infos,
        )

    def action_masks(self) -> np.ndarray:
        """The ``(B, A)`` masks of the seats on turn (MaskablePPO's hook)."""
        return np.array(self._mask, copy=True)
