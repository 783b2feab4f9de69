"""Replays for the viewer: the files of the served directory, and each replay as JSON frames.

A replay is re-simulated with :func:`mtrain_env.replay.replay_frames` (after
:func:`~mtrain_env.replay.check_replay`: a file that does not re-simulate is refused with
the step and the difference) and every position becomes a table (:mod:`agents.web.tables`):
with every hand (``seat=None``) or one seat's view (``seat=k``: its hand and the public
facts only, built from that seat's public view).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agents.web.tables import decoded_annotations, move_json, table_json
from mtrain_env.replay import (
    DamagedReplayError,
    Replay,
    ReplayMismatchError,
    check_replay,
    loads_replay,
    read_replay,
    replay_frames,
)

__all__ = ["ReplayRefusedError", "list_replays", "load_replay", "parse_replay", "replay_json"]

SUFFIX = ".jsonl"
MAX_LISTED = 2000  #: the newest files listed, at most


class ReplayRefusedError(ValueError):
    """A replay the viewer cannot show; ``status`` is the HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def list_replays(root: Path) -> list[dict[str, Any]]:
    """The replay files under ``root`` (relative paths), newest first."""
    if not root.is_dir():
        return []
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(SUFFIX):
                path = Path(dirpath) / name
                found.append((path.stat().st_mtime, path.relative_to(root).as_posix(), path.stat().st_size))
    found.sort(key=lambda x: (-x[0], x[1]))
    return [{"path": rel, "bytes": size} for _mtime, rel, size in found[:MAX_LISTED]]


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
        return read_replay(path)
    except DamagedReplayError as err:
        raise ReplayRefusedError(f"damaged replay: {err}") from None


def parse_replay(data: bytes, name: str = "upload") -> Replay:
    """An uploaded replay file's bytes as a :class:`Replay` (strictly parsed)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ReplayRefusedError(
            f"damaged replay: {name}: not UTF-8 text ({err.reason} at byte {err.start})"
        ) from None
    try:
        return loads_replay(text, name)
    except DamagedReplayError as err:
        raise ReplayRefusedError(f"damaged replay: {err}") from None


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
                        decoded_annotations(env.codec, step.seat, step.annotations)
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
