"""The environment layer's ``mtrain`` commands: ``dev bench-speed`` and ``replay`` (``check``,
``show``, ``gif``).

``bench-speed`` measures the env against OpenSpiel (``open-spiel``, the ``openspiel`` extra),
which it imports only when run (without it, exit status 2 and one line naming the extra);
``replay`` re-simulates and views replay files (:mod:`mtrain_env.replay`,
:mod:`mtrain_env.replay_view`). The ``mtrain`` program itself is :mod:`training.app`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# re-exported for the commands; the layers below this module import tilegame.argtypes
from mtrain_env.tilegame.argtypes import (
    int_at_least,
    non_negative_float,
    output_problem,
    positive_float,
    refuse_output,
)
from mtrain_env.tilegame.extras import missing_extra
from mtrain_env.tilegame.files import os_error_text

__all__ = [
    "int_at_least",
    "non_negative_float",
    "output_problem",
    "positive_float",
    "refuse_output",
    "register",
]


def bench_speed(args: argparse.Namespace) -> int:
    """Run :mod:`mtrain_env.bench_speed` (steps/s against OpenSpiel)."""
    missing = missing_extra("openspiel", "bench-speed (its reference is OpenSpiel's python_team_dominoes)")
    if missing:
        print(f"mtrain dev bench-speed: {missing}", file=sys.stderr)
        return 2
    from mtrain_env import bench_speed as bench

    bench.main(["--seconds", str(args.seconds), "--slices", str(args.slices)])
    return 0


def replay_files(paths: list[str]) -> list[Path]:
    """The files named, a directory standing for the ``*.jsonl`` files in it (sorted)."""
    out: list[Path] = []
    for name in paths:
        path = Path(name)
        out.extend(sorted(path.glob("*.jsonl")) if path.is_dir() else [path])
    return out


def _refuse(args: argparse.Namespace, message: str) -> None:
    """``message`` on stderr after the command's name (``mtrain replay show: ...``)."""
    print(f"mtrain replay {args.replay_command}: {message}", file=sys.stderr)


def _load(args: argparse.Namespace, path: Path) -> Any:
    """The replay at ``path``, or ``None`` after one line on stderr (unreadable or malformed)."""
    from mtrain_env.replay import DamagedReplayError, read_replay

    try:
        return read_replay(path)
    except DamagedReplayError as err:
        _refuse(args, f"damaged replay: {err}")
    except OSError as err:
        _refuse(args, f"cannot read {path}: {os_error_text(err)}")
    return None


def replay_check(args: argparse.Namespace) -> int:
    """Re-simulate every file; 0 when all match, 1 on a mismatch, 2 on an unreadable file."""
    from tqdm import tqdm

    from mtrain_env.replay import ReplayMismatchError, check_replay

    files = replay_files(args.files)
    if not files:
        _refuse(args, "no replay files found (a directory stands for the *.jsonl files in it)")
        return 2
    damaged = mismatched = steps = 0
    for path in tqdm(files, desc="replays", unit="file", disable=len(files) < 20 or args.quiet):
        replay = _load(args, path)
        if replay is None:
            damaged += 1
            continue
        try:
            check_replay(replay, backend=args.backend)
        except ReplayMismatchError as err:
            _refuse(args, f"MISMATCH {path}: {err}")
            mismatched += 1
            continue
        steps += len(replay.steps)
    ok = len(files) - damaged - mismatched
    print(f"{ok} of {len(files)} replay(s) re-simulate bit-exactly ({steps} decisions)", end="")
    print(f"; {mismatched} mismatched, {damaged} unreadable" if ok < len(files) else "")
    return 2 if damaged else 1 if mismatched else 0


def _checked(args: argparse.Namespace) -> Any:
    """The replay ``args.file`` if it reads and re-simulates and ``args.seat`` is one of its
    seats, else the exit status (after one line on stderr)."""
    from mtrain_env.replay import ReplayMismatchError, check_replay

    replay = _load(args, Path(args.file))
    if replay is None:
        return 2
    try:
        check_replay(replay)
    except ReplayMismatchError as err:
        _refuse(args, f"MISMATCH {args.file}: {err}")
        return 1
    if args.seat is not None and args.seat >= replay.num_players:
        # the option's name, not write_gif's / playthrough's parameter (seat)
        n = replay.num_players
        _refuse(args, f"--seat: must be in 0..{n - 1} (a {n}-player replay), got {args.seat}")
        return 2
    return replay


def replay_show(args: argparse.Namespace) -> int:
    """Print a replay as a text playthrough."""
    from mtrain_env.replay_view import playthrough

    replay = _checked(args)
    if isinstance(replay, int):
        return replay
    try:
        for line in playthrough(replay, args.seat, args.all_hands, tables=not args.moves_only):
            print(line)
    except BrokenPipeError:  # `mtrain replay show FILE | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stdout is closed for good
    return 0


def replay_gif(args: argparse.Namespace) -> int:
    """Write a replay as an animated GIF."""
    from mtrain_env.replay_view import write_gif

    out = args.out if args.out is not None else str(Path(args.file).with_suffix(".gif"))
    problem = output_problem(out)
    if problem is None and Path(out).suffix.lower() != ".gif":  # a.png would be a GIF all the same
        problem = f"must end in .gif (the file is written as a GIF), got {out}"
    if problem is not None:
        _refuse(args, f"--out: {problem}")
        return 2
    replay = _checked(args)
    if isinstance(replay, int):
        return replay
    try:
        frames = write_gif(replay, out, args.seat, args.all_hands, args.fps, args.scale, progress=True)
    except ValueError as err:
        print(f"mtrain replay gif: {err}", file=sys.stderr)
        return 2
    size = Path(out).stat().st_size
    print(f"wrote {out}: {frames} frames, {size / 1e6:.2f} MB")
    return 0


def _gif_type(what: str) -> Callable[[str], float]:
    """An argparse ``type``: a GIF's frame ``"scale"`` or ``"fps"``, refused where
    :mod:`mtrain_env.replay_view`'s ``scale_problem`` / ``fps_problem`` names a problem."""

    def parse(text: str) -> float:
        from mtrain_env import replay_view

        value = positive_float(text)
        problem = getattr(replay_view, f"{what}_problem")(value)
        if problem is not None:
            raise argparse.ArgumentTypeError(f"{problem}, got {text}")
        return value

    return parse


def _register_replay(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "replay",
        help="check, show or animate replay files (JSON Lines, from bench --save-replays or play)",
        description="Replay files record whole games (mtrain_env.replay). `check` re-simulates each "
        "from its seed and compares every decision, round result and the final scores bit for bit "
        "(exit status 1 on a difference, 2 on an unreadable or malformed file); `show` prints a text "
        "playthrough; `gif` writes an animation of the table. --seat N shows that seat's view only.",
    )
    sub = p.add_subparsers(dest="replay_command", required=True, metavar="{check,show,gif}")
    c = sub.add_parser("check", help="re-simulate replays bit-exactly (files or directories)")
    c.add_argument("files", nargs="+", metavar="FILE", help="replay files, or directories of *.jsonl")
    c.add_argument("--backend", choices=("python", "compiled"), default=None, help="Mexican Train engine")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c.set_defaults(func=replay_check)
    for name, func, helptext in (
        ("show", replay_show, "print a text playthrough"),
        ("gif", replay_gif, "write an animated GIF of the table (Mexican Train)"),
    ):
        v = sub.add_parser(name, help=helptext)
        v.add_argument("file", metavar="FILE")
        who = v.add_mutually_exclusive_group()
        who.add_argument("--seat", type=int_at_least(0), default=None, help="that seat's view only")
        who.add_argument("--all-hands", action="store_true", help="show every hand (hidden information)")
        v.set_defaults(func=func)
        if name == "show":
            v.add_argument("--moves-only", action="store_true", help="decisions and results, no tables")
        else:
            v.add_argument("--out", default=None, help="the .gif file to write (default: FILE with .gif)")
            v.add_argument("--fps", type=_gif_type("fps"), default=2.0, help="positions per second")
            v.add_argument("--scale", type=_gif_type("scale"), default=0.5, help="size of the 1280 px frames")


def register(subparsers: Any) -> None:
    """Add ``replay`` to the ``mtrain`` parser."""
    _register_replay(subparsers)


def register_dev(subparsers: Any) -> None:
    """Add the speed benchmark ``bench-speed`` to ``mtrain dev``."""
    p = subparsers.add_parser(
        "bench-speed",
        help="steps per second of every path (env, cores, batched API) against OpenSpiel's "
        "python_team_dominoes",
        description="Random legal games through OpenSpiel, the env, its rules core and, with numba "
        "(the fast extra), the compiled core and the batched API at B = 1, 64, 1024, timed in "
        "interleaved slices; prints steps/s, the ratios and the targets.",
    )
    p.add_argument("--seconds", type=positive_float, default=30.0, help="total CPU seconds per contender")
    p.add_argument(
        "--slices", type=int_at_least(1), default=30, help="interleaved measurements per contender"
    )
    p.set_defaults(func=bench_speed)
