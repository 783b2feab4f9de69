"""Decision steps/s of the batched API against the AEC ``raw_env``, in one run.

    python -m mtrain_env.mexican_train.bench_batch --seconds 10

(It lives beside the env, not in ``compiled/``: the compiled core may not import the
PettingZoo env it is compared with.)

Random legal play, an observation and a mask built for every decision. The batched API
(:class:`~mtrain_env.mexican_train.compiled.batch.BatchedMexicanTrain`) runs at each batch
size ``B`` in ``--batch`` (default 1, 64, 1024); its actions come from
``engine.random_actions`` (a jitted uniform pick from each mask, the stand-in for a policy),
and a decision step is one game's decision, so a call counts ``B``. Autoreset deals
(Python ``rng.permutation`` per finished round) are counted. The pure ``raw_env`` plays
``observe`` + ``step`` with a uniform pick from the mask. Each contender runs
``--seconds / --slices`` CPU seconds per slice, interleaved; figures are the medians of
the slices, on one core. ``--processes 2`` then runs the largest batch in that many
processes at once (wall clock, summed), for the both-cores figure.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import time
from typing import Any

import numpy as np

from mtrain_env.mexican_train.cli_args import config_or_exit
from mtrain_env.mexican_train.compiled import engine
from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain
from mtrain_env.mexican_train.env import raw_env
from mtrain_env.tilegame.argtypes import OneLineErrorParser, int_at_least, positive_float
from mtrain_env.tilegame.interrupts import run_main, workers_ignore_interrupts

#: the targets, decision steps/s with observations and masks
TARGET_ONE_CORE = 500_000
TARGET_TWO_CORES = 1_000_000

_clock = time.process_time


class BatchLoop:
    """Random legal play through the batched API; ``run(seconds)`` returns (steps/s, steps)."""

    def __init__(self, games: int, seed: int, copy: bool, **config: Any) -> None:
        self.batch = BatchedMexicanTrain(games, copy=copy, **config)
        _, self.mask, _, _ = self.batch.reset(seed=seed)
        self.rng = np.array([seed % 0xFFFFFFFF or 1], np.int64)
        self.actions = np.zeros(games, np.int64)
        self.run(0.05)  # compile (or load the on-disk cache) before timing

    def run(self, seconds: float) -> tuple[float, int]:
        batch, rng, actions = self.batch, self.rng, self.actions
        steps = 0
        start = _clock()
        end = start + seconds
        while _clock() < end:
            engine.random_actions(self.mask, rng, actions)
            _, self.mask, *_ = batch.step(actions)
            steps += batch.num_games
        return steps / max(_clock() - start, 1e-9), steps


class RawEnvLoop:
    """Random legal play on ``raw_env`` (``observe`` + ``step``); ``run`` returns (steps/s, steps)."""

    def __init__(self, seed: int, **config: Any) -> None:
        self.env = raw_env(**config)
        self.env.reset(seed=seed)
        self.uniform = np.random.default_rng(seed).random(1 << 16).tolist()

    def run(self, seconds: float) -> tuple[float, int]:
        env, uniform = self.env, self.uniform
        steps = 0
        start = _clock()
        end = start + seconds
        while _clock() < end:
            if all(env.terminations.values()):
                env.reset()
            seen = env.observe(env.agent_selection)
            legal = np.flatnonzero(seen["action_mask"])
            env.step(int(legal[int(uniform[steps & 0xFFFF] * len(legal))]))
            steps += 1
        return steps / max(_clock() - start, 1e-9), steps


def _worker(args: tuple[int, int, float, dict[str, Any]]) -> tuple[int, float]:
    """One process of the multi-core run: (decisions, wall seconds)."""
    games, seed, seconds, config = args
    loop = BatchLoop(games, seed, False, **config)
    batch = loop.batch
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        engine.random_actions(loop.mask, loop.rng, loop.actions)
        _, loop.mask, *_ = batch.step(loop.actions)
        steps += games
    return steps, time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Run the benchmark and print steps/s; returns the medians by contender."""
    parser = OneLineErrorParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--seconds", type=positive_float, default=10.0, help="total CPU seconds per contender"
    )
    parser.add_argument(
        "--slices", type=int_at_least(1), default=5, help="interleaved measurements per contender"
    )
    parser.add_argument(
        "--batch", type=int_at_least(1), nargs="+", default=[1, 64, 1024], help="batch sizes B"
    )
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--pips", type=int, default=12, help="N of the double-N set")
    parser.add_argument("--copy", action="store_true", help="fresh arrays from every call (copy=True)")
    parser.add_argument(
        "--processes", type=int_at_least(0), default=2, help="processes of the multi-core run (0: skip)"
    )
    parser.add_argument("--seed", type=int_at_least(0), default=0)
    args = parser.parse_args(argv)
    config_or_exit(parser, args.players, args.pips)
    config = {"num_players": args.players, "max_pips": args.pips}
    start = time.perf_counter()
    loops: dict[str, BatchLoop | RawEnvLoop] = {
        f"batch B={b}": BatchLoop(b, args.seed, args.copy, **config) for b in args.batch
    }
    ready = time.perf_counter() - start
    loops["raw_env"] = RawEnvLoop(args.seed, **config)
    per = args.seconds / args.slices
    rates: dict[str, list[float]] = {name: [] for name in loops}
    names = list(loops)
    for i in range(args.slices):
        for name in names if i % 2 == 0 else names[::-1]:
            rates[name].append(loops[name].run(per)[0])
    results = {name: float(np.median(r)) for name, r in rates.items()}
    print(
        f"{args.players}-player double-{args.pips}, random legal play, observation + mask for every "
        f"decision, one core, {args.slices} interleaved slices of {per:g} CPU s"
        f"{', copy=True' if args.copy else ''}:"
    )
    print(f"  batched API ready in {ready:.2f} s (compile or on-disk cache load)")
    env_rate = results["raw_env"]
    for name in names:
        r = rates[name]
        print(
            f"  {name:14s} {results[name]:12,.0f} decision steps/s median   "
            f"(slices {min(r):,.0f}..{max(r):,.0f})   {results[name] / env_rate:7.1f}x raw_env"
        )
    best = max(results[f"batch B={b}"] for b in args.batch)
    verdict = "meets" if best >= TARGET_ONE_CORE else "misses"
    print(f"  one core: {verdict} the target of >= {TARGET_ONE_CORE:,} decision steps/s")
    if args.processes > 0:
        games = max(args.batch)
        jobs = [(games, args.seed + k, args.seconds / 2, config) for k in range(args.processes)]
        with workers_ignore_interrupts():  # the parent stops them
            pool = mp.get_context("spawn").Pool(args.processes)
        with pool:
            done = pool.map(_worker, jobs)
        total = sum(steps / wall for steps, wall in done)
        results["processes"] = total
        verdict = "meets" if total >= TARGET_TWO_CORES else "misses"
        print(
            f"  {args.processes} processes x B={games}, {args.seconds / 2:g} wall s each: {total:12,.0f} "
            f"decision steps/s in all; {verdict} the target of >= {TARGET_TWO_CORES:,} on two cores"
        )
    return results


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m mtrain_env.mexican_train.bench_batch"))
