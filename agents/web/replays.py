"""Replays for the viewer: the files of the served directory, and each replay as JSON frames.

A replay is re-simulated with :func:`mtrain_env.replay.replay_frames` (after
:func:`~mtrain_env.replay.check_replay`: a file that does not re-simulate is refused with
the step and the difference) and every position becomes a table (:mod:`agents.web.tables`):
with every hand (``seat=None``) or one seat's view (``seat=k``: its hand and the public
facts only, built from that seat's public view).

The work per replay is bounded whatever a file holds: at most :data:`MAX_REPLAY_BYTES`, no
line over :data:`MAX_LINE_BYTES`, each line parsed on its own and each decision's
annotations cut to what the viewer shows as it is read
(:func:`~agents.web.tables.trim_annotations`); the rest is the game's own frames.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agents.web.tables import decoded_annotations, move_json, table_json, trim_annotations
from mtrain_env.replay import (
    DamagedReplayError,
    Replay,
    ReplayMismatchError,
    check_replay,
    loads_replay,
    replay_frames,
)
from mtrain_env.replay_format import REPLAY_FORMAT
from mtrain_env.tilegame.files import os_error_text

__all__ = ["ReplayRefusedError", "list_replays", "load_replay", "parse_replay", "replay_json"]

SUFFIX = ".jsonl"
MAX_LISTED = 2000  #: the newest files listed, at most
MAX_REPLAY_BYTES = 32 * 1024 * 1024  #: the largest replay the viewer reads (a file or an upload)
#: the longest line read: a decision with a search's values over every legal move is a few KiB
MAX_LINE_BYTES = 64 * 1024
#: the most of a file's start read to tell a replay (its header line) from other JSON Lines
HEADER_BYTES = 16 * 1024


class ReplayRefusedError(ValueError):
    """A replay the viewer cannot show; ``status`` is the HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def list_replays(root: Path) -> list[dict[str, Any]]:
    """The replay files under ``root`` (relative paths), newest first: ``*.jsonl`` files
    whose first line is a replay header (other JSON Lines, e.g. a bench's ``timing.jsonl``,
    are left out), inside ``root`` once links are followed; a file that vanishes while it is
    listed, a dangling link or one that cannot be read is skipped."""
    if not root.is_dir():
        return []
    base = root.resolve()
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(SUFFIX):
                path = Path(dirpath) / name
                try:
                    stat = path.stat()
                except OSError:  # gone since the walk saw it, or a link to nothing
                    continue
                found.append((stat.st_mtime, path.relative_to(root).as_posix(), stat.st_size, path))
    found.sort(key=lambda x: (-x[0], x[1]))
    listed: list[dict[str, Any]] = []
    for _mtime, rel, size, path in found:
        if len(listed) == MAX_LISTED:
            break
        if _is_replay(path, base):
            listed.append({"path": rel, "bytes": size})
    return listed


def _is_replay(path: Path, base: Path) -> bool:
    """Whether ``path`` is a regular file inside ``base`` whose first line is a replay
    header (only the header is read, at most :data:`HEADER_BYTES`)."""
    try:
        if base not in path.resolve().parents or not path.is_file():
            return False
        with path.open("rb") as f:
            head = f.read(HEADER_BYTES)
    except OSError:
        return False
    line, newline, _rest = head.partition(b"\n")
    if not newline:
        return False
    try:
        header = json.loads(line)
    except ValueError:  # not JSON, not UTF-8
        return False
    return isinstance(header, dict) and header.get("format") == REPLAY_FORMAT


def load_replay(root: Path, relative: str) -> Replay:
    """The replay at ``relative`` inside ``root``; refused if the path leaves ``root``."""
    if not relative or "\x00" in relative or not relative.endswith(SUFFIX):
        raise ReplayRefusedError(
            f"a replay path is a {SUFFIX} file under the replay directory, got {relative!r}"
        )
    base = root.resolve()
    path = (base / relative).resolve()
    if base not in path.parents:
        raise ReplayRefusedError(f"{relative!r} is outside the replay directory", 403)
    if not path.is_file():
        raise ReplayRefusedError(f"no replay {relative!r} in the replay directory", 404)
    try:
        with path.open("rb") as f:
            data = f.read(MAX_REPLAY_BYTES + 1)
    except OSError as err:
        raise ReplayRefusedError(f"cannot read {relative!r}: {os_error_text(err)}", 404) from None
    if len(data) > MAX_REPLAY_BYTES:
        raise ReplayRefusedError(f"{relative!r} is over the viewer's {MAX_REPLAY_BYTES} bytes", 413)
    return parse_replay(data, relative)


def parse_replay(data: bytes, name: str = "upload") -> Replay:
    """A replay file's bytes as a :class:`Replay`: strictly parsed, a line at a time, its
    annotations cut to what the viewer shows (see the module docstring)."""
    try:
        return loads_replay(data, name, max_line=MAX_LINE_BYTES, annotations=_trimmed)
    except DamagedReplayError as err:
        raise ReplayRefusedError(f"damaged replay: {err}") from None


def _trimmed(_seat: int, action: int, notes: dict[str, Any]) -> dict[str, Any] | None:
    return trim_annotations(action, notes)


def replay_json(replay: Replay, seat: int | None = None) -> dict[str, Any]:
    """``replay`` re-simulated, as ``{header, steps, frames, rounds, final}`` for the viewer.

    ``frames[k]`` is the table before decision ``k`` (``frames[-1]`` after the last one);
    ``seat`` shows only what that seat knew: its own hand and search values, no seed (which
    deals every hand again); ``None``: every hand.
    """
    if replay.game != "mexican_train":
        raise ReplayRefusedError(f"the web viewer draws Mexican Train replays; this one is {replay.game!r}")
    n = replay.num_players
    if seat is not None and not 0 <= seat < n:
        raise ReplayRefusedError(f"seat must be 0..{n - 1} for this {n}-player replay, got {seat}")
    try:
        check_replay(replay)
    except ReplayMismatchError as err:
        raise ReplayRefusedError(f"the replay does not re-simulate: {err}", 422) from None
    frames = []
    steps = []
    for frame in replay_frames(replay):
        env = frame.env
        raw_game = env.pure_game
        state = env.state_obj
        shown = {seat: state.hands[seat]} if seat is not None else dict(enumerate(state.hands))
        view = frame.public_view(seat if seat is not None else 0)
        table = table_json(raw_game, view, shown)
        if frame.round_result is not None:
            table["round_result"] = frame.round_result
        frames.append(table)
        if frame.step is not None:
            step = frame.step
            steps.append(
                {
                    "seat": step.seat,
                    "agent": replay.agents[step.seat],
                    "move": move_json(env.codec, step.seat, step.action),
                    # another seat's search values over its legal moves would tell its tiles
                    "annotations": (
                        decoded_annotations(env.codec, step.seat, step.annotations, step.action)
                        if seat is None or step.seat == seat
                        else None
                    ),
                }
            )
    return {
        "header": {
            "game": replay.game,
            "config": replay.config,
            # 64-bit seeds lose digits as JavaScript numbers; a seat's view has none: the seed
            # deals every hand and the boneyard again
            "seed": str(replay.seed) if seat is None else None,
            "agents": replay.agents,
            "versions": replay.versions,
            "finished": replay.final is not None,
        },
        "seat": seat,
        "steps": steps,
        "frames": frames,
        "rounds": replay.rounds,
        "final": replay.final,
    }
