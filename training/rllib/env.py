"""Mexican Train as an RLlib ``MultiAgentEnv``: turn-based, one seat acts at a time.

:class:`MexicanTrainMultiAgentEnv` wraps :class:`mtrain_env.raw_env` the way RLlib's own
turn-based examples (``tic_tac_toe.py``, ``OpenSpielEnv``) do:

* agent ids are the AEC env's (``player_0`` ...); each ``reset`` / ``step`` returns an
  observation for the seat on turn only, so RLlib asks exactly that seat for an action;
* the observation is a ``Dict`` with ``"observations"`` (the seat's own float32 vector:
  the env's observation, or the ``planner`` feature set of :mod:`agents.mexican_train.features`)
  and ``"action_mask"`` (1.0 for legal actions), the pattern of RLlib's
  ``ActionMaskingRLModule`` (:mod:`training.rllib.module` masks the logits with it);
* rewards are the env's reward mode for every seat; a round can end on any seat's move,
  so each seat's rewards are summed until it next receives an observation (RLlib also
  credits rewards of seats that did not act this step to their last action); at the end
  of the episode every seat that acted gets its final observation and the rest of its
  rewards, with ``terminateds["__all__"] = True``.

League heuristics: with ``p_heuristic > 0`` each seat is, per episode and with that
probability, played inside the env by a heuristic agent of :mod:`agents` (drawn by weight
from ``heuristics``), through :func:`agents.play.play_until` on its own leak-free
:class:`~agents.mexican_train.base.Decision`, the same loop every other part of the project
uses. Those seats never appear to RLlib. (A heuristic cannot be an RLModule: it reads the
structured :class:`Decision`, not the tensor an RLModule receives.) At least one seat per
episode stays with RLlib. Frozen snapshots of the policy are RLModules chosen by the
policy mapping function (:mod:`training.rllib.league`).

Illegal actions: ``illegal_action="raise"`` (default, what training uses: with the masking
module it never happens, and a masking bug must never become a training signal) raises
``ValueError`` naming the seat and the legal actions; ``"terminate"`` (as PettingZoo
classic's ``TerminateIllegalWrapper``, needed by RLlib's env checker, which steps
unmasked random actions) ends the episode with ``illegal_reward`` for that seat and
``infos[seat]["illegal_action"] = True``.
Seeding: ``reset(seed=s)`` fixes the whole episode sequence (deals, heuristic seats and
their choices).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

import agents
from agents.mexican_train.base import Agent, decision_for
from agents.mexican_train.features import FeatureEncoder, feature_size
from agents.play import play_until
from mtrain_env.mexican_train.env import raw_env
from mtrain_env.tilegame.actions import IllegalMoveError, coerce_action
from training.single_agent import finite_high

#: keys of the Dict observation (RLlib's action-masking example names them so)
OBS_KEY = "observations"
MASK_KEY = "action_mask"
#: the keys of ``env_config``
CONFIG_KEYS = ("env_kwargs", "features", "heuristics", "p_heuristic", "illegal_action", "illegal_reward")
ILLEGAL_MODES = ("raise", "terminate")


class MexicanTrainMultiAgentEnv(MultiAgentEnv):
    """Turn-based multi-agent view of the AEC env (see the module docstring).

    ``config`` (RLlib's ``env_config``) keys:

    * ``env_kwargs``: keywords of :class:`mtrain_env.raw_env` (game and reward mode);
    * ``features``: ``"env"`` (default) or ``"planner"``;
    * ``heuristics``: agent name -> weight of the in-env heuristic seats (default none);
    * ``p_heuristic``: per-seat probability of a heuristic seat in an episode (default 0);
    * ``illegal_action``: ``"raise"`` (default) or ``"terminate"``; ``illegal_reward`` (-1).
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        unknown = set(config) - set(CONFIG_KEYS)
        if unknown:
            raise ValueError(f"unknown env_config keys {sorted(unknown)}")
        env_kwargs = dict(config.get("env_kwargs") or {})
        env_kwargs.pop("render_mode", None)
        self._raw = raw_env(**env_kwargs)
        self.features = str(config.get("features", "env"))
        self._encode = FeatureEncoder(self.features)
        self.heuristics = {str(k): float(v) for k, v in dict(config.get("heuristics") or {}).items()}
        self.p_heuristic = float(config.get("p_heuristic", 0.0))
        if not 0.0 <= self.p_heuristic <= 1.0:
            raise ValueError(f"p_heuristic must be in 0..1, got {self.p_heuristic}")
        if self.p_heuristic > 0 and (not self.heuristics or min(self.heuristics.values()) < 0):
            raise ValueError(f"p_heuristic > 0 needs heuristics with weights >= 0, got {self.heuristics}")
        self.illegal_action = str(config.get("illegal_action", "raise"))
        if self.illegal_action not in ILLEGAL_MODES:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_MODES}, got {self.illegal_action!r}")
        self.illegal_reward = float(config.get("illegal_reward", -1.0))
        for name in self.heuristics:
            agents.registry.resolve(name)  # an unknown name or knob fails here, not mid-training

        raw = self._raw
        self.num_players = raw.config.num_players
        self.possible_agents = list(raw.possible_agents)
        self.agents = list(self.possible_agents)
        size = feature_size(self.features, raw.config, raw.layout.size)
        high = finite_high(raw)
        if size > high.shape[0]:  # the planner's advice views are 0/1
            high = np.concatenate((high, np.ones(size - high.shape[0], dtype=np.float32)))
        n_actions = raw.config.num_actions
        space = gym.spaces.Dict(
            {
                OBS_KEY: gym.spaces.Box(0.0, high, shape=(size,), dtype=np.float32),
                MASK_KEY: gym.spaces.Box(0.0, 1.0, shape=(n_actions,), dtype=np.float32),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = dict.fromkeys(self.possible_agents, gym.spaces.Discrete(n_actions))
        self._rng = np.random.default_rng()
        self._seats: list[Agent | None] = [None] * self.num_players
        self._pending = dict.fromkeys(self.possible_agents, 0.0)
        self._acted: set[str] = set()
        self._done = True

    @property
    def raw(self) -> raw_env:
        """The wrapped AEC env (hidden state inside: for tests and tooling only)."""
        return self._raw

    def heuristic_seats(self) -> dict[int, str]:
        """Seat -> agent name of the seats played inside the env this episode."""
        return {s: a.name for s, a in enumerate(self._seats) if a is not None}

    # ---------------------------------------------------------------- episode
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, Any]:
        """Deal a new episode; the observation of the seat on turn (heuristic seats played first)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        n = self.num_players
        self._seats = [self._draw_heuristic() for _ in range(n)]
        if all(a is not None for a in self._seats):  # at least one seat learns
            self._seats[int(self._rng.integers(n))] = None
        for agent in self._seats:
            if agent is not None:
                agent.reset(int(self._rng.integers(2**31)))
        rl_ids = [self.possible_agents[s] for s in range(n) if self._seats[s] is None]
        self.agents = rl_ids
        self._pending = dict.fromkeys(rl_ids, 0.0)
        self._acted = set()
        self._raw.reset(seed=int(self._rng.integers(2**63)), options=options)
        self._done = False
        self._play_heuristics()
        if self._episode_over():  # over before a learning seat moved (never seen in practice)
            return self.reset(options=options)
        agent_id = self._raw.agent_selection
        return {agent_id: self._observe(agent_id)}, {}

    def step(self, action_dict: dict[Any, Any]) -> tuple[Any, Any, Any, Any, Any]:
        """The seat on turn plays its action; heuristic seats play until a learning seat is on turn."""
        if self._done:
            raise RuntimeError("the episode is over: call reset()")
        raw = self._raw
        agent_id = raw.agent_selection
        if agent_id not in action_dict:
            raise ValueError(f"no action for {agent_id}, the seat on turn (got {sorted(action_dict)})")
        # as the AEC env: an integer out of the space is a ValueError, a non-integer (85.9, "85")
        # a TypeError; a legal-space action the rules refuse is the illegal move below
        action = coerce_action(action_dict[agent_id], raw.config.num_actions)
        mask = raw.infos[agent_id]["action_mask"]
        if not mask[action]:
            if self.illegal_action == "terminate":
                self._done = True
                info = {agent_id: {"illegal_action": True}}
                obs = {agent_id: self._observe(agent_id)}
                return obs, {agent_id: self.illegal_reward}, {"__all__": True}, {"__all__": False}, info
            legal = np.flatnonzero(mask).tolist()
            raise IllegalMoveError(f"{agent_id}: illegal action {action}; legal actions: {legal}")
        self._acted.add(agent_id)
        raw.step(action)
        for a, r in raw.rewards.items():
            if a in self._pending:
                self._pending[a] += float(r)
        self._play_heuristics()
        if self._episode_over():
            self._done = True
            finished = sorted(self._acted)
            obs = {a: self._observe(a) for a in finished}
            rewards = {a: self._pending[a] for a in finished}
            return obs, rewards, {"__all__": True}, {"__all__": False}, {}
        on_turn = raw.agent_selection
        # a seat that gets its next observation must get a reward with it (RLlib checks)
        rewards = {a: r for a, r in self._pending.items() if a in self._acted and (r or a == on_turn)}
        for a in rewards:
            self._pending[a] = 0.0
        return {on_turn: self._observe(on_turn)}, rewards, {"__all__": False}, {"__all__": False}, {}

    # ---------------------------------------------------------------- helpers
    def _draw_heuristic(self) -> Agent | None:
        if self.p_heuristic <= 0 or self._rng.random() >= self.p_heuristic:
            return None
        names = list(self.heuristics)
        weights = np.array([self.heuristics[k] for k in names], dtype=np.float64)
        name = names[int(self._rng.choice(len(names), p=weights / weights.sum()))]
        agent = agents.make_agent(name)
        assert isinstance(agent, Agent)
        return agent

    def _play_heuristics(self) -> None:
        """Heuristic seats play until a learning seat is on turn or the episode ends."""
        record = play_until(self._raw, self._seats)
        names = self.possible_agents
        for seat, r in enumerate(record.returns):
            if names[seat] in self._pending:
                self._pending[names[seat]] += float(r)

    def _episode_over(self) -> bool:
        a = self._raw.agent_selection
        return bool(self._raw.terminations[a] or self._raw.truncations[a])

    def _observe(self, agent_id: str) -> dict[str, np.ndarray]:
        raw = self._raw
        if self.features == "env":
            vec = raw.observe(agent_id)["observation"]
        else:
            vec = self._encode(decision_for(raw, agent_id))
        mask = raw.infos[agent_id]["action_mask"] if agent_id in raw.infos else None
        if mask is None or self._done:
            mask_f = np.zeros(self._raw.config.num_actions, dtype=np.float32)
        else:
            mask_f = mask.astype(np.float32)
        return {OBS_KEY: np.asarray(vec, dtype=np.float32), MASK_KEY: mask_f}
