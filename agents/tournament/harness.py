"""Duplicate-deal tournaments: seating, seeding, play, and resumable result files.

The unit of work is one **deal**: a seeded random deal of round 0 (R4, R5, R8) and a
first player (R6), replayed once per **game** with the agents rotated around the table,
so that every agent plays every hand from every seat. In each game seat ``s`` of
rotation ``r`` holds ``lineup[(s - r) mod P]``; the hands (and the opener) stay with the
seats, so across the rotations each hand is played by each agent of the lineup. A
lineup of ``P`` different agents has ``P`` rotations; a cycled one has as many as its
period (``a b a b``: 2), since further rotations would repeat the same seating.

* **Lineups**: with ``|A| <= P`` agents the seats are filled by cycling the agent list
  (``a b a b`` for two agents and four seats); with ``|A| > P`` every ``P``-subset of the
  agents is a lineup (each deal is then played ``C(|A|, P) * P`` times); a user lineup
  (agent labels, one per seat) replaces both.
* **Sessions** (``rounds_per_game > 1``, R25): round 0 comes from our deal; the later
  rounds are dealt by the env from its own generator, seeded per deal and identical for
  every rotation, so the whole session is duplicated (the env draws from that generator
  only to deal).
* **Seeds**: every random number comes from ``numpy.random.SeedSequence`` over
  ``(seed, tag, deal, lineup, rotation, seat)``; results never depend on the worker count
  or the order in which deals finish.
* **Resume**: ``run.json`` holds the run's identity (resolved game config, agents and
  their ``params()``, lineups, seed); ``results.csv`` gets one block of rows per finished
  deal (one ``write``, then ``flush`` + ``fsync``), in deal order. A restart keeps the
  complete deals, drops a partial one, and plays only the missing deal ids; a different
  configuration is refused. ``deals`` is not part of the identity: rerunning with a larger
  ``deals`` extends a finished run.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import multiprocessing as mp
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, get_type_hints

import numpy as np

from agents.play import AgentError, RoundRecord, play_game
from agents.registry import agent_class
from agents.tournament.games import TournamentGame, game_of
from mtrain_env.mexican_train import GameConfig as MexicanTrainConfig

#: bump when the meaning or layout of ``results.csv`` changes (old runs are then refused)
FORMAT_VERSION = 1
RESULTS_FILE = "results.csv"
RUN_FILE = "run.json"

_TAG_DEAL, _TAG_SESSION, _TAG_AGENT = 0, 1, 2


class Row(NamedTuple):
    """One seat's result in one round: a line of ``results.csv``."""

    deal: int  #: deal id, 0..deals-1
    lineup: int  #: index into the run's lineups
    rotation: int  #: agents shifted clockwise by this many seats (0..P-1)
    round: int  #: round of the game (0 for single rounds; 0..rounds-1 in a session)
    seat: int
    agent: str  #: agent label
    deal_seed: int  #: seed of the round-0 deal (the same in every rotation)
    agent_seed: int  #: seed given to this seat's ``agent.reset()`` for this game
    first_player: int  #: seat that opened this round (R6; block: the hand's opener)
    #: the seat's cost of the round, lower is better: pips left in hand (Mexican Train,
    #: R24, blank_penalty aware) or the points its pair scored (block, B10-B12)
    penalty: int
    score: float  #: the engine's round score (= penalty, or the positive_scoring share)
    went_out: int  #: 1 if the hand was emptied
    lowest: int  #: 1 if the penalty is the round's minimum (ties included)
    lowest_share: float  #: 1/k for the k seats tied lowest, else 0
    rank: int  #: 1 + seats with a strictly smaller penalty
    actions: int  #: actions this seat took in the round (draws and passes included)


#: ``results.csv`` columns: one row per seat per round
COLUMNS: tuple[str, ...] = Row._fields


class ConfigMismatchError(ValueError):
    """The output directory holds results of a different tournament configuration."""


# --------------------------------------------------------------------- config
@dataclass(frozen=True)
class AgentSpec:
    """One tournament entrant: a registered agent name (or ``"module:Class"``) and its params.

    Args:
        name: key of ``agents.REGISTRY`` (``"random"``, ``"greedy"``, ...) or an import path
            ``"package.module:ClassName"`` of an :class:`~agents.base.Agent` subclass.
        params: keyword arguments of the agent's constructor (``{"rollouts": 64}``).
        label: name in tables and files; default ``name`` or ``name[k=v,...]``.
    """

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    label: str | None = None

    @classmethod
    def parse(cls, text: str) -> AgentSpec:
        """``"mc"`` or ``"mc[rollouts=64,depth=2]"`` (values parsed as JSON, else strings)."""
        m = re.fullmatch(r"\s*([^\[\]\s]+)\s*(?:\[(.*)\])?\s*", text)
        if m is None:
            raise ValueError(f"agent spec must look like 'name' or 'name[key=value,...]', got {text!r}")
        params: dict[str, Any] = {}
        if m.group(2):
            for item in m.group(2).split(","):
                key, value = parse_param(item)
                params[key] = value
        return cls(m.group(1), params)

    def default_label(self) -> str:
        base = self.name.rsplit(":", 1)[-1]
        if not self.params:
            return base
        inner = ",".join(f"{k}={_compact(v)}" for k, v in sorted(self.params.items()))
        return f"{base}[{inner}]"


def parse_param(item: str) -> tuple[str, Any]:
    """``"key=value"`` -> ``(key, value)`` with the value parsed as JSON when it is JSON."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"an agent parameter must be key=value, got {item!r}")
    raw = raw.strip()
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key, value


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":")) if not isinstance(value, str) else value


@dataclass(frozen=True)
class TournamentConfig:
    """A tournament: who plays which game, on how many duplicate deals.

    Args:
        agents: the entrants (``AgentSpec`` or plain names) of the game's agent table.
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
        workers: processes; 1 plays in this process, 0 uses every core.
        out_dir: directory of the result files; ``None`` keeps results in memory only
            (no resume, no files).
        overwrite: delete earlier results in ``out_dir`` instead of resuming them.
        progress: show a tqdm progress bar.
        plots: write the PNG plots.
    """

    agents: Sequence[AgentSpec | str]
    game: Any = field(default_factory=MexicanTrainConfig)
    deals: int = 100
    seed: int = 0
    lineup: Sequence[str] | None = None
    duplicate: bool = True
    workers: int = 1
    out_dir: str | os.PathLike[str] | None = None
    overwrite: bool = False
    progress: bool = True
    plots: bool = True

    def __post_init__(self) -> None:
        specs = tuple(AgentSpec(a) if isinstance(a, str) else a for a in self.agents)
        object.__setattr__(self, "agents", specs)
        if not specs:
            raise ValueError("a tournament needs at least one agent")
        game_of(self.game).check(self.game)  # TypeError for anything but a game config
        for key, value in (("deals", self.deals), ("seed", self.seed), ("workers", self.workers)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{key} must be an int >= 0, got {value!r}")

    @property
    def num_players(self) -> int:
        return int(self.game.num_players)


def make_lineups(num_agents: int, num_players: int) -> list[tuple[int, ...]]:
    """Default lineups (agent indices by seat): cycle the agents, or every ``P``-subset."""
    if num_agents <= num_players:
        return [tuple(i % num_agents for i in range(num_players))]
    return list(itertools.combinations(range(num_agents), num_players))


def partner_lineups(num_agents: int, num_players: int) -> list[tuple[int, ...]]:
    """Default lineups of a partnership game (seats ``s`` and ``s + 2`` are partners).

    Partners are the same agent, so a game measures one agent's pair against another's:
    every two agents meet as ``a b a b`` (one agent alone plays itself); rotating the
    lineup by one seat swaps the pairs' hands.
    """
    if num_agents == 1:
        return [(0,) * num_players]
    return [(a, b) * (num_players // 2) for a, b in itertools.combinations(range(num_agents), 2)]


def seating(lineup: Sequence[int], rotation: int) -> tuple[int, ...]:
    """Agent index by seat in ``rotation``: seat ``s`` holds ``lineup[(s - rotation) mod P]``."""
    p = len(lineup)
    return tuple(lineup[(s - rotation) % p] for s in range(p))


def rotations(lineup: Sequence[int]) -> int:
    """Distinct rotations of a lineup: its cyclic period (``a b a b`` -> 2, ``a b c d`` -> 4).

    Rotating by the period gives back the same agent at every seat, so further rotations
    would replay identical seatings (exact copies for deterministic agents); the period
    already seats every agent of the lineup at every seat.
    """
    p = len(lineup)
    return next(k for k in range(1, p + 1) if all(lineup[s] == lineup[(s + k) % p] for s in range(p)))


def derive_seed(*words: int) -> int:
    """A 64-bit seed from non-negative ints via ``SeedSequence`` (order-sensitive, collision-safe)."""
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, np.uint64)[0])


def deal_seed(seed: int, deal: int) -> int:
    """Seed of the round-0 deal and first player of ``deal``."""
    return derive_seed(seed, _TAG_DEAL, deal)


def session_seed(seed: int, deal: int) -> int:
    """Env seed of ``deal``: deals rounds 1.. of a session, identically in every rotation."""
    return derive_seed(seed, _TAG_SESSION, deal)


def agent_seed(seed: int, deal: int, lineup: int, rotation: int, seat: int) -> int:
    """Seed for ``agent.reset()`` of the agent at ``seat`` in one game."""
    return derive_seed(seed, _TAG_AGENT, deal, lineup, rotation, seat)


def agent_factory(name: str, game: str = "mexican_train") -> Callable[..., Any]:
    """Constructor of an agent of ``game``: a registry name, or ``"module:Class"`` outside it."""
    return agent_class(name, game)


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


def make_plan(config: TournamentConfig) -> Plan:
    """Validate a config and resolve agents, labels and lineups (builds each agent once)."""
    gc = config.game
    game = game_of(gc).name
    specs: tuple[AgentSpec, ...] = tuple(config.agents)  # type: ignore[arg-type]  # normalized in __post_init__
    labels: list[str] = []
    for spec in specs:
        label = spec.label or spec.default_label()
        if label in labels:
            label = f"{label}#{sum(1 for x in labels if x.split('#')[0] == label) + 1}"
        labels.append(label)
    agent_params = []
    for spec in specs:
        agent = agent_factory(spec.name, game)(seed=0, **dict(spec.params))
        agent_params.append(_jsonable(agent.params()))
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
    return Plan(
        game_config=gc,
        names=tuple(s.name for s in specs),
        params=tuple(_jsonable(dict(s.params)) for s in specs),
        labels=tuple(labels),
        agent_params=tuple(agent_params),
        lineups=tuple(lineups),
        seed=int(config.seed),
        duplicate=bool(config.duplicate),
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


class DealPlayer:
    """Plays deals of one :class:`Plan`: one env and a cache of agents (one per seat per entrant)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.game = plan.adapter
        self.config = plan.game_config
        self.env = self.game.make_env(self.config)
        self._factories = [agent_factory(n, plan.game_name) for n in plan.names]
        self._agents: dict[tuple[int, int], Any] = {}

    def agent(self, seat: int, index: int) -> Any:
        """The cached agent of entrant ``index`` at ``seat`` (two seats never share an instance)."""
        key = (seat, index)
        if key not in self._agents:
            self._agents[key] = self._factories[index](seed=0, **self.plan.params[index])
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
            try:
                record = play_game(self.env, players, seed=sseed, options=options, agent_seeds=seeds)
            except AgentError as err:
                label = plan.labels[seats[err.seat]]
                raise RuntimeError(
                    f"agent {label!r} at seat {err.seat} (deal {deal}, rotation {rotation}) "
                    f"chose an illegal action: {err.__cause__}"
                ) from err
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
        low = min(costs)
        ties = costs.count(low)
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
                int(costs[seat] == low),
                1.0 / ties if costs[seat] == low else 0.0,
                1 + sum(1 for x in costs if x < costs[seat]),
                rnd.actions[seat],
            )
            for seat, idx in enumerate(seats)
        ]


_WORKER: DealPlayer | None = None


def _init_worker(plan: Plan) -> None:
    global _WORKER
    _WORKER = DealPlayer(plan)


def _play_in_worker(deal: int) -> DealResult:
    assert _WORKER is not None, "worker not initialised"
    return _WORKER.play_deal(deal)


# ---------------------------------------------------------------- result files
def rows_to_csv(rows: Sequence[Sequence[Any]]) -> str:
    """CSV text of rows (floats by ``repr``, so the text is exact and deterministic)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerows(rows)
    return buf.getvalue()


#: text -> value converters of the columns, from the ``Row`` annotations
_PARSERS: tuple[Callable[[str], Any], ...] = tuple(get_type_hints(Row).values())


def _parse_row(raw: list[str]) -> Row:
    return Row._make(f(x) for f, x in zip(_PARSERS, raw, strict=True))


def read_results(path: str | os.PathLike[str]) -> list[Row]:
    """Rows of a ``results.csv`` (header checked; a torn last line is ignored)."""
    rows, _ = _read_complete(Path(path), rows_per_deal=None)
    return rows


def _read_complete(path: Path, rows_per_deal: int | None) -> tuple[list[Row], bool]:
    """Rows of the complete deals in ``path``, and whether anything was dropped."""
    text = path.read_text(encoding="utf-8")
    dropped = False
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]  # a line torn by a kill
        dropped = True
    lines = list(csv.reader(io.StringIO(text)))
    if not lines or tuple(lines[0]) != COLUMNS:
        raise ConfigMismatchError(
            f"{path} does not start with the expected header {','.join(COLUMNS)}; "
            "it was written by another version of the harness (use a new --out or --overwrite)"
        )
    by_deal: dict[int, list[Row]] = {}
    for i, raw in enumerate(lines[1:], start=2):
        if len(raw) != len(COLUMNS):
            raise ConfigMismatchError(f"{path}:{i}: expected {len(COLUMNS)} fields, got {len(raw)}")
        row = _parse_row(raw)
        by_deal.setdefault(row[0], []).append(row)
    rows: list[Row] = []
    for deal in sorted(by_deal):
        block = by_deal[deal]
        if rows_per_deal is not None and len(block) > rows_per_deal:
            raise ConfigMismatchError(
                f"{path}: deal {deal} has {len(block)} rows, more than the {rows_per_deal} of one deal "
                "(the file was edited or mixes runs)"
            )
        if rows_per_deal is not None and len(block) < rows_per_deal:
            dropped = True  # a deal cut short by a kill: it is played again
            continue
        rows.extend(block)
    return rows, dropped


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def prepare_out_dir(out: Path, plan: Plan, deals: int, overwrite: bool) -> list[Row]:
    """Create or resume ``out``; the rows of its complete deals (partial deals removed from disk).

    Raises :class:`ConfigMismatchError` when ``out`` holds another configuration's results.
    """
    out.mkdir(parents=True, exist_ok=True)
    run_path = out / RUN_FILE
    results_path = out / RESULTS_FILE
    identity = plan.identity()
    if overwrite:
        for name in (RESULTS_FILE, RUN_FILE):
            (out / name).unlink(missing_ok=True)
    if results_path.exists() and not run_path.exists():
        raise ConfigMismatchError(f"{results_path} exists without {RUN_FILE}; cannot tell which run it is")
    if run_path.exists():
        saved = json.loads(run_path.read_text(encoding="utf-8"))
        if saved != identity:
            diffs = _diff(saved, identity)
            raise ConfigMismatchError(
                f"{out} holds results of a different tournament configuration; refusing to mix them.\n"
                + "\n".join(f"  {k}: saved {a} != now {b}" for k, a, b in diffs[:12])
                + "\nUse another --out directory, or --overwrite to discard the old results."
            )
    else:
        _write_atomic(run_path, json.dumps(identity, indent=2, sort_keys=True) + "\n")
    if not results_path.exists():
        _write_atomic(results_path, ",".join(COLUMNS) + "\n")
        return []
    rows, dropped = _read_complete(results_path, plan.rows_per_deal)
    beyond = sorted({r[0] for r in rows if r[0] >= deals})
    if beyond:
        raise ConfigMismatchError(
            f"{results_path} already holds deals up to {beyond[-1]}; --deals {deals} would drop them "
            f"(use --deals >= {beyond[-1] + 1})"
        )
    if dropped:
        _write_atomic(results_path, ",".join(COLUMNS) + "\n" + rows_to_csv(rows))
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
    think_seconds: list[float] = field(default_factory=list)
    decisions: list[int] = field(default_factory=list)

    @property
    def rounds_per_second(self) -> float:
        return self.rounds / self.seconds if self.seconds > 0 else math.nan

    @property
    def actions_per_second(self) -> float:
        return self.actions / self.seconds if self.seconds > 0 else math.nan


def play_deals(
    plan: Plan,
    deal_ids: Sequence[int],
    workers: int,
    sink: Callable[[DealResult], None],
    progress: Any = None,
) -> PlayStats:
    """Play ``deal_ids`` and hand each :class:`DealResult` to ``sink`` in deal-id order.

    ``workers > 1`` uses a ``spawn`` process pool (each worker builds its own env and
    agents); the ordered ``imap`` keeps files identical whatever the worker count.
    """
    workers = workers or os.cpu_count() or 1
    workers = max(1, min(workers, len(deal_ids) or 1))
    stats = PlayStats(workers=workers, think_seconds=[0.0] * len(plan.names), decisions=[0] * len(plan.names))

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
    if workers == 1:
        player = DealPlayer(plan)
        for deal in deal_ids:
            take(player.play_deal(deal))
    elif deal_ids:
        ctx = mp.get_context("spawn")
        with ctx.Pool(workers, initializer=_init_worker, initargs=(plan,)) as pool:
            for res in pool.imap(_play_in_worker, deal_ids, chunksize=1):
                take(res)
    stats.seconds = time.perf_counter() - t0
    return stats
