"""Tournament deals on Ray: a local Ray instance by default, or a cluster at ``address``.

:func:`play_deals_on_ray` is the Ray form of the process pool in
:func:`agents.tournament.harness.play_deals`: ``workers`` Ray actors each hold one
:class:`~agents.tournament.harness.DealPlayer` of the plan (its env and agent cache, built
once, like a pool worker's initializer) and play whole deals with
:meth:`DealPlayer.play_deal`, the one per-deal unit of work of every backend. Results come
back in deal-id order (``ActorPool.map`` is ordered), so ``results.csv`` is byte for byte
the one ``--workers 1`` writes for the same seed.

On a cluster (``ray start --head`` on one machine, ``ray start --address HEAD:6379`` on the
others, then ``mtrain bench --backend ray --address HEAD:6379 ...``) every node needs this
project installed at the same version, and every file an agent reads (``ppo[path=...]``) at
the same path, the driver's machine included (the plan checks the agents there,
:func:`~agents.tournament.harness.checked_agent`); ``workers = 0`` starts one actor per CPU
of the cluster. Ray is imported only in this module and in :mod:`training.rllib`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any


def ensure_ray(address: str | None = None) -> bool:
    """Connect to Ray: the cluster at ``address``, or a new local instance (every core, no
    dashboard) unless this process is connected already. True when this call started it
    (the caller then shuts it down)."""
    import ray

    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False)
    return True


def _player_actor() -> Any:
    import ray

    @ray.remote(num_cpus=1)
    class DealActor:
        """One deal player (``make_player(plan)``, a :class:`DealPlayer`) in a Ray worker."""

        def __init__(self, make_player: Callable[[Any], Any], plan: Any) -> None:
            self.player = make_player(plan)

        def play_deal(self, deal: int) -> Any:
            return self.player.play_deal(deal)

    return DealActor


def play_deals_on_ray(
    make_player: Callable[[Any], Any],
    plan: Any,
    deal_ids: Sequence[int],
    workers: int,
    address: str | None = None,
    started: Callable[[int], None] | None = None,
) -> Iterator[Any]:
    """What ``make_player(plan).play_deal(deal)`` returns (the harness's ``DealPlayer`` and
    ``DealResult``) for every deal of ``deal_ids``, in that order, played by ``workers`` Ray
    actors (0, or more than Ray has CPUs: one per CPU); ``started`` is told how many."""
    import ray
    from ray.util import ActorPool

    own_ray = ensure_ray(address)
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        workers = max(1, min(workers or cpus, cpus, len(deal_ids) or 1))  # an actor holds a CPU
        if started is not None:
            started(workers)
        actor = _player_actor()
        plan_ref = ray.put(plan)
        actors = [actor.remote(make_player, plan_ref) for _ in range(workers)]
        pool = ActorPool(actors)
        play: Callable[[Any, int], Any] = lambda a, deal: a.play_deal.remote(deal)  # noqa: E731
        yield from pool.map(play, list(deal_ids))
        for a in actors:
            ray.kill(a)
    finally:
        if own_ray:
            ray.shutdown()
