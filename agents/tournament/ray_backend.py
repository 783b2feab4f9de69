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

import itertools
import os
import re
import socket
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from mtrain_env.tilegame.files import os_error_text

__all__ = ["address_problem", "ensure_ray", "play_deals_on_ray", "reach_problem"]


#: ``HOST:PORT`` of ``--address`` (an IPv6 host in brackets: ``[::1]:6379``)
_ADDRESS = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]@]+):(?P<port>[0-9]{1,5})")


def address_problem(address: str) -> str | None:
    """What is wrong with the form of a Ray cluster address (``HOST:PORT``, a port in
    1..65535), or ``None``; checked before Ray is imported (Ray's own check is a traceback)."""
    match = _ADDRESS.fullmatch(address)
    if match is None:
        return f"expected HOST:PORT (e.g. 10.0.0.5:6379, the head node's address), got {address!r}"
    port = int(match["port"])
    if not 1 <= port <= 65535:
        return f"the port must be in 1..65535, got {port} in {address!r}"
    return None


def reach_problem(address: str, timeout: float = 5.0) -> str | None:
    """Why nothing answers at ``address`` (a well-formed ``HOST:PORT``) within ``timeout``
    seconds, or ``None``: a TCP connection tried before Ray connects, since Ray retries an
    unreachable cluster for a minute or more."""
    match = _ADDRESS.fullmatch(address)
    if match is None:
        return address_problem(address)
    host, port = match["host"].strip("[]"), int(match["port"])
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as err:
        reason = "timed out" if isinstance(err, TimeoutError) else os_error_text(err) or type(err).__name__
        return f"cannot reach a Ray cluster at {address} ({reason})"


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
        deals = iter(deal_ids)
        for deal in itertools.islice(deals, 2 * workers):  # a window, not every deal queued at once
            pool.submit(play, deal)
        while pool.has_next():
            yield pool.get_next()  # in the order submitted: deal-id order
            for deal in itertools.islice(deals, 1):
                pool.submit(play, deal)
        for a in actors:
            ray.kill(a)
    finally:
        if own_ray:
            ray.shutdown()
