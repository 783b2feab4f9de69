"""``mtrain train``: MaskablePPO self-play training (see :mod:`training.train`).

Examples::

    mtrain train --steps 2000000 --seed 0 --out runs/ppo            # all cores
    mtrain train --steps 2000000 --seed 0 --out runs/ppo --resume   # continue a killed run
    mtrain train --steps 3000000 --out runs/ppo --resume            # extend a finished run
    mtrain train --steps 2000000 --out runs/bc --bc-expert planner --bc-samples 200000

On ``--resume`` the run's saved ``config.json`` is used; only ``--steps``,
``--no-progress``, ``--verbose``, ``--vec`` and ``--workers`` may change (the last two
change speed, not results), any other option given must match the saved one.

``--vec dummy`` keeps all envs in the learner process: no messages between processes and
no workers competing with other jobs for the cores, which can make it the faster choice on
a shared machine. Both give identical runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from training.league import parse_weights

#: CLI option -> TrainConfig field, for options whose default is "the config's default"
_OPTIONS: dict[str, tuple[str, type, str]] = {
    "--envs": ("n_envs", int, "parallel envs (default: 8 per worker process)"),
    "--workers": ("workers", int, "env worker processes (default: one per CPU core)"),
    "--vec": ("vec", str, "sharded (default: --workers processes), subproc (one per env) or dummy"),
    "--players": ("num_players", int, "seats (R3), default 4"),
    "--max-pips": ("max_pips", int, "N of the double-N set (R1), default 12"),
    "--rules": ("rules", str, "preset: pagat (default), wikipedia, cardinal"),
    "--rounds": ("rounds", int, "rounds per episode (1 = one round, default)"),
    "--reward": ("reward", str, "env reward mode: zero_sum (default), penalty, win"),
    "--seat": ("seat", str, "learner seat per episode: random (default) or rotate"),
    "--n-steps": ("n_steps", int, "rollout steps per env per update (default 2048 // envs)"),
    "--batch-size": ("batch_size", int, "minibatch size (default 512)"),
    "--epochs": ("n_epochs", int, "PPO epochs per update (default 4)"),
    "--lr": ("learning_rate", float, "learning rate (default 3e-4)"),
    "--lr-schedule": ("lr_schedule", str, "constant (default) or linear"),
    "--gamma": ("gamma", float, "discount (default 1.0: the round's score is the objective)"),
    "--gae-lambda": ("gae_lambda", float, "GAE lambda (default 0.95)"),
    "--clip-range": ("clip_range", float, "PPO clip range (default 0.2)"),
    "--ent-coef": ("ent_coef", float, "entropy coefficient (default 0.01)"),
    "--vf-coef": ("vf_coef", float, "value loss coefficient (default 0.5)"),
    "--max-grad-norm": ("max_grad_norm", float, "gradient clipping norm (default 0.5)"),
    "--target-kl": ("target_kl", float, "stop an update's epochs past this KL (default 0.05, 0 = off)"),
    "--logit-bound": ("logit_bound", float, "soft clamp on action logits (default 20)"),
    "--features": (
        "features",
        str,
        "learner input: env (default) or planner (plus the planner's advice views)",
    ),
    "--shaping": ("shaping", float, "potential-based pip shaping coefficient (default 0 = none)"),
    "--p-heuristic": ("p_heuristic", float, "league: share of heuristic opponents (default 0.5)"),
    "--p-latest": ("p_latest", float, "league: share of the latest snapshot (default 0.3)"),
    "--p-older": ("p_older", float, "league: share of older snapshots (default 0.2)"),
    "--snapshot-every": ("snapshot_every", int, "league: steps between snapshots (default 100000)"),
    "--max-snapshots": ("max_snapshots", int, "league: snapshots kept (default 20)"),
    "--eval-every": ("eval_every", int, "steps between evaluations (default 50000, 0 = never)"),
    "--eval-deals": ("eval_deals", int, "duplicate deals per evaluation and opponent (default 10)"),
    "--eval-seed": ("eval_seed", int, "seed of the evaluation deals"),
    "--eval-backend": ("eval_backend", str, "auto (default), harness or local"),
    "--checkpoint-every": ("checkpoint_every", int, "steps between checkpoints (default 50000)"),
    "--keep-checkpoints": ("keep_checkpoints", int, "checkpoints kept (default 3)"),
    "--bc-expert": ("bc_expert", str, "behaviour-cloning warm start from this registered agent"),
    "--bc-samples": ("bc_samples", int, "expert decisions to clone (default 0 = no warm start)"),
    "--bc-epochs": ("bc_epochs", int, "behaviour-cloning epochs (default 5)"),
    "--bc-lr": ("bc_lr", float, "behaviour-cloning learning rate (default 1e-3)"),
    "--torch-threads": ("torch_threads", int, "torch threads of the learner (default 1)"),
}
_RESUMABLE = {"steps", "progress", "verbose", "vec", "workers"}


def register(subparsers: Any) -> None:
    """Add the ``train`` subcommand to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "train",
        help="MaskablePPO self-play training (league, evaluation curve, checkpoints, --resume)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--steps", type=int, required=True, help="total environment steps (learner decisions)")
    p.add_argument("--seed", type=int, default=None, help="run seed (default 0)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    for flag, (dest, typ, text) in _OPTIONS.items():
        p.add_argument(flag, dest=dest, type=typ, default=None, help=text)
    p.add_argument("--net-arch", default=None, help="hidden sizes, e.g. 256,256 (default)")
    p.add_argument(
        "--flag", action="append", default=None, metavar="NAME", help="RULES.md variant flag (repeatable)"
    )
    p.add_argument(
        "--heuristics", default=None, help="league heuristics with weights, e.g. greedy:2,random:1"
    )
    p.add_argument(
        "--bc-param",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a parameter of the BC expert, e.g. rollouts=200 (repeatable)",
    )
    p.add_argument("--eval-opponents", default=None, help="comma-separated heuristics to evaluate against")
    p.add_argument("--no-progress", dest="progress", action="store_false", default=True)
    p.add_argument("--verbose", type=int, default=0, help="1: print SB3's training tables")
    p.set_defaults(func=main)


def _parse_param(text: str) -> tuple[str, Any]:
    """``key=value`` with the value read as an int, a float, a bool or else a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise SystemExit(f"error: --bc-param needs KEY=VALUE, got {text!r}")
    value: Any = raw
    for cast in (int, float):
        try:
            value = cast(raw)
            break
        except ValueError:
            continue
    if raw in ("true", "false"):
        value = raw == "true"
    return key, value


def config_from_args(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """``(TrainConfig, given)``: the config and the options given explicitly on the command line."""
    from training.train import TrainConfig

    given: dict[str, Any] = {}
    for dest, _typ, _text in _OPTIONS.values():
        value = getattr(args, dest)
        if value is not None:
            given[dest] = value
    if args.seed is not None:
        given["seed"] = args.seed
    if args.net_arch is not None:
        given["net_arch"] = [int(x) for x in args.net_arch.split(",") if x.strip()]
    if args.flag is not None:
        given["flags"] = dict.fromkeys(args.flag, True)
    if args.heuristics is not None:
        given["heuristics"] = parse_weights(args.heuristics)
    if args.bc_param is not None:
        given["bc_expert_params"] = dict(_parse_param(x) for x in args.bc_param)
    if args.eval_opponents is not None:
        given["eval_opponents"] = [x.strip() for x in args.eval_opponents.split(",") if x.strip()]
    config = TrainConfig(
        steps=args.steps, out=args.out, progress=args.progress, verbose=args.verbose, **given
    )
    return config, given


def main(args: argparse.Namespace) -> int:
    """Run ``mtrain train``."""
    from training.train import CONFIG_FILE, Trainer

    config, given = config_from_args(args)
    if args.resume:
        saved_file = Path(args.out) / CONFIG_FILE
        if not saved_file.exists():
            print(f"error: no run to resume in {args.out} ({CONFIG_FILE} missing)", file=sys.stderr)
            return 2
        saved = json.loads(saved_file.read_text(encoding="utf-8"))
        clashes = {
            k: (v, saved.get(k)) for k, v in given.items() if k not in _RESUMABLE and saved.get(k) != v
        }
        if clashes:
            text = ", ".join(f"{k}={v!r} (run has {s!r})" for k, (v, s) in clashes.items())
            print(
                f"error: --resume keeps the run's configuration; conflicting options: {text}", file=sys.stderr
            )
            return 2
    if args.resume:
        from training.train import TrainConfig

        resumed = TrainConfig.from_json(saved)
        resumed.steps, resumed.progress, resumed.verbose = config.steps, config.progress, config.verbose
        for key in ("vec", "workers"):
            if key in given:
                setattr(resumed, key, given[key])
        config = resumed
    trainer = Trainer(config, resume=args.resume)
    model = trainer.run()
    c = trainer.config
    summary = {
        "out": str(c.out),
        "num_timesteps": int(model.num_timesteps),
        "resumed_from": trainer.start_step if args.resume else None,
        "steps_per_second": round(trainer.throughput, 1),
        "n_envs": c.n_envs,
        "nan_events": int(model.nan_events),
        "last_eval": trainer.curve[-len(c.eval_opponents) :] if trainer.curve else [],
    }
    print(json.dumps(summary, indent=2, default=str))
    return 0
