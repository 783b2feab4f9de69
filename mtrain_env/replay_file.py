"""Replay files: the JSON Lines text of a :class:`~mtrain_env.replay_format.Replay`, written
atomically and read back strictly (see :mod:`mtrain_env.replay` for the layout, closing line
included: a file cut short or edited is refused, never re-simulated as if whole).
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mtrain_env.replay_format import (
    GAMES,
    REPLAY_FORMAT,
    REPLAY_VERSION,
    DamagedReplayError,
    Replay,
    ReplayStep,
    make_env,
    published_round_result,
)
from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.files import atomic_write, read_regular_file
from mtrain_env.tilegame.snapshot import json_equal

__all__ = [
    "MAX_REPLAY_BYTES",
    "AnnotationFilter",
    "dumps_replay",
    "loads_replay",
    "read_replay",
    "write_replay",
]

#: the most bytes of a replay file read: far above any game's replay (every decision of the
#: longest session, with annotations), a bound against a file that is not one
MAX_REPLAY_BYTES = 256 << 20
#: the key of the closing line, and the keys of its object
_CLOSING_KEY = "end"
_CLOSING_KEYS = ("decisions", "scores", "sha256")
_HEADER_KEYS = ("format", "version", "game", "config", "seed", "agents", "versions")
_OPTIONAL_HEADER_KEYS = ("reward", "options")
_STEP_KEYS = ("seat", "action", "move")
#: one encoder for every line (``json.dumps`` with options builds a new one per call)
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def _header(replay: Replay) -> dict[str, Any]:
    header = {
        "format": REPLAY_FORMAT,
        "version": REPLAY_VERSION,
        "game": replay.game,
        "config": replay.config,
        "seed": replay.seed,
        "agents": list(replay.agents),
        "versions": replay.versions,
    }
    if replay.reward is not None:
        header["reward"] = replay.reward
    if replay.options:
        header["options"] = replay.options
    return header


def dumps_replay(replay: Replay) -> str:
    """The replay as the text of its file (ends with a newline)."""
    lines = [_header(replay)]
    rounds = iter(replay.rounds)
    ends = _round_ends(replay)
    for i, step in enumerate(replay.steps):
        line: dict[str, Any] = {"seat": step.seat, "action": step.action, "move": step.move}
        if step.annotations is not None:
            line["annotations"] = step.annotations
        lines.append(line)
        for _ in range(ends.get(i, 0)):
            lines.append({"round_end": next(rounds)})
    if replay.final is not None:
        lines.append({"final": replay.final})
    encode = _ENCODER.encode
    body = "".join(encode(x) + "\n" for x in lines)
    closing = {
        "decisions": len(replay.steps),
        "scores": None if replay.final is None else replay.final["scores"],
        "sha256": _digest(body),
    }
    return body + encode({_CLOSING_KEY: closing}) + "\n"


def _digest(text: str) -> str:
    """The sha256 of the text before a replay's closing line."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _round_ends(replay: Replay) -> dict[int, int]:
    """Step index -> rounds ended at that step (from ``round_ends``, or found by replaying
    the actions when a replay built by hand does not say)."""
    if len(replay.round_ends) != len(replay.rounds):
        return _locate_round_ends(replay)
    out: dict[int, int] = {}
    for i in replay.round_ends:
        out[i] = out.get(i, 0) + 1
    return out


def _locate_round_ends(replay: Replay) -> dict[int, int]:
    """Where each round ended, found by replaying the actions (round ``k`` ends at the step
    after which the env published its result)."""
    if not replay.rounds:
        return {}
    env = make_env(replay.game, replay.config, replay.reward)
    env.reset(seed=replay.seed, options=replay.options or None)
    out: dict[int, int] = {}
    for i, step in enumerate(replay.steps):
        env.step(step.action)
        if published_round_result(env) is not None:
            out[i] = out.get(i, 0) + 1
    return out


def write_replay(path: str | os.PathLike[str], replay: Replay) -> None:
    """Write ``replay`` to ``path`` atomically (:func:`~mtrain_env.tilegame.files.atomic_write`)."""
    text = dumps_replay(replay)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, text)


def read_replay(path: str | os.PathLike[str]) -> Replay:
    """Read a replay file, strictly: :class:`DamagedReplayError` (path, line, reason) on
    anything malformed; ``OSError`` when the file cannot be opened, is not a regular file
    (a FIFO, a device) or holds more than :data:`MAX_REPLAY_BYTES`."""
    data = read_regular_file(path, MAX_REPLAY_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DamagedReplayError(path, 0, f"not UTF-8 text ({err.reason} at byte {err.start})") from None
    return loads_replay(text, path)


#: keeps, changes or drops one decision's annotations as a replay is read: ``(seat, action,
#: annotations) -> annotations or None``
AnnotationFilter = Callable[[int, int, dict[str, Any]], "dict[str, Any] | None"]


def loads_replay(
    text: str | bytes,
    path: str | os.PathLike[str] = "<string>",
    *,
    max_line: int | None = None,
    annotations: AnnotationFilter | None = None,
) -> Replay:
    """Parse the text of a replay file (see :func:`read_replay`), one line at a time.

    A reader of untrusted files bounds its work: ``max_line`` refuses a line longer than
    that many characters (bytes, for ``bytes``: each line is decoded on its own) before
    parsing it, and ``annotations`` replaces each decision's annotations as it is read, so
    that what a file's annotations hold is never kept whole.
    """
    if not text:
        raise DamagedReplayError(path, 0, "empty file: no header line")
    if text[-1:] not in ("\n", b"\n"):
        newlines = text.count("\n") if isinstance(text, str) else text.count(b"\n")
        raise DamagedReplayError(path, newlines + 1, "the last line has no newline (cut short?)")
    lines = _objects(text, path, max_line)
    replay = _read_header(next(lines)[1], path)
    n = replay.num_players
    closing: dict[str, Any] | None = None
    last = 1
    for no, obj in lines:
        last = no
        if closing is not None:
            raise DamagedReplayError(path, no, "a line after the closing line")
        if _CLOSING_KEY in obj:
            _only(obj, (_CLOSING_KEY,), path, no)
            closing = obj[_CLOSING_KEY]
        elif replay.final is not None:
            raise DamagedReplayError(path, no, "a line after the final line")
        elif "round_end" in obj:
            _only(obj, ("round_end",), path, no)
            result = obj["round_end"]
            if not isinstance(result, dict) or not _is_seat_list(result.get("scores"), n):
                raise DamagedReplayError(path, no, f"round_end must be a round result with {n} scores")
            if not replay.steps:
                raise DamagedReplayError(path, no, "a round_end before any decision")
            replay.rounds.append(result)
            replay.round_ends.append(len(replay.steps) - 1)
        elif "final" in obj:
            _only(obj, ("final",), path, no)
            final = obj["final"]
            if not (
                isinstance(final, dict)
                and set(final) == {"returns", "scores"}
                and _is_seat_list(final["returns"], n)
                and _is_seat_list(final["scores"], n)
            ):
                raise DamagedReplayError(
                    path, no, f"final must be {{'returns': [{n} numbers], 'scores': [...]}}"
                )
            replay.final = final
        else:
            step = _read_step(obj, n, path, no)
            if annotations is not None and step.annotations is not None:
                step = ReplayStep(
                    step.seat, step.action, step.move, annotations(step.seat, step.action, step.annotations)
                )
            replay.steps.append(step)
    _check_closing(replay, closing, text, last, path)
    return replay


def _objects(text: str | bytes, path: Any, max_line: int | None) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, JSON object)`` of each line of ``text`` (which ends with a newline),
    parsed only when asked for: one line's objects at a time."""
    newline: Any = "\n" if isinstance(text, str) else b"\n"
    unit = "characters" if isinstance(text, str) else "bytes"
    start = 0
    no = 0
    while start < len(text):
        end = text.index(newline, start)
        no += 1
        if max_line is not None and end - start > max_line:
            raise DamagedReplayError(
                path, no, f"a line of {end - start} {unit}, over the {max_line} this reader takes"
            )
        line = text[start:end]
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as err:
                raise DamagedReplayError(
                    path, no, f"not UTF-8 text ({err.reason} at byte {start + err.start})"
                ) from None
        start = end + 1
        try:
            obj = json_text.loads(line, parse_constant=_refuse_constant)
        except ValueError as err:
            raise DamagedReplayError(path, no, f"not a JSON object: {err}") from None
        if not isinstance(obj, dict):
            raise DamagedReplayError(path, no, f"not a JSON object: {type(obj).__name__}")
        yield no, obj


def _check_closing(replay: Replay, closing: Any, text: str | bytes, last: int, path: Any) -> None:
    """The closing line (line ``last``) is there and vouches for what was read: the number
    of decisions, the final scores and the sha256 of every line before it."""
    if closing is None:
        raise DamagedReplayError(
            path,
            last,
            f'no closing line (the "{_CLOSING_KEY}" line: decision count, final scores, sha256): '
            "the file was cut short after this line",
        )
    if not (isinstance(closing, dict) and set(closing) == set(_CLOSING_KEYS)):
        raise DamagedReplayError(path, last, f"the closing line must hold exactly {list(_CLOSING_KEYS)}")
    decisions = closing["decisions"]
    if not _is_int(decisions) or decisions != len(replay.steps):
        raise DamagedReplayError(
            path, last, f"the closing line counts {decisions!r} decisions, the file holds {len(replay.steps)}"
        )
    scores = None if replay.final is None else replay.final["scores"]
    if not json_equal(closing["scores"], scores):
        raise DamagedReplayError(
            path, last, f"the closing line's scores {closing['scores']!r} are not the final line's {scores!r}"
        )
    if isinstance(text, str):
        text = text.encode("utf-8")
    body = text[: text.rstrip(b"\n").rfind(b"\n") + 1]
    if closing["sha256"] != hashlib.sha256(body).hexdigest():
        raise DamagedReplayError(
            path, last, "the closing line's sha256 does not match the lines before it: the file was edited"
        )


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _only(obj: dict[str, Any], keys: tuple[str, ...], path: Any, no: int) -> None:
    extra = sorted(set(obj) - set(keys))
    if extra:
        raise DamagedReplayError(path, no, f"unexpected key(s) {extra}")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_seat_list(x: Any, n: int) -> bool:
    return (
        isinstance(x, list)
        and len(x) == n
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x)
    )


def _read_header(h: dict[str, Any], path: Any) -> Replay:
    if h.get("format") != REPLAY_FORMAT:
        raise DamagedReplayError(path, 1, f"not an mtrain replay (format {h.get('format')!r})")
    version = h.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise DamagedReplayError(path, 1, f"bad version {version!r}")
    if version > REPLAY_VERSION:
        raise DamagedReplayError(
            path, 1, f"replay format version {version} is newer than this reader's {REPLAY_VERSION}"
        )
    if version < REPLAY_VERSION:
        raise DamagedReplayError(
            path,
            1,
            f"replay format version {version} has no closing line (decision count, scores, checksum), "
            f"which version {REPLAY_VERSION} requires: record the game again",
        )
    missing = [k for k in _HEADER_KEYS if k not in h]
    if missing:
        raise DamagedReplayError(path, 1, f"header misses {missing}")
    _only(h, _HEADER_KEYS + _OPTIONAL_HEADER_KEYS, path, 1)
    if h["game"] not in GAMES:
        raise DamagedReplayError(path, 1, f"game must be one of {GAMES}, got {h['game']!r}")
    for key in ("config", "versions", "options"):
        if key in h and not isinstance(h[key], dict):
            raise DamagedReplayError(path, 1, f"{key} must be an object")
    if not _is_int(h["seed"]) or h["seed"] < 0:
        raise DamagedReplayError(path, 1, f"seed must be an int >= 0, got {h['seed']!r}")
    reward = h.get("reward")
    if reward is not None and not isinstance(reward, str):
        raise DamagedReplayError(path, 1, f"reward must be a string, got {reward!r}")
    try:
        env = make_env(h["game"], h["config"], reward)
    except (TypeError, ValueError) as err:
        raise DamagedReplayError(path, 1, f"invalid game config: {err}") from None
    if env.config.to_dict() != h["config"]:
        raise DamagedReplayError(path, 1, "config is not a resolved game config (GameConfig.to_dict())")
    agents = h["agents"]
    n = env.config.num_players
    if not (isinstance(agents, list) and len(agents) == n and all(isinstance(a, str) for a in agents)):
        raise DamagedReplayError(path, 1, f"agents must be {n} names (one per seat)")
    _check_options(env, h["seed"], h.get("options", {}), path)
    return Replay(
        game=h["game"],
        config=h["config"],
        seed=h["seed"],
        agents=agents,
        versions=h["versions"],
        options=h.get("options", {}),
        reward=reward,
    )


def _check_options(env: Any, seed: int, options: dict[str, Any], path: Any) -> None:
    """The reset options (a deal, a first player) are ones the env accepts: reset with them
    once, an unknown option (which reset only warns about) refused too, so that a damaged
    header is named here and not by whatever replays the file later."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            env.reset(seed=seed, options=options)
    except (TypeError, ValueError, UserWarning) as err:
        raise DamagedReplayError(path, 1, f"options: {err}") from None


def _read_step(obj: dict[str, Any], n: int, path: Any, no: int) -> ReplayStep:
    missing = [k for k in _STEP_KEYS if k not in obj]
    if missing:
        raise DamagedReplayError(path, no, f"a decision line misses {missing} (or is an unknown line)")
    _only(obj, (*_STEP_KEYS, "annotations"), path, no)
    seat, action, move = obj["seat"], obj["action"], obj["move"]
    if not _is_int(seat) or not 0 <= seat < n:
        raise DamagedReplayError(path, no, f"seat must be an int in 0..{n - 1}, got {seat!r}")
    if not _is_int(action) or action < 0:
        raise DamagedReplayError(path, no, f"action must be an int >= 0, got {action!r}")
    if not isinstance(move, str):
        raise DamagedReplayError(path, no, f"move must be a string, got {move!r}")
    notes = obj.get("annotations")
    if notes is not None and not isinstance(notes, dict):
        raise DamagedReplayError(path, no, f"annotations must be an object, got {type(notes).__name__}")
    return ReplayStep(seat, action, move, notes)
