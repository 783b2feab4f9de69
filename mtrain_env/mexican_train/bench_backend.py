"""Steps/s of ``env(backend="compiled")`` against ``env()`` (python), in one run.

    python -m mtrain_env.mexican_train.bench_backend --seconds 10

Random legal play through the wrapped ``env()`` (4 players, double-12 by default): every
step is ``last()`` (an observation and a mask) and ``step`` with a uniform pick from the
mask; finished episodes are reset. The two backends run interleaved slices of
``--seconds / --slices`` CPU seconds each, in an order reversed every other slice (so that
drifting load on a shared machine hits both alike, as in :mod:`mtrain_env.bench_speed`);
figures are the medians of the slices, one core.
The compiled backend is warmed up (numba compile or cache load) before timing.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from typing import Any

import numpy as np

from mtrain_env.mexican_train.cli_args import config_or_exit
from mtrain_env.mexican_train.env import env
from mtrain_env.tilegame.argtypes import OneLineErrorParser, int_at_least, positive_float
from mtrain_env.tilegame.interrupts import run_main

#: the target: the compiled backend through ``env()`` against the python one
TARGET_RATIO = 2.0

_clock = time.process_time


class BackendLoop:
    """Random legal play through one ``env(backend=...)``, resumable across timed slices."""

    def __init__(self, backend: str, seed: int, **kwargs: Any) -> None:
        self.env = env(backend=backend, **kwargs)
        self.env.reset(seed=seed)
        self.rng = random.Random(seed)

    def run(self, seconds: float) -> float:
        """Play for ``seconds`` of CPU time; return steps/s."""
        e = self.env
        rng = self.rng
        steps = 0
        start = _clock()
        deadline = start + seconds
        while True:
            for _ in range(256):
                obs, _, term, trunc, _ = e.last()
                if term or trunc:
                    e.reset()
                    continue
                e.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
                steps += 1
            now = _clock()
            if now >= deadline:
                return steps / (now - start)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = OneLineErrorParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=positive_float, default=10.0, help="CPU seconds per backend")
    parser.add_argument("--slices", type=int_at_least(1), default=5)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--pips", type=int, default=12)
    args = parser.parse_args(argv)
    config_or_exit(parser, args.players, args.pips)
    kwargs = {"num_players": args.players, "max_pips": args.pips}
    loops = {b: BackendLoop(b, 0, **kwargs) for b in ("python", "compiled")}
    for loop in loops.values():
        loop.run(0.2)  # warm-up: numba's compile (or on-disk cache load), caches
    figures: dict[str, list[float]] = {b: [] for b in loops}
    names = list(loops)
    for i in range(args.slices):
        for b in names if i % 2 == 0 else names[::-1]:
            figures[b].append(loops[b].run(args.seconds / args.slices))
    out = {b: statistics.median(f) for b, f in figures.items()}
    ratio = out["compiled"] / out["python"]
    print(f"env() random legal play, {args.players} players, double-{args.pips}, one core (median of slices)")
    for b, v in out.items():
        print(f"  backend={b!r:11} {v:>10,.0f} steps/s")
    print(f"  compiled / python: {ratio:.2f}x (issue target >= {TARGET_RATIO:.0f}x)")
    return {**out, "ratio": ratio}


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m mtrain_env.mexican_train.bench_backend"))
