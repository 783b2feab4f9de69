"""The differential run: the AEC env on both backends, compared at every decision.

``python -m tests.compiled.backend_diff --decisions 1000000 --workers 2`` (from the repository
root; needs numba) plays the same seeded episodes through
``env(backend="python")`` and ``env(backend="compiled")`` (the wrapped env users call) with
the same random actions, and at every step compares everything an agent or a tool sees:

* ``agent_selection`` and ``last()``: the observation (dtype and bytes), the action mask
  (so the legal-move sets), the reward, termination, truncation and the infos (the round
  results of R23-R25 included);
* ``state_dict()`` as JSON text (hidden state, boneyard order, scores, RNG, bookkeeping);
* at each episode's end the final scores (R25).

A decision is a step of a live agent (dead steps are compared too, not counted). The
episodes span every preset, every variant flag alone (on and off), 2-8 players (more with
the big sets), double-6/9/12/15/18, sessions of several rounds up to full ones and every
reward mode: a fixed list of such configurations first (:func:`coverage_configs`), then
random combinations. Now and then an action is illegal (the wrappers end the game) or an
observation is read for a seat off turn. Episode ``e`` depends only on ``(seed, e)``, so
a run is reproducible whatever the worker count, and a difference prints its episode, its
configuration and the command that replays it. The exit status is 1 on any difference.
"""

from __future__ import annotations

import functools
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any

import numpy as np
from pettingzoo.utils.env_logger import EnvLogger
from tqdm import tqdm

from mtrain_env.mexican_train.core.config import PRESETS, VARIANT_FLAGS, GameConfig, max_players
from mtrain_env.mexican_train.env import env as mexican_env
from mtrain_env.mexican_train.rewards import REWARD_MODES
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.interrupts import run_main, workers_ignore_interrupts
from mtrain_env.tilegame.tiles import SUPPORTED_MAX_PIPS

__all__ = [
    "DiffResult",
    "DifferenceError",
    "coverage_configs",
    "episode_config",
    "main",
    "play_episode",
    "play_episodes",
    "run",
]

#: episodes a worker plays per task (the unit of reproducibility and of progress)
CHUNK = 8
#: per decision: chance of an illegal action (the wrapped env ends the game), of also
#: observing a seat off turn
ILLEGAL_RATE = 1 / 4000
OFF_TURN_RATE = 1 / 20


class DifferenceError(AssertionError):
    """The backends disagree; the message says where and what."""


@dataclass
class DiffResult:
    """Totals of a run (or of a part of one)."""

    decisions: int = 0
    steps: int = 0  #: every step, dead steps included
    episodes: int = 0
    rounds: int = 0
    illegal: int = 0  #: episodes ended by an illegal action
    players: set[int] = field(default_factory=set)
    pips: set[int] = field(default_factory=set)
    presets: set[str] = field(default_factory=set)
    flags_on: set[str] = field(default_factory=set)
    rewards: set[str] = field(default_factory=set)
    max_rounds: int = 0
    differences: list[str] = field(default_factory=list)

    def add(self, other: DiffResult) -> None:
        for name in ("decisions", "steps", "episodes", "rounds", "illegal"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("players", "pips", "presets", "flags_on", "rewards"):
            getattr(self, name).update(getattr(other, name))
        self.max_rounds = max(self.max_rounds, other.max_rounds)
        self.differences += other.differences

    def summary(self) -> str:
        verdict = "no difference" if not self.differences else f"{len(self.differences)} DIFFERENCE(S)"
        return (
            f"backend-diff: {self.decisions:,} decisions ({self.steps:,} steps) in {self.episodes:,} "
            f"episodes, {self.rounds:,} rounds (sessions up to {self.max_rounds}), "
            f"{self.illegal} ended by an illegal action; players {_span(self.players)}, "
            f"double-{'/'.join(map(str, sorted(self.pips)))}, presets {'/'.join(sorted(self.presets))}, "
            f"{len(self.flags_on)}/{len(VARIANT_FLAGS)} flags on, rewards {'/'.join(sorted(self.rewards))}: "
            f"{verdict}"
        )


def _span(values: set[int]) -> str:
    return f"{min(values)}-{max(values)}" if values else "-"


# ---------------------------------------------------------------- configurations
@functools.cache
def coverage_configs() -> tuple[dict[str, Any], ...]:
    """Configurations every run starts with: each preset, seat count, set size, flag alone
    (on, and off where a preset turns it on), reward mode and a full session."""
    out: list[dict[str, Any]] = []
    for rules in sorted(PRESETS):
        out += [{"rules": rules, "num_players": n} for n in range(2, 9)]
        out.append({"rules": rules, "rounds": 3, "num_players": 4})
    for pips in SUPPORTED_MAX_PIPS:
        out += [{"max_pips": pips, "num_players": n} for n in (2, 4, min(8, max_players(pips)))]
    for flag in VARIANT_FLAGS:
        out += [{flag: True, "num_players": n} for n in (2, 4, 6)]
        out.append({flag: True, "rules": "wikipedia", "rounds": 2, "num_players": 3})
        out.append({flag: False, "rules": "cardinal", "num_players": 4})
    for mode in REWARD_MODES:
        out.append({"reward": mode, "rounds": 4, "max_pips": 9, "num_players": 3})
    out.append({"max_pips": 6, "rounds": 7, "num_players": 2, "reward": "win"})  # a full session (R25)
    out.append({"max_pips": 9, "rounds": 10, "num_players": 4, "positive_scoring": True})
    return tuple(c for c in out if _valid(c))


def _valid(kwargs: dict[str, Any]) -> bool:
    try:
        GameConfig.make(**{k: v for k, v in kwargs.items() if k != "reward"})
    except ValueError:
        return False
    return True


def _random_config(rng: random.Random) -> dict[str, Any]:
    """A random valid combination: seats, set, preset, flags, session length, reward mode."""
    while True:
        pips = rng.choice((6, 9, 12, 12, 15, 18))
        top = max_players(pips)
        n = rng.randint(2, min(top, 8)) if rng.random() < 0.9 else rng.randint(2, top)
        kw: dict[str, Any] = {"num_players": n, "max_pips": pips, "rules": rng.choice(sorted(PRESETS))}
        for flag in VARIANT_FLAGS:
            if rng.random() < 0.35:
                kw[flag] = rng.random() < 0.6
        r = rng.random()
        kw["rounds"] = 1 if r < 0.45 else rng.randint(2, 4) if r < 0.95 else pips + 1
        if rng.random() < 0.1:
            tiles = (pips + 1) * (pips + 2) // 2
            kw["hand_size"] = rng.randint(1, (tiles - 1) // n)
        kw["reward"] = rng.choice(REWARD_MODES)
        if _valid(kw):
            return kw


def episode_config(seed: int, episode: int) -> tuple[dict[str, Any], int]:
    """Episode ``episode`` of a run seeded ``seed``: its env keywords and its reset seed."""
    coverage = coverage_configs()
    rng = random.Random(f"backend-diff {seed} {episode}")
    kw = dict(coverage[episode]) if episode < len(coverage) else _random_config(rng)
    kw.setdefault("reward", rng.choice(REWARD_MODES))
    return kw, rng.randrange(2**32)


# ------------------------------------------------------------------- comparison
def make_env(backend: str, kwargs: dict[str, Any]) -> Any:
    """The env a backend is compared through (the wrapped ``env()``)."""
    return mexican_env(backend=backend, **kwargs)


def _view(e: Any, agent: str | None = None) -> tuple[Any, ...]:
    """Everything ``last()`` (or ``observe(agent)``) and the snapshot say, comparable."""
    if agent is not None:
        obs = e.observe(agent)
        return (
            agent,
            obs["observation"].dtype.str,
            obs["observation"].tobytes(),
            obs["action_mask"].tobytes(),
        )
    obs, reward, term, trunc, info = e.last()
    info = {k: (v.dtype.str + v.tobytes().hex() if isinstance(v, np.ndarray) else v) for k, v in info.items()}
    return (
        e.agent_selection,
        obs["observation"].dtype.str,
        obs["observation"].tobytes(),
        obs["action_mask"].dtype.str,
        obs["action_mask"].tobytes(),
        type(reward).__name__,
        reward,
        term,
        trunc,
        json.dumps(info, default=repr),
        json.dumps(e.unwrapped.state_dict()),  # key order included: the snapshot as written
    )


_FIELDS = (
    "agent_selection",
    "observation dtype",
    "observation",
    "action_mask dtype",
    "action_mask (the legal moves)",
    "reward type",
    "reward",
    "termination",
    "truncation",
    "infos",
    "state_dict()",
)


def _compare(a: tuple[Any, ...], b: tuple[Any, ...], where: str) -> None:
    if a == b:
        return
    for name, x, y in zip(_FIELDS, a, b, strict=False):
        if x != y:
            raise DifferenceError(f"{where}: {name} differs: python {_short(x)} vs compiled {_short(y)}")
    raise DifferenceError(f"{where}: differs")


def _short(x: Any) -> str:
    text = x.hex() if isinstance(x, bytes) else repr(x)
    return text if len(text) <= 160 else text[:160] + "..."


def play_episode(kwargs: dict[str, Any], seed: int, result: DiffResult) -> None:
    """Play one seeded episode on both backends in lockstep; raise :class:`DifferenceError`."""
    py = make_env("python", kwargs)
    cc = make_env("compiled", kwargs)
    py.reset(seed=seed)
    cc.reset(seed=seed)
    rng = random.Random(seed)
    agents = py.possible_agents
    step = 0
    rounds = 0
    for _agent in py.agent_iter():
        where = f"step {step}"
        _compare(_view(py), _view(cc), where)
        if rng.random() < OFF_TURN_RATE:
            other = agents[rng.randrange(len(agents))]
            if other in py.agents:
                _compare(_view(py, other), _view(cc, other), f"{where}, observe({other!r})")
        obs, _, term, trunc, info = py.last()
        if "round_result" in info:
            rounds += 1
        if term or trunc:
            action = None
        else:
            mask = obs["action_mask"]
            if rng.random() < ILLEGAL_RATE and not mask.all():
                action = int(rng.choice(np.flatnonzero(mask == 0).tolist()))
                result.illegal += 1
            else:
                action = int(rng.choice(np.flatnonzero(mask).tolist()))
            result.decisions += 1
        py.step(action)
        cc.step(action)
        step += 1
    _compare(_view_end(py), _view_end(cc), f"end after step {step}")
    if cc.agents:
        raise DifferenceError(f"end after step {step}: the compiled env still has agents {cc.agents}")
    result.steps += step
    result.episodes += 1
    result.rounds += rounds
    result.max_rounds = max(result.max_rounds, py.unwrapped.config.rounds)
    config = py.unwrapped.config
    result.players.add(config.num_players)
    result.pips.add(config.max_pips)
    result.presets.add(kwargs.get("rules", "pagat"))
    result.rewards.add(kwargs["reward"])
    result.flags_on.update(f for f in VARIANT_FLAGS if getattr(config, f))


def _view_end(e: Any) -> tuple[Any, ...]:
    raw = e.unwrapped
    return (json.dumps(raw.state_dict()), raw.state_obj.scores, raw.state_obj.round_scores)


def run_chunk(task: tuple[int, int]) -> DiffResult:
    """Episodes ``chunk * CHUNK ..`` of a run seeded ``seed`` (a worker's task)."""
    seed, chunk = task
    return play_episodes(seed, chunk * CHUNK, CHUNK)


def play_episodes(seed: int, first: int, episodes: int) -> DiffResult:
    """Episodes ``first .. first + episodes - 1`` of a run seeded ``seed``; a difference is
    recorded (with the command that replays its episode) and the next episode goes on."""
    result = DiffResult()
    EnvLogger.suppress_output()  # the wrapped envs' illegal-move warnings are expected
    try:
        for episode in range(first, first + episodes):
            kwargs, episode_seed = episode_config(seed, episode)
            try:
                play_episode(kwargs, episode_seed, result)
            except DifferenceError as err:
                result.differences.append(
                    f"episode {episode} (env(**{kwargs!r}), reset(seed={episode_seed})): {err}; replay: "
                    "python -m tests.compiled.backend_diff "
                    f"--seed {seed} --first-episode {episode} --episodes 1"
                )
    finally:
        EnvLogger.unsuppress_output()
    return result


def _tasks(seed: int, first_chunk: int) -> Iterator[tuple[int, int]]:
    chunk = first_chunk
    while True:
        yield seed, chunk
        chunk += 1


def run(
    decisions: int, seed: int = 0, workers: int = 1, progress: bool = True, first_episode: int = 0
) -> DiffResult:
    """Play chunks of episodes in order until at least ``decisions`` decisions were compared
    (the chunks run on ``workers`` processes; the totals do not depend on their number)."""
    total = DiffResult()
    bar = tqdm(total=decisions, unit="dec", unit_scale=True, disable=not progress, desc="backend-diff")
    first_chunk = first_episode // CHUNK
    try:
        if workers <= 1:
            results: Iterator[DiffResult] = map(run_chunk, _tasks(seed, first_chunk))
            pool = None
        else:
            with workers_ignore_interrupts():  # the parent stops them
                pool = get_context("spawn").Pool(workers)
            results = pool.imap(run_chunk, _tasks(seed, first_chunk), chunksize=1)
        for part in results:
            total.add(part)
            bar.update(min(part.decisions, max(decisions - bar.n, 0)))
            bar.set_postfix(episodes=total.episodes, differences=len(total.differences))
            if total.decisions >= decisions or total.differences:
                break
    finally:
        bar.close()
        if workers > 1 and pool is not None:
            pool.terminate()
    return total


def main(argv: list[str] | None = None) -> int:
    parser = OneLineErrorParser(
        prog="python -m tests.compiled.backend_diff", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--decisions", type=int, default=100_000, help="decisions to compare (at least)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--first-episode",
        type=int,
        default=0,
        help="replay (with --episodes) from this episode; a run starts at its chunk of 8",
    )
    parser.add_argument(
        "--episodes", type=int, default=None, help="replay this many episodes (no progress bar)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    for name in ("decisions", "workers", "episodes"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"argument --{name}: must be an int >= 1, got {getattr(args, name)}")
    for name in ("seed", "first_episode"):
        if getattr(args, name) < 0:
            parser.error(
                f"argument --{name.replace('_', '-')}: must be an int >= 0, got {getattr(args, name)}"
            )
    if args.episodes is not None:
        result = play_episodes(args.seed, args.first_episode, args.episodes)
    else:
        result = run(args.decisions, args.seed, args.workers, not args.quiet, args.first_episode)
    for line in result.differences:
        print(line, file=sys.stderr)
    print(result.summary())
    return 1 if result.differences else 0


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m tests.compiled.backend_diff"))
