"""
# Mexican Train

| Import             | `import mtrain_env; env = mtrain_env.env()`                |
|--------------------|------------------------------------------------------------|
| Actions            | Discrete                                                   |
| Parallel API       | No                                                         |
| Manual Control     | No                                                         |
| Agents             | `agents= ['player_0', 'player_1', 'player_2', 'player_3']` |
| Agents             | 2-8 (more with double-15/18 sets)                          |
| Action Shape       | (1,)                                                       |
| Action Values      | Discrete(T * (n + 1) + 2)                                  |
| Observation Shape  | (`observation_layout` size,) float32 + mask                |
| Observation Values | [0, 1] (counts and session scores may exceed 1)            |

Mexican Train with a double-12 set by default, every rule of RULES.md (R1-R25) and its
variants as keyword flags. Seat ``i`` is agent ``player_i``; play goes clockwise
(``i`` -> ``i + 1``). The rules core (:mod:`mtrain_env.core`) decides who is on turn: a
seat keeps the turn during its first-turn chain (R9), after a double (R18) and after a
draw (R16). The environment never acts for a seat (R15): forced draws and passes are
that seat's own ``DRAW`` / ``PASS`` steps.

### Action Space

``T = (N + 1)(N + 2) / 2`` tiles, ``n`` seats::

    action = tile_id * (n + 1) + train     (lay tile_id on a train)
    DRAW   = T * (n + 1)
    PASS   = T * (n + 1) + 1               (also ends a first-turn chain, R9)

``train`` is RELATIVE to the acting seat: 0 its own train, ``k`` (1..n-1) the train of
seat ``(seat + k) mod n``, ``n`` the Mexican train. ``tile_id(a, b)`` with ``a <= b`` is
``a * (2N + 3 - a) / 2 + (b - a)``. Use ``env.unwrapped.encode_action((a, b), train)``,
``decode_action(action)``, ``DRAW`` and ``PASS``.

### Observation Space

``{"observation": float32 vector, "action_mask": int8 vector}``. The vector is relative
to the observing seat and filled through named views; ``env.unwrapped.observation_layout``
maps each name to ``(slice, shape)`` (the table is in the README). The mask (also in
``infos[agent]["action_mask"]``) is all-zero for seats not on turn and never all-zero for
the seat on turn.

### Rewards

Given to every agent at each round's end (see :mod:`mtrain_env.rewards`):
``reward="zero_sum"`` (default), ``"penalty"`` or ``"win"``.

### Version History

* v0: initial release.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from mtrain_env.codec import Action, ActionCodec
from mtrain_env.common_env import (
    FastDiscrete,
    check_options,
    coerce_action,
    dict_observation_space,
    rng_from_state,
    rng_state,
)
from mtrain_env.core.config import GameConfig
from mtrain_env.core.dealing import parse_deal
from mtrain_env.core.public import PublicState, public_state
from mtrain_env.core.rules import MexicanTrain
from mtrain_env.core.serialize import state_from_dict, state_to_dict
from mtrain_env.core.state import GameState, Phase
from mtrain_env.core.tiles import Tile
from mtrain_env.observation import ObservationEncoder, ObservationLayout, View
from mtrain_env.rewards import REWARD_MODES, round_rewards
from mtrain_env.wrappers import wrap

RENDER_MODES = ["ansi", "human", "rgb_array"]
ENV_STATE_KEY = "env"


def env(**kwargs: Any) -> AECEnv:
    """The Mexican Train AEC env wrapped as PettingZoo classic envs are.

    An illegal action ends the game with reward -1 for the offender
    (``TerminateIllegalWrapper``), out-of-space actions assert, and calls out of order
    raise (``OrderEnforcingWrapper``). Keywords are those of :class:`raw_env`.
    """
    return wrap(raw_env(**kwargs), illegal_reward=-1)


class raw_env(AECEnv, EzPickle):  # noqa: N801 - PettingZoo's naming convention
    """The bare Mexican Train AEC environment (illegal actions raise ``ValueError``).

    Args:
        num_players: seats (R3), default 4.
        max_pips: N of the double-N set (R1), default 12.
        hand_size: tiles per hand; default from the preset's table (R4).
        rules: preset, ``"pagat"`` (default), ``"wikipedia"`` or ``"cardinal"``.
        rounds: rounds per episode: 1 (default) up to ``max_pips + 1``, a full session (R25).
        reward: ``"zero_sum"`` (default), ``"penalty"`` or ``"win"``.
        render_mode: ``None``, ``"ansi"``, ``"human"`` or ``"rgb_array"``.
        **flags: RULES.md variant flags (``one_tile_opening=True``, ...), overriding the preset.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "mexican_train_v0",
        "render_modes": RENDER_MODES,
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        num_players: int = 4,
        max_pips: int = 12,
        hand_size: int | None = None,
        rules: str = "pagat",
        rounds: int = 1,
        reward: str = "zero_sum",
        render_mode: str | None = None,
        **flags: bool,
    ) -> None:
        EzPickle.__init__(
            self,
            num_players=num_players,
            max_pips=max_pips,
            hand_size=hand_size,
            rules=rules,
            rounds=rounds,
            reward=reward,
            render_mode=render_mode,
            **flags,
        )
        super().__init__()
        self.config = GameConfig.make(
            num_players=num_players,
            max_pips=max_pips,
            hand_size=hand_size,
            rules=rules,
            rounds=rounds,
            **flags,
        )
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {render_mode!r}")
        self.reward_mode = reward
        self.render_mode = render_mode
        self.game = MexicanTrain(self.config)
        self.codec = ActionCodec(self.config)
        self.layout = ObservationLayout(self.config)
        self._encoder = ObservationEncoder(self.game, self.layout)
        self._rel_to_abs = self.codec.rel_to_abs
        self._abs_to_rel = self.codec.abs_to_rel
        self.DRAW = self.codec.DRAW
        self.PASS = self.codec.PASS
        n = self.config.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        num_actions = self.config.num_actions
        obs_space = dict_observation_space(self.layout.high, num_actions)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: FastDiscrete(num_actions) for a in self.possible_agents}
        self._num_actions = num_actions
        self._zero_mask = np.zeros(num_actions, dtype=np.int8)
        self._zero_mask.flags.writeable = False
        self._state: GameState | None = None
        self.agent_selection = self.possible_agents[0]
        self._rng: np.random.Generator | None = None
        self._legal_abs: list[int] = []
        self._mask = self._zero_mask
        self._renderer: Any = None

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    @property
    def observation_layout(self) -> dict[str, View]:
        """Observation views: name -> ``(slice, shape)`` (see :mod:`mtrain_env.observation`)."""
        return self.layout.views

    # ------------------------------------------------------------------- codec
    def encode_action(self, tile: Tile, train: int) -> int:
        """Action of laying ``tile`` (either order) on ``train`` relative to the acting seat."""
        return self.codec.encode_action(tile, train)

    def decode_action(self, action: int) -> Action:
        """``Action(kind, tile, train)`` of an action id (inverse of :meth:`encode_action`)."""
        return self.codec.decode_action(action)

    # ------------------------------------------------------------------ access
    @property
    def state_obj(self) -> GameState:
        """The live core state (hidden information included; for tooling, not for agents)."""
        if self._state is None:
            raise RuntimeError("call reset() before using the environment")
        return self._state

    @property
    def current_seat(self) -> int:
        """Seat index on turn."""
        return self.state_obj.current

    def public_view(self, agent: str) -> PublicState:
        """What ``agent`` may know: the public table and its own hand (for agents).

        Never contains another seat's hand or the boneyard; see :mod:`mtrain_env.core.public`.
        """
        return public_state(self.state_obj, self.config, self.agent_name_mapping[agent])

    def legal_actions(self) -> list[int]:
        """Legal actions of the agent on turn (relative encoding), sorted."""
        return sorted(np.flatnonzero(self._mask).tolist())

    # ---------------------------------------------------------------- AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start an episode. ``options``: ``{"deal": {...}}`` and/or ``{"first_player": k}``."""
        deal = None
        first_player = None
        # unknown keys warn, not raise: pettingzoo.test.api_test passes arbitrary options
        options = check_options(options, ("deal", "first_player"))
        if options:
            if "deal" in options:
                deal = parse_deal(self.config, self.config.engine_value(0), options["deal"])
            if "first_player" in options:
                fp = options["first_player"]
                if isinstance(fp, bool) or not isinstance(fp, (int, np.integer)):
                    raise TypeError(f"options['first_player'] must be an int seat, got {fp!r}")
                if not 0 <= fp < self.config.num_players:
                    raise ValueError(
                        f"R6: options['first_player'] must be a seat "
                        f"0..{self.config.num_players - 1}, got {fp}"
                    )
                first_player = int(fp)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        elif self._rng is None:
            self._rng = np.random.default_rng()
        self._state = state = self.game.new_game(self._rng, deal, first_player)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._rewards_given = False
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {"action_mask": self._zero_mask} for a in self.agents}
        self._settle(state)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        s = self._state
        if s is None:
            raise RuntimeError("call reset() before observe()")
        seat = self.agent_name_mapping[agent]
        return {
            "observation": self._encoder.encode(s, seat),
            # _mask is the zero mask whenever nobody is on turn
            "action_mask": self._mask if seat == s.current else self._zero_mask,
        }

    def observe_mask(self, agent: str) -> np.ndarray:
        """Just the action mask of ``agent`` (all-zero off turn), without encoding an observation."""
        if self._state is None:
            raise RuntimeError("call reset() before observe_mask()")
        return self._mask if self.agent_name_mapping[agent] == self._state.current else self._zero_mask

    def step(self, action: int | None) -> None:
        s = self._state
        if s is None:
            raise RuntimeError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        move = self._to_move(s, action)  # validates; raises before any change
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_given:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewards_given = False
        self.game.apply(s, move)
        if s.phase >= Phase.ROUND_OVER:
            # R24/R25: every seat is rewarded at each round's end
            values = round_rewards(self.reward_mode, self.config, s.round_scores, s.phase == Phase.GAME_OVER)
            self.rewards = dict(zip(self.possible_agents, values, strict=True))
            self._rewards_given = True
            if s.phase == Phase.GAME_OVER:
                self.terminations = dict.fromkeys(self.agents, True)
            else:
                self.game.next_round(s, self._rng)  # type: ignore[arg-type]
            self._accumulate_rewards()
        self._settle(s)
        if self.render_mode == "human":
            self.render()

    def _to_move(self, s: GameState, action: Any) -> int:
        """Validate a relative action and return the absolute core move (state untouched)."""
        try:
            action = coerce_action(action, self._num_actions)
        except ValueError as err:
            raise ValueError(
                f"{self.agent_selection}: {err} (R15: a seat plays, draws or passes) -> "
                f"legal actions (relative encoding): {self.legal_actions()}"
            ) from None
        move = self._rel_to_abs[s.current][action]
        if move not in self._legal_abs:
            reason = self.game.explain_illegal(s, move, self._legal_abs)
            raise ValueError(
                f"{self.agent_selection}: {reason} -> "
                f"legal actions (relative encoding): {self.legal_actions()}"
            )
        return move

    def _settle(self, s: GameState) -> None:
        """Refresh turn, legal moves, mask and infos after the state changed."""
        seat = s.current
        infos = self.infos
        previous = self.agent_selection
        if s.phase < Phase.ROUND_OVER:
            self._legal_abs = legal = self.game.legal_moves(s)
            mask = np.zeros(self._num_actions, dtype=np.int8)
            to_rel = self._abs_to_rel[seat]
            for m in legal:
                mask[to_rel[m]] = 1
            self._mask = mask
        else:
            self._legal_abs = []
            self._mask = self._zero_mask
        self.agent_selection = agent = self.possible_agents[seat]
        if previous != agent and previous in infos:
            infos[previous] = {"action_mask": self._zero_mask}
        if agent in infos:
            infos[agent] = {"action_mask": self._mask}

    # --------------------------------------------------------------- snapshots
    def state_dict(self) -> dict[str, Any]:
        """A JSON-serializable snapshot of the whole env (hidden state, RNG, AEC bookkeeping)."""
        s = self.state_obj
        d = state_to_dict(self.game, s)
        d[ENV_STATE_KEY] = {
            "reward_mode": self.reward_mode,
            "rng": rng_state(self._rng),  # type: ignore[arg-type]
            "agents": list(self.agents),
            "rewards": dict(self.rewards),
            "cumulative_rewards": dict(self._cumulative_rewards),
            "terminations": dict(self.terminations),
            "truncations": dict(self.truncations),
            "agent_selection": self.agent_selection,
        }
        return d

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` output exactly; on any error nothing changes."""
        if not isinstance(d, dict):
            raise TypeError(f"a state dict must be a dict, got {type(d).__name__}")
        core = {k: v for k, v in d.items() if k != ENV_STATE_KEY}
        state = state_from_dict(self.game, core)
        e = d.get(ENV_STATE_KEY)
        if not isinstance(e, dict):
            raise ValueError(f"state dict is missing its {ENV_STATE_KEY!r} section")
        if e.get("reward_mode") != self.reward_mode:
            raise ValueError(
                f"state dict was saved with reward={e.get('reward_mode')!r}, "
                f"this env uses {self.reward_mode!r}"
            )
        try:
            rng = rng_from_state(e["rng"])
        except (KeyError, ValueError) as err:
            raise ValueError(f"state dict 'env.rng' is not a numpy bit-generator state: {err}") from None
        agents = e.get("agents")
        if not isinstance(agents, list) or not set(agents) <= set(self.possible_agents):
            raise ValueError("state dict 'env.agents' must list agents of this env")
        books = {}
        for key in ("rewards", "cumulative_rewards", "terminations", "truncations"):
            value = e.get(key)
            if not isinstance(value, dict) or (set(value) != set(agents) and key != "rewards"):
                raise ValueError(f"state dict 'env.{key}' must map every live agent")
            books[key] = dict(value)
        selection = e.get("agent_selection")
        if selection not in self.possible_agents:
            raise ValueError(f"state dict 'env.agent_selection' {selection!r} is not an agent")
        if state.phase < Phase.ROUND_OVER and selection != self.possible_agents[state.current]:
            raise ValueError("state dict 'env.agent_selection' is not the seat on turn")
        # everything validated: swap in at once
        self._state = state
        self._rng = rng
        self.agents = list(agents)
        self.rewards = books["rewards"]
        self._rewards_given = any(self.rewards.values())
        self._cumulative_rewards = books["cumulative_rewards"]
        self.terminations = books["terminations"]
        self.truncations = books["truncations"]
        self.infos = {a: {"action_mask": self._zero_mask} for a in self.agents}
        self._settle(state)
        self.agent_selection = selection

    def __getstate__(self) -> dict[str, Any]:
        d = EzPickle.__getstate__(self)
        d["_mtrain_state"] = self.state_dict() if self._state is not None else None
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        snapshot = d.pop("_mtrain_state", None)
        EzPickle.__setstate__(self, d)
        if snapshot is not None:
            self.load_state_dict(snapshot)

    # ------------------------------------------------------------------ render
    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        from mtrain_env import render as render_mod

        if self.render_mode == "rgb_array":
            return render_mod.render_rgb(self.game, self.state_obj)
        text = render_mod.render_text(self.game, self.state_obj)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass
