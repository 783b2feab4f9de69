"""Speed of the compiled rules core alone against the pure core, in one run.

    python -m mtrain_env.mexican_train.compiled.bench --seconds 10

Both contenders play uniformly random legal moves (legal moves + apply per decision, no
observation) from the SAME pool of pre-dealt round-0 deals (the pure core's dealing code),
so dealing is not counted for either. The compiled loop runs entirely inside one jitted
call per slice (``engine.random_steps``, an xorshift32 picks the move); the pure loop is
``MexicanTrain.legal_moves`` + ``apply`` with a pre-drawn uniform picking the move, as
:mod:`mtrain_env.bench_speed` measures the core. As there, contenders take turns in short
CPU-time slices (order reversed every other slice) and the ratio is the median of the
per-slice ratios. Steps/s are on one core (one process, one thread).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from mtrain_env.mexican_train.cli_args import config_or_exit
from mtrain_env.mexican_train.compiled import engine
from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain, deal_arrays
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.dealing import Deal, random_deal
from mtrain_env.tilegame.argtypes import OneLineErrorParser, int_at_least, positive_float
from mtrain_env.tilegame.interrupts import run_main

#: the target for the compiled core alone, steps/s on one core
TARGET = 3_000_000

_clock = time.process_time  # CPU time of this process: waiting for a core is not a cost


def deal_pool(config: GameConfig, size: int, seed: int) -> list[Deal]:
    """``size`` round-0 deals from one seeded Generator (the pure core's dealing code)."""
    rng = np.random.default_rng(seed)
    return [random_deal(config, config.engine_value(0), rng) for _ in range(size)]


def pool_arrays(config: GameConfig, deals: list[Deal]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pool as ``(hands, boneyards, bone_lens)`` arrays for ``engine.random_steps``."""
    hands = np.empty((len(deals), config.num_tiles), np.int64)
    boneyards = np.full((len(deals), config.num_tiles), -1, np.int64)
    lens = np.empty(len(deals), np.int64)
    for d, deal in enumerate(deals):
        hand_of, bone = deal_arrays(config, deal)
        hands[d] = hand_of
        boneyards[d, : len(bone)] = bone
        lens[d] = len(bone)
    return hands, boneyards, lens


class CompiledLoop:
    """Random legal play on the compiled core; ``run(seconds)`` returns (steps/s, steps)."""

    def __init__(self, config: GameConfig, deals: list[Deal], seed: int, chunk: int) -> None:
        self.game = CompiledMexicanTrain(config)
        self.pool = pool_arrays(config, deals)
        self.state = self.game.new_state()
        self.state[engine.S_PHASE] = engine.GAME_OVER  # the first call deals
        self.rng = np.array([seed % 0xFFFFFFFF or 1, 0], np.int64)
        self.moves = np.empty(engine.MAX_MOVES, np.int64)
        self.chunk = chunk
        self._steps(1)  # compile (or load from the on-disk cache) before timing

    def _steps(self, k: int) -> int:
        hands, bones, lens = self.pool
        return int(
            engine.random_steps(self.state, self.game.tables, hands, bones, lens, self.rng, self.moves, k)
        )

    def run(self, seconds: float) -> tuple[float, int]:
        steps = 0
        start = _clock()
        end = start + seconds
        while _clock() < end:
            steps += self._steps(self.chunk)
        return steps / max(_clock() - start, 1e-9), steps


class PureLoop:
    """Random legal play on the pure core (``legal_moves`` + ``apply``), the same deals."""

    def __init__(self, config: GameConfig, deals: list[Deal], seed: int) -> None:
        from mtrain_env.mexican_train.core.rules import MexicanTrain

        self.game = MexicanTrain(config)
        self.deals = deals
        self.uniform = np.random.default_rng(seed).random(1 << 16).tolist()
        self.rng = np.random.default_rng(seed)  # unused by a given deal, required by the API
        self.next_deal = 0

    def run(self, seconds: float) -> tuple[float, int]:
        game, uniform, deals = self.game, self.uniform, self.deals
        steps = 0
        start = _clock()
        end = start + seconds
        while _clock() < end:
            s = game.new_game(self.rng, deals[self.next_deal])
            self.next_deal = (self.next_deal + 1) % len(deals)
            while s.phase < engine.ROUND_OVER:
                moves = game.legal_moves(s)
                game.apply(s, moves[int(uniform[steps & 0xFFFF] * len(moves))])
                steps += 1
        return steps / max(_clock() - start, 1e-9), steps


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Run the benchmark, print steps/s and the ratio; returns the medians and the ratio."""
    parser = OneLineErrorParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--seconds", type=positive_float, default=10.0, help="total CPU seconds per contender"
    )
    parser.add_argument(
        "--slices", type=int_at_least(1), default=10, help="interleaved measurements per contender"
    )
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--pips", type=int, default=12, help="N of the double-N set")
    parser.add_argument("--deals", type=int_at_least(1), default=1024, help="size of the pre-dealt pool")
    parser.add_argument("--seed", type=int_at_least(0), default=0)
    args = parser.parse_args(argv)
    config = config_or_exit(parser, args.players, args.pips)
    deals = deal_pool(config, args.deals, args.seed)
    start = time.perf_counter()
    compiled = CompiledLoop(config, deals, args.seed + 1, chunk=200_000)
    ready = time.perf_counter() - start
    pure = PureLoop(config, deals, args.seed + 1)
    per = args.seconds / args.slices
    rates: dict[str, list[float]] = {"compiled": [], "pure": []}
    loops: dict[str, CompiledLoop | PureLoop] = {"compiled": compiled, "pure": pure}
    for i in range(args.slices):
        for name in ("compiled", "pure") if i % 2 == 0 else ("pure", "compiled"):
            rates[name].append(loops[name].run(per)[0])
    results = {name: float(np.median(r)) for name, r in rates.items()}
    ratios = [a / b for a, b in zip(rates["compiled"], rates["pure"], strict=True)]
    results["ratio"] = float(np.median(ratios))
    print(
        f"{args.players}-player double-{args.pips}, random legal play (legal moves + apply, no "
        f"observation), one core, {args.slices} interleaved slices of {per:g} CPU s, "
        f"{args.deals} pre-dealt deals:"
    )
    print(f"  compiled core ready in {ready:.2f} s (compile or on-disk cache load)")
    for name in ("compiled", "pure"):
        r = rates[name]
        print(f"  {name:8s} {results[name]:12,.0f} steps/s median   (slices {min(r):,.0f}..{max(r):,.0f})")
    q1, q3 = np.percentile(ratios, [25, 75])
    print(f"  compiled / pure: {results['ratio']:.1f}x  ({q1:.1f}..{q3:.1f})")
    verdict = "meets" if results["compiled"] >= TARGET else "misses"
    print(f"  compiled core alone {verdict} the target of >= {TARGET:,} steps/s")
    return results


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m mtrain_env.mexican_train.compiled.bench"))
