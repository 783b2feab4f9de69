"""A self-play run on disk: budget, checkpoints and exact resume, evaluation, learning curve.

``run_selfplay(config, out_dir, ...)`` trains a :class:`SelfPlayPPO` (a
:class:`~training.selfplay.learner.SelfPlayConfig`) until ``total_steps`` env decisions or
``max_minutes`` of wall time, writing into ``out_dir``:

* ``selfplay.json``: the run's configuration with its ``"algo"`` (``ppo``; a resume must
  match it);
* ``checkpoint.pt``: the learner's whole state (every ``checkpoint_every`` updates and at
  each evaluation and at the end; :mod:`training.selfplay.checkpoint`);
* ``policies/step_<env steps>.npz``: the policy at each evaluation, and ``policy.npz``, the
  latest (policy files of :mod:`agents.mexican_train.tilenet`, what the ``ppo`` agent plays);
* ``curve.csv``: per evaluation and opponent: env steps, wall seconds, the learner's and
  the opponent's mean penalty per round and their difference with its 95% CI, from
  ``eval_deals`` duplicate deals (the learner in one seat, the opponent in the others, by
  :func:`training.evaluate.evaluate`: our tournament harness, seat rotation) seeded
  ``eval_seed``, distinct from the training deals (``BatchedMexicanTrain`` streams of
  ``config.seed``); ``curve.png`` the plot;
* ``tb/``: TensorBoard scalars (losses, throughput, evaluation).

Evaluations run every ``eval_every`` env steps (a function of the step count, so the
training itself is the same with or without them). Resume: a run restarted on the same
``out_dir`` continues from ``checkpoint.pt`` exactly (curve rows past it are dropped); the
checkpoint keeps the evaluation schedule, so an evaluation interrupted after its checkpoint
is run again first and the curve is the uninterrupted run's (but for ``wall_s``). A run
that cannot be continued exactly is refused with
:class:`~training.run_dir.CheckpointError` (``<file>: <what is wrong>``), its directory
as it was: a ``checkpoint.pt`` damaged or replaced (its sha256), one missing while the
directory shows progress (curve rows, policy files past step 0: starting over would mix
two runs), a ``curve.csv`` line that is not a row of :data:`CURVE_FIELDS` (``<file>:<line>``).
One run writes ``out_dir`` at a time (its lock, :func:`~mtrain_env.tilegame.files.run_lock`);
it removes the temporary files of writes killed midway
(:func:`~mtrain_env.tilegame.files.remove_temp_files`) before it writes.
"""

from __future__ import annotations

import csv
import io
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.mexican_train.tilenet import save_selfplay_policy
from mtrain_env.tilegame.files import atomic_write, remove_temp_files, run_lock
from training.run_dir import CheckpointError, read_run_text
from training.selfplay.checkpoint import SelfPlayCheckpointError, load_checkpoint, save_checkpoint
from training.selfplay.collector import Collectors
from training.selfplay.config import (
    CHECKPOINT_FILE,
    CONFIG_FILE,
    RunOptions,
    SelfPlayConfig,
    checkpoint_fault,
    config_from_json,
    config_to_json,
    read_config_file,
)
from training.selfplay.learner import SelfPlayPPO

__all__ = [
    "CURVE_FIELDS",
    "RunOptions",
    "SelfPlayCheckpointError",
    "config_from_json",
    "config_to_json",
    "run_selfplay",
]

CURVE_FIELDS = (
    "env_steps",
    "wall_s",
    "trained",
    "opponent",
    "deals",
    "rounds",
    "learner_score",
    "opponent_score",
    "diff",
    "ci_low",
    "ci_high",
)


def resolve_device(name: str) -> str:
    """The torch device of :class:`RunOptions` ``device``: ``auto`` is ``cuda`` when torch
    sees a GPU, else ``cpu``; ``ValueError`` naming a GPU torch does not see."""
    import torch as th

    if name == "auto":
        return "cuda" if th.cuda.is_available() else "cpu"
    if name.startswith("cuda"):
        count = th.cuda.device_count() if th.cuda.is_available() else 0
        index = int(name.partition(":")[2] or 0)
        if index >= count:
            seen = f"{count} GPU(s)" if count else "no GPU"
            raise ValueError(f"{name} is not available (torch sees {seen} here)")
    return name


def make_collectors(config: SelfPlayConfig, opts: RunOptions) -> Collectors | None:
    """The Ray actors of ``opts`` (``backend="ray"``), or ``None``: the learner's process
    collects. ``ValueError`` for actors the games or the cluster cannot hold."""
    if opts.backend != "ray":
        return None
    from training.selfplay.ray_collect import RayCollectors

    return RayCollectors(config, opts.actors, opts.address or None)


def _evaluate(policy: Path, opts: RunOptions, config: SelfPlayConfig) -> list[Any]:
    """The ``ppo`` agent playing ``policy`` (numpy forward pass) against each opponent."""
    from agents.mexican_train.ppo import clear_cache
    from training.evaluate import evaluate

    game = {"num_players": config.num_players, "max_pips": config.max_pips}
    try:
        return evaluate(list(opts.eval_opponents), opts.eval_deals, opts.eval_seed, game, policy)
    finally:
        clear_cache()  # each evaluation reads a new file: do not keep the old ones loaded


#: curve.csv's columns -> (parser, whether NaN is allowed: the CI of a single deal has none)
_INT_COLUMNS = ("env_steps", "trained", "deals", "rounds")
_NAN_COLUMNS = ("ci_low", "ci_high")


def _curve_value(name: str, text: str) -> float | int | str:
    """One field of a curve row; ``ValueError`` if it is not its column's kind."""
    if name == "opponent":
        if not text:
            raise ValueError("empty")
        return text
    if name in _INT_COLUMNS:
        if not (text.isascii() and text.isdigit()):  # ints >= 0 only ("²" and "-1" are not)
            raise ValueError(text)
        return int(text)
    value = float(text)
    if not math.isfinite(value) and not (math.isnan(value) and name in _NAN_COLUMNS):
        raise ValueError(text)
    if name == "wall_s" and value < 0:
        raise ValueError(text)
    return value


def _read_curve(path: Path) -> list[dict[str, str]]:
    """``curve.csv``'s rows, each checked: the header
    must be :data:`CURVE_FIELDS`, each line a row of that many fields of their kind (counts
    and steps ints >= 0, an agent name, finite numbers but for the CI of one deal), steps
    in order. Anything else is :class:`~training.run_dir.CheckpointError` naming the file
    and line: a curve a resume would rewrite is never guessed at."""
    if not path.exists():
        return []
    lines = read_run_text(path, "a curve").splitlines()
    if not lines:
        return []
    if lines[0] != ",".join(CURVE_FIELDS):
        header = ",".join(CURVE_FIELDS)
        raise CheckpointError(f"{path}:1", f"the header must be {header}, got {lines[0][:80]!r}")
    rows: list[dict[str, str]] = []
    last = -1
    for number, line in enumerate(lines[1:], start=2):
        where = f"{path}:{number}"
        try:
            raw = next(csv.reader([line]), [])
        except csv.Error as err:
            raise CheckpointError(where, f"not a CSV line ({err})") from None
        if len(raw) != len(CURVE_FIELDS):
            raise CheckpointError(where, f"expected {len(CURVE_FIELDS)} fields, got {len(raw)}")
        for name, field in zip(CURVE_FIELDS, raw, strict=True):
            try:
                _curve_value(name, field)
            except ValueError:
                text = f"column {name!r}: {field[:40]!r} is not a valid value"
                raise CheckpointError(where, text) from None
        step = int(raw[0])
        if step < last:
            raise CheckpointError(where, f"env_steps {step} comes after {last} (rows are in step order)")
        last = step
        rows.append(dict(zip(CURVE_FIELDS, raw, strict=True)))
    return rows


def _progress(out: Path, curve: Sequence[dict[str, str]]) -> list[str]:
    """What in ``out`` shows the run went past step 0: curve rows, policy files of later
    steps, a ``policy.npz`` that is not the step-0 one (a run stopped before its first
    checkpoint holds at most the step-0 evaluation's)."""
    found = []
    steps = [int(r["env_steps"]) for r in curve if int(r["env_steps"]) > 0]
    if steps:
        found.append(f"curve.csv rows up to step {max(steps)}")
    later = sorted(
        p.name
        for p in (out / "policies").glob("step_*.npz")
        if p.name[5:-4].isdigit() and int(p.name[5:-4]) > 0
    )
    if later:
        found.append(f"policies/{later[-1]}" + (f" and {len(later) - 1} more" if len(later) > 1 else ""))
    final, first = out / "policy.npz", out / "policies" / f"step_{0:012d}.npz"
    if final.is_file() and not (first.is_file() and final.read_bytes() == first.read_bytes()):
        found.append("policy.npz")
    return found


def _write_curve(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CURVE_FIELDS)
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(path, buf.getvalue())


def plot_curve(csv_path: Path, png_path: Path) -> None:
    """Penalty difference (learner - opponent, 95% CI) vs env steps and vs wall time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _read_curve(csv_path)
    if not rows:
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for opponent in sorted({r["opponent"] for r in rows}):
        rs = [r for r in rows if r["opponent"] == opponent]
        y = [float(r["diff"]) for r in rs]
        lo = [float(r["ci_low"]) for r in rs]
        hi = [float(r["ci_high"]) for r in rs]
        for ax, key, scale in ((axes[0], "env_steps", 1e6), (axes[1], "wall_s", 60.0)):
            x = [float(r[key]) / scale for r in rs]
            ax.plot(x, y, marker="o", label=f"vs {opponent}")
            ax.fill_between(x, lo, hi, alpha=0.2)
    for ax, label in ((axes[0], "env decisions (millions)"), (axes[1], "wall time (minutes)")):
        ax.axhline(0.0, color="black", lw=0.8)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("learner - opponent, penalty pips / round (95% CI)")
    axes[0].legend()
    fig.suptitle("self-play from scratch: below 0 = the learner sheds more than the opponent")
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)


def run_selfplay(
    config: SelfPlayConfig,
    out_dir: str | Path,
    options: RunOptions | None = None,
    *,
    lock: bool = True,
    collectors: Collectors | None = None,
) -> SelfPlayPPO:
    """Train (or resume) the run in ``out_dir``; the learner at the end (see the module doc).

    ``collectors``: who collects the rollouts (default: ``options``' backend,
    :func:`make_collectors`); closed when the run ends.

    ``lock``: hold ``out_dir``'s single-writer lock (:func:`~mtrain_env.tilegame.files.run_lock`)
    for the whole run, so a second run on it raises
    :class:`~mtrain_env.tilegame.files.DirectoryInUseError` before reading anything;
    ``False`` when the caller holds it (``mtrain selfplay`` takes it before its checks)."""
    opts = options or RunOptions()
    if not lock:
        return _run(config, Path(out_dir), opts, collectors)
    with run_lock(out_dir):
        return _run(config, Path(out_dir), opts, collectors)


def _time_bound(elapsed: float, time_left: float, steps_left: int, rate: float) -> float:
    """How many seconds a run bounded by time and by steps will have run when it stops:
    ``elapsed`` plus the earlier of ``time_left`` and the ``steps_left`` decisions at
    ``rate`` decisions a second (the progress bar's total, so its ETA is the real one)."""
    by_steps = steps_left / rate if rate > 0 else math.inf
    return elapsed + max(0.0, min(time_left, by_steps))


def _pending_evaluation(state: dict[str, Any], opts: RunOptions) -> int | None:
    """The step of the evaluation due after a checkpoint (written just before an evaluation
    that may not have finished), by ``state["eval"]``: None for a checkpoint of another
    ``eval_every`` (or written before the schedule was saved: the next multiple then)."""
    schedule = state.get("eval")
    if not isinstance(schedule, dict) or schedule.get("every") != opts.eval_every:
        return None
    due = schedule.get("next")
    return due if isinstance(due, int) and not isinstance(due, bool) else None


def _run(config: SelfPlayConfig, out: Path, opts: RunOptions, collectors: Collectors | None) -> SelfPlayPPO:
    """:func:`run_selfplay`, its lock held."""
    # everything is read and checked before anything is written: a run that cannot be
    # resumed is refused with its directory as it was
    cfg_path = out / CONFIG_FILE
    saved = read_config_file(cfg_path) if cfg_path.exists() else None
    if saved is not None and saved != config:
        raise ValueError(f"{out} holds a run with another configuration ({cfg_path}); use a new --out")
    ckpt = out / CHECKPOINT_FILE
    fault = checkpoint_fault(ckpt)
    if fault is not None:
        raise SelfPlayCheckpointError(ckpt, fault)
    curve_path = out / "curve.csv"
    curve = _read_curve(curve_path)
    if not ckpt.is_file():
        progress = _progress(out, curve)
        if progress:
            raise SelfPlayCheckpointError(
                ckpt,
                f"missing, but the run went past step 0 ({', '.join(progress)}): it cannot be "
                "continued exactly without it, and starting over would mix two runs; restore it "
                "or use a new --out",
            )
    device = resolve_device(opts.device)
    if collectors is None:
        collectors = make_collectors(config, opts)
    try:
        # a checkpoint holds the weights
        learner = SelfPlayPPO(config, not ckpt.is_file(), device, collectors)
        return _train(learner, config, out, opts, ckpt, curve, saved, cfg_path)
    finally:
        if collectors is not None:
            collectors.close()


def _train(
    learner: SelfPlayPPO,
    config: SelfPlayConfig,
    out: Path,
    opts: RunOptions,
    ckpt: Path,
    curve: list[dict[str, str]],
    saved: SelfPlayConfig | None,
    cfg_path: Path,
) -> SelfPlayPPO:
    """:func:`run_selfplay` once its directory is checked and its learner made."""
    curve_path = out / "curve.csv"
    wall_before = 0.0
    due: int | None = None  #: the next evaluation's step saved with the checkpoint
    if ckpt.is_file():
        state = load_checkpoint(ckpt)
        try:
            learner.load_state_dict(state)
            wall_before = float(state.get("wall_s", 0.0))
            due = _pending_evaluation(state, opts)
        # e.g. written before the batch's public snapshot, or by another program
        except (KeyError, ValueError, TypeError, AttributeError, IndexError, RuntimeError) as err:
            text = f"no {err.args[0]!r} in it" if isinstance(err, KeyError) and err.args else str(err)
            raise SelfPlayCheckpointError(ckpt, f"cannot be restored: {text}") from None
    out.mkdir(parents=True, exist_ok=True)
    remove_temp_files(out)  # of writes killed midway; the lock is held: no writer is running
    (out / "policies").mkdir(exist_ok=True)
    if saved is None:
        # whole or absent: a torn one would block --resume
        atomic_write(cfg_path, json.dumps(config_to_json(config), indent=1) + "\n")
    next_eval: float = math.inf
    if opts.eval_every:
        next_eval = (learner.env_steps // opts.eval_every + 1) * opts.eval_every if due is None else due
    # a checkpoint is written just before each evaluation: one interrupted there is run again
    # (its rows, if any were written, are replaced), as the uninterrupted run has it
    pending = learner.env_steps > 0 and next_eval <= learner.env_steps and bool(opts.eval_deals)
    # the step-0 evaluation too (a run stopped before its first checkpoint starts over)
    first = learner.env_steps == 0 and bool(opts.eval_every) and bool(opts.eval_deals)
    upto = learner.env_steps - 1 if pending or first else learner.env_steps
    curve = [row for row in curve if int(row["env_steps"]) <= upto]
    _write_curve(curve_path, curve)

    from torch.utils.tensorboard import SummaryWriter

    purge = learner.env_steps if learner.env_steps or first else None  # the events written again
    writer = SummaryWriter(log_dir=str(out / "tb"), purge_step=purge)
    start = time.perf_counter()
    deadline = start + opts.max_minutes * 60 if opts.max_minutes else math.inf
    step0 = learner.env_steps
    bar = None
    if opts.progress:
        from tqdm import tqdm

        if opts.max_minutes:  # the run stops at the earlier bound: a bar over its seconds
            bar = tqdm(
                total=opts.max_minutes * 60,
                unit="s",
                bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s [{elapsed}<{remaining}{postfix}]",
            )
        else:
            bar = tqdm(
                total=opts.total_steps,
                initial=min(learner.env_steps, opts.total_steps),
                unit="dec",
                unit_scale=True,
                smoothing=0.1,
            )

    def wall() -> float:
        return wall_before + time.perf_counter() - start

    def checkpoint() -> None:
        state = learner.state_dict()
        state["wall_s"] = wall()
        if math.isfinite(next_eval):  # the evaluation still to run (pending when <= env_steps)
            state["eval"] = {"every": opts.eval_every, "next": int(next_eval)}
        save_checkpoint(state, ckpt)

    def evaluate_now() -> None:
        step = learner.env_steps
        policy = save_selfplay_policy(learner.net, out / "policies" / f"step_{step:012d}.npz")
        save_selfplay_policy(learner.net, out / "policy.npz")
        for res in _evaluate(policy, opts, config):
            half = 1.96 * res.diff_se
            row = {
                "env_steps": step,
                "wall_s": round(wall(), 1),
                "trained": learner.trained,
                "opponent": res.opponent,
                "deals": res.deals,
                "rounds": res.games,
                "learner_score": round(res.learner_score, 3),
                "opponent_score": round(res.opponent_score, 3),
                "diff": round(res.diff, 3),
                "ci_low": round(res.diff - half, 3),
                "ci_high": round(res.diff + half, 3),
            }
            curve.append(row)
            writer.add_scalar(f"eval/diff_vs_{res.opponent}", res.diff, step)
            writer.add_scalar(f"eval/score_vs_{res.opponent}", res.learner_score, step)
            msg = (
                f"[{step:,} dec, {wall() / 60:.1f} min] vs {res.opponent}: learner {res.learner_score:.1f} "
                f"opponent {res.opponent_score:.1f} pips/round, diff {res.diff:+.2f} "
                f"[{res.diff - half:+.2f}, {res.diff + half:+.2f}] ({res.games} rounds)"
            )
            (bar.write if bar is not None else print)(msg)
        _write_curve(curve_path, curve)
        plot_curve(curve_path, out / "curve.png")
        writer.flush()

    if learner.env_steps == 0 and opts.eval_every and opts.eval_deals:
        evaluate_now()
    elif pending:
        evaluate_now()
        next_eval += opts.eval_every
    try:
        while learner.env_steps < opts.total_steps and time.perf_counter() < deadline:
            t0 = time.perf_counter()
            stats = learner.iterate()
            dt = time.perf_counter() - t0
            step = learner.env_steps
            for k, v in stats.items():
                writer.add_scalar(f"train/{k}", v, step)
            writer.add_scalar("train/decisions_per_s", stats["decisions"] / dt, step)
            writer.add_scalar("train/rounds", learner.rounds, step)
            if bar is not None:
                if opts.max_minutes:
                    now = time.perf_counter()
                    steps_left = opts.total_steps - step
                    rate = (step - step0) / (now - start)
                    bar.total = _time_bound(now - start, deadline - now, steps_left, rate)
                    bar.update(now - start - bar.n)
                else:
                    bar.update(int(stats["decisions"]))
                bar.set_postfix_str(f"{stats['decisions'] / dt:,.0f} dec/s, ent {stats['entropy']:.2f}")
            if step >= next_eval and opts.eval_deals:
                checkpoint()
                evaluate_now()
                next_eval += opts.eval_every
            elif opts.checkpoint_every and learner.updates % opts.checkpoint_every == 0:
                checkpoint()
    finally:
        if bar is not None:
            bar.close()
    checkpoint()
    save_selfplay_policy(learner.net, out / "policy.npz")
    writer.close()
    return learner
