"""Replays: a whole game as a versioned JSON Lines file, recorded, read back and re-simulated.

A replay is a full record, like OpenSpiel's playthroughs: the game, its resolved config,
the reward mode, the seed and ``reset`` options of the episode, the agents' names, then
every decision (seat, action, decoded move, optional agent annotations), every round's
public result as the env published it, and the final returns and scores. Nothing else
(no timestamps), so two recordings of the same game are byte-identical. The env is
deterministic given the seed and options, so the actions alone replay the game:
:func:`check_replay` plays them again on a fresh env and compares everything.

File layout (UTF-8, one JSON object per line)::

    {"format": "mtrain-replay", "version": 1, "game": "mexican_train", "config": {...},
     "seed": 7, "agents": ["planner", ...], "versions": {...}, "reward": "zero_sum",
     "options": {...}}                                           # the header
    {"seat": 0, "action": 17, "move": "6|6 on player_0's train", "annotations": {...}}
    {"round_end": {...the round_result of the env...}}
    {"final": {"returns": [...], "scores": [...]}}

``reward`` and ``options`` are optional (default: the game's default reward, no options);
``annotations`` is optional per decision: ``{"values": {"17": 3.2}}`` (a search's value
per action) or ``{"probs": {"17": 0.8}}`` (a policy's probabilities); a replay cut short
(a player quit) has no ``final`` line.

Views of a replay for one seat (:mod:`mtrain_env.replay_view`) show only that seat's
hand and the public facts; the file itself holds every seat's actions.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtrain_env.tilegame.aec import ROUND_RESULT_KEY

__all__ = [
    "GAMES",
    "REPLAY_FORMAT",
    "REPLAY_VERSION",
    "DamagedReplayError",
    "Replay",
    "ReplayFrame",
    "ReplayMismatchError",
    "ReplayRecorder",
    "ReplayStep",
    "check_replay",
    "describe_move",
    "dumps_replay",
    "game_name",
    "make_env",
    "published_round_result",
    "read_replay",
    "replay_frames",
    "write_replay",
]

REPLAY_FORMAT = "mtrain-replay"
REPLAY_VERSION = 1
#: the games a replay can hold
GAMES = ("mexican_train", "block")
_HEADER_KEYS = ("format", "version", "game", "config", "seed", "agents", "versions")
_OPTIONAL_HEADER_KEYS = ("reward", "options")
_STEP_KEYS = ("seat", "action", "move")


@dataclass(frozen=True)
class ReplayStep:
    """One decision: the seat that acted, its action id, the decoded move, annotations."""

    seat: int
    action: int
    move: str  #: e.g. ``"6|6 on player_2's train"``, ``"draw"``, ``"pass"`` (seats absolute)
    annotations: dict[str, Any] | None = None  #: the agent's own view of the choice, if any


@dataclass
class Replay:
    """A whole (or cut-short) game: everything needed to replay it and what it gave."""

    game: str  #: ``"mexican_train"`` or ``"block"``
    config: dict[str, Any]  #: the resolved game config (``GameConfig.to_dict()``)
    seed: int  #: the ``reset`` seed of the episode
    agents: list[str]  #: one name per seat (``"planner"``, ``"human"``, a tournament label)
    versions: dict[str, Any]  #: ``{"mtrain_env": ..., "replay": 1}``
    steps: list[ReplayStep] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)  #: each round's public ``round_result``
    final: dict[str, Any] | None = None  #: ``{"returns": [...], "scores": [...]}``; None if cut short
    options: dict[str, Any] = field(default_factory=dict)  #: the ``reset`` options (a fixed deal...)
    reward: str | None = None  #: the env's reward mode (None: the game's default)
    #: the index of the decision that ended each round (parallel to ``rounds``)
    round_ends: list[int] = field(default_factory=list)

    @property
    def num_players(self) -> int:
        return int(self.config["num_players"])

    @property
    def finished(self) -> bool:
        return self.final is not None


class DamagedReplayError(ValueError):
    """A replay file that cannot be read: not UTF-8, not JSON Lines, or not this format."""

    def __init__(self, path: str | os.PathLike[str], line: int, reason: str) -> None:
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = str(path)
        self.line = line
        self.reason = reason


class ReplayMismatchError(AssertionError):
    """Re-simulating a replay gave something else than the file says, at ``step_index``."""

    def __init__(self, step_index: int, expected: Any, got: Any, what: str = "step") -> None:
        super().__init__(
            f"step {step_index}: {what}: the replay says {expected!r}, re-simulation gives {got!r}"
        )
        self.step_index = step_index
        self.expected = expected
        self.got = got
        self.what = what


# ------------------------------------------------------------------- the envs
def game_name(env: Any) -> str:
    """``"mexican_train"`` or ``"block"``: the game of a (raw or wrapped) env of this package."""
    from mtrain_env.block.env import raw_env as block_raw_env
    from mtrain_env.mexican_train.env import raw_env as mexican_raw_env

    raw = env.unwrapped
    if isinstance(raw, mexican_raw_env):
        return "mexican_train"
    if isinstance(raw, block_raw_env):
        return "block"
    raise TypeError(f"not an env of this package: {type(raw).__name__}")


def make_env(game: str, config: dict[str, Any], reward: str | None = None, **kwargs: Any) -> Any:
    """A fresh raw env of ``game`` with ``config`` (``ValueError``/``TypeError`` if invalid)."""
    if game not in GAMES:
        raise ValueError(f"game must be one of {GAMES}, got {game!r}")
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict, got {type(config).__name__}")
    if reward is not None:
        kwargs["reward"] = reward
    if game == "mexican_train":
        from mtrain_env.mexican_train.env import raw_env as mexican_raw_env

        return mexican_raw_env(**config, **kwargs)
    from mtrain_env.block.env import raw_env as block_raw_env

    return block_raw_env(**config, **kwargs)


def describe_move(env: Any, seat: int, action: int) -> str:
    """The move of ``seat``'s ``action`` in words, seats absolute: ``"3|5 on player_1's train"``,
    ``"6|6 on the Mexican train"``, ``"3|5 on the left end"``, ``"draw"``, ``"pass"``."""
    raw = env.unwrapped
    a = raw.decode_action(action)
    if a.kind != "play":
        return str(a.kind)
    tile = f"{a.tile[0]}|{a.tile[1]}"
    if game_name(raw) == "block":
        return f"{tile} on the {'right' if a.end else 'left'} end"
    n = raw.config.num_players
    if a.train == n:
        return f"{tile} on the Mexican train"
    return f"{tile} on player_{(seat + a.train) % n}'s train"


def _versions() -> dict[str, Any]:
    from mtrain_env import __version__

    return {"mtrain_env": __version__, "replay": REPLAY_VERSION}


def published_round_result(env: Any) -> dict[str, Any] | None:
    """The round result the last step published (in every live agent's infos), if any."""
    for info in env.unwrapped.infos.values():
        return info.get(ROUND_RESULT_KEY)
    return None


def _episode_over(raw: Any) -> bool:
    return bool(raw.agents) and all(raw.terminations[a] or raw.truncations[a] for a in raw.agents)


def _final(raw: Any, returns: Sequence[float], rounds: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Final returns (rewards summed per seat) and scores (round scores summed per seat)."""
    n = raw.config.num_players
    scores = [0.0] * n
    for r in rounds:
        for i, x in enumerate(r["scores"]):
            scores[i] += float(x)
    return {"returns": [float(x) for x in returns], "scores": scores}


def _jsonable(value: Any, what: str) -> Any:
    """``value`` through a strict JSON round trip (no NaN, plain types); ``ValueError`` if not JSON."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as err:
        raise ValueError(f"{what} must be plain JSON values: {err}") from None


# ---------------------------------------------------------------- recording
class ReplayRecorder:
    """Records a game into a :class:`Replay` as it is played.

    Create it right after ``env.reset(seed=seed, options=options)``, then call
    :meth:`record` right after every ``env.step`` (or pass the recorder as the
    ``observer`` of :func:`agents.play.play_game` / ``play_until``: it is called with each
    step and asks the agent for ``last_annotations()`` when it has one)::

        env.reset(seed=7)
        rec = ReplayRecorder(env, seed=7, agents=["human", "planner"])
        seat = env.unwrapped.current_seat
        env.step(action)
        rec.record(seat, action)
        write_replay("game.jsonl", rec.replay)

    ``verify=True`` (default) checks at once that a fresh env reset with ``seed`` and
    ``options`` is in the very state of ``env``, so a wrong seed fails here rather than
    in :func:`check_replay`.
    """

    def __init__(
        self,
        env: Any,
        seed: int,
        agents: Sequence[str],
        options: dict[str, Any] | None = None,
        verify: bool = True,
    ) -> None:
        raw = env.unwrapped
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be the int >= 0 the env was reset with, got {seed!r}")
        n = raw.config.num_players
        agents = [str(a) for a in agents]
        if len(agents) != n:
            raise ValueError(f"{len(agents)} agent names for {n} seats")
        self.env = raw
        game = game_name(raw)
        options = _jsonable(dict(options or {}), "options")
        if verify:
            twin = make_env(game, raw.config.to_dict(), raw.reward_mode)
            twin.reset(seed=seed, options=options or None)
            if json.dumps(twin.state_dict(), sort_keys=True) != json.dumps(raw.state_dict(), sort_keys=True):
                raise ValueError(
                    "the env is not freshly reset with this seed and options: create the recorder "
                    "right after env.reset(seed=seed, options=options), with the same values"
                )
        self.replay = Replay(
            game=game,
            config=raw.config.to_dict(),
            seed=seed,
            agents=agents,
            versions=_versions(),
            options=options,
            reward=raw.reward_mode,
        )
        self._returns = [0.0] * n

    def record(self, seat: int, action: int, annotations: dict[str, Any] | None = None) -> None:
        """Record ``seat``'s ``action``, right after ``env.step(action)``."""
        raw = self.env
        replay = self.replay
        if replay.final is not None:
            raise RuntimeError("the episode is over: nothing more to record")
        action = int(action)
        notes = None if annotations is None else _jsonable(annotations, "annotations")
        replay.steps.append(ReplayStep(int(seat), action, describe_move(raw, seat, action), notes))
        for i, agent in enumerate(raw.possible_agents):
            self._returns[i] += float(raw.rewards.get(agent, 0.0))
        result = published_round_result(raw)
        if result is not None:
            replay.rounds.append(_jsonable(result, "round_result"))
            replay.round_ends.append(len(replay.steps) - 1)
        if _episode_over(raw):
            replay.final = _final(raw, self._returns, replay.rounds)

    def __call__(self, step: Any) -> None:
        """The ``observer`` of :mod:`agents.play`: records ``step.seat``/``step.action`` and
        the agent's ``last_annotations()`` when it has that (optional) hook."""
        hook = getattr(step.agent, "last_annotations", None)
        self.record(step.seat, step.action, hook() if callable(hook) else None)


# ------------------------------------------------------------ writing, reading
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
    return "".join(json.dumps(x, ensure_ascii=False, allow_nan=False) + "\n" for x in lines)


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
    """Write ``replay`` to ``path`` atomically (a temp file in the same directory, then rename)."""
    text = dumps_replay(replay)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8", newline="\n") as f:  # the umask's permissions
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_replay(path: str | os.PathLike[str]) -> Replay:
    """Read a replay file, strictly: :class:`DamagedReplayError` (path, line, reason) on
    anything malformed; ``OSError`` when the file cannot be opened."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DamagedReplayError(path, 0, f"not UTF-8 text ({err.reason} at byte {err.start})") from None
    return loads_replay(text, path)


def loads_replay(text: str, path: str | os.PathLike[str] = "<string>") -> Replay:
    """Parse the text of a replay file (see :func:`read_replay`)."""
    if not text:
        raise DamagedReplayError(path, 0, "empty file: no header line")
    if not text.endswith("\n"):
        raise DamagedReplayError(path, text.count("\n") + 1, "the last line has no newline (cut short?)")
    lines = text[:-1].split("\n")
    objs = []
    for no, line in enumerate(lines, 1):
        try:
            obj = json.loads(line, parse_constant=_refuse_constant)
        except ValueError as err:
            raise DamagedReplayError(path, no, f"not a JSON object: {err}") from None
        if not isinstance(obj, dict):
            raise DamagedReplayError(path, no, f"not a JSON object: {type(obj).__name__}")
        objs.append(obj)
    replay = _read_header(objs[0], path)
    n = replay.num_players
    for no, obj in enumerate(objs[1:], 2):
        if replay.final is not None:
            raise DamagedReplayError(path, no, "a line after the final line")
        if "round_end" in obj:
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
            replay.steps.append(_read_step(obj, n, path, no))
    return replay


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
    return Replay(
        game=h["game"],
        config=h["config"],
        seed=h["seed"],
        agents=agents,
        versions=h["versions"],
        options=h.get("options", {}),
        reward=reward,
    )


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


# ------------------------------------------------------------- re-simulation
def _start(replay: Replay, **env_kwargs: Any) -> Any:
    env = make_env(replay.game, replay.config, replay.reward, **env_kwargs)
    env.reset(seed=replay.seed, options=replay.options or None)
    return env


def _canonical(x: Any) -> str:
    return json.dumps(x, sort_keys=True, allow_nan=False)


def check_replay(replay: Replay, backend: str | None = None) -> None:
    """Re-simulate ``replay`` on a fresh env from its config, seed and options, and compare.

    Every step's seat on turn, legality and decoded move, every round result (bit for bit,
    as JSON) and the final returns and scores; a replay without a final line must stop
    before the episode's end. Raises :class:`ReplayMismatchError` at the first difference.
    ``backend`` picks the Mexican Train rules engine (``"python"`` / ``"compiled"``).
    """
    env = _start(replay, **({"backend": backend} if backend is not None else {}))
    n = replay.num_players
    returns = [0.0] * n
    rounds: list[dict[str, Any]] = []
    for i, step in enumerate(replay.steps):
        if _episode_over(env):
            raise ReplayMismatchError(i, "a decision", "the episode is already over", "episode end")
        seat = env.current_seat
        if seat != step.seat:
            raise ReplayMismatchError(i, f"player_{step.seat}", f"player_{seat}", "seat on turn")
        legal = env.legal_actions()
        if step.action not in legal:
            raise ReplayMismatchError(i, step.action, f"legal actions {legal}", "illegal action")
        move = describe_move(env, seat, step.action)
        if move != step.move:
            raise ReplayMismatchError(i, step.move, move, "move")
        env.step(step.action)
        for a_i, agent in enumerate(env.possible_agents):
            returns[a_i] += float(env.rewards.get(agent, 0.0))
        result = published_round_result(env)
        if result is not None:
            k = len(rounds)
            rounds.append(result)
            if k >= len(replay.rounds):
                raise ReplayMismatchError(i, "no round end", f"round {k} ends", "round end")
            if len(replay.round_ends) == len(replay.rounds) and replay.round_ends[k] != i:
                raise ReplayMismatchError(
                    i, f"round {k} ends at step {replay.round_ends[k]}", "it ends here", "round end"
                )
            if _canonical(replay.rounds[k]) != _canonical(result):
                raise ReplayMismatchError(i, replay.rounds[k], result, f"round {k} result")
    last = len(replay.steps) - 1
    if len(rounds) != len(replay.rounds):
        raise ReplayMismatchError(
            last, f"{len(replay.rounds)} rounds", f"{len(rounds)} rounds", "round count"
        )
    over = _episode_over(env)
    if replay.final is None:
        if over:
            raise ReplayMismatchError(last, "a game cut short", "the episode ended", "final")
        return
    if not over:
        raise ReplayMismatchError(last, "the episode's end", "the episode goes on", "final")
    final = _final(env, returns, rounds)
    if _canonical(replay.final) != _canonical(final):
        raise ReplayMismatchError(last, replay.final, final, "final returns and scores")


# ------------------------------------------------------------------- viewing
@dataclass(frozen=True)
class ReplayFrame:
    """One position of a replay, for viewers.

    ``index`` 0 is the deal before the first decision, ``index`` k the position after
    decision k-1 (``step``, with ``round_result`` when that decision ended a round). ``env``
    is a raw env positioned there, LIVE: it moves on when the iterator advances, so read
    what you need (``env.public_view(f"player_{seat}")`` for one seat's view,
    ``env.state_obj`` or ``env.render()`` for the whole table) before the next frame.
    """

    index: int
    step: ReplayStep | None
    round_result: dict[str, Any] | None
    env: Any

    @property
    def seat_on_turn(self) -> int | None:
        """The seat on turn, or None once the episode is over."""
        return None if _episode_over(self.env) else int(self.env.current_seat)

    def public_view(self, seat: int) -> Any:
        """What ``seat`` may know here: the public table and its own hand."""
        return self.env.public_view(self.env.possible_agents[seat])


def replay_frames(replay: Replay, render_mode: str | None = None) -> Iterator[ReplayFrame]:
    """Every position of ``replay``, from the deal to the last decision (``len(steps) + 1``
    frames), on one env stepped through the recorded actions (``render_mode`` is the env's:
    ``"ansi"`` or ``"rgb_array"`` for ``frame.env.render()``). An action the env refuses
    raises its ``ValueError``: run :func:`check_replay` first on files you did not write."""
    env = _start(replay, render_mode=render_mode)
    yield ReplayFrame(0, None, None, env)
    for i, step in enumerate(replay.steps):
        env.step(step.action)
        yield ReplayFrame(i + 1, step, published_round_result(env), env)
