"""Replays: a whole game as a versioned JSON Lines file, recorded, read back and re-simulated.

A replay is a full record, like OpenSpiel's playthroughs: the game, its resolved config,
the reward mode, the seed and ``reset`` options of the episode, the agents' names, then
every decision (seat, action, decoded move, optional agent annotations), every round's
public result as the env published it, and the final returns and scores. Nothing else
(no timestamps), so two recordings of the same game are byte-identical. The env is
deterministic given the seed and options, so the actions alone replay the game:
:func:`check_replay` plays them again on a fresh env and compares everything.

File layout (UTF-8, one JSON object per line)::

    {"format": "mtrain-replay", "version": 2, "game": "mexican_train", "config": {...},
     "seed": 7, "agents": ["planner", ...], "versions": {...}, "reward": "zero_sum",
     "options": {...}}                                           # the header
    {"seat": 0, "action": 17, "move": "6|6 on player_0's train", "annotations": {...}}
    {"round_end": {...the round_result of the env...}}
    {"final": {"returns": [...], "scores": [...]}}
    {"end": {"decisions": 85, "scores": [...], "sha256": "..."}}   # the closing line

``reward`` and ``options`` are optional (default: the game's default reward, no options);
``annotations`` is optional per decision: ``{"values": {"17": 3.2}}`` (a search's value
per action) or ``{"probs": {"17": 0.8}}`` (a policy's probabilities); a replay cut short
(a player quit) has no ``final`` line (and ``null`` scores in its closing line). The
closing line counts the decisions and holds the sha256 of the file's text before it
(header included): a file cut at a line boundary, or edited, is refused when read.
Version 1 files, which had no closing line, are refused: record those games again.

Views of a replay for one seat (:mod:`mtrain_env.replay_view`) show only that seat's
hand and the public facts; the file itself holds every seat's actions.

This module is the public API: :class:`ReplayRecorder` lives here; the types and env
helpers in :mod:`~mtrain_env.replay_format`, the file in :mod:`~mtrain_env.replay_file`,
re-simulation and frames in :mod:`~mtrain_env.replay_check`, all importable from here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from mtrain_env.replay_check import ReplayFrame, check_replay, replay_frames
from mtrain_env.replay_file import MAX_REPLAY_BYTES, dumps_replay, loads_replay, read_replay, write_replay
from mtrain_env.replay_format import (
    GAMES,
    REPLAY_FORMAT,
    REPLAY_VERSION,
    DamagedReplayError,
    Replay,
    ReplayMismatchError,
    ReplayStep,
    describe_move,
    episode_over,
    final_results,
    game_name,
    jsonable,
    make_env,
    published_round_result,
)

__all__ = [
    "GAMES",
    "MAX_REPLAY_BYTES",
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
    "loads_replay",
    "make_env",
    "published_round_result",
    "read_replay",
    "replay_frames",
    "write_replay",
]


@functools.lru_cache(maxsize=8)
def _twin(game: str, config: Any, reward: str) -> Any:
    """A spare env of a config (built once: envs of large sets are slow to build) to verify
    recorders against."""
    return make_env(game, config.to_dict(), reward)


def _versions() -> dict[str, Any]:
    from mtrain_env import __version__

    return {"mtrain_env": __version__, "replay": REPLAY_VERSION}


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
    in :func:`check_replay`; a caller that resets the env itself with these very values
    (the tournament harness, through ``play_game``) may pass ``verify=False`` and create
    the recorder before that reset.
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
        options = jsonable(dict(options or {}), "options")
        if verify:
            twin = _twin(game, raw.config, raw.reward_mode)
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
        notes = None if annotations is None else jsonable(annotations, "annotations")
        replay.steps.append(ReplayStep(int(seat), action, describe_move(raw, seat, action), notes))
        result = published_round_result(raw)
        if result is None:
            return  # rewards come at round ends only (R24, B10), and so does the episode's end
        for i, agent in enumerate(raw.possible_agents):
            self._returns[i] += float(raw.rewards.get(agent, 0.0))
        replay.rounds.append(jsonable(result, "round_result"))
        replay.round_ends.append(len(replay.steps) - 1)
        if episode_over(raw):
            replay.final = final_results(raw, self._returns, replay.rounds)

    def __call__(self, step: Any) -> None:
        """The ``observer`` of :mod:`agents.play`: records ``step.seat``/``step.action`` and
        the agent's ``last_annotations()`` when it has that (optional) hook."""
        hook = getattr(step.agent, "last_annotations", None)
        self.record(step.seat, step.action, hook() if callable(hook) else None)
