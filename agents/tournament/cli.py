"""``mtrain bench``: a duplicate-deal tournament from the command line.

Example::

    mtrain bench --agents planner greedy random --players 4 --deals 500 --seed 0 \\
        --workers 2 --out results/x --rules pagat --flag one_tile_opening \\
        --agent-param mc.rollouts=64 [--session] [--lineup planner random random random] \\
        [--save-replays results/x/replays]

    mtrain bench --game block --agents classic greedy random --deals 500 --out results/b

Rerunning the same command after an interruption resumes it; a larger ``--deals``
extends a finished run; any other change is refused unless ``--overwrite``. Without
``--out`` the files go to ``results/AGENTS_Pp_seedS_HASH``, named after the agents, the
seats and the seed, ``HASH`` standing for the rest of the run's configuration (rules,
parameters, lineup, version): the same command resumes there, another gets its own
directory (said on stderr).

Seats: with fewer agents than seats, the seats are filled by cycling the agent list
(``--agents planner greedy --players 3`` seats ``planner greedy planner``, said on
stderr); with more agents than seats, every choice of ``--players`` agents plays;
``--lineup`` names the agent of each seat instead.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from agents.registry import parse_param
from agents.tournament.games import GAMES, make_game_config
from agents.tournament.harness import (
    AgentSpec,
    Plan,
    TournamentConfig,
    dir_slug,
    make_plan,
    usable_cpus,
    worker_processes,
)
from agents.tournament.ray_backend import address_problem, reach_problem
from agents.tournament.results import ConfigMismatchError
from mtrain_env.cli import int_at_least, output_problem
from mtrain_env.tilegame.files import DirectoryInUseError

GAME_NAMES = tuple(GAMES)


def register(subparsers: Any) -> None:
    """Add the ``bench`` subcommand to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "bench",
        help="duplicate-deal tournament between agents (CSV, JSON summary, plots; resumable)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="AGENT",
        help="registered names (or module:Class), optionally with params: mc[rollouts=64,z=2]",
    )
    p.add_argument(
        "--agent-param",
        action="append",
        default=[],
        metavar="AGENT.KEY=VALUE",
        help="constructor parameter for every agent with that name or label (repeatable; JSON values)",
    )
    add_game_options(p)
    p.add_argument("--deals", type=int_at_least(1), default=100, help="duplicate deals (each played P times)")
    p.add_argument("--seed", type=int_at_least(0), default=0)
    p.add_argument(
        "--workers",
        type=int_at_least(0),
        default=0,
        help="processes (default 0: one per usable CPU, no more than the deals; 1 plays in this "
        "process); the results are the same for any count",
    )
    p.add_argument(
        "--backend",
        choices=("processes", "ray"),
        default="processes",
        help="where deals are played: processes (default) or ray (Ray actors, --workers of them; "
        "the same results.csv)",
    )
    p.add_argument(
        "--address",
        default=None,
        metavar="HOST:PORT",
        help="Ray cluster of --backend ray (default: local Ray)",
    )
    p.add_argument(
        "--out",
        default=None,
        help="output directory, resumed when it holds this run (default: results/AGENTS_Pp_seedS_HASH, "
        "one directory per configuration: see above)",
    )
    p.add_argument("--lineup", nargs="+", default=None, metavar="LABEL", help="agent label for each seat")
    p.add_argument(
        "--no-duplicate", action="store_true", help="play each deal once (independent deals, for comparison)"
    )
    p.add_argument("--overwrite", action="store_true", help="discard earlier results in --out")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument(
        "--save-replays",
        default=None,
        metavar="DIR",
        help="write every game as a replay file in DIR (one per deal and seating; `mtrain replay check DIR`)",
    )
    p.set_defaults(func=bench)


def add_game_options(p: argparse.ArgumentParser, players: bool = True) -> None:
    """The game and rule options of ``bench`` (and ``play``; ``players=False``: the seats
    come from elsewhere), read back by :func:`game_from_args`."""
    p.add_argument(
        "--game", choices=GAME_NAMES, default="mexican_train", help="mexican_train (default) or block"
    )
    if players:
        p.add_argument("--players", type=int, default=4)
    p.add_argument("--max-pips", type=int, default=None, help="N of the double-N set (R1), default 12")
    p.add_argument("--hand-size", type=int, default=None, help="default: the preset's table (R4)")
    p.add_argument(
        "--rules", default=None, help="preset: pagat (default), wikipedia, cardinal; block: 001, openspiel"
    )
    p.add_argument(
        "--flag",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="RULES.md variant flag (repeatable), e.g. --flag one_tile_opening; block: any config "
        "keyword, e.g. --flag scoring=ten",
    )
    rounds = p.add_mutually_exclusive_group()
    rounds.add_argument("--rounds", type=int, default=None, help="rounds per game (default 1)")
    rounds.add_argument("--session", action="store_true", help="full sessions: max_pips + 1 rounds (R25)")


class OptionError(ValueError):
    """A bad value of one command-line option (``option`` names it)."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


def game_from_args(args: argparse.Namespace) -> Any:
    """The frozen game config of ``--game`` and its rule options (raises naming the option)."""
    flags: dict[str, Any] = {}
    for item in args.flag:
        name, eq, value = item.partition("=")
        if args.game == "mexican_train":
            if eq and value.lower() not in ("true", "false", "1", "0"):
                raise OptionError("--flag", f"{item!r}: the value must be true or false")
            flags[name] = not eq or value.lower() in ("true", "1")
        else:
            flags[name] = parse_param(item)[1] if eq else True
    if args.game == "block":
        given = [
            opt
            for opt, value in (
                ("--max-pips", args.max_pips),
                ("--hand-size", args.hand_size),
                ("--rounds", args.rounds),
                ("--session", args.session or None),
            )
            if value is not None
        ]
        if given:
            raise OptionError(given[0], "not an option of --game block (double-6, 7 tiles, B1-B3)")
        return make_game_config("block", num_players=args.players, rules=args.rules or "001", **flags)
    max_pips = 12 if args.max_pips is None else args.max_pips
    return make_game_config(
        "mexican_train",
        num_players=args.players,
        max_pips=max_pips,
        hand_size=args.hand_size,
        rules=args.rules or "pagat",
        rounds=max_pips + 1 if args.session else (1 if args.rounds is None else args.rounds),  # 0: R25
        **flags,
    )


def config_from_args(args: argparse.Namespace, game: Any = None) -> TournamentConfig:
    """The :class:`TournamentConfig` of parsed ``bench`` arguments (``game``: already built)."""
    specs = [AgentSpec.parse(text) for text in args.agents]
    for item in args.agent_param:
        target, dot, rest = item.partition(".")
        if not dot:
            raise ValueError(f"--agent-param must be AGENT.KEY=VALUE, got {item!r}")
        key, value = parse_param(rest)
        hits = [i for i, s in enumerate(specs) if target in (s.name, s.label, s.default_label())]
        if not hits:
            raise ValueError(f"--agent-param {item!r}: no agent named {target!r} in --agents")
        for i in hits:
            specs[i] = AgentSpec(specs[i].name, {**specs[i].params, key: value}, specs[i].label)
    return TournamentConfig(
        agents=specs,
        game=game if game is not None else game_from_args(args),
        deals=args.deals,
        seed=args.seed,
        lineup=args.lineup,
        duplicate=not args.no_duplicate,
        workers=args.workers,
        backend=args.backend,
        address=args.address,
        out_dir=args.out,
        overwrite=args.overwrite,
        progress=not args.no_progress,
        plots=not args.no_plots,
        replays_dir=args.save_replays,
    )


#: words of a game-configuration error -> the option it is about (first match wins)
_GAME_OPTIONS: tuple[tuple[str, str], ...] = (
    ("unknown config keyword", "--flag"),  # before the list of known keywords it quotes
    ("num_players", "--players"),
    ("R3", "--players"),
    ("max_pips", "--max-pips"),
    ("hand_size", "--hand-size"),
    ("R4", "--hand-size"),
    ("R25", "--rounds"),
    ("rules", "--rules"),
)


def _game_option(message: str) -> str:
    """The option a game-configuration error is about (``--flag`` for the rule flags)."""
    return next((option for word, option in _GAME_OPTIONS if word in message), "--flag")


def checked_game(args: argparse.Namespace) -> Any:
    """The game config of parsed game options; :class:`OptionError` naming the option at fault."""
    try:
        return game_from_args(args)
    except OptionError:
        raise
    except (ValueError, TypeError) as err:
        raise OptionError(_game_option(str(err)), str(err)) from None


def checked_config(args: argparse.Namespace) -> tuple[TournamentConfig, Plan]:
    """Config and plan of parsed arguments; :class:`OptionError` naming the option at fault."""
    game = checked_game(args)
    for option, path in (("--out", args.out), ("--save-replays", args.save_replays)):
        problem = None if path is None else output_problem(path, "directory")
        if problem is not None:
            raise OptionError(option, problem)
    if args.address is not None and args.backend != "ray":
        raise OptionError("--address", "a Ray cluster address is for --backend ray")
    if args.backend == "ray" and importlib.util.find_spec("ray") is None:
        raise OptionError("--backend", "ray is not installed (pip install 'mtrain_env[rllib]')")
    problem = None if args.address is None else address_problem(args.address)
    if problem is not None:  # Ray's own check is a traceback, after the run's files exist
        raise OptionError("--address", problem)
    try:
        config = config_from_args(args, game)
    except (ValueError, TypeError) as err:
        raise OptionError("--agent-param" if "--agent-param" in str(err) else "--agents", str(err)) from None
    try:
        plan = make_plan(config)  # builds every agent once: unknown names and parameters fail here
    except (ValueError, TypeError) as err:
        raise OptionError("--lineup" if "lineup" in str(err) else "--agents", str(err)) from None
    if config.out_dir is None:
        out = default_out(plan)
        problem = output_problem(out, "directory")
        if problem is not None:
            raise OptionError("--out", f"{problem} (the default; give --out)")
        config = replace(config, out_dir=out)
    problem = None if args.address is None else reach_problem(args.address)
    if problem is not None:  # last: Ray would wait a minute or more for an address nobody answers
        raise OptionError("--address", problem)
    return config, plan


#: the longest agents part of a default ``--out`` name (its hash tells longer lists apart)
_SLUG_CHARS = 60


def default_out(plan: Plan) -> str:
    """The output directory of a run given no ``--out``: ``results/AGENTS_Pp_seedS_HASH``.

    Readable for the agents (their labels, ``+``-joined, cut at :data:`_SLUG_CHARS`
    characters), the seats and the seed; ``HASH`` is the first 8 hex digits of the SHA-256
    of the run's identity (:meth:`Plan.identity`: game, rules, parameters, lineups, version),
    so the same command always finds its own directory again (and resumes it: ``--deals``
    is not part of the identity) and any other configuration gets a directory of its own.
    """
    agents = "+".join(dir_slug(label) for label in plan.labels)
    digest = hashlib.sha256(json.dumps(plan.identity(), sort_keys=True).encode()).hexdigest()[:8]
    return str(Path("results") / f"{agents[:_SLUG_CHARS]}_{plan.num_players}p_seed{plan.seed}_{digest}")


def seating_note(plan: Plan) -> str | None:
    """The line telling how seats were filled when agents were cycled unevenly over them."""
    if len(plan.lineups) != 1 or len(plan.names) >= plan.num_players:
        return None
    if plan.num_players % len(plan.names) == 0 and len(plan.names) > 1:
        return None  # an even cycle (a b a b): every agent holds as many seats
    seats = " ".join(plan.labels[i] for i in plan.lineups[0])
    return (
        f"{len(plan.names)} agent(s) for {plan.num_players} seats: seats filled by cycling the agent list "
        f"({seats}); give --lineup to choose"
    )


def cores_note(plan: Plan, workers: int, deals: int, cores: int | None = None) -> str | None:
    """The warning when the worker processes times an agent's ``threads=`` ask for more
    threads than there are cores: decisions then wait for a core, so ``ms/dec`` (and any
    ``ms=`` budget) measures the crowding, not the agent. Results stay the same. The
    processes are counted as the harness starts them (:func:`worker_processes`)."""
    cores = cores if cores is not None else usable_cpus()
    threads = max((int(p.get("threads", 1)) for p in plan.agent_params), default=1)
    processes = worker_processes(workers, deals, cores)
    if threads <= 1 or processes * threads <= cores:
        return None
    return (
        f"{processes} worker(s) x threads={threads} = {processes * threads} threads on {cores} core(s): "
        f"decisions will wait for cores and ms/dec will overstate them (results are unchanged); "
        f"use --workers {max(1, cores // threads)} for honest timings"
    )


def bench(args: argparse.Namespace) -> int:
    """Run the tournament, print the table and where the files are."""
    from agents.tournament import AgentFailedError, run_tournament

    try:
        config, plan = checked_config(args)  # everything validated before any file is touched
    except OptionError as err:
        print(f"mtrain bench: {err.option}: {err}", file=sys.stderr)
        return 2
    if args.out is None:
        print(f"mtrain bench: no --out given: results go to {config.out_dir}", file=sys.stderr)
    local = args.address is None  # a Ray cluster's cores are not this machine's
    for note in (seating_note(plan), cores_note(plan, args.workers, args.deals) if local else None):
        if note is not None:
            print(f"mtrain bench: {note}", file=sys.stderr)
    try:
        result = run_tournament(config)
    except ConfigMismatchError as err:
        print(f"mtrain bench: {err}", file=sys.stderr)
        return 2
    except DirectoryInUseError as err:  # the same command still running (a requeued job, a second terminal)
        print(f"mtrain bench: --out: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nmtrain bench: interrupted; finished deals are saved, rerun the same command to resume.")
        return 130
    except AgentFailedError as err:  # an agent's bug, not the harness's: its own traceback, then the verdict
        print(err.details + f"mtrain bench: {err}", file=sys.stderr)
        print("mtrain bench: finished deals are saved; rerun the same command to resume.", file=sys.stderr)
        return 1
    print(result.table)
    print()
    for name, path in result.files.items():
        print(f"  {name}: {path}")
    return 0
