"""Re-simulating replays: :func:`check_replay` (bit-exact comparison on a fresh env) and
:func:`replay_frames` (every position of a replay, for viewers)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mtrain_env.replay_format import (
    Replay,
    ReplayMismatchError,
    ReplayStep,
    describe_move,
    episode_over,
    final_results,
    make_env,
    published_round_result,
)

__all__ = ["ReplayFrame", "check_replay", "replay_frames"]


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
    engine = {"backend": backend} if backend is not None and replay.game == "mexican_train" else {}
    env = _start(replay, **engine)  # block dominoes has one engine
    n = replay.num_players
    returns = [0.0] * n
    rounds: list[dict[str, Any]] = []
    for i, step in enumerate(replay.steps):
        if episode_over(env):
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
    over = episode_over(env)
    if replay.final is None:
        if over:
            raise ReplayMismatchError(last, "a game cut short", "the episode ended", "final")
        return
    if not over:
        raise ReplayMismatchError(last, "the episode's end", "the episode goes on", "final")
    final = final_results(env, returns, rounds)
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
