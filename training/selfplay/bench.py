"""``mtrain dev bench-selfplay``: training throughput of self-play, every path in the same run.

Env decisions per second INCLUDING the learning updates (rollout + PPO epochs), for:

* ``selfplay/tile``, ``selfplay/graph`` and ``selfplay/mlp``: :class:`~training.selfplay.learner.SelfPlayPPO`
  (one batched forward pass a step over the batched engine, every seat trains);
* ``selfplay/rayN`` (``selfplay/ray1``, ``selfplay/ray2``, ...): the ``selfplay/tile`` run
  with its rollouts collected by N Ray actors (:mod:`training.selfplay.ray_collect`, a
  local Ray instance; the same data as ``selfplay/tile``), with the transport's figures:
  bytes moved per decision (weights out, slice states out and back, batches back), the
  milliseconds of ``ray.put`` for one actor's result (batch and state: the serialisation
  of a batch) and the milliseconds a rollout waited past its slowest actor's work;
* ``sb3/maskable``: sb3-contrib's ``MaskablePPO`` (``MlpPolicy``, the same hidden sizes as
  the MLP) through :class:`~training.batched_vec.BatchedVecEnv`, the path users know (it
  trains the acting seat only; its rollouts hold the same number of decisions);
* ``reference``: ``mtrain train``'s figure (470 decisions/s), as a
  constant for the ratio column.

The paths are measured in turns (one update of each, round-robin, ``--rounds`` times,
after a warm-up update each), so that the load of a shared machine weighs on them alike;
the ratios against ``sb3/maskable`` are the figures to compare. Every path runs on
``--threads`` torch threads.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

__all__ = ["measure", "register"]

#: ``mtrain train``'s throughput on 2 cores, for the ratio column
TRAIN_REFERENCE = 470.0


def _selfplay_path(
    net: str,
    games: int,
    steps: int,
    threads: int,
    actors: int = 0,
    transport: dict[str, Any] | None = None,
    cpus: float = 1.0,
) -> Callable[[], int]:
    """``actors`` > 0: collected by that many Ray actors (``cpus`` reserved for each),
    their figures added to ``transport``."""
    from training.selfplay.learner import SelfPlayConfig, SelfPlayPPO

    config = SelfPlayConfig(net=net, num_games=games, steps=steps, threads=threads, seed=1)
    collectors = None
    if actors:
        from training.selfplay.ray_collect import RayCollectors

        collectors = RayCollectors(config, actors, cpus=cpus)
    learner = SelfPlayPPO(config, collectors=collectors)
    figures: dict[str, Any] = {"bytes": 0.0, "decisions": 0, "wait_s": 0.0, "updates": 0}

    def update() -> int:
        learner.iterate()
        if collectors is not None and transport is not None:
            figures["bytes"] += collectors.transport["bytes"]
            figures["wait_s"] += collectors.transport["wait_s"]
            figures["decisions"] += games * steps
            figures["updates"] += 1
            figures["serialise_s"] = collectors.serialise_s()
            transport[f"selfplay/ray{actors}"] = figures
        return games * steps

    return update


def _sb3_path(games: int, steps: int, threads: int, hidden: int) -> Callable[[], int]:
    import torch as th
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger

    from training.batched_vec import BatchedVecEnv

    th.set_num_threads(threads)
    env = BatchedVecEnv(games, num_players=4, max_pips=12)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=steps,
        batch_size=2048,
        n_epochs=3,
        policy_kwargs={"net_arch": [hidden, hidden]},
        seed=1,
        device="cpu",
        verbose=0,
    )
    # without a logger of its own, every learn() from step 0 makes an empty /tmp/SB3-<date> folder
    model.set_logger(Logger(folder=None, output_formats=[]))
    done = {"first": True}

    def update() -> int:
        model.learn(total_timesteps=games * steps, reset_num_timesteps=done["first"], progress_bar=False)
        done["first"] = False
        return games * steps

    return update


def ray_actors(path: str) -> int:
    """N of a ``selfplay/rayN`` path, 0 for another path."""
    tail = path.removeprefix("selfplay/ray")
    return int(tail) if tail != path and tail.isdigit() and int(tail) > 0 else 0


def measure(
    rounds: int,
    games: int,
    steps: int,
    threads: int,
    paths: list[str],
    transport: dict[str, Any] | None = None,
) -> dict[str, float]:
    """Decisions/s of each path (see the module docstring); the Ray paths' transport
    figures into ``transport``."""
    builders: dict[str, Callable[[], Callable[[], int]]] = {
        "selfplay/tile": lambda: _selfplay_path("tile", games, steps, threads),
        "selfplay/graph": lambda: _selfplay_path("graph", games, steps, threads),
        "selfplay/mlp": lambda: _selfplay_path("mlp", games, steps, threads),
        "sb3/maskable": lambda: _sb3_path(games, steps, threads, 128),
    }
    # the paths live side by side: their actors share the CPUs (they run in turns)
    share = 1.0
    if any(ray_actors(name) for name in paths):
        from training.selfplay.ray_collect import free_cpus

        free = free_cpus()
        # Ray counts resources to 4 decimals: rounded down, so that every actor fits
        share = min(1.0, math.floor(free / sum(map(ray_actors, paths)) * 1e4) / 1e4)
    for name in paths:
        if ray_actors(name):
            n = ray_actors(name)
            builders[name] = partial(_selfplay_path, "tile", games, steps, threads, n, transport, share)
    runs = {name: builders[name]() for name in paths}
    for update in runs.values():  # warm-up: numba compilation, allocations
        update()
    totals = {name: [0, 0.0] for name in runs}
    for _ in range(rounds):
        for name, update in runs.items():
            t0 = time.perf_counter()
            n = update()
            totals[name][0] += n
            totals[name][1] += time.perf_counter() - t0
    return {name: n / s for name, (n, s) in totals.items()}


def register(subparsers: Any) -> None:
    """Add ``mtrain dev bench-selfplay`` to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "bench-selfplay",
        help="self-play training throughput (decisions/s with updates) against MaskablePPO, same run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--rounds", type=int, default=5, help="timed updates per path (default 5)")
    p.add_argument("--games", type=int, default=512, help="games stepped at once (default 512)")
    p.add_argument("--steps", type=int, default=64, help="env steps per rollout (default 64)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument(
        "--paths",
        nargs="+",
        default=["selfplay/tile", "selfplay/mlp", "sb3/maskable"],
        help="paths to measure",
    )
    p.set_defaults(func=main)


def _option_problem(args: argparse.Namespace) -> str | None:
    """``"--option: what is wrong"`` for a count out of range: ``--games``, ``--steps`` and
    ``--threads`` in the ranges of the learners' configuration (:data:`~training.selfplay.config.INT_BOUNDS`,
    and at most :data:`~training.checks.MAX_ROLLOUT` decisions a rollout: the MaskablePPO path's
    buffer holds as many), before any path is built; ``None`` if all are fine."""
    from training.checks import ConfigError
    from training.selfplay.config import INT_BOUNDS, SelfPlayConfig, check_seat_book

    if args.rounds < 1:
        return f"--rounds: must be an int >= 1, got {args.rounds}"
    for flag, field, value in (
        ("--games", "num_games", args.games),
        ("--steps", "steps", args.steps),
        ("--threads", "threads", args.threads),
    ):
        lo, hi = INT_BOUNDS[field]
        if not lo <= value <= hi:
            return f"{flag}: must be an int in {lo}..{hi}, got {value}"
    game = SelfPlayConfig()  # the table of every path: the learners' default
    try:
        check_seat_book(args.games, args.steps, game.num_players, game.max_pips)
    except ConfigError as err:
        return f"--games x --steps: {err.message}"
    return None


def main(args: argparse.Namespace) -> int:
    known = ("selfplay/tile", "selfplay/graph", "selfplay/mlp", "selfplay/rayN", "sb3/maskable")
    for name in args.paths:
        if name not in known[:3] + known[4:] and not ray_actors(name):
            print(
                f"mtrain dev bench-selfplay: --paths: unknown path {name!r} (known: {', '.join(known)})",
                file=sys.stderr,
            )
            return 2
    problem = _option_problem(args)
    if problem is not None:
        print(f"mtrain dev bench-selfplay: {problem}", file=sys.stderr)
        return 2
    from training.selfplay.collector import slices

    for name in args.paths:
        try:
            if ray_actors(name):
                slices(args.games, ray_actors(name))
        except ValueError as err:
            print(f"mtrain dev bench-selfplay: --paths: {name}: {err}", file=sys.stderr)
            return 2
    transport: dict[str, Any] = {}
    own_ray = False
    if any(ray_actors(name) for name in args.paths):
        from agents.tournament.ray_backend import ensure_ray

        own_ray = ensure_ray()  # one Ray instance for every Ray path
    try:
        rates = measure(args.rounds, args.games, args.steps, args.threads, list(args.paths), transport)
    finally:
        if own_ray:
            from training.selfplay.ray_collect import shutdown

            shutdown()
    print(
        f"4 players, double-12; {args.games} games x {args.steps} steps a rollout, 3 PPO epochs, "
        f"{args.threads} torch thread(s); {args.rounds} timed updates per path, in turns"
    )
    base = rates.get("sb3/maskable")
    print(f"{'path':<16}{'decisions/s':>13}{'vs sb3/maskable':>17}{'vs mtrain train (470/s)':>25}")
    for name, rate in rates.items():
        vs_sb3 = f"{rate / base:.2f}x" if base else "-"
        print(f"{name:<16}{rate:>13,.0f}{vs_sb3:>17}{rate / TRAIN_REFERENCE:>24.1f}x")
    local = rates.get("selfplay/tile")
    if transport:
        head = f"{'vs selfplay/tile':>17}{'bytes/decision':>16}{'serialise ms/batch':>20}"
        head += f"{'waited ms/update':>18}"
        print(f"{'path':<16}{head}")
        for name, f in transport.items():
            vs = f"{rates[name] / local:.2f}x" if local else "-"
            per = f["bytes"] / f["decisions"]
            print(
                f"{name:<16}{vs:>17}{per:>16,.0f}{f['serialise_s'] * 1e3:>20.1f}"
                f"{f['wait_s'] / f['updates'] * 1e3:>18.1f}"
            )
    return 0
