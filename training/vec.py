"""Vectorised envs for a few cores: several envs per worker process, masks without a round trip.

``ShardedVecEnv``: ``n_envs`` envs spread over ``workers`` processes (contiguous shards).
SB3's ``SubprocVecEnv`` gives each env its own process and talks to every process twice
per step; on 2 cores that means either 2 envs (the policy forward is batched over just
2 observations) or many processes contending for the cores. Here each worker steps its
shard sequentially and answers with one message, so the learner batches the forward
over all ``n_envs`` while the workers use every core. Results are identical to
``DummyVecEnv`` with the same envs (the envs are independent and keep their order).
Errors raised in a worker come back as a ``RuntimeError`` with the worker's traceback, raised
once every worker has answered (so the pipes stay in step and ``close`` still returns).

``VecMaskCache``: action masks ride along with each step instead of costing a round trip.

sb3-contrib's MaskablePPO asks a vectorised env for masks before every step with
``env.env_method("action_masks")``: with ``SubprocVecEnv`` that is one more pipe round
trip to every worker per step, on top of the step itself. On a few cores shared with
other processes, waking the workers twice per step can cost more than the environment
work itself (the guide's training page has the rates).

:class:`~training.single_agent.SingleAgentEnv` already puts the learner's mask in every
``info`` (``info["action_mask"]``, also in the reset info), so this wrapper keeps the
newest mask of each env — from the step's info, or from the reset info after an
automatic reset at an episode end — and answers ``env_method("action_masks")`` from that
cache. Any other ``env_method`` call may change an env's state, so it goes through and
the cache is refreshed from the envs afterwards (one extra call, rare).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import traceback
from collections.abc import Callable, Iterable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import (
    CloudpickleWrapper,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from mtrain_env.tilegame.interrupts import ignore_interrupts, workers_ignore_interrupts

MASK_KEY = "action_mask"


def _answer(envs: list[gym.Env], cmd: str, data: Any) -> Any:
    """What a worker answers to the learner's ``cmd`` on its shard ``envs``."""
    if cmd == "step":
        out = []
        for env, action in zip(envs, data, strict=True):
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            info["TimeLimit.truncated"] = truncated and not terminated
            reset_info: dict[str, Any] = {}
            if done:
                info["terminal_observation"] = obs
                obs, reset_info = env.reset()
            out.append((obs, reward, done, info, reset_info))
        return out
    if cmd == "reset":
        return [
            env.reset(seed=seed, **({"options": opt} if opt else {}))
            for env, (seed, opt) in zip(envs, data, strict=True)
        ]
    if cmd == "env_method":
        local, name, args, kwargs = data
        return [getattr(envs[i], name)(*args, **kwargs) for i in local]
    if cmd == "get_attr":
        local, name = data
        return [getattr(envs[i], name) for i in local]
    if cmd == "has_attr":
        return all(hasattr(env, data) for env in envs)
    if cmd == "set_attr":
        local, name, value = data
        for i in local:
            setattr(envs[i], name, value)
        return [None] * len(local)
    if cmd == "get_spaces":
        return (envs[0].observation_space, envs[0].action_space)
    if cmd == "close":
        return None
    raise NotImplementedError(f"unknown command {cmd!r}")


def _shard_worker(remote: Connection, parent_remote: Connection, fns: CloudpickleWrapper) -> None:
    # Ctrl-C reaches the whole process group: the learner handles it and closes the workers
    # (a worker that quit on its own would reset the learner's pipe mid-shutdown)
    ignore_interrupts()
    parent_remote.close()
    envs: list[gym.Env] = [fn() for fn in fns.var]
    try:
        while True:
            try:
                cmd, data = remote.recv()
            except (EOFError, ConnectionError):  # the learner is gone: closed, or killed outright
                break
            try:  # pickled here: an answer that does not pickle is an error to report too
                reply = ForkingPickler.dumps(("ok", _answer(envs, cmd, data)))
            except Exception:
                reply = ForkingPickler.dumps(("error", traceback.format_exc()))
            try:
                remote.send_bytes(reply)  # what the learner's recv() unpickles
            except ConnectionError:  # killed while this worker stepped: nobody to answer
                break
            if cmd == "close":
                break
    finally:
        for env in envs:
            env.close()
        remote.close()


class ShardedVecEnv(VecEnv):
    """``n_envs`` envs in ``workers`` processes, one message per worker per step (module docstring).

    Args:
        env_fns: one constructor per env (picklable with cloudpickle).
        workers: worker processes (at most ``len(env_fns)``).
        start_method: multiprocessing start method; default ``forkserver`` where available.
    """

    def __init__(
        self, env_fns: Sequence[Callable[[], gym.Env]], workers: int, start_method: str | None = None
    ) -> None:
        n = len(env_fns)
        workers = max(1, min(int(workers), n))
        bounds = np.linspace(0, n, workers + 1).round().astype(int)
        self.shards = [list(range(bounds[w], bounds[w + 1])) for w in range(workers)]
        self.where = [(w, k) for w, shard in enumerate(self.shards) for k in range(len(shard))]
        if start_method is None:
            start_method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
        ctx = mp.get_context(start_method)
        self.remotes: list[Connection] = []
        self.processes = []
        for shard in self.shards:
            remote, work_remote = ctx.Pipe()
            fns = CloudpickleWrapper([env_fns[i] for i in shard])
            process = ctx.Process(target=_shard_worker, args=(work_remote, remote, fns), daemon=True)  # type: ignore[attr-defined]
            with workers_ignore_interrupts():  # quiet while it imports, too: the learner stops it
                process.start()
            work_remote.close()
            self.remotes.append(remote)
            self.processes.append(process)
        self.closed = False
        self.waiting = False
        observation_space, action_space = self._call(0, "get_spaces", None)
        super().__init__(n, observation_space, action_space)

    # --------------------------------------------------------------- plumbing
    def _recv_all(self, workers: Iterable[int]) -> list[Any]:
        """One reply from each of ``workers``, in order; the first error is raised after all are in.

        Reading every reply before raising keeps each pipe in step with its worker: a reply left
        unread would block ``close`` for ever, or answer the next command with a stale result.
        """
        payloads: list[Any] = []
        error: RuntimeError | None = None
        for w in workers:
            status, payload = self.remotes[w].recv()
            if status == "error" and error is None:
                error = RuntimeError(f"error in env worker {w}:\n{payload}")
            payloads.append(payload)
        if error is not None:
            raise error
        return payloads

    def _call(self, w: int, cmd: str, data: Any) -> Any:
        self.remotes[w].send((cmd, data))
        return self._recv_all([w])[0]

    def _by_worker(self, indices: VecEnvIndices) -> dict[int, list[int]]:
        groups: dict[int, list[int]] = {}
        for i in self._get_indices(indices):
            w, k = self.where[i]
            groups.setdefault(w, []).append(k)
        return groups

    def _gather(self, indices: VecEnvIndices, cmd: str, make: Callable[[list[int]], Any]) -> list[Any]:
        order = list(self._get_indices(indices))
        groups = self._by_worker(indices)
        for w, local in groups.items():
            self.remotes[w].send((cmd, make(local)))
        by_env: dict[tuple[int, int], Any] = {}
        for (w, local), values in zip(groups.items(), self._recv_all(groups), strict=True):
            for k, value in zip(local, values, strict=True):
                by_env[(w, k)] = value
        return [by_env[self.where[i]] for i in order]

    # ------------------------------------------------------------- VecEnv API
    def reset(self) -> VecEnvObs:
        for w, shard in enumerate(self.shards):
            self.remotes[w].send(("reset", [(self._seeds[i], self._options[i]) for i in shard]))
        results = [r for replies in self._recv_all(range(len(self.shards))) for r in replies]
        obs, infos = zip(*results, strict=True)
        self.reset_infos = list(infos)
        self._reset_seeds()
        self._reset_options()
        return np.stack(obs)

    def step_async(self, actions: np.ndarray) -> None:
        for w, shard in enumerate(self.shards):
            self.remotes[w].send(("step", [actions[i] for i in shard]))
        self.waiting = True

    def step_wait(self) -> VecEnvStepReturn:
        try:
            replies = self._recv_all(range(len(self.shards)))
        finally:
            self.waiting = False  # every reply was read, even when one of them was an error
        results = [r for shard_replies in replies for r in shard_replies]
        obs, rewards, dones, infos, reset_infos = zip(*results, strict=True)
        self.reset_infos = list(reset_infos)
        return np.stack(obs), np.array(rewards, dtype=np.float32), np.array(dones, dtype=bool), list(infos)

    def close(self) -> None:
        """Stop the workers; a worker already gone (its pipe closed or reset) is no error."""
        if self.closed:
            return
        if self.waiting:  # the replies of an interrupted step: read so the pipes stay in step
            for remote in self.remotes:
                with contextlib.suppress(OSError, EOFError):
                    remote.recv()
        for remote in self.remotes:
            try:
                remote.send(("close", None))
                remote.recv()
            except (OSError, EOFError):  # BrokenPipeError, ConnectionResetError, ...
                pass
        for process in self.processes:
            process.join()
        for remote in self.remotes:
            remote.close()
        self.closed = True

    def has_attr(self, attr_name: str) -> bool:
        return all(self._call(w, "has_attr", attr_name) for w in range(len(self.shards)))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return self._gather(indices, "get_attr", lambda local: (local, attr_name))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        self._gather(indices, "set_attr", lambda local: (local, attr_name, value))

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        return self._gather(
            indices, "env_method", lambda local: (local, method_name, method_args, method_kwargs)
        )

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]  # the envs are built unwrapped


class VecMaskCache(VecEnvWrapper):
    """Serve ``action_masks`` from the masks the envs return with each step (module docstring)."""

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        self.masks: np.ndarray | None = None

    def reset(self) -> VecEnvObs:
        obs = self.venv.reset()
        self.masks = np.stack([np.asarray(info[MASK_KEY], dtype=bool) for info in self.venv.reset_infos])
        return obs

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = self.venv.step_wait()
        masks = []
        for i, done in enumerate(dones):
            info = self.venv.reset_infos[i] if done else infos[i]
            masks.append(np.asarray(info[MASK_KEY], dtype=bool))
        self.masks = np.stack(masks)
        return obs, rewards, dones, infos

    def refresh(self) -> None:
        """Re-read every env's mask (after its state was changed behind the wrapper's back)."""
        self.masks = np.stack(self.venv.env_method("action_masks")).astype(bool)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        if method_name == "action_masks" and not method_args and not method_kwargs and self.masks is not None:
            return list(self.masks[list(self._get_indices(indices))])
        out = self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)
        if method_name != "action_masks":
            self.refresh()
        return out
