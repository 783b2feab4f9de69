"""``mtrain selfplay``: self-play by PPO on the compiled batched engine.

Examples::

    mtrain selfplay --out runs/sp --minutes 100                 # PPO, the structured network (tile)
    mtrain selfplay --out runs/sp --resume --minutes 30         # continue it exactly
    mtrain selfplay --out runs/mlp --net mlp --steps 20000000   # the MLP baseline
    mtrain selfplay --out runs/lg --opponents planner --opponent-share 0.5  # half the games vs planner seats
    mtrain selfplay --out runs/br --opponents planner --opponent-share 1 --opponent-seats 3  # vs 3 planners
    mtrain selfplay --out runs/sp --backend ray --actors 4 --games 1024   # 4 Ray actors, one learner
    mtrain selfplay --out runs/sp --backend ray --address 10.0.0.5:6379 --actors 32 --games 8192

--algo ppo (the default and only learner; :mod:`training.selfplay.learner`) trains an
actor-critic by clipped PPO. The algorithm is part of the run's identity.

One shared network acts for the seat on turn in --games games at once (one batched forward
pass a step); every seat's decisions are trained on with that seat's own returns. The run
stops at --steps env decisions or after --minutes, whichever comes first. Every
--eval-every decisions the policy plays --eval-deals duplicate deals against each
--eval-opponents agent (our tournament harness, seat rotation, 95% CIs; deals seeded
--eval-seed, apart from the training deals); curve.csv / curve.png, TensorBoard logs in
tb/, checkpoint.pt and policy.npz (for `mtrain bench --agents ppo[path=...]`) are in --out.
With --minutes the progress bar counts seconds, up to whichever bound ends the run first.

--backend ray --actors N collects the rollouts on N Ray actors (a local Ray instance, or
the cluster at --address HOST:PORT), each stepping a slice of the games with a CPU copy of
the policy; the learner waits for every slice each update and merges them, so the run is
the one --backend local makes with the same options: the same curve.csv, the same policy
bytes. An actor that dies is restarted and its slice collected again, the same; --resume
continues with any backend and number of actors. --device says where the updates run
(auto: a GPU when torch sees one; a GPU's floats make another curve than the CPU's).

Every option is checked before anything starts: a bad value gets one line naming the
option, exit code 2. An --out that holds a run needs --resume; on --resume the run's
selfplay.json is used and learner options given must match it (--steps, --minutes, the
evaluation options and --no-progress may change). A run that cannot be continued
exactly is refused with one line naming the file, exit code 2, its directory left as it
was: a selfplay.json or checkpoint.pt that cannot be read or restored, a checkpoint.pt
whose sha256 does not match, one missing while the run went past step 0 (curve rows or
policy files of later steps), a curve.csv line that is not a curve row (file:line). One
run writes an --out at a time: a second one (a requeued job, the same command in another
terminal) is refused with one line naming the first one's pid, exit code 2; the run that
holds --out removes the temporary files that writes killed midway left there. An
evaluation cut short by an interrupt is run again first on --resume, so the curve is the
uninterrupted run's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mtrain_env.cli import output_problem
from mtrain_env.tilegame.argtypes import integer, number
from mtrain_env.tilegame.files import os_error_text

if TYPE_CHECKING:  # imported where used: `mtrain --help` loads none of them
    from mtrain_env.mexican_train.core.config import GameConfig
    from training.selfplay.config import RunOptions, SelfPlayConfig

_PREFIX = "mtrain selfplay"

#: option -> (SelfPlayConfig field, type, help)
_LEARNER: dict[str, tuple[str, type, str]] = {
    "--players": ("num_players", int, "players at the table (default 4)"),
    "--max-pips": ("max_pips", int, "the set: double-N (default 12)"),
    "--net": ("net", str, "tile (structured, default) or mlp (baseline)"),
    "--hidden": ("hidden", int, "trunk width (default 128)"),
    "--pair-hidden": ("pair_hidden", int, "tile/train token width of the tile net (default 64)"),
    "--games": ("num_games", int, "games played at once (default 256)"),
    "--rollout-steps": ("steps", int, "env steps per rollout (default 64)"),
    "--epochs": ("epochs", int, "passes over each rollout's decisions (default 3)"),
    "--minibatch": ("minibatch", int, "decisions a gradient step (default 2048)"),
    "--lr": ("lr", float, "Adam learning rate (default 3e-4)"),
    "--gamma": ("gamma", float, "discount per decision (default 1)"),
    "--gae-lambda": ("lam", float, "GAE lambda (default 0.95)"),
    "--clip": ("clip", float, "PPO clip range (default 0.2)"),
    "--ent-coef": ("ent_coef", float, "entropy bonus (default 0.01)"),
    "--vf-coef": ("vf_coef", float, "value loss weight (default 0.5)"),
    "--seed": ("seed", int, "the run's seed: deals, weights, sampling (default 0)"),
    "--threads": ("threads", int, "torch threads (default 1)"),
    "--init": ("init", str, "start from the weights of this self-play policy file (default: fresh)"),
    "--opponents": ("opponents", str, "league opponents: none (default) or planner (compiled, batched)"),
    "--opponent-share": ("opponent_share", float, "share of the games with opponent seats (e.g. 0.5)"),
    "--opponent-seats": (
        "opponent_seats",
        int,
        "opponent seats of each such game (default 0: drawn 1..n-1; n-1: a best response to the lineup)",
    ),
}
#: option -> (RunOptions field, type, help)
_RUN: dict[str, tuple[str, type, str]] = {
    "--steps": ("total_steps", int, "stop after this many env decisions (default 10,000,000)"),
    "--minutes": ("max_minutes", float, "stop after this much wall time (default: no limit)"),
    "--eval-every": ("eval_every", int, "evaluate every N env decisions (default 2,000,000; 0: never)"),
    "--eval-deals": ("eval_deals", int, "duplicate deals per opponent and evaluation (default 100)"),
    "--eval-seed": ("eval_seed", int, "seed of the evaluation deals (default 90210)"),
    "--checkpoint-every": ("checkpoint_every", int, "updates between checkpoints (default 20)"),
}
#: option -> (RunOptions field, type, help): who collects, where the updates run
_SCALE: dict[str, tuple[str, type, str]] = {
    "--backend": (
        "backend",
        str,
        "who collects the rollouts: local (this process, default) or ray (Ray actors)",
    ),
    "--actors": (
        "actors",
        int,
        "Ray actors collecting, each a slice of whole blocks of 64 games (default 1)",
    ),
    "--address": ("address", str, "a Ray cluster's HOST:PORT (default: a local Ray instance)"),
    "--device": (
        "device",
        str,
        "where the updates run: auto (a GPU if there is one, default), cpu, cuda, cuda:N",
    ),
}


#: the parser of each option type (``mtrain train``'s: the same messages)
_TYPED: dict[type, Any] = {int: integer, float: number, str: str}


def register(subparsers: Any) -> None:
    """Add the ``selfplay`` subcommand to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "selfplay",
        help="self-play by PPO on the batched engine (every seat learns)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    p.add_argument("--out", required=True, help="the run's directory")
    learner = p.add_argument_group("learner (part of the run's identity)")
    learner.add_argument("--algo", default=None, help="ppo (default, the only learner): clipped PPO")
    for flag, (dest, typ, text) in _LEARNER.items():
        learner.add_argument(flag, dest=dest, type=_TYPED[typ], default=None, help=text)
    run = p.add_argument_group("budget and evaluation")
    for flag, (dest, typ, text) in _RUN.items():
        run.add_argument(flag, dest=dest, type=_TYPED[typ], default=None, help=text)
    run.add_argument(
        "--eval-opponents",
        nargs="+",
        default=None,
        metavar="AGENT",
        help="agents to evaluate against (default planner greedy)",
    )
    run.add_argument("--resume", action="store_true", help="continue the run in --out exactly")
    scale = p.add_argument_group("collection and device (not part of the run's identity: the same run)")
    for flag, (dest, typ, text) in _SCALE.items():
        scale.add_argument(flag, dest=dest, type=_TYPED[typ], default=None, help=text)
    run.add_argument(
        "--no-progress", dest="progress", action="store_false", default=True, help="no progress bar"
    )
    p.set_defaults(func=main)


def _flag_of(field: str) -> str:
    """The option of a setting; of each factor of a product (``num_games x steps``)."""
    if " x " in field:
        return " x ".join(_flag_of(part) for part in field.split(" x "))
    for flag, (dest, _t, _h) in {**_LEARNER, **_RUN, **_SCALE}.items():
        if dest == field:
            return flag
    return "--eval-opponents" if field == "eval_opponents" else field


def _fail(flag: str, message: str) -> int:
    print(f"{_PREFIX}: {flag}: {message}", file=sys.stderr)
    return 2


def build(args: argparse.Namespace) -> tuple[SelfPlayConfig, RunOptions]:
    """The run's ``(SelfPlayConfig, RunOptions)``; ``ConfigError(flag, message)`` if bad."""
    from mtrain_env.mexican_train.core.config import GameConfig  # the run's table: --init, --eval-opponents

    out = _checked_out(args)
    given = {
        dest: getattr(args, dest) for dest, _t, _h in _LEARNER.values() if getattr(args, dest) is not None
    }
    config = _learner_config(args, given, out)
    game = GameConfig.make(num_players=config.num_players, max_pips=config.max_pips)
    if config.init and not args.resume:  # a resumed run's checkpoint holds its weights
        _check_init(config, game)
    return config, _run_options(args, game, config)


def _checked_out(args: argparse.Namespace) -> Path:
    """``--out`` (and ``--algo``'s name), at a glance: a writable directory that holds a run
    only with ``--resume``, and whose ``selfplay.json`` and ``checkpoint.pt`` look readable."""
    from training.checks import ConfigError
    from training.selfplay.config import ALGOS, CHECKPOINT_FILE, CONFIG_FILE, checkpoint_fault

    if args.algo is not None and args.algo not in ALGOS:
        raise ConfigError("--algo", f"must be one of {', '.join(ALGOS)}, got {args.algo!r}")
    if not args.out:  # Path("") is the current directory
        raise ConfigError("--out", "expected a directory path, got ''")
    out = Path(args.out)
    problem = output_problem(out, "directory")
    if problem is not None:
        raise ConfigError("--out", problem)
    saved_path = out / CONFIG_FILE
    flag = "--resume" if args.resume else "--out"
    if saved_path.exists() and not saved_path.is_file():
        raise ConfigError(flag, f"{saved_path}: not a file")
    if saved_path.is_file() and not args.resume:
        raise ConfigError("--out", f"{out} holds a run; add --resume to continue it or choose another --out")
    fault = checkpoint_fault(out / CHECKPOINT_FILE)  # a glance without torch; the rest on loading
    if fault is not None:
        raise ConfigError(flag, f"{out / CHECKPOINT_FILE}: {fault}")
    if args.resume and not saved_path.is_file():
        raise ConfigError("--resume", f"{out} holds no self-play run ({CONFIG_FILE} missing)")
    return out


def _learner_config(args: argparse.Namespace, given: dict[str, Any], out: Path) -> SelfPlayConfig:
    """The learner's configuration: the saved one on ``--resume`` (the learner options
    ``given`` must match it), else a new one from ``given`` (``--algo`` is checked by
    :func:`_checked_out`: ppo, the only learner, is every run's)."""
    from training.checks import ConfigError
    from training.selfplay.config import CONFIG_FILE, SelfPlayConfig, error_text, read_config_file

    if not args.resume:
        try:
            return SelfPlayConfig(**given)
        except ConfigError as err:
            raise ConfigError(_flag_of(err.field), error_text(err)) from None
    try:
        saved = read_config_file(out / CONFIG_FILE)
    except ValueError as err:  # "<path>: <what is wrong>"
        raise ConfigError("--resume", str(err)) from None
    for field, value in given.items():
        if getattr(saved, field) != value:
            was = getattr(saved, field)
            raise ConfigError(_flag_of(field), f"the run in {out} was started with {was!r}, got {value!r}")
    return saved


def _check_init(config: SelfPlayConfig, game: GameConfig) -> None:
    """``--init``: a readable self-play policy file of the run's network and game."""
    from agents.mexican_train.selfplay_file import NetSpec, read_selfplay_file
    from training.checks import ConfigError

    if Path(config.init).is_dir():
        raise ConfigError("--init", f"{config.init} is a directory, not a self-play policy file")
    try:
        start_spec, _weights = read_selfplay_file(config.init)
    except FileNotFoundError:
        raise ConfigError("--init", f"no such file: {config.init}") from None
    except OSError as err:
        raise ConfigError("--init", f"cannot read {config.init} ({os_error_text(err)})") from None
    except ValueError as err:
        raise ConfigError("--init", str(err)) from None
    wanted = NetSpec.make(config.net, game, config.hidden, config.pair_hidden)
    if start_spec != wanted:
        raise ConfigError(
            "--init", f"{config.init} holds a {start_spec.net} network of another shape or game"
        )


def _run_options(args: argparse.Namespace, game: GameConfig, config: SelfPlayConfig) -> RunOptions:
    """The budget and evaluation options (:class:`RunOptions`); ``--eval-opponents`` are
    checked against the run's table."""
    from training.checks import ConfigError
    from training.selfplay.config import RunOptions, error_text

    run_given: dict[str, Any] = {
        dest: getattr(args, dest)
        for dest, _t, _h in (*_RUN.values(), *_SCALE.values())
        if getattr(args, dest) is not None
    }
    if args.eval_opponents is not None:
        from agents.tournament.harness import AgentSpec, checked_agent

        for name in args.eval_opponents:  # the name, then what it reads against the table
            try:
                checked_agent(AgentSpec.parse(name), game)  # a name or a spec: "mc[sims=50]"
            except (KeyError, ValueError) as err:
                raise ConfigError("--eval-opponents", str(err)) from None
        run_given["eval_opponents"] = tuple(args.eval_opponents)
    try:
        options = RunOptions(progress=args.progress, **run_given)
    except ConfigError as err:
        raise ConfigError(_flag_of(err.field), error_text(err)) from None
    _check_scale(options, config)
    return options


def _check_scale(options: RunOptions, config: SelfPlayConfig) -> None:
    """``--actors`` that the games can be cut into (whole blocks of 64 games), a
    ``--device`` torch sees, a ``--address`` that answers: one line each, before Ray starts."""
    from training.checks import ConfigError

    if options.backend == "ray":
        from training.selfplay.collector import INFER_GAMES

        blocks = -(-config.num_games // INFER_GAMES)
        if options.actors > blocks:
            raise ConfigError(
                "--actors",
                f"each actor steps whole blocks of {INFER_GAMES} games: --games {config.num_games} "
                f"makes {blocks} block(s), got {options.actors} actors",
            )
    if options.device.startswith("cuda"):
        from training.selfplay.run import resolve_device

        try:
            resolve_device(options.device)
        except ValueError as err:
            raise ConfigError("--device", str(err)) from None
    if options.address:
        from agents.tournament.ray_backend import address_problem, reach_problem

        problem = address_problem(options.address) or reach_problem(options.address)
        if problem is not None:
            raise ConfigError("--address", problem)


def main(args: argparse.Namespace) -> int:
    """Run ``mtrain selfplay``: validate everything, then train (or resume); one run writes
    ``--out`` at a time (:func:`training.out_lock.run_locked`)."""
    from training.out_lock import run_locked

    return run_locked(
        args.out,
        lambda: _prepare(args),
        lambda prepared: _train(args, *prepared),
        lambda text: _fail("--out", text),
    )


def _prepare(args: argparse.Namespace) -> tuple[SelfPlayConfig, RunOptions] | None:
    """:func:`build`, or ``None`` after printing the one line of a refusal."""
    from training.checks import ConfigError

    try:
        return build(args)
    except ConfigError as err:
        _fail(err.field, err.message)
        return None


def _train(args: argparse.Namespace, config: SelfPlayConfig, options: RunOptions) -> int:
    """Train the checked run (the caller holds ``--out``'s lock); 130 when interrupted."""
    from training.checks import ConfigError
    from training.run_dir import CheckpointError
    from training.selfplay.config import CONFIG_FILE
    from training.selfplay.run import run_selfplay

    out = Path(args.out)
    try:
        learner = run_selfplay(config, out, options, lock=False)
    except CheckpointError as err:  # what the glance of build() cannot see: the files' contents
        return _fail("--resume" if args.resume else "--out", str(err))
    except ConfigError as err:  # what only the Ray cluster can tell: its CPUs
        return _fail(_flag_of(err.field), err.message)
    except KeyboardInterrupt:
        if (out / CONFIG_FILE).is_file():  # --resume would be refused without it
            hint = f"interrupted; add --resume to continue from the last checkpoint in {out}"
        else:
            hint = "interrupted before the run was set up; run the same command again"
        print(f"\n{_PREFIX}: {hint}", file=sys.stderr)
        return 130
    print(
        f"{learner.env_steps:,} env decisions ({learner.trained:,} trained, {learner.rounds:,} rounds, "
        f"{learner.updates} updates); policy: {out / 'policy.npz'}; curve: {out / 'curve.csv'}"
    )
    return 0
