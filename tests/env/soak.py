"""The soak: random legal play over random valid configurations, every invariant checked after every step.

``python -m tests.env.soak --steps N [--seed S] [--game mexican_train|block|both]`` (from the
repository root) draws configurations at random — seats, set sizes, presets,
every variant flag, hand sizes, sessions and matches, reward modes — and plays a few
seeded episodes of each with uniformly random legal actions. After every step (dead steps
included) it checks:

* the game state against every invariant of its rules, the same function
  ``load_state_dict`` uses (:func:`mtrain_env.mexican_train.core.invariants.check_state`,
  :func:`mtrain_env.block.core.invariants.check_state`);
* the env's PettingZoo bookkeeping, legal moves and action mask against the game state
  (:meth:`~mtrain_env.tilegame.aec.TileGameEnv.check_bookkeeping`).

A quarter of the episodes run through the wrapped ``env()``, where a rare illegal action
ends the episode (``TerminateIllegalWrapper``), and some episodes are reset before their
dead steps are done, so the bookkeeping of ended episodes is exercised too. Every few
hundred steps, at random, the env is copied through ``load_state_dict(json round trip of
state_dict())`` (now and then through pickle as well) and the copy must be identical:
the same snapshot, types included, the same observations, masks, rewards and infos, and,
for a bare env, the same snapshot again after a few more steps played in lockstep.

Everything is drawn from ``--seed``, so a run is reproducible step for step: a violation
prints its configuration, episode seed and step, and the command that replays the run up
to it. The exit status is 1 if anything broke.
"""

from __future__ import annotations

import json
import pickle
import random
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pettingzoo.utils.env_logger import EnvLogger
from tqdm import tqdm

from mtrain_env.block.core import config as block_config
from mtrain_env.block.core import invariants as block_invariants
from mtrain_env.block.env import env as block_env
from mtrain_env.block.env import raw_env as block_raw_env
from mtrain_env.block.rewards import REWARD_MODES as BLOCK_REWARD_MODES
from mtrain_env.mexican_train.core import invariants as mexican_invariants
from mtrain_env.mexican_train.core.config import PRESETS, VARIANT_FLAGS, max_players
from mtrain_env.mexican_train.env import env as mexican_env
from mtrain_env.mexican_train.env import raw_env as mexican_raw_env
from mtrain_env.mexican_train.rewards import REWARD_MODES as MEXICAN_REWARD_MODES
from mtrain_env.tilegame.aec import TileGameEnv
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.interrupts import run_main
from mtrain_env.tilegame.snapshot import json_equal

__all__ = ["GAMES", "SoakResult", "Violation", "main", "random_config", "run"]

GAMES = ("mexican_train", "block", "both")
#: exceptions that count as a violation (anything an env or a check raises when it breaks)
SOAK_ERRORS = (AssertionError, ArithmeticError, LookupError, RuntimeError, TypeError, ValueError)
#: per step: chance of a snapshot round trip, of an illegal action (wrapped env), of a reset
#: before the dead steps are done (per dead step)
ROUND_TRIP_RATE = 1 / 250
ILLEGAL_RATE = 1 / 3000
EARLY_RESET_RATE = 1 / 8
#: steps a bare twin plays in lockstep after a round trip; the share of round trips through pickle
LOCKSTEP = 6
PICKLE_SHARE = 0.1
WRAPPED_SHARE = 0.25


@dataclass(frozen=True)
class Violation:
    """One broken invariant, with what reproduces it."""

    step: int  #: steps of the whole run, this one included
    episode: int  #: episodes of the whole run, this one included
    game: str
    config: dict[str, Any]
    wrapped: bool
    seed: int  #: the episode's ``reset`` seed
    episode_step: int  #: steps of this episode, this one included
    error: str

    def describe(self, run_seed: int, run_game: str) -> str:
        """What broke, where, and the command that replays the run up to it."""
        factory = (
            f"mtrain_env.{'block.' if self.game == 'block' else ''}{'env' if self.wrapped else 'raw_env'}"
        )
        return (
            f"VIOLATION at step {self.step:,} (episode {self.episode}, its step {self.episode_step}): "
            f"{self.error}\n  game {self.game}: {factory}(**{json.dumps(self.config)}), "
            f"reset(seed={self.seed})\n  replay: python -m tests.env.soak --seed {run_seed} "
            f"--game {run_game} --steps {self.step}"
        )


@dataclass
class SoakResult:
    """Totals of a soak run."""

    steps: int = 0
    episodes: int = 0
    configurations: int = 0
    round_trips: int = 0
    seconds: float = 0.0
    violations: list[Violation] = field(default_factory=list)

    def summary(self) -> str:
        """The final line: steps, episodes, configurations, round trips, violations and steps/s."""
        rate = self.steps / self.seconds if self.seconds > 0 else 0.0
        return (
            f"soak: {self.steps:,} steps, {self.episodes:,} episodes, "
            f"{self.configurations:,} configurations, {self.round_trips:,} snapshot round trips, "
            f"{len(self.violations)} violations, {rate:,.0f} steps/s"
        )


# ----------------------------------------------------------------- configurations
def _mexican_config(rng: random.Random) -> dict[str, Any]:
    max_pips = rng.choice((6, 9, 12, 12, 12, 15, 18))
    top = max_players(max_pips)
    n = rng.randint(2, min(top, 8)) if rng.random() < 0.85 else rng.randint(2, top)
    kw: dict[str, Any] = {"num_players": n, "max_pips": max_pips, "rules": rng.choice(sorted(PRESETS))}
    for flag in VARIANT_FLAGS:
        if rng.random() < 0.3:
            kw[flag] = rng.random() < 0.5
    r = rng.random()
    kw["rounds"] = 1 if r < 0.5 else rng.randint(2, 4) if r < 0.92 else max_pips + 1
    if rng.random() < 0.15:
        tiles = (max_pips + 1) * (max_pips + 2) // 2
        kw["hand_size"] = rng.randint(1, (tiles - 1) // n)
    kw["reward"] = rng.choice(MEXICAN_REWARD_MODES)
    return kw


def _block_config(rng: random.Random) -> dict[str, Any]:
    n = rng.choice(block_config.PLAYER_COUNTS)
    kw: dict[str, Any] = {"num_players": n, "rules": rng.choice(sorted(block_config.PRESETS))}
    choices: dict[str, Sequence[Any]] = {
        "first_opener": block_config.FIRST_OPENERS,
        "opener": [o for o in block_config.OPENERS if n == 4 or o != "partner"],
        "double_opening": (False, True),
        "redeal_doubles": (None, *block_config.REDEAL_THRESHOLDS),
        "closed_scoring": block_config.CLOSED_SCORING,
        "closed_tie": block_config.CLOSED_TIE,
        "scoring": block_config.SCORING,
        "counter_clockwise": (False, True),
    }
    for key, values in choices.items():
        if rng.random() < 0.5:
            kw[key] = rng.choice(list(values))
    kw["match"] = rng.random() < 0.5
    if rng.random() < 0.5:
        kw["target"] = rng.choice((1, 10, 30, 50, 100, 200))
    kw["reward"] = rng.choice(BLOCK_REWARD_MODES)
    return kw


_FACTORIES: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "mexican_train": (mexican_raw_env, mexican_env),
    "block": (block_raw_env, block_env),
}
_CHECKS: dict[str, Callable[[Any, Any], None]] = {
    "mexican_train": mexican_invariants.check_state,
    "block": block_invariants.check_state,
}


def random_config(rng: random.Random, game: str) -> dict[str, Any]:
    """A random configuration of ``game`` that its env accepts (redrawn until it does)."""
    draw = _mexican_config if game == "mexican_train" else _block_config
    while True:
        kw = draw(rng)
        try:
            _FACTORIES[game][0](**kw)
        except (TypeError, ValueError):
            continue  # a hand size the set cannot deal, or a combination the config refuses
        return kw


# ------------------------------------------------------------------------- checks
def _check(game: str, raw: TileGameEnv) -> None:
    _CHECKS[game](raw.game, raw.state_obj)
    raw.check_bookkeeping()


def _first_difference(a: Any, b: Any, path: str = "$") -> str:
    """Where two JSON values differ (value or type), for the violation message."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} {a!r} vs {type(b).__name__} {b!r}"
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return f"{path}: keys {sorted(a)} vs {sorted(b)}"
        for k in a:
            if not json_equal(a[k], b[k]):
                return _first_difference(a[k], b[k], f"{path}.{k}")
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if not json_equal(x, y):
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path}: {a!r} vs {b!r}"


def _expect(ok: bool, what: str) -> None:
    """An ``AssertionError`` unless ``ok`` (an explicit raise: the soak checks under ``python -O`` too)."""
    if not ok:
        raise AssertionError(what)


def _same_env(raw: TileGameEnv, copy: TileGameEnv, how: str) -> None:
    """``copy`` is ``raw`` in everything observable; ``AssertionError`` naming the difference."""
    d, e = raw.state_dict(), copy.state_dict()
    _expect(json_equal(d, e), f"{how}: the copy's snapshot differs at {_first_difference(d, e)}")
    _expect(copy.agent_selection == raw.agent_selection, f"{how}: agent_selection")
    for name in ("agents", "rewards", "_cumulative_rewards", "terminations", "truncations"):
        _expect(getattr(copy, name) == getattr(raw, name), f"{how}: {name}")
    _expect(copy.infos.keys() == raw.infos.keys(), f"{how}: infos")
    for a, info in raw.infos.items():
        other = copy.infos[a]
        _expect(info.keys() == other.keys(), f"{how}: infos[{a}] keys")
        _expect(np.array_equal(info["action_mask"], other["action_mask"]), f"{how}: infos[{a}] mask")
        _expect(info.get("round_result") == other.get("round_result"), f"{how}: infos[{a}] round_result")
    for a in raw.possible_agents:
        x, y = raw.observe(a), copy.observe(a)
        _expect(np.array_equal(x["observation"], y["observation"]), f"{how}: observation of {a}")
        _expect(np.array_equal(x["action_mask"], y["action_mask"]), f"{how}: action mask of {a}")


# ------------------------------------------------------------------------ the run
class _Soak:
    """The state of one run (counters, the random sources, the progress bar)."""

    def __init__(self, steps: int, seed: int, game: str, progress: bool) -> None:
        if game not in GAMES:
            raise ValueError(f"game must be one of {GAMES}, got {game!r}")
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        self.limit = steps
        self.seed = seed
        self.game = game
        self.rng = random.Random(seed)
        self.result = SoakResult()
        self.bar = tqdm(
            total=steps, unit="step", unit_scale=True, file=sys.stderr, disable=not progress, mininterval=1.0
        )
        self._pending_bar = 0

    def _advance(self) -> None:
        self.result.steps += 1
        self._pending_bar += 1
        if self._pending_bar >= 4096:
            self.bar.update(self._pending_bar)
            self._pending_bar = 0

    def run(self) -> SoakResult:
        start = time.perf_counter()
        printing = EnvLogger._output
        EnvLogger.suppress_output()  # the wrapper's illegal-move warning is expected here
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                while self.result.steps < self.limit:
                    game = self.game if self.game != "both" else self.rng.choice(("mexican_train", "block"))
                    self._configuration(game, random_config(self.rng, game))
        finally:
            if printing:
                EnvLogger.unsuppress_output()
        self.bar.update(self._pending_bar)
        self.bar.close()
        self.result.seconds = time.perf_counter() - start
        return self.result

    def _configuration(self, game: str, kw: dict[str, Any]) -> None:
        """A few episodes of one configuration, on envs kept across episodes (as users do)."""
        self.result.configurations += 1
        raw_factory, wrapped_factory = _FACTORIES[game]
        envs = {False: raw_factory(**kw), True: wrapped_factory(**kw)}
        twin = raw_factory(**kw)
        for _ in range(self.rng.randint(1, 4)):
            if self.result.steps >= self.limit:
                return
            wrapped = self.rng.random() < WRAPPED_SHARE
            seed = self.rng.getrandbits(32)
            self.result.episodes += 1
            episode_step = [0]
            try:
                self._episode(game, envs[wrapped], twin, seed, episode_step)
            except SOAK_ERRORS as err:
                violation = Violation(
                    step=self.result.steps,
                    episode=self.result.episodes,
                    game=game,
                    config=kw,
                    wrapped=wrapped,
                    seed=seed,
                    episode_step=episode_step[0],
                    error=f"{type(err).__name__}: {err}",
                )
                self.result.violations.append(violation)
                self.bar.write(violation.describe(self.seed, self.game))
                return  # these envs may be broken: the next configuration gets new ones

    def _episode(self, game: str, env: Any, twin: TileGameEnv, seed: int, episode_step: list[int]) -> None:
        rng = random.Random(seed)
        env.reset(seed=seed)
        raw: TileGameEnv = env.unwrapped
        wrapped = env is not raw
        _check(game, raw)
        lockstep = 0
        while raw.agents and self.result.steps < self.limit:
            agent = raw.agent_selection
            if raw.terminations[agent] or raw.truncations[agent]:
                if rng.random() < EARLY_RESET_RATE:
                    return  # reset with dead steps left (the next episode starts from here)
                action = None
            else:
                legal = raw.legal_actions()
                action = legal[rng.randrange(len(legal))]
                if wrapped and rng.random() < ILLEGAL_RATE and len(legal) < raw._num_actions:
                    while action in legal:
                        action = rng.randrange(raw._num_actions)
            env.step(action)
            EnvLogger.flush()  # the illegal-move warning, kept in a list by PettingZoo
            episode_step[0] += 1
            self._advance()
            _check(game, raw)
            if lockstep:
                twin.step(action)
                lockstep -= 1
                if not lockstep:
                    _same_env(raw, twin, f"{LOCKSTEP} steps in lockstep after a round trip")
            elif rng.random() < ROUND_TRIP_RATE:
                lockstep = self._round_trip(game, raw, twin, rng) if not wrapped else 0

    def _round_trip(self, game: str, raw: TileGameEnv, twin: TileGameEnv, rng: random.Random) -> int:
        """Copy ``raw`` into ``twin`` through JSON (sometimes pickle); returns the lockstep length."""
        self.result.round_trips += 1
        if rng.random() < PICKLE_SHARE:
            clone = pickle.loads(pickle.dumps(raw))
            _check(game, clone)
            _same_env(raw, clone, "pickle round trip")
        twin.load_state_dict(json.loads(json.dumps(raw.state_dict())))
        _check(game, twin)
        _same_env(raw, twin, "JSON round trip")
        return LOCKSTEP


def run(steps: int, seed: int = 0, game: str = "both", progress: bool = False) -> SoakResult:
    """Soak ``steps`` steps of random play from ``seed``; violations are in the result."""
    return _Soak(steps, seed, game, progress).run()


def main(argv: Sequence[str] | None = None) -> int:
    """The soak's command line: prints the totals; 1 if any invariant broke."""
    parser = OneLineErrorParser(prog="python -m tests.env.soak", description=__doc__)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--game", choices=GAMES, default="both")
    args = parser.parse_args(argv)
    for option, value, least in (("--steps", args.steps, 1), ("--seed", args.seed, 0)):
        if value < least:
            parser.error(f"argument {option}: must be an int >= {least}, got {value}")
    result = run(args.steps, args.seed, args.game, progress=True)
    print(result.summary())
    return 1 if result.violations else 0


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m tests.env.soak"))
