"""Shared-policy self-play and the snapshot league, as RLlib module ids and a mapping function.

Every seat RLlib sees plays one of these RLModules:

* ``main``: the policy being trained (the only one in ``policies_to_train``); with no
  snapshots every seat plays it: shared-policy self-play, each seat's experience trains
  the one network;
* ``snap_0`` ... ``snap_{K-1}``: frozen copies of ``main``, ``snap_0`` the latest.
  :func:`take_snapshot` shifts the older ones down (``snap_{i} <- snap_{i-1}``) and copies
  ``main`` into ``snap_0``, in the learner and in every EnvRunner; at the start all are
  copies of ``main``'s initial weights.

:class:`SnapshotMapping` is the ``policy_mapping_fn``: per episode one seat (drawn from
the episode id) always plays ``main``; every other seat plays ``snap_0`` with probability
``p_latest``, a uniformly drawn older snapshot with ``p_older`` (``snap_0`` when there is
only one) and ``main`` otherwise, so every episode trains ``main``. The draws hash the
episode id and agent id (``zlib.crc32``, the same on every worker and Python process).

Heuristic opponents (``greedy``, ``planner`` ...) are the env's business
(:class:`~training.rllib.env.MexicanTrainMultiAgentEnv`, ``heuristics`` / ``p_heuristic``).
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass
from typing import Any

MAIN = "main"


def snapshot_ids(count: int) -> list[str]:
    """The module ids of ``count`` snapshot slots, latest first."""
    return [f"snap_{i}" for i in range(count)]


@dataclass(frozen=True)
class SnapshotMapping:
    """``policy_mapping_fn(agent_id, episode)`` of the league (module docstring); picklable."""

    num_players: int
    snapshots: int = 0
    p_latest: float = 0.0
    p_older: float = 0.0

    def __call__(self, agent_id: Any, episode: Any, **kwargs: Any) -> str:
        episode_id = str(getattr(episode, "id_", episode))
        learner_seat = zlib.crc32(episode_id.encode()) % self.num_players
        seat = int(str(agent_id).rsplit("_", 1)[-1])
        if self.snapshots == 0 or seat == learner_seat:
            return MAIN
        u = random.Random(zlib.crc32(f"{episode_id}/{agent_id}".encode())).random()
        if u < self.p_latest:
            return "snap_0"
        if u < self.p_latest + self.p_older:
            older = snapshot_ids(self.snapshots)[1:] or ["snap_0"]
            return older[zlib.crc32(f"{episode_id}/{agent_id}/older".encode()) % len(older)]
        return MAIN


def take_snapshot(algo: Any, snapshots: int) -> None:
    """Shift the snapshot slots and copy ``main`` into ``snap_0`` (learner and EnvRunners)."""
    if snapshots == 0:
        return
    ids = snapshot_ids(snapshots)
    weights = algo.learner_group.get_weights(module_ids=[MAIN, *ids])
    new = {ids[i]: weights[ids[i - 1]] for i in range(len(ids) - 1, 0, -1)}
    new[ids[0]] = weights[MAIN]
    algo.learner_group.set_weights(new)
    push_weights(algo, new)


def push_weights(algo: Any, weights: dict[str, Any]) -> None:
    """Set these modules' weights in every EnvRunner, now.

    Not ``EnvRunnerGroup.sync_weights``: an EnvRunner ignores weights whose sequence number
    is not newer than its own, and a snapshot between two training steps has the same one
    as the last sync (the league test caught it). A state without a sequence number is
    always applied.
    """
    from ray.rllib.core import COMPONENT_RL_MODULE

    state = {COMPONENT_RL_MODULE: weights}
    algo.env_runner_group.foreach_env_runner(lambda runner: runner.set_state(state), local_env_runner=True)
