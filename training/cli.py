"""``mtrain train``: MaskablePPO self-play training (see :mod:`training.train`).

Examples::

    mtrain train --steps 2000000 --seed 0 --out runs/ppo            # all cores
    mtrain train --steps 2000000 --seed 0 --out runs/ppo --resume   # continue a killed run
    mtrain train --steps 3000000 --out runs/ppo --resume            # extend a finished run
    mtrain train --steps 2000000 --out runs/bc --bc-expert planner --bc-samples 200000

Every option is checked before anything starts or is written: a bad value gets one line
naming the option and what it accepts, and exit code 2. An --out that already holds a run
needs --resume (or another --out). On --resume the run's saved config.json is used; only
--steps, --no-progress, --verbose, --vec and --workers may change (the last two change
speed, not results), any other option given must match the saved one. The run continues
in the --out given, also when its directory was copied or moved (no path inside a run
names a directory); a run killed before its first checkpoint starts over with its saved
configuration. Without checkpoints/latest.json the newest checkpoint whose sha256s verify
is resumed; a run with progress but no such checkpoint is refused, never started over.
A run whose files do not fit together (a model.zip of another run or step, a latest.json
pointing outside checkpoints/, a damaged state.pkl, model.zip or config.json) is refused
with one line, "mtrain train: --resume: <file>: <what is wrong>", exit code 2, before
anything is written. One run writes an --out at a time: a second one
(a requeued job, the same command with --resume in another terminal) is refused with one
line, "mtrain train: --out: <dir> is in use by pid N (one run writes a directory at a
time)", exit code 2.

The run ends with a summary: the final evaluation against each opponent with 95% CIs,
steps/s, and where the curve, the policy and the TensorBoard logs are; summary.json in
--out holds the same as strict JSON.

--backend rllib trains with Ray RLlib instead (training/rllib: multi-agent shared-policy
self-play with an action-masking RLModule, optional snapshot league), on a local Ray
instance or, with --address HOST:PORT, on a Ray cluster; the same outputs (curve by the
tournament harness, checkpoints, --resume, TensorBoard, policy.npz, summary). Options of the
SB3 trainer alone (--vec, --seat, --shaping, --bc-*, ...) are refused there.

--vec dummy keeps all envs in the learner process: no messages between processes and no
workers competing with other jobs for the cores, which can make it the faster choice on a
shared machine. Both give identical runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agents.mexican_train.league import parse_weights
from agents.registry import split_specs
from mtrain_env.cli import output_problem
from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.argtypes import integer, number
from mtrain_env.tilegame.files import os_error_text


def _seat(text: str) -> str | int:
    """``random``, ``rotate`` or a seat index (range checked against the players later)."""
    try:
        return int(text)
    except ValueError:
        return text


def _net_arch(text: str) -> list[int]:
    """``256,256`` -> ``[256, 256]`` (sizes checked later)."""
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected hidden layer sizes like 256,256, got {text!r}") from None


def _weights(text: str) -> dict[str, float]:
    try:
        return parse_weights(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _names(text: str) -> list[str]:
    names = split_specs(text)  # "mc[sims=50,z=2],greedy": commas inside brackets kept
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated agent names, got {text!r}")
    return names


def _param(text: str) -> tuple[str, Any]:
    """``key=value``, the value read as JSON (``200``, ``0.5``, ``true``) or else as a string."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, e.g. rollouts=200, got {text!r}")
    try:
        value: Any = json_text.loads(raw)
    except ValueError:
        value = raw
    if isinstance(value, float) and value - value != 0.0:  # NaN or an infinity
        raise argparse.ArgumentTypeError(f"{key}: expected a finite value, got {raw!r}")
    return key, value


#: ``--option`` -> (TrainConfig field (``game.<keyword>`` for the game), parser type, metavar,
#: help); every option with a value, in the help's groups below
_OPTIONS: dict[str, tuple[str, Any, str, str]] = {
    # run
    "--steps": ("steps", integer, "N", "env steps, rounded up to whole rollouts; required"),
    "--out": ("out", str, "DIR", "run directory, required"),
    "--seed": ("seed", integer, "N", "run seed (default 0)"),
    "--envs": ("n_envs", integer, "N", "parallel envs (default 8 per worker process)"),
    "--workers": ("workers", integer, "N", "env worker processes (default: one per CPU core)"),
    "--vec": ("vec", str, "KIND", "sharded (default), subproc or dummy (in-process)"),
    "--checkpoint-every": ("checkpoint_every", integer, "N", "steps between checkpoints (default 50000)"),
    "--keep-checkpoints": ("keep_checkpoints", integer, "N", "checkpoints kept (default 3)"),
    "--torch-threads": ("torch_threads", integer, "N", "torch threads of the learner (default 1)"),
    "--verbose": ("verbose", integer, "N", "1: print SB3's training tables (default 0)"),
    # game
    "--players": ("game.num_players", integer, "N", "seats, 2..8 up to double-12 (R3; default 4)"),
    "--max-pips": ("game.max_pips", integer, "N", "N of the double-N set, 6..18 (R1; default 12)"),
    "--rules": ("game.rules", str, "NAME", "preset: pagat (default), wikipedia or cardinal"),
    "--rounds": ("game.rounds", integer, "N", "rounds per episode, 1..N+1 (R25; default 1)"),
    "--flag": ("game.flags", str, "NAME", "RULES.md variant flag on (repeatable)"),
    "--reward": ("reward", str, "MODE", "zero_sum (default), penalty or win"),
    "--seat": ("seat", _seat, "SEAT", "learner seat: random (default), rotate or an index"),
    # PPO
    "--n-steps": ("n_steps", integer, "N", "rollout steps per env per update (default 2048/envs)"),
    "--batch-size": ("batch_size", integer, "N", "minibatch size (default 512)"),
    "--epochs": ("n_epochs", integer, "N", "PPO epochs per update (default 4)"),
    "--lr": ("learning_rate", number, "X", "learning rate (default 3e-4)"),
    "--lr-schedule": ("lr_schedule", str, "KIND", "constant (default) or linear (to 0)"),
    "--gamma": ("gamma", number, "X", "discount, 0..1 (default 1: the round's score)"),
    "--gae-lambda": ("gae_lambda", number, "X", "GAE lambda, 0..1 (default 0.95)"),
    "--clip-range": ("clip_range", number, "X", "PPO clip range (default 0.2)"),
    "--ent-coef": ("ent_coef", number, "X", "entropy coefficient (default 0.01)"),
    "--vf-coef": ("vf_coef", number, "X", "value loss coefficient (default 0.5)"),
    "--max-grad-norm": ("max_grad_norm", number, "X", "gradient clipping norm (default 0.5)"),
    "--target-kl": ("target_kl", number, "X", "stop an update's epochs past this KL (0.05; 0 = off)"),
    "--net-arch": ("net_arch", _net_arch, "SIZES", "hidden layer sizes (default 256,256)"),
    "--logit-bound": ("logit_bound", number, "X", "soft clamp on the action logits (default 20)"),
    "--features": ("features", str, "SET", "learner input: env (default) or planner"),
    "--shaping": ("shaping", number, "X", "potential-based pip shaping (default 0 = none)"),
    # league
    "--heuristics": ("heuristics", _weights, "W", "agents:weights (default greedy:2,planner:1,random:1)"),
    "--p-heuristic": ("p_heuristic", number, "P", "share of heuristic opponents (default 0.5)"),
    "--p-latest": ("p_latest", number, "P", "share of the latest snapshot (default 0.3)"),
    "--p-older": ("p_older", number, "P", "share of older snapshots (default 0.2)"),
    "--snapshot-every": ("snapshot_every", integer, "N", "steps between snapshots (100000; 0 = never)"),
    "--max-snapshots": ("max_snapshots", integer, "N", "snapshots kept (default 20)"),
    # evaluation
    "--eval-every": ("eval_every", integer, "N", "steps between evaluations (50000; 0 = never)"),
    "--eval-deals": ("eval_deals", integer, "N", "duplicate deals per opponent (default 10)"),
    "--eval-opponents": ("eval_opponents", _names, "NAMES", "agents (default random,greedy,planner)"),
    "--eval-seed": ("eval_seed", integer, "N", "seed of the evaluation deals"),
    # behaviour cloning
    "--bc-expert": ("bc_expert", str, "AGENT", "warm start: clone this registered agent"),
    "--bc-samples": ("bc_samples", integer, "N", "expert decisions to clone (needs --bc-expert)"),
    "--bc-param": ("bc_expert_params", _param, "K=V", "a parameter of the expert (repeatable)"),
    "--bc-epochs": ("bc_epochs", integer, "N", "behaviour-cloning epochs (default 5)"),
    "--bc-lr": ("bc_lr", number, "X", "behaviour-cloning learning rate (default 1e-3)"),
}
#: help groups: title -> options (the switches --resume and --no-progress are in "run")
_GROUPS: dict[str, tuple[str, ...]] = {
    "run": ("--steps", "--out", "--seed", "--envs", "--workers", "--vec", "--checkpoint-every",
            "--keep-checkpoints", "--torch-threads", "--verbose"),
    "game (docs/RULES.md)": ("--players", "--max-pips", "--rules", "--rounds", "--flag", "--reward",
                             "--seat"),
    "PPO": ("--n-steps", "--batch-size", "--epochs", "--lr", "--lr-schedule", "--gamma", "--gae-lambda",
            "--clip-range", "--ent-coef", "--vf-coef", "--max-grad-norm", "--target-kl", "--net-arch",
            "--logit-bound", "--features", "--shaping"),
    "league (opponents while training)": ("--heuristics", "--p-heuristic", "--p-latest", "--p-older",
                                          "--snapshot-every", "--max-snapshots"),
    "evaluation (the learning curve)": ("--eval-every", "--eval-deals", "--eval-opponents", "--eval-seed"),
    "behaviour cloning (warm start)": ("--bc-expert", "--bc-samples", "--bc-param", "--bc-epochs", "--bc-lr"),
}  # fmt: skip
_REPEATABLE = {"--flag", "--bc-param"}
_REQUIRED = {"--steps", "--out"}
#: fields whose 0 means "the default" in TrainConfig; on the command line the default is
#: what leaving the option out gives
_AUTO = {"n_envs", "workers", "n_steps"}
_PREFIX = "mtrain train"


def _flag(field: str) -> str:
    """The command-line option of a TrainConfig field (``game.hand_size`` follows ``--players``);
    of each factor of a product (``n_envs x n_steps``)."""
    if " x " in field:
        return " x ".join(_flag(part) for part in field.split(" x "))
    for flag, (dest, *_rest) in _OPTIONS.items():
        if dest == field:
            return flag
    extra = {"progress": "--no-progress", "game.hand_size": "--players", "game": "--players"}
    return extra.get(field, field)


def _error(message: str) -> None:
    """argparse's errors as one line ``mtrain train: --option: message``, exit code 2."""
    if message.startswith("argument "):
        flag, _, text = message[len("argument ") :].partition(": ")
        message = f"{flag}: {text}"
    elif message.startswith("unrecognized arguments: "):
        extra = message.split(": ", 1)[1]
        if extra.startswith("-"):
            message = f"{extra.split()[0].split('=')[0]}: unknown option (see {_PREFIX} --help)"
        else:
            message = f"{extra}: unexpected argument (see {_PREFIX} --help)"
    elif message.startswith("the following arguments are required: "):
        flags = message.split(": ", 1)[1]
        message = f"{flags}: required (e.g. {_PREFIX} --steps 1000000 --out runs/ppo; see --help)"
    print(f"{_PREFIX}: {message}", file=sys.stderr)
    raise SystemExit(2)


def register(subparsers: Any) -> None:
    """Add the ``train`` subcommand to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "train",
        help="MaskablePPO self-play training (league, evaluation curve, checkpoints, --resume)",
        description=__doc__,
        formatter_class=lambda prog: argparse.RawDescriptionHelpFormatter(prog, max_help_position=27),
        allow_abbrev=False,  # a typo such as --player must not pass for --players
    )
    p.error = _error  # one line instead of the usage block (unknown options too: training.app.parse)
    for title, flags in _GROUPS.items():
        group = p.add_argument_group(title)
        for flag in flags:
            dest, typ, metavar, text = _OPTIONS[flag]
            group.add_argument(
                flag,
                dest=dest,
                type=typ,
                metavar=metavar,
                help=text,
                required=flag in _REQUIRED,
                default=None,
                action="append" if flag in _REPEATABLE else "store",
            )
        if title == "run":
            group.add_argument(
                "--resume", action="store_true", help="continue the run in --out from its last checkpoint"
            )
            group.add_argument(
                "--no-progress", dest="progress", action="store_false", default=True, help="no progress bar"
            )
            group.add_argument(
                "--backend",
                choices=("sb3", "rllib"),
                default=None,
                help="sb3 (default, MaskablePPO) or rllib (Ray RLlib, training/rllib)",
            )
            group.add_argument(
                "--address",
                default=None,
                metavar="HOST:PORT",
                help="Ray cluster of --backend rllib (default: a local Ray)",
            )
    p.set_defaults(func=main)


class _BadOptionError(Exception):
    """A bad command line: ``flag`` (or a TrainConfig field) and what is wrong."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(f"{flag}: {message}")
        self.flag = flag
        self.message = message


def _check_out(out: str) -> None:
    """``--out`` names a directory that can be written (:func:`~mtrain_env.cli.output_problem`)."""
    if not str(out):
        raise _BadOptionError("--out", "expected a directory path")
    problem = output_problem(Path(out), "directory")
    if problem is not None:
        raise _BadOptionError("--out", problem)


def _check_no_run(out: Path) -> None:
    """``--out`` holds no training run (a new run's check; ``--resume`` continues one)."""
    from training.run_dir import run_files

    found = run_files(out)
    if found:
        raise _BadOptionError(
            "--out",
            f"{out} already holds a training run ({', '.join(found)}); add --resume to continue it, "
            "or choose a new --out",
        )


def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The options given on the command line, as TrainConfig fields (``game.<keyword>``)."""
    given: dict[str, Any] = {}
    for flag, (dest, *_rest) in _OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None or dest in ("steps", "out"):
            continue
        if dest in _AUTO and value < 1:
            raise _BadOptionError(flag, f"must be >= 1, got {value} (leave {flag} out for the default)")
        if dest == "bc_expert_params":
            value = dict(value)
        elif dest == "game.flags":
            value = list(dict.fromkeys(value))
        given[dest] = value
    if "game.flags" in given:
        from mtrain_env.mexican_train.core.config import VARIANT_FLAGS

        unknown = [x for x in given["game.flags"] if x not in VARIANT_FLAGS]
        if unknown:
            raise _BadOptionError(
                "--flag", f"unknown variant {unknown[0]!r}; the variants are {', '.join(VARIANT_FLAGS)}"
            )
    return given


def _game(given: dict[str, Any], base: Any = None) -> Any:
    """The GameConfig of the options given (keywords not given from ``base``, a GameConfig)."""
    from training.run_config import make_game

    keywords = {
        k.split(".", 1)[1]: v for k, v in given.items() if k.startswith("game.") and k != "game.flags"
    }
    if base is not None:
        keywords = {"rules": base.rules, **keywords}
    return make_game(**keywords, **dict.fromkeys(given.get("game.flags", []), True))


def _fresh_config(args: argparse.Namespace, given: dict[str, Any]) -> Any:
    from training.run_config import TrainConfig

    # options that would do nothing (the Python API ignores them, as older runs may hold them)
    if "bc_expert" in given and given.get("bc_samples", 0) == 0:
        raise _BadOptionError(
            "--bc-expert", "clones nothing without --bc-samples N > 0 (expert decisions to clone)"
        )
    if "bc_expert_params" in given and "bc_expert" not in given:
        raise _BadOptionError("--bc-param", "parameters of the behaviour-cloning expert need --bc-expert")
    fields = {"steps": args.steps, "out": args.out, "progress": args.progress, "game": _game(given)}
    fields.update((k, v) for k, v in given.items() if not k.startswith("game."))
    return TrainConfig(**fields)


def _resumed_config(args: argparse.Namespace, given: dict[str, Any]) -> Any:
    """The run's saved config with what a resume may change; refuses conflicting options."""
    from training.run_config import RESUME_OVERRIDES
    from training.run_dir import CONFIG_FILE, read_config, read_latest

    out = Path(args.out)
    if not (out / CONFIG_FILE).exists():
        raise _BadOptionError(
            "--resume", f"no run to resume in {out} ({CONFIG_FILE} missing); leave --resume out to start one"
        )
    try:
        saved = read_config(out)
        latest = read_latest(out)
    except ValueError as err:  # CheckpointError: "<file>: <what is wrong>"
        raise _BadOptionError("--resume", str(err)) from None
    at = 0 if latest is None else latest[1]  # no checkpoint yet: the run starts over
    if args.steps < at:
        raise _BadOptionError(
            "--steps",
            f"the run in {out} is at step {at} (its last checkpoint); give --steps >= {at} to extend it",
        )
    clashes = []
    for field, value in given.items():
        if field in RESUME_OVERRIDES:  # what a resumed run takes from the command line
            continue
        if field == "game.flags":
            want, have = _game(given, saved.game).flags(), saved.game.flags()
            if want != have:
                on = [k for k, v in have.items() if v]
                clashes.append((field, value, on))
            continue
        have = getattr(saved.game, field[5:]) if field.startswith("game.") else getattr(saved, field)
        if have != value:
            clashes.append((field, value, have))
    if clashes:
        flags = ", ".join(_flag(f) for f, _v, _h in clashes)
        text = "; ".join(f"{_flag(f)} {v!r} but the run has {h!r}" for f, v, h in clashes)
        raise _BadOptionError(
            flags,
            f"conflicting with the run in {out} ({text}); --resume keeps the run's configuration: "
            "leave these options out, or start a new run with another --out",
        )
    saved.steps, saved.out, saved.progress = args.steps, args.out, args.progress
    saved.verbose = given.get("verbose", 0)
    for field in ("vec", "workers"):
        if field in given:
            setattr(saved, field, given[field])
    return saved


def config_from_args(args: argparse.Namespace) -> Any:
    """The validated :class:`~training.run_config.TrainConfig` of a command line (the run's saved
    one on ``--resume``); raises :class:`_BadOptionError` or :class:`~training.run_config.ConfigError`.
    Reads ``--out`` but writes nothing."""
    _check_out(args.out)
    given = _given(args)
    if args.resume:
        return _resumed_config(args, given)
    _check_no_run(Path(args.out))
    config = _fresh_config(args, given)
    config.resolved()  # every field checked here, before the learning framework is imported
    return config


def main(args: argparse.Namespace) -> int:
    """Run ``mtrain train``: validate everything, train, print the summary; one run writes
    ``--out`` at a time (:func:`training.out_lock.run_locked`)."""
    from training.out_lock import run_locked

    backend = args.backend
    if backend is None and args.resume:
        from training.run_dir import is_rllib_run

        backend = "rllib" if is_rllib_run(args.out) else "sb3"
    if backend == "rllib":
        return _main_rllib(args)
    if args.address is not None:
        print(f"{_PREFIX}: --address: a Ray cluster address is for --backend rllib", file=sys.stderr)
        return 2
    return run_locked(args.out, lambda: _prepare(args), lambda prepared: _train(*prepared), _busy)


def _busy(text: str) -> int:
    """``--out`` is written by another run (or cannot be locked): one line, exit code 2."""
    print(f"{_PREFIX}: --out: {text}", file=sys.stderr)
    return 2


def _interrupted(out: Path) -> str:
    """The line of an interrupted run: how to go on (``--resume`` once its ``config.json`` is written)."""
    from training.run_dir import CONFIG_FILE

    if not (out / CONFIG_FILE).exists():
        return f"\n{_PREFIX}: interrupted before the run was set up; run the same command again"
    return (
        f"\n{_PREFIX}: interrupted; run the same command with --resume to continue from the last "
        f"checkpoint in {out} (or to start over with its configuration if none was written)"
    )


def _prepare(args: argparse.Namespace) -> tuple[Any, Any] | None:
    """The SB3 run's ``(TrainConfig, Trainer)``, every check done; ``None`` after printing
    the one line of a refusal."""
    from training.run_config import RESUME_OVERRIDES, ConfigError
    from training.run_dir import CONFIG_FILE, CheckpointError

    try:
        config = config_from_args(args)  # checked without torch: a bad option costs no import
        from training.train import Trainer

        trainer = Trainer(config, resume=args.resume)  # the checks that need the run's files, writes nothing
    except _BadOptionError as err:
        print(f"{_PREFIX}: {err.flag}: {err.message}", file=sys.stderr)
        return None
    except CheckpointError as err:  # the run's files do not fit together
        print(f"{_PREFIX}: --resume: {err}", file=sys.stderr)
        return None
    except ConfigError as err:
        if args.resume and err.field not in RESUME_OVERRIDES:  # the saved configuration's
            print(f"{_PREFIX}: --resume: {Path(args.out) / CONFIG_FILE}: {err}", file=sys.stderr)
        else:
            print(f"{_PREFIX}: {_flag(err.field)}: {err.message}", file=sys.stderr)
        return None
    except (FileExistsError, FileNotFoundError) as err:  # the run directory changed meanwhile
        print(f"{_PREFIX}: {'--resume' if args.resume else '--out'}: {err}", file=sys.stderr)
        return None
    return config, trainer


def _train(config: Any, trainer: Any) -> int:
    """Train the prepared run (SB3's or RLlib's) and print its summary; 130 when interrupted."""
    from training.run_dir import format_summary

    try:
        Path(config.out).mkdir(parents=True, exist_ok=True)
    except OSError as err:
        print(f"{_PREFIX}: --out: cannot create {config.out}: {os_error_text(err)}", file=sys.stderr)
        return 2
    try:
        trainer.run(lock=False)  # run_locked holds --out's lock
    except KeyboardInterrupt:
        print(_interrupted(Path(config.out)), file=sys.stderr)
        return 130
    print(format_summary(trainer.summary, config.out))
    return 0


def _main_rllib(args: argparse.Namespace) -> int:
    """``mtrain train --backend rllib`` (:mod:`training.rllib`): the same checks, outputs,
    summary and single-writer lock."""
    import importlib.util

    from training.out_lock import run_locked

    if importlib.util.find_spec("ray") is None:
        print(
            f"{_PREFIX}: --backend: rllib needs Ray RLlib (pip install 'mtrain_env[rllib]')", file=sys.stderr
        )
        return 2
    return run_locked(args.out, lambda: _prepare_rllib(args), lambda prepared: _train(*prepared), _busy)


def _prepare_rllib(args: argparse.Namespace) -> tuple[Any, Any] | None:
    """The RLlib run's ``(RLlibConfig, RLlibTrainer)``, every check done but Ray's address
    being reachable; ``None`` after printing the one line of a refusal."""
    from agents.tournament.ray_backend import address_problem, reach_problem
    from training.rllib.options import OptionClashError, option_field, rllib_config
    from training.rllib.train import RESUME_OVERRIDES as RLLIB_RESUME_OVERRIDES
    from training.rllib.train import RLlibTrainer
    from training.run_config import ConfigError
    from training.run_dir import CONFIG_FILE, CheckpointError, is_rllib_run

    out = Path(args.out)
    try:
        _check_out(args.out)  # as the SB3 path: before Ray starts
        if args.address is not None:
            problem = address_problem(args.address)
            if problem is not None:
                raise _BadOptionError("--address", problem)
        if args.resume and not is_rllib_run(out):
            raise _BadOptionError("--resume", f"no RLlib run to resume in {out} (its config.json is not one)")
        if not args.resume:
            _check_no_run(out)
        given = _given(args)
        config = rllib_config(
            given,
            _game(given),
            steps=args.steps,
            out=args.out,
            progress=args.progress,
            address=args.address,
            resume=args.resume,
        )
        trainer = RLlibTrainer(config, resume=args.resume)
        if args.address is not None:  # the last check (Ray itself would retry for a minute or more)
            problem = reach_problem(args.address)
            if problem is not None:
                raise _BadOptionError("--address", problem)
    except _BadOptionError as err:
        print(f"{_PREFIX}: {err.flag}: {err.message}", file=sys.stderr)
        return None
    except OptionClashError as err:
        print(f"{_PREFIX}: {_flag(err.field)}: {err.message}", file=sys.stderr)
        return None
    except CheckpointError as err:
        print(f"{_PREFIX}: --resume: {err}", file=sys.stderr)
        return None
    except ConfigError as err:
        if args.resume and err.field not in RLLIB_RESUME_OVERRIDES:  # the saved configuration's
            print(f"{_PREFIX}: --resume: {out / CONFIG_FILE}: {err}", file=sys.stderr)
        else:
            print(f"{_PREFIX}: {_flag(option_field(err.field))}: {err.message}", file=sys.stderr)
        return None
    return config, trainer
