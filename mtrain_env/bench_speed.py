"""Speed benchmark: random legal games through the full AEC loop, against OpenSpiel.

Every measured loop does, per decision step: observe the acting seat (observation +
legal-action mask), pick a uniformly random legal action, apply it. The random choice
is the same cheap one everywhere (a float from a pre-drawn block times the number of
legal actions), so that numpy's per-call RNG overhead does not dilute the comparison.
Measured in the same run, on the same machine, as ratios (the machines are shared and
noisy): the contenders take turns in short CPU-time slices, in an order reversed every
other slice, and a ratio is the median over slices of the ratio within one slice (two
measurements seconds apart share the machine's load):

* ``env()``   — ``mtrain_env.env(num_players=4)``, what users call (PettingZoo wrappers).
* ``raw_env`` — the bare AEC env.
* ``core``    — the rules core alone: ``legal_moves`` + ``apply`` (no observation).
* OpenSpiel   — ``python_team_dominoes`` (open-spiel from PyPI): ``observation tensor`` +
  ``legal_actions`` + ``apply_action`` per decision; chance nodes (the deal) are applied
  but not counted as steps, just as our deal happens inside ``reset``.

With numba importable (the ``fast`` extra), the compiled paths join the same slices (their
compile or on-disk cache load happens before any timing; without numba one line says they
were skipped):

* ``env_compiled`` — ``env(backend="compiled")``: the same AEC loop on the compiled core.
* ``compiled_core`` — the compiled rules core alone, random legal play inside one jitted call
  on pre-dealt deals (:class:`mtrain_env.mexican_train.compiled.bench.CompiledLoop`; no
  observation, like ``core``).
* ``batch_B`` for B = 1, 64, 1024 — the batched API with observation and mask for every
  decision (:class:`mtrain_env.mexican_train.compiled.bench.BatchLoop`); a call counts B
  decision steps, autoreset deals included.

Each contender gets its ratio to OpenSpiel and to ``raw_env``. Targets: ``env()``
>= 2x OpenSpiel, ``raw_env`` >= 3x, core >= 100k steps/s, compiled core >= 3M
steps/s and the batched API >= 500k decision steps/s (its best B) on one core.

Instructions per step, a load-independent figure (``--only`` runs one contender)::

    perf stat -e instructions python -m mtrain_env.bench_speed --only raw_env --seconds 0
    perf stat -e instructions python -m mtrain_env.bench_speed --only raw_env --seconds 10
    # (second count - first count) / steps printed by the second
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

from mtrain_env.tilegame.argtypes import OneLineErrorParser, int_at_least, non_negative_float
from mtrain_env.tilegame.extras import missing_extra
from mtrain_env.tilegame.interrupts import run_main

_BLOCK_MASK = (1 << 16) - 1

#: env(backend="compiled") against env() (the python backend)
TARGET_BACKEND = 2
#: batch sizes of the batched-API contenders
BATCH_SIZES = (1, 64, 1024)
#: the contenders that need numba, in slice order
COMPILED = ("env_compiled", "compiled_core", *(f"batch_{b}" for b in BATCH_SIZES))
#: targets: the core alone, the compiled core alone, the batched API on one core
TARGET_CORE = 100_000
TARGET_COMPILED_CORE = 3_000_000
TARGET_BATCH = 500_000

# CPU time of this process, not wall time: on a shared machine, time spent waiting for a
# core is not the contender's cost (cache and clock effects remain; hence the slices)
_clock = time.process_time


def _uniform_block(seed: int) -> list[float]:
    """Pre-drawn uniforms in [0, 1): the same cheap random choice for every contender."""
    return np.random.default_rng(seed).random(_BLOCK_MASK + 1).tolist()


def _timed(loop: Callable[[float], int], seconds: float) -> tuple[float, int]:
    start = _clock()
    steps = loop(seconds)
    return steps / max(_clock() - start, 1e-9), steps


def bench_aec(make_env: Callable[[], object], seconds: float, seed: int = 0) -> tuple[float, int]:
    """Steps/s of random legal play through ``agent_iter``/``last``/``step``."""
    env = make_env()
    uniform = _uniform_block(seed)

    def loop(budget: float) -> int:
        steps = 0
        game = 0
        end = _clock() + budget
        while _clock() < end:
            env.reset(seed=seed + game)  # type: ignore[attr-defined]
            game += 1
            for _agent in env.agent_iter():  # type: ignore[attr-defined]
                obs, _r, term, trunc, _info = env.last()  # type: ignore[attr-defined]
                if term or trunc:
                    env.step(None)  # type: ignore[attr-defined]
                    continue
                legal = obs["action_mask"].nonzero()[0]  # the idiom, not np.flatnonzero's wrappers
                env.step(int(legal[int(uniform[steps & _BLOCK_MASK] * len(legal))]))  # type: ignore[attr-defined]
                steps += 1
        return steps

    return _timed(loop, seconds)


def bench_core(num_players: int, seconds: float, seed: int = 0) -> tuple[float, int]:
    """Steps/s of the rules core alone: legal moves + apply, random legal choice."""
    from mtrain_env.mexican_train.core.config import GameConfig
    from mtrain_env.mexican_train.core.rules import MexicanTrain
    from mtrain_env.mexican_train.core.state import Phase

    game = MexicanTrain(GameConfig.make(num_players=num_players))
    rng = np.random.default_rng(seed)
    uniform = _uniform_block(seed)
    over = Phase.ROUND_OVER

    def loop(budget: float) -> int:
        steps = 0
        end = _clock() + budget
        while _clock() < end:
            s = game.new_game(rng)
            while s.phase < over:
                moves = game.legal_moves(s)
                game.apply(s, moves[int(uniform[steps & _BLOCK_MASK] * len(moves))])
                steps += 1
        return steps

    return _timed(loop, seconds)


def bench_openspiel(seconds: float, seed: int = 0) -> tuple[float, int]:
    """Steps/s of OpenSpiel's ``python_team_dominoes`` with observation + legal actions."""
    import pyspiel
    from open_spiel.python.games import team_dominoes  # noqa: F401  (registers the game)
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game("python_team_dominoes")
    observer = make_observation(game, pyspiel.IIGObservationType(perfect_recall=False))
    uniform = _uniform_block(seed)
    deal_uniform = _uniform_block(seed + 1)

    def loop(budget: float) -> int:
        steps = 0
        dealt = 0
        end = _clock() + budget
        while _clock() < end:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():  # the deal: the same cheap random choice
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[int(deal_uniform[dealt & _BLOCK_MASK] * len(outcomes))][0])
                    dealt += 1
                    continue
                player = state.current_player()
                observer.set_from(state, player)
                legal = state.legal_actions(player)
                state.apply_action(legal[int(uniform[steps & _BLOCK_MASK] * len(legal))])
                steps += 1
        return steps

    return _timed(loop, seconds)


def numba_missing() -> str | None:
    """Why the compiled contenders cannot run here (``None`` when numba imports)."""
    try:
        import numba  # noqa: F401
    except ImportError as exc:
        return f"{exc} (install the `fast` extra: pip install 'mtrain-env[fast]')"
    return None


def compiled_contenders(num_players: int, seed: int = 0) -> dict[str, Callable[[float], tuple[float, int]]]:
    """The numba contenders, each compiled (or loaded from the on-disk cache) and warmed up.

    Imported here, not at the top: ``bench_speed`` must run without numba.
    """
    import mtrain_env
    from mtrain_env.mexican_train.compiled.bench import BatchLoop, CompiledLoop, deal_pool
    from mtrain_env.mexican_train.core.config import GameConfig

    config = GameConfig.make(num_players=num_players)
    core = CompiledLoop(config, deal_pool(config, 1024, seed), seed + 1, chunk=50_000)
    mtrain_env.env(num_players=num_players, backend="compiled").reset(seed=seed)  # compile or load
    loops: dict[str, Callable[[float], tuple[float, int]]] = {
        "env_compiled": lambda sec: bench_aec(
            lambda: mtrain_env.env(num_players=num_players, backend="compiled"), sec
        ),
        "compiled_core": core.run,
    }
    for b in BATCH_SIZES:
        loops[f"batch_{b}"] = BatchLoop(b, seed, False, num_players=num_players).run
    return loops


def _verdict(value: float, target: float) -> str:
    return "met" if value >= target else "MISSED"


def paired_ratio(rates: dict[str, list[float]], name: str, reference: str = "openspiel") -> list[float]:
    """Per-slice ratios ``name / reference``: each pair was measured seconds apart."""
    return [a / b for a, b in zip(rates[name], rates[reference], strict=True)]


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Run the benchmark and print steps/s and ratios; returns the median rates and ratios."""
    parser = OneLineErrorParser(description=(__doc__ or "").splitlines()[1])
    parser.add_argument(
        "--seconds", type=non_negative_float, default=30.0, help="total CPU seconds per contender (0: --only)"
    )
    parser.add_argument(
        "--slices", type=int_at_least(1), default=30, help="interleaved measurements per contender"
    )
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument(
        "--only",
        choices=("openspiel", "env", "raw_env", "core", *COMPILED),
        help="run this contender alone for --seconds and print its steps (for a hardware counter: "
        "`perf stat -e instructions`, minus a --seconds 0 run for the start-up)",
    )
    args = parser.parse_args(argv)
    if args.seconds == 0 and args.only is None:
        parser.error(f"--seconds: must be a number > 0 (0 only with --only), got {args.seconds:g}")

    from mtrain_env.mexican_train.core.config import GameConfig

    try:
        GameConfig.make(num_players=args.players)
    except ValueError as err:
        parser.error(f"--players: {err}")
    if args.only in (None, "openspiel"):
        missing = missing_extra("openspiel", "the speed benchmark (its reference is OpenSpiel)")
        if missing:
            parser.error(missing)

    import mtrain_env

    n = args.players
    # name -> (CPU seconds -> (steps/s, steps))
    contenders: dict[str, Callable[[float], tuple[float, int]]] = {
        "openspiel": bench_openspiel,
        "env": lambda sec: bench_aec(lambda: mtrain_env.env(num_players=n), sec),
        "raw_env": lambda sec: bench_aec(lambda: mtrain_env.raw_env(num_players=n), sec),
        "core": lambda sec: bench_core(n, sec),
    }
    missing = numba_missing()
    if args.only in COMPILED and missing:
        parser.error(f"--only {args.only} needs numba: {missing}")
    ready = 0.0
    if not missing and (args.only is None or args.only in COMPILED):
        start = time.perf_counter()
        contenders.update(compiled_contenders(n))
        ready = time.perf_counter() - start
    if args.only:
        rate, steps = contenders[args.only](args.seconds)
        print(f"{args.only}: {steps} steps in {args.seconds:g} CPU s")
        return {args.only: rate}
    per = args.seconds / args.slices
    # Interleaved slices, the order reversed every other slice, so that drifting load on a
    # shared machine hits every contender alike. Each ratio is taken within a slice (the two
    # measurements seconds apart) and the median over slices is reported.
    rates: dict[str, list[float]] = {name: [] for name in contenders}
    order = list(contenders)
    from tqdm import tqdm

    for i in tqdm(range(args.slices), desc="slices", unit="slice"):
        for name in order if i % 2 == 0 else order[::-1]:
            rates[name].append(contenders[name](per)[0])
    results = {name: float(np.median(r)) for name, r in rates.items()}
    print(
        f"{n}-player double-12, random legal play, one process, {args.slices} interleaved slices "
        f"of {per:g} CPU s:"
    )
    if missing:
        print(f"  compiled contenders ({', '.join(COMPILED)}) skipped: numba is not importable: {missing}")
    else:
        print(f"  compiled contenders ready in {ready:.2f} s (compile or on-disk cache load, before timing)")
    for name, rate in results.items():
        spread = f"{min(rates[name]):,.0f}..{max(rates[name]):,.0f}"
        unit = "decision steps/s" if name.startswith("batch_") else "steps/s"
        print(f"  {name:13s} {rate:12,.0f} {unit} median   (slices {spread})")
    print("  ratio to OpenSpiel python_team_dominoes, median of per-slice ratios (quartiles):")
    for name, label, target in (("env", "env()  ", 2), ("raw_env", "raw_env", 3)):
        paired = paired_ratio(rates, name)
        q1, median, q3 = np.percentile(paired, [25, 50, 75])
        results[f"{name}_ratio"] = float(median)
        verdict = _verdict(median, target)
        print(
            f"  {label} / OpenSpiel: {median:5.2f}x  ({q1:.2f}..{q3:.2f})  (target >= {target}x): {verdict}"
        )
    for name in ("core", *(c for c in COMPILED if c in rates)):
        cells = []
        for ref, label in (("openspiel", "OpenSpiel"), ("raw_env", "raw_env")):
            q1, median, q3 = np.percentile(paired_ratio(rates, name, ref), [25, 50, 75])
            results[f"{name}_ratio" if ref == "openspiel" else f"{name}_raw_env_ratio"] = float(median)
            cells.append(f"/ {label}: {median:6.1f}x ({q1:.1f}..{q3:.1f})".ljust(36))
        print(f"  {name:13s} " + "".join(cells).rstrip())
    core = results["core"]
    print(
        f"  rules core alone: {core:,.0f} steps/s median (target >= {TARGET_CORE:,}): "
        f"{_verdict(core, TARGET_CORE)}"
    )
    if not missing:
        q1, median, q3 = np.percentile(paired_ratio(rates, "env_compiled", "env"), [25, 50, 75])
        results["env_compiled_env_ratio"] = float(median)
        print(
            f"  env(backend='compiled') / env(): {median:.2f}x ({q1:.2f}..{q3:.2f}) "
            f"(target >= {TARGET_BACKEND}x): {_verdict(median, TARGET_BACKEND)}"
        )
        compiled = results["compiled_core"]
        print(
            f"  compiled core alone: {compiled:,.0f} steps/s median (target >= "
            f"{TARGET_COMPILED_CORE:,}): {_verdict(compiled, TARGET_COMPILED_CORE)}"
        )
        best = max(BATCH_SIZES, key=lambda b: results[f"batch_{b}"])
        rate = results[f"batch_{best}"]
        print(
            f"  batched API, one core: {rate:,.0f} decision steps/s median at B={best}, its best B "
            f"(target >= {TARGET_BATCH:,}): {_verdict(rate, TARGET_BATCH)}"
        )
    return results


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m mtrain_env.bench_speed"))
