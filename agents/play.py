"""THE play loop: seat agents at an env of the package and step it with their actions.

Every caller plays through here: the tournament harness, training evaluation, ``mtrain
demo``, the single-agent wrapper's opponents, the block-dominoes bench and demo. Each
agent decides from its seat's leak-free decision (its game's ``Decision`` class, built
lazily from the env: the seat's observation, mask and public view) and never from the
hidden state; how each round ended comes from the env itself, in
``infos[agent]["round_result"]`` (public: the final hands are shown when a round is
scored).

* :func:`play_game` resets the env and the agents, then plays the episode to its end;
* :func:`play_until` plays from the current position until the episode ends or a seat
  with no agent (``None``) is on turn: the single-agent wrapper leaves its learner's seat
  empty and gets the turn back there.

Both return a :class:`GameRecord` (per-seat returns, round results with actions per
seat, decisions and thinking time per seat) and accept an ``observer`` called after every
step (the demo prints through it; replays and annotations can hook in the same way).
Agents that declare ``listens`` are told every seat's move after each step
(:meth:`~agents.base.BaseAgent.inform`: public moves only, as every player sees them).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.base import BaseAgent
from mtrain_env.tilegame.actions import RefusedActionError
from mtrain_env.tilegame.aec import ROUND_RESULT_KEY

__all__ = ["AgentError", "GameRecord", "RoundRecord", "Step", "play_game", "play_until"]


class AgentError(RuntimeError):
    """An agent failed on its turn: it raised inside ``act`` or chose an action the env
    refused (a :class:`~mtrain_env.tilegame.actions.RefusedActionError`: illegal, out of
    the action space or not an integer). The agent's exception (or the env's refusal) is the
    cause; the env is left where the agent was on turn.

    Any other exception from ``env.step`` is the engine's, raised after the action was
    accepted: the loop lets it through as it is, never as the agent's fault."""

    def __init__(self, seat: int, agent: BaseAgent[Any], err: Exception, *, illegal: bool = True) -> None:
        #: what the agent did, for messages: "chose an illegal action" or "raised KeyError"
        self.what = "chose an illegal action" if illegal else f"raised {type(err).__name__}"
        super().__init__(f"agent {agent!r} at seat {seat} {self.what}: {err}")
        self.seat = seat
        self.agent = agent
        self.illegal = illegal  #: False: the agent raised inside ``act``

    def agent_traceback(self) -> str:
        """The agent's own traceback when it raised inside ``act`` (from the loop's call of
        ``act`` down), else ``""``: what whoever wrote the agent needs, without the caller's frames."""
        cause = self.__cause__
        return "" if self.illegal or cause is None else "".join(traceback.format_exception(cause))


@dataclass
class RoundRecord:
    """One finished round: the env's public result and the actions each seat took in it."""

    result: dict[str, Any]  #: ``infos[agent]["round_result"]`` of the step that ended it
    actions: list[int]  #: steps each seat took in the round (draws and passes included)


@dataclass
class Step:
    """What the observer sees after each step (the env has already moved on)."""

    seat: int
    action: int
    agent: BaseAgent[Any]
    round_result: dict[str, Any] | None  #: the round's result if this step ended one


@dataclass
class GameRecord:
    """What one call of the loop played (for :func:`play_until`: since that call)."""

    num_players: int
    returns: list[float] = field(default_factory=list)  #: rewards summed per seat
    rounds: list[RoundRecord] = field(default_factory=list)
    decisions: list[int] = field(default_factory=list)  #: decisions per seat
    think_seconds: list[float] = field(default_factory=list)  #: time inside ``act`` per seat
    steps: int = 0
    episode_over: bool = False

    def __post_init__(self) -> None:
        n = self.num_players
        self.returns = self.returns or [0.0] * n
        self.decisions = self.decisions or [0] * n
        self.think_seconds = self.think_seconds or [0.0] * n


def play_game(
    env: Any,
    agents: Sequence[BaseAgent[Any]],
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    agent_seeds: Sequence[int | None] | None = None,
    observer: Callable[[Step], None] | None = None,
) -> GameRecord:
    """Reset ``env`` (``seed``, ``options``) and the agents, then play the whole episode.

    ``agents[i]`` plays seat ``i``; ``agent_seeds[i]`` is passed to its ``reset`` (default
    ``None``: keep its generator). Works on a raw or a wrapped env of either game.
    """
    raw = env.unwrapped
    if len(agents) != raw.config.num_players:
        raise ValueError(f"{len(agents)} agents for {raw.config.num_players} seats")
    env.reset(seed=seed, options=options)
    seeds = list(agent_seeds) if agent_seeds is not None else [None] * len(agents)
    if len(seeds) != len(agents):
        raise ValueError(f"{len(seeds)} agent seeds for {len(agents)} agents")
    for agent, agent_seed in zip(agents, seeds, strict=True):
        agent.reset(agent_seed)
    return play_until(env, agents, observer)


def play_until(
    env: Any,
    agents: Sequence[BaseAgent[Any] | None],
    observer: Callable[[Step], None] | None = None,
) -> GameRecord:
    """Play from the current position until the episode ends or an empty seat is on turn.

    ``agents[i]`` plays seat ``i``; ``None`` marks a seat played from outside (the loop
    returns when it is on turn). An agent that raises in ``act`` or chooses an action the env
    refuses raises :class:`AgentError`; any other error of ``env.step`` propagates unchanged.
    """
    raw = env.unwrapped
    n = raw.config.num_players
    record = GameRecord(n)
    if len(agents) != n:
        raise ValueError(f"{len(agents)} agents for {n} seats")
    seat_of = raw.agent_name_mapping
    names = raw.possible_agents
    listeners = [a for a in agents if a is not None and a.listens]
    returns = record.returns
    actions = [0] * n
    clock = time.perf_counter
    while True:
        agent_id = raw.agent_selection
        if raw.terminations[agent_id] or raw.truncations[agent_id]:
            record.episode_over = True
            return record
        seat = seat_of[agent_id]
        agent = agents[seat]
        if agent is None:
            return record
        decision = agent.decision_class(env, agent_id)
        t0 = clock()
        try:
            action = agent.act(decision)
        except Exception as err:  # re-raised naming the seat; the cause keeps the agent's traceback
            raise AgentError(seat, agent, err, illegal=False) from err
        record.think_seconds[seat] += clock() - t0
        record.decisions[seat] += 1
        try:
            env.step(action)
        except RefusedActionError as err:  # only the env's refusal; an engine bug is no verdict on the agent
            raise AgentError(seat, agent, err) from err
        record.steps += 1
        actions[seat] += 1
        for listener in listeners:
            listener.inform(seat, int(action))
        rewards = raw.rewards
        for i in range(n):
            returns[i] += rewards[names[i]]
        result = raw.infos[agent_id].get(ROUND_RESULT_KEY) if agent_id in raw.infos else None
        if result is not None:
            record.rounds.append(RoundRecord(result, actions))
            actions = [0] * n
        if observer is not None:
            observer(Step(seat, int(action), agent, result))
