"""Duplicate-deal tournaments: the run's plan, playing deals (on workers), and resume.

The unit of work is one **deal**: a seeded random deal of round 0 (Mexican Train: R4, R5,
R8 and a first player, R6; block dominoes: B3-B5), replayed once per **game** with the
agents rotated around the table, so that every agent plays every hand from every seat. In
each game seat ``s`` of rotation ``r`` holds ``lineup[(s - r) mod P]``; the hands (and the
opener) stay with the seats, so across the rotations each hand is played by each agent of
the lineup. A lineup of ``P`` different agents has ``P`` rotations; a cycled one has as
many as its period (``a b a b``: 2), since further rotations would repeat the same seating.

* **Lineups**: with ``|A| <= P`` agents the seats are filled by cycling the agent list
  (``a b a b`` for two agents and four seats); with ``|A| > P`` every ``P``-subset of the
  agents is a lineup (each deal is then played ``C(|A|, P) * P`` times); in a partnership
  game partners are the same agent and every two agents meet as ``a b a b``; a user lineup
  (agent labels, one per seat) replaces these.
* **Sessions** (``rounds_per_game > 1``, R25): round 0 comes from our deal; the later
  rounds are dealt by the env from its own generator, seeded per deal and identical for
  every rotation, so the whole session is duplicated (the env draws from that generator
  only to deal).
* **Seeds**: every random number comes from ``numpy.random.SeedSequence`` over
  ``(seed, tag, deal, lineup, rotation, seat)``; results never depend on the worker count
  or the order in which deals finish.
* **Resume**: ``run.json`` holds the run's identity (resolved game config, agents and
  their ``params()``, lineups, seed); ``results.csv`` gets one block of rows per finished
  deal, in deal order, each followed by its checksum (:mod:`agents.tournament.results`).
  A restart keeps the verified deals, drops one cut short by a kill, and plays only the
  missing deal ids; a different configuration or a damaged file is refused. ``deals`` is
  not part of the identity: rerunning with a larger ``deals`` extends a finished run.
* **Replays** (``replays_dir``): every game is also written as a replay file
  (:mod:`mtrain_env.replay`), named by its deal and seating (:func:`replay_name`), by the
  worker that plays it; the files are the same for any worker count. A resumed deal is
  not played again, so its replay is the one the first run wrote (if it saved them).
"""

from __future__ import annotations

import copy
import functools
import io
import json
import math
import os
import pickle
import re
import sys
import time
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np

from agents.base import BaseAgent
from agents.play import AgentError, RoundRecord, play_game
from agents.registry import agent_class, resolve
from agents.spec import AgentSpec
from agents.tournament.games import TournamentGame, game_of
from agents.tournament.results import (
    RESULTS_FILE,
    ConfigMismatchError,
    DamagedResultsError,
    ResultsFile,
    Row,
    standings,
)
from agents.tournament.seating import (
    agent_seed,
    deal_seed,
    make_lineups,
    partner_lineups,
    rotations,
    seating,
    session_seed,
)
from agents.tournament.timing import TIMING_FILE, TimingLedger
from mtrain_env.mexican_train import GameConfig as MexicanTrainConfig
from mtrain_env.replay import ReplayRecorder, write_replay
from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.files import atomic_write, os_error_text
from mtrain_env.tilegame.interrupts import ignore_interrupts, quiet_spawn_context, workers_ignore_interrupts

#: bump when the meaning or layout of ``results.csv`` changes (old runs are then refused)
FORMAT_VERSION = 2  # 2: results.sha256 beside results.csv
#: where deals are played: this process or a process pool, or Ray actors
BACKENDS = ("processes", "ray")
RUN_FILE = "run.json"


class AgentFailedError(RuntimeError):
    """An entrant failed in a deal: it raised inside ``act`` or chose an illegal action.

    The message names the entrant, seat, deal and rotation; ``details`` is the agent's own
    traceback (text, so the error crosses a process pool or a Ray actor intact)."""

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.details = details

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.details))


# --------------------------------------------------------------------- config
@dataclass(frozen=True)
class TournamentConfig:
    """A tournament: who plays which game, on how many duplicate deals.

    Args:
        agents: the entrants: spec strings (``"mc[sims=64]"``), :class:`AgentSpec` objects,
            or agent objects (:func:`agents.custom.from_policy` makes one of a policy
            function or a model; it plays as it is, copied only for a game where it holds
            several seats; picklable when ``workers != 1``).
        game: the game and its rules, one frozen config object:
            ``mtrain_env.mexican_train.GameConfig.make(num_players=4, rounds=13, ...)``
            (the default: 4 players, double-12, pagat, single rounds) or
            ``mtrain_env.block.GameConfig.make(...)`` (partnership block dominoes, one
            hand per game).
        deals: number of duplicate deals (deal ids ``0..deals-1``).
        seed: the run's root seed (>= 0); everything random derives from it.
        lineup: optional agent labels, one per seat; default: see :func:`make_lineups`.
        duplicate: ``False`` plays each deal once per lineup, rotation ``deal mod P``
            (independent deals, for comparison with duplicate play).
        workers: processes; 1 plays in this process, 0 one per usable CPU (with
            ``backend="ray"``: Ray actors, 0 = one per CPU of the Ray instance).
        backend: ``"processes"`` (default: this process or a process pool) or ``"ray"``
            (:mod:`agents.tournament.ray_backend`); the results are the same on both.
        address: the Ray cluster of ``backend="ray"`` (``None``: a local Ray instance).
        out_dir: directory of the result files; ``None`` keeps results in memory only
            (no resume, no files).
        overwrite: delete earlier results in ``out_dir`` instead of resuming them.
        progress: show a tqdm progress bar.
        plots: write the PNG plots.
        replays_dir: write every game played as a replay file there (:func:`replay_name`);
            ``None`` (default) writes none. Not part of the run's identity.
    """

    agents: Sequence[AgentSpec | str | BaseAgent[Any]]
    game: Any = field(default_factory=MexicanTrainConfig)
    deals: int = 100
    seed: int = 0
    lineup: Sequence[str] | None = None
    duplicate: bool = True
    workers: int = 1
    backend: str = "processes"
    address: str | None = None
    out_dir: str | os.PathLike[str] | None = None
    overwrite: bool = False
    progress: bool = True
    plots: bool = True
    replays_dir: str | os.PathLike[str] | None = None

    def __post_init__(self) -> None:
        specs = tuple(AgentSpec.of(a) for a in self.agents)  # "mc[sims=64]" parsed, never a bare name
        object.__setattr__(self, "agents", specs)
        if not specs:
            raise ValueError("a tournament needs at least one agent")
        game_of(self.game).check(self.game)  # TypeError for anything but a game config
        for key, value, least in (
            ("deals", self.deals, 1),
            ("seed", self.seed, 0),
            ("workers", self.workers, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
                raise ValueError(f"{key} must be an int >= {least}, got {value!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.address is not None and self.backend != "ray":
            raise ValueError(f"address is for backend='ray' (a Ray cluster), got backend={self.backend!r}")

    @property
    def num_players(self) -> int:
        return int(self.game.num_players)


@dataclass(frozen=True)
class Plan:
    """The resolved, picklable description of a run (what every worker needs)."""

    game_config: Any  #: the frozen game config (:class:`TournamentConfig`'s ``game``)
    names: tuple[str, ...]
    params: tuple[dict[str, Any], ...]
    labels: tuple[str, ...]
    agent_params: tuple[dict[str, Any], ...]  #: each agent's ``params()`` (recorded)
    lineups: tuple[tuple[int, ...], ...]
    seed: int
    duplicate: bool
    #: the agent objects given as entrants (``None`` for those built by name)
    objects: tuple[Any, ...] = ()

    def agent_object(self, index: int) -> Any:
        """The agent object of entrant ``index``, or ``None`` if it is built from its spec."""
        return self.objects[index] if self.objects else None

    def seats_in_a_game(self, index: int) -> int:
        """The most seats entrant ``index`` holds in one game (an agent object is copied for
        each seat past the first: two seats of a game never share an instance)."""
        return max(lineup.count(index) for lineup in self.lineups)

    @property
    def adapter(self) -> TournamentGame:
        """What the harness needs to know of the game (:mod:`agents.tournament.games`)."""
        return game_of(self.game_config)

    @property
    def game(self) -> dict[str, Any]:
        """The resolved game config as JSON (``GameConfig.to_dict()``)."""
        return dict(self.game_config.to_dict())

    @property
    def game_name(self) -> str:
        return self.adapter.name

    @property
    def num_players(self) -> int:
        return int(self.game_config.num_players)

    @property
    def rounds(self) -> int:
        return self.adapter.rounds(self.game_config)

    def round_problem(self, rows: Sequence[Row]) -> tuple[int, str] | None:
        """What one round's rows contradict of the game's rules under this run's config."""
        return self.adapter.round_problem(self.game_config, rows)

    def games(self, deal: int) -> list[tuple[int, int]]:
        """``(lineup, rotation)`` of every game of ``deal``, in play (and file) order.

        Duplicate: every distinct rotation of every lineup. Otherwise one game per lineup,
        rotated by ``deal`` (seats balanced over deals, each deal played once).
        """
        if self.duplicate:
            return [(li, r) for li, lineup in enumerate(self.lineups) for r in range(rotations(lineup))]
        return [(li, deal % rotations(lineup)) for li, lineup in enumerate(self.lineups)]

    @property
    def games_per_deal(self) -> int:
        if self.duplicate:
            return sum(rotations(lineup) for lineup in self.lineups)
        return len(self.lineups)

    @property
    def rows_per_deal(self) -> int:
        return self.games_per_deal * self.rounds * self.num_players

    def identity(self) -> dict[str, Any]:
        """What must match for results to be resumed (``deals`` and ``workers`` excluded)."""
        from mtrain_env import __version__

        return {
            "format_version": FORMAT_VERSION,
            "mtrain_env": __version__,
            "game_name": self.game_name,
            "game": self.game,
            "agents": [
                {"name": n, "label": lab, "params": p, "agent_params": ap}
                for n, lab, p, ap in zip(self.names, self.labels, self.params, self.agent_params, strict=True)
            ],
            "lineups": [list(li) for li in self.lineups],
            "seed": self.seed,
            "duplicate": self.duplicate,
        }


def checked_agent(spec: AgentSpec, config: Any, label: str | None = None) -> Any:
    """The agent of ``spec`` for games of ``config`` (seed 0; an agent object: itself),
    checked as a run checks its entrants before the first deal: its parameters against its
    constructor's signature (:func:`~agents.registry.resolve`) and what it reads against the
    table (:meth:`~agents.base.BaseAgent.check_game`). ``ValueError`` in words, the
    constructor's and the table's errors prefixed with ``label`` (default: the spec's)."""
    factory = None if spec.agent is not None else resolve(spec, game_of(config).name)
    try:
        agent: Any = spec.agent if factory is None else factory[0](seed=0, **factory[1])
        agent.check_game(config)
    except ValueError as err:
        raise ValueError(f"{label or spec.default_label()}: {err}") from None
    return agent


def make_plan(config: TournamentConfig) -> Plan:
    """Validate a config and resolve agents, labels and lineups (builds each agent once)."""
    gc = config.game
    specs: tuple[AgentSpec, ...] = tuple(config.agents)  # type: ignore[arg-type]  # normalized in __post_init__
    labels: list[str] = []
    for spec in specs:
        label = spec.label or spec.default_label()
        if label in labels:
            label = f"{label}#{sum(1 for x in labels if x.split('#')[0] == label) + 1}"
        labels.append(label)
    agent_params = [
        _jsonable(checked_agent(spec, gc, label).params()) for spec, label in zip(specs, labels, strict=True)
    ]
    p = gc.num_players
    if config.lineup is not None:
        if len(config.lineup) != p:
            raise ValueError(f"the lineup names {len(config.lineup)} seats for {p} players")
        unknown = [x for x in config.lineup if x not in labels]
        if unknown:
            raise ValueError(f"lineup names unknown agents {unknown}; agents are {labels}")
        unused = [x for x in labels if x not in config.lineup]
        if unused:
            raise ValueError(f"agents {unused} have no seat in the lineup {list(config.lineup)}")
        lineups = [tuple(labels.index(x) for x in config.lineup)]
    elif game_of(gc).partnerships(gc):
        lineups = partner_lineups(len(specs), p)
    else:
        lineups = make_lineups(len(specs), p)
    objects = tuple(s.agent for s in specs)
    plan = Plan(
        game_config=gc,
        objects=objects if any(o is not None for o in objects) else (),
        names=tuple(s.name if s.agent is None else _object_name(s.agent) for s in specs),
        params=tuple(_jsonable(dict(s.params)) for s in specs),
        labels=tuple(labels),
        agent_params=tuple(agent_params),
        lineups=tuple(lineups),
        seed=int(config.seed),
        duplicate=bool(config.duplicate),
    )
    for index, (spec, label) in enumerate(zip(specs, labels, strict=True)):
        if spec.agent is not None:
            _check_copyable(spec.agent, label, plan.seats_in_a_game(index))
            if config.workers != 1 or config.backend == "ray":
                _check_sendable(spec.agent, label, config)
    return plan


def _check_copyable(agent: Any, label: str, seats: int) -> None:
    """An agent object holding several seats of a game is copied for each: refuse one that
    cannot be, up front."""
    if seats > 1:
        try:
            copy.deepcopy(agent)
        except (TypeError, RuntimeError, copy.Error) as err:
            raise ValueError(
                f"{label}: an agent object holding {seats} seats of a game is copied for each, "
                f"and this one cannot be ({err}); give it one seat (a lineup) or a factory"
            ) from None


def _object_name(agent: Any) -> str:
    """How a run records an agent given as an object: its class (its label is the name)."""
    return f"object:{type(agent).__module__}.{type(agent).__qualname__}"


class _SendablePickler(pickle.Pickler):
    """Pickles into nothing, noting any class or function found by reference in a
    ``__main__`` that worker processes cannot import (``python -c``, a notebook, a REPL)."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO())
        self.unreachable: str | None = None

    def reducer_override(self, obj: Any) -> Any:
        by_reference = isinstance(obj, (type, types.FunctionType))
        in_main = by_reference and getattr(obj, "__module__", None) == "__main__"
        if in_main and self.unreachable is None and not hasattr(sys.modules["__main__"], "__file__"):
            self.unreachable = obj.__qualname__
        return NotImplemented


def _check_sendable(agent: Any, label: str, config: TournamentConfig) -> None:
    """An agent object reaches worker processes pickled: refuse one that cannot be, up front
    (what a worker could not unpickle would never start)."""
    where = "Ray actors" if config.backend == "ray" else f"workers={config.workers}"
    advice = "play it with workers=1, or give a 'module:factory' spec that builds it in each worker"
    pickler = _SendablePickler()
    try:
        pickler.dump(agent)
    except (pickle.PicklingError, TypeError, AttributeError) as err:
        raise ValueError(
            f"{label}: an agent object must be picklable to play on {where} ({err}); {advice}"
        ) from None
    if pickler.unreachable is not None:
        raise ValueError(
            f"{label}: {pickler.unreachable!r} is defined in an interactive __main__, which the "
            f"processes of {where} cannot import; {advice}"
        )


def _jsonable(d: Mapping[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(dict(d), sort_keys=True, default=repr))


# ----------------------------------------------------------------------- play
@dataclass
class DealResult:
    """What playing one deal returns: its CSV rows and timing (timing is not in the CSV)."""

    deal: int
    rows: list[Row]
    think_seconds: list[float]  #: per agent index, time inside ``act``
    decisions: list[int]  #: per agent index
    rounds: int
    actions: int


def replay_name(plan: Plan, deal: int, lineup: int, rotation: int) -> str:
    """The replay file name of one game: deal, lineup, rotation and the seats' agent labels
    (``deal00007_l0_r2_greedy-planner-greedy-planner.jsonl``; labels made file-name safe:
    ``mc[rollouts=32]`` -> ``mc.rollouts=32``)."""
    seats = seating(plan.lineups[lineup], rotation)
    labels = "-".join(_file_safe(plan.labels[i]) for i in seats)
    return f"deal{deal:05d}_l{lineup}_r{rotation}_{labels[:160]}.jsonl"


def dir_slug(text: str) -> str:
    """``text`` (a label or spec) as a directory name: runs of other characters become ``-``."""
    return re.sub(r"[^A-Za-z0-9._=-]+", "-", text).strip("-.")


def _file_safe(label: str) -> str:
    label = label.replace("[", ".").replace("]", "").replace(",", ".")
    return re.sub(r"[^A-Za-z0-9_.=+]", "_", label)


class DealPlayer:
    """Plays deals of one :class:`Plan`: one env and a cache of agents (one per seat per entrant).

    ``replays_dir``: write each game as a replay file there (see :func:`replay_name`).
    """

    def __init__(self, plan: Plan, replays_dir: str | os.PathLike[str] | None = None) -> None:
        self.plan = plan
        self.replays_dir = Path(replays_dir) if replays_dir is not None else None
        self.game = plan.adapter
        self.config = plan.game_config
        self.env = self.game.make_env(self.config)
        self._factories = [
            agent_class(n, plan.game_name) if plan.agent_object(i) is None else None
            for i, n in enumerate(plan.names)
        ]
        self._agents: dict[tuple[int, int], Any] = {}

    def agent(self, seat: int, index: int) -> Any:
        """The cached agent of entrant ``index`` at ``seat`` (two seats never share an instance)."""
        key = (seat, index)
        if key not in self._agents:
            factory, given = self._factories[index], self.plan.agent_object(index)
            if factory is not None:
                self._agents[key] = factory(seed=0, **self.plan.params[index])
            elif self.plan.seats_in_a_game(index) == 1:
                self._agents[key] = given  # one seat a game: the object itself plays
            else:
                self._agents[key] = copy.deepcopy(given)
        return self._agents[key]

    def make_deal(self, deal: int) -> tuple[int, dict[str, Any]]:
        """``(deal_seed, reset options)`` of a deal id: its round-0 deal, the same in every game."""
        dseed = deal_seed(self.plan.seed, deal)
        return dseed, self.game.deal_options(self.config, np.random.default_rng(dseed))

    def play_deal(self, deal: int) -> DealResult:
        """Play every game of ``deal`` (:func:`agents.play.play_game`); rows in :data:`COLUMNS` order."""
        plan = self.plan
        dseed, options = self.make_deal(deal)
        sseed = session_seed(plan.seed, deal)
        result = DealResult(deal, [], [0.0] * len(plan.names), [0] * len(plan.names), 0, 0)
        for lineup, rotation in plan.games(deal):
            seats = seating(plan.lineups[lineup], rotation)
            seeds = [agent_seed(plan.seed, deal, lineup, rotation, s) for s in range(len(seats))]
            players = [self.agent(s, idx) for s, idx in enumerate(seats)]
            recorder = None
            if self.replays_dir is not None:
                labels = [plan.labels[i] for i in seats]  # play_game resets with these seed and options:
                recorder = ReplayRecorder(self.env, sseed, labels, options, verify=False)
            try:
                record = play_game(
                    self.env, players, seed=sseed, options=options, agent_seeds=seeds, observer=recorder
                )
            except AgentError as err:
                label = plan.labels[seats[err.seat]]
                raise AgentFailedError(
                    f"agent {label!r} at seat {err.seat} (deal {deal}, rotation {rotation}) "
                    f"{err.what}: {err.__cause__}",
                    err.agent_traceback(),
                ) from err
            if recorder is not None:
                assert self.replays_dir is not None
                write_replay(self.replays_dir / replay_name(plan, deal, lineup, rotation), recorder.replay)
            for seat, idx in enumerate(seats):
                result.think_seconds[idx] += record.think_seconds[seat]
                result.decisions[idx] += record.decisions[seat]
            for rnd in record.rounds:
                result.rows.extend(self._round_rows(deal, lineup, rotation, seats, dseed, seeds, rnd))
                result.rounds += 1
                result.actions += sum(rnd.actions)
        return result

    def _round_rows(
        self,
        deal: int,
        lineup: int,
        rotation: int,
        seats: tuple[int, ...],
        dseed: int,
        seeds: list[int],
        rnd: RoundRecord,
    ) -> list[Row]:
        """One :class:`Row` per seat from the env's public round result."""
        info = rnd.result
        costs = self.game.costs(self.config, info)
        return [
            Row(
                deal,
                lineup,
                rotation,
                int(info["round"]),
                seat,
                self.plan.labels[idx],
                dseed,
                seeds[seat],
                int(info["first_player"]),
                costs[seat],
                float(info["scores"][seat]),
                int(bool(info["went_out"][seat])),
                *standing,
                rnd.actions[seat],
            )
            for (seat, idx), standing in zip(enumerate(seats), standings(costs), strict=True)
        ]


_WORKER: DealPlayer | None = None


def _init_worker(plan: Plan, replays_dir: str | None) -> None:
    global _WORKER
    ignore_interrupts()  # Ctrl-C reaches the whole group: the parent stops the pool
    _WORKER = DealPlayer(plan, replays_dir)


def _play_in_worker(deal: int) -> DealResult:
    assert _WORKER is not None, "worker not initialised"
    return _WORKER.play_deal(deal)


def prepare_out_dir(out: Path, plan: Plan, deals: int, overwrite: bool) -> list[Row]:
    """Create or resume ``out``; the rows of its verified deals (a deal cut short is removed).

    Raises :class:`ConfigMismatchError` when ``out`` holds another configuration's results
    and :class:`~agents.tournament.results.DamagedResultsError` when its results were changed
    after they were written (see :mod:`agents.tournament.results`).
    """
    out.mkdir(parents=True, exist_ok=True)
    run_path = out / RUN_FILE
    results = ResultsFile(out / RESULTS_FILE)
    identity = plan.identity()
    ledger = TimingLedger(out / TIMING_FILE)
    if overwrite:
        results.remove()
        run_path.unlink(missing_ok=True)
        ledger.remove()
    if results.exists() and not run_path.exists():
        raise ConfigMismatchError(f"{results.path} exists without {RUN_FILE}; cannot tell which run it is")
    if run_path.exists():
        try:
            saved = json_text.loads(run_path.read_text(encoding="utf-8"))
        except ValueError as err:  # bad JSON, bad UTF-8, nested too deeply
            raise DamagedResultsError(f"{run_path}: not valid JSON ({err})") from None
        except OSError as err:  # a directory, unreadable
            raise DamagedResultsError(f"{run_path}: cannot read it ({os_error_text(err)})") from None
        if saved != identity:
            diffs = _diff(saved, identity)
            raise ConfigMismatchError(
                f"{out} holds results of a different tournament configuration; refusing to mix them.\n"
                + "\n".join(f"  {k}: saved {a} != now {b}" for k, a, b in diffs[:12])
                + "\nUse another --out directory, or --overwrite to discard the old results."
            )
    else:
        atomic_write(run_path, json.dumps(identity, indent=2, sort_keys=True) + "\n")
    if not results.exists():
        if results.sums_path.exists() and results.sums_path.stat().st_size > 0:
            raise DamagedResultsError(
                f"{results.path} is missing but {results.sums_path} vouches for deals it held "
                "(the results were removed after they were written; use a new --out or --overwrite)"
            )
        results.create()
        ledger.remove()  # no results: no deal it timed is one of this run's
        return []
    rows, dropped = results.read(plan)
    beyond = sorted({r.deal for r in rows if r.deal >= deals})
    if beyond:
        raise ConfigMismatchError(
            f"{results.path} already holds deals up to {beyond[-1]}; --deals {deals} would drop them "
            f"(use --deals >= {beyond[-1] + 1})"
        )
    if dropped:
        results.rewrite(rows)
    return rows


def _diff(a: Any, b: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            out.extend(_diff(a.get(k), b.get(k), f"{prefix}.{k}" if prefix else str(k)))
        return out
    return [] if a == b else [(prefix or "(root)", a, b)]


# ------------------------------------------------------------------------ run
@dataclass
class PlayStats:
    """Timing of the deals played by one invocation (resumed deals are not re-timed)."""

    deals: int = 0
    rounds: int = 0
    actions: int = 0
    seconds: float = 0.0
    workers: int = 1
    backend: str = "processes"
    think_seconds: list[float] = field(default_factory=list)
    decisions: list[int] = field(default_factory=list)

    @property
    def rounds_per_second(self) -> float:
        return self.rounds / self.seconds if self.seconds > 0 else math.nan

    @property
    def actions_per_second(self) -> float:
        return self.actions / self.seconds if self.seconds > 0 else math.nan


class MissingDeals(Sequence[int]):
    """The deal ids of ``range(deals)`` not in ``done``, in order, without listing them: the
    missing ids below the highest finished one are kept (deals finish in id order, so there
    are none or a few), the rest is a ``range``; a run of 10**12 deals starts at once, and a
    resumed one costs what its finished deals did."""

    def __init__(self, deals: int, done: set[int]) -> None:
        top = max(done, default=-1) + 1
        self._gaps = tuple(d for d in range(min(top, deals)) if d not in done)
        self._rest = range(max(top, 0), deals)

    def __len__(self) -> int:
        return len(self._gaps) + len(self._rest)

    def __iter__(self) -> Iterator[int]:
        yield from self._gaps
        yield from self._rest

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[int]: ...
    def __getitem__(self, index: int | slice) -> int | Sequence[int]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        i = range(len(self))[index]  # IndexError as a list gives it, negative ids count back
        return self._gaps[i] if i < len(self._gaps) else self._rest[i - len(self._gaps)]


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask (``taskset``, a container's
    cpuset, a batch scheduler's allocation), not every core of the machine, which
    ``os.cpu_count()`` counts and a pool of that many processes would oversubscribe."""
    process_cpu_count = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if process_cpu_count is not None:
        return int(process_cpu_count() or 1)
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS, Windows: no affinity masks
        return os.cpu_count() or 1


def worker_processes(workers: int, deals: int, cores: int | None = None) -> int:
    """The processes ``play_deals`` starts for ``deals`` deals: ``workers`` (0 = one per
    usable CPU, :func:`usable_cpus`), never more than the deals, at least one."""
    cores = cores if cores is not None else usable_cpus()
    return max(1, min(workers or cores, deals or 1))


def play_deals(
    plan: Plan,
    deal_ids: Sequence[int],
    workers: int,
    sink: Callable[[DealResult], None],
    progress: Any = None,
    replays_dir: str | os.PathLike[str] | None = None,
    backend: str = "processes",
    address: str | None = None,
) -> PlayStats:
    """Play ``deal_ids`` and hand each :class:`DealResult` to ``sink`` in deal-id order.

    ``workers > 1`` uses a ``spawn`` process pool (each worker builds its own env and
    agents); the ordered ``imap`` keeps files identical whatever the worker count.
    ``replays_dir``: each game's replay file is written there (by the worker playing it).
    ``backend="ray"`` plays them on Ray actors (:mod:`agents.tournament.ray_backend`), in
    the same order. Every backend plays a deal with :meth:`DealPlayer.play_deal`.
    """
    replays = str(replays_dir) if replays_dir is not None else None
    workers = (workers or 0) if backend == "ray" else worker_processes(workers, len(deal_ids))
    stats = PlayStats(
        workers=workers,
        backend=backend,
        think_seconds=[0.0] * len(plan.names),
        decisions=[0] * len(plan.names),
    )

    def take(res: DealResult) -> None:
        sink(res)
        stats.deals += 1
        stats.rounds += res.rounds
        stats.actions += res.actions
        for i in range(len(plan.names)):
            stats.think_seconds[i] += res.think_seconds[i]
            stats.decisions[i] += res.decisions[i]
        if progress is not None:
            progress.update(1)
            elapsed = time.perf_counter() - t0
            progress.set_postfix_str(f"{stats.rounds / max(elapsed, 1e-9):.1f} rounds/s", refresh=False)

    t0 = time.perf_counter()
    if backend == "ray":
        if deal_ids:
            from agents.tournament.ray_backend import play_deals_on_ray

            def started(actors: int) -> None:
                stats.workers = actors

            make_player = functools.partial(DealPlayer, replays_dir=replays)
            try:
                for res in play_deals_on_ray(make_player, plan, deal_ids, workers, address, started):
                    take(res)
            except AgentFailedError as err:  # Ray's wrapper (a subclass) prints the remote traceback
                cause = getattr(err, "cause", err)
                raise AgentFailedError(str(cause), getattr(cause, "details", "")) from None
    elif workers == 1:
        player = DealPlayer(plan, replays)
        for deal in deal_ids:
            take(player.play_deal(deal))
    elif deal_ids:
        with workers_ignore_interrupts():  # quiet from their first instruction: the parent stops them
            # a parent killed outright stops nobody: its workers end quietly without it
            pool = quiet_spawn_context().Pool(workers, initializer=_init_worker, initargs=(plan, replays))
        with pool:
            for res in pool.imap(_play_in_worker, deal_ids, chunksize=1):
                take(res)
    stats.seconds = time.perf_counter() - t0
    return stats
