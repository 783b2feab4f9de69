"""Self-play rollouts collected by Ray actors: one learner, ``actors`` collectors.

:class:`RayCollectors` is the Ray form of
:class:`~training.selfplay.collector.LocalCollectors`: the run's games are cut into
``actors`` contiguous slices of whole blocks (:func:`~training.selfplay.collector.slices`),
each stepped by one Ray actor holding a :class:`~training.selfplay.collector.Collector` of
it (its own compiled engine and a CPU copy of the policy). Each rollout is synchronous:
the learner puts the policy's weights in the object store once (``ray.put``), every actor
collects its slice with them, and the learner waits for all the batches and merges them in
one collector's order, so the run is the one a local run of the same seed is.

The actors hold no state between calls: each call carries its slice's state in (the games,
the carried decisions, the league seats) and returns the next one with the batch, and the
learner keeps them. An actor that dies is restarted by Ray (``max_restarts``) and its call
retried (``max_task_retries``) with the same state and weights: the same batch. The
learner's checkpoint holds the merged state, the file a local run writes; a run resumes
with any number of actors, or none.

On a cluster (``ray start --head`` on one machine, ``ray start --address HEAD:6379`` on the
others) every node needs this project installed at the same version. Ray is imported only
here (and in the other Ray backends).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from training.checks import ConfigError
from training.selfplay.collector import merge_states, slices, split_state
from training.selfplay.config import SelfPlayConfig
from training.selfplay.seatbook import Batch

__all__ = ["RayCollectors", "free_cpus", "shutdown"]

#: restarts of a dead actor and retries of its call (bounded: an actor that cannot start
#: fails the run instead of being restarted for ever)
_RESTARTS = 4


def _actor_class() -> Any:
    import ray

    @ray.remote(num_cpus=1, max_restarts=_RESTARTS, max_task_retries=_RESTARTS)
    class CollectorActor:
        """A :class:`Collector` of one slice of the run's games in a Ray worker."""

        def __init__(self, config: dict[str, Any], first: int, stop: int) -> None:
            import torch as th

            from training.selfplay.collector import Collector

            cfg = SelfPlayConfig(**config)
            th.set_num_threads(cfg.threads)
            self.collector = Collector(cfg, first, stop)

        def collect(
            self, weights: Mapping[str, np.ndarray], state: Mapping[str, Any]
        ) -> tuple[Batch, dict[str, float], dict[str, Any]]:
            """The slice's next rollout from ``state`` with ``weights``: its batch, counts
            and the state after it."""
            t0 = time.perf_counter()
            c = self.collector
            c.set_weights(weights)
            c.load_state_dict(state)
            batch = c.collect()
            after = c.state_dict()
            counts = {
                "rounds": float(c.rounds),
                "league_moves": float(c.league_moves),
                "compute_s": time.perf_counter() - t0,
            }
            return batch, counts, after

    return CollectorActor


class RayCollectors:
    """``actors`` Ray actors collecting a run of ``config`` (see the module docstring);
    ``address``: a cluster's ``HOST:PORT`` (default: this process's Ray, or a new local one);
    ``cpus``: the CPUs Ray reserves for each actor (less than 1 shares them, as a benchmark
    of several runs at once does).

    ``transport`` holds the figures of the last rollout: bytes sent and received, the
    seconds of ``ray.put`` of the weights and of waiting past the slowest actor's work."""

    def __init__(
        self, config: SelfPlayConfig, actors: int, address: str | None = None, cpus: float = 1.0
    ) -> None:
        import ray

        from agents.tournament.ray_backend import ensure_ray

        self.config = config
        self.parts = slices(config.num_games, actors)  # ValueError before Ray starts
        self.own_ray = ensure_ray(address)
        try:
            total = float(ray.cluster_resources().get("CPU", 0.0))
            if actors * cpus > total + 1e-9:  # actors past the CPUs would wait for ever
                need = f"{actors * cpus:g} CPUs"
                raise ConfigError("actors", f"{actors} actors need {need}, the Ray cluster has {total:g}")
            actor = _actor_class().options(num_cpus=cpus)
            self.actors = [actor.remote(config.to_json(), lo, hi) for lo, hi in self.parts]
        except BaseException:
            self.close()
            raise
        self.states: list[dict[str, Any]] = []
        self.transport: dict[str, float] = {}

    def submit(self, weights: dict[str, np.ndarray]) -> list[Any]:
        """Start every actor's rollout with ``weights`` (put in the object store once); the
        references of their results, in slice order."""
        import ray

        t0 = time.perf_counter()
        ref = ray.put(weights)
        self.transport = {"put_s": time.perf_counter() - t0}
        return [a.collect.remote(ref, s) for a, s in zip(self.actors, self.states, strict=True)]

    def gather(
        self, refs: list[Any], started: float, weights_bytes: int
    ) -> list[tuple[Batch, dict[str, float]]]:
        """The results of :meth:`submit` (begun at ``started``), in slice order; the slices'
        new states kept, the transport figures updated."""
        import ray

        results = ray.get(refs)
        wall = time.perf_counter() - started
        sent = sum(_nbytes(s) for s in self.states) + weights_bytes * len(self.actors)
        self.states = [state for _, _, state in results]
        slowest = max(counts["compute_s"] for _, counts, _ in results)
        received = sum(_nbytes(vars(b)) + _nbytes(s) for b, _, s in results)
        self.transport.update(
            wait_s=max(0.0, wall - slowest - self.transport["put_s"]), bytes=float(sent + received)
        )
        # the object store's arrays are read-only: the learner's own copies
        return [(Batch(**{k: np.array(v) for k, v in vars(b).items()}), counts) for b, counts, _ in results]

    def collect(self, weights: Callable[[], dict[str, np.ndarray]]) -> list[tuple[Batch, dict[str, float]]]:
        started = time.perf_counter()
        w = weights()
        return self.gather(self.submit(w), started, _nbytes(w))

    def serialise_s(self) -> float:
        """Seconds of ``ray.put`` of one actor's result as it comes back (its slice's batch
        and state after a rollout: what Ray serialises for each actor each rollout)."""
        import ray

        from training.selfplay.collector import Collector

        lo, hi = self.parts[0]
        part = Collector(self.config, lo, hi)
        part.load_state_dict(self.states[0])
        result = (part.collect(), part.state_dict())
        t0 = time.perf_counter()
        ref = ray.put(result)
        took = time.perf_counter() - t0
        del ref
        return took

    def state_dict(self) -> dict[str, Any]:
        return merge_states(self.states)

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain

        # checked here, as a local run checks it, before any actor sees it
        c = self.config
        env = BatchedMexicanTrain(c.num_games, copy=False, num_players=c.num_players, max_pips=c.max_pips)
        env.load_state_dict(state["env"])
        self.states = [split_state(state, lo, hi) for lo, hi in self.parts]

    def close(self) -> None:
        import ray

        for a in getattr(self, "actors", []):
            ray.kill(a, no_restart=True)
        self.actors = []
        if self.own_ray:
            ray.shutdown()
            self.own_ray = False


def free_cpus() -> float:
    """The CPUs the connected Ray instance has free."""
    import ray

    return float(ray.available_resources().get("CPU", 0.0))


def shutdown() -> None:
    """Stop the Ray instance this process started."""
    import ray

    ray.shutdown()


def _nbytes(value: Any) -> int:
    """The bytes of the arrays in ``value`` (dicts and lists of them)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_nbytes(v) for v in value)
    return 0
