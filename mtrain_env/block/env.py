"""
# Partnership Dominoes (Latin-American block dominoes)

| Import             | `import mtrain_env; env = mtrain_env.block_dominoes_env()`  |
|--------------------|-------------------------------------------------------------|
| Actions            | Discrete                                                    |
| Parallel API       | No                                                          |
| Manual Control     | No                                                          |
| Agents             | `agents= ['player_0', 'player_1', 'player_2', 'player_3']`  |
| Agents             | 4 (pairs 0&2 vs 1&3), or 2 (`num_players=2`)                |
| Action Shape       | (1,)                                                        |
| Action Values      | Discrete(57)                                                |
| Observation Shape  | (`observation_layout` size,) float32 + mask                 |
| Observation Values | [0, 1] (match scores may exceed 1)                          |

The dominó of ``reference/001``: a double-six set, four players in two pairs sitting
opposite, seven tiles each and no boneyard; one line with two open ends; a player who
cannot play passes; a hand ends on "dominó" (a player goes out) or "cierre" (nobody can
play); the pair that reaches the target (100) loses the match. Rules B1-B13 and their
flags are listed in :mod:`mtrain_env.block.rules`; the keywords are those of
:class:`mtrain_env.block.config.BlockConfig` (``rules="openspiel"`` is the mode that
plays exactly as OpenSpiel's ``python_team_dominoes``). The environment never acts for
a seat: a player who cannot lay a tile steps ``PASS`` (B9).

### Action Space

``T = 28`` tiles::

    action = tile_id * 2 + end     (lay tile_id on end 0 = left or 1 = right of the line)
    PASS   = 2 * T = 56

``tile_id(a, b)`` with ``a <= b`` is ``a * (15 - a) / 2 + (b - a)`` (lexicographic). The
opening tile is ``end 0``; when both ends show the same pip only ``end 0`` is legal (the
placements are mirror images). Use ``env.unwrapped.encode_action((a, b), end)``,
``decode_action(action)`` and ``PASS``.

### Observation Space

``{"observation": float32 vector, "action_mask": int8 vector}``. Seats in the vector are
relative to the observer in play order (1 = next, 2 = partner, 3 = previous);
``env.unwrapped.observation_layout`` maps each view name to ``(slice, shape)`` (table in
:mod:`mtrain_env.block.observation`): own hand, tiles played (and by whom), the two open
ends, each seat's shown voids, hand counts, opener, seat on turn, match scores. The mask
(also ``infos[agent]["action_mask"]``) is all-zero off turn and never all-zero on turn.

### Rewards

Given to every agent at each hand's end, zero-sum between the pairs (see
:mod:`mtrain_env.block.rewards`): ``reward="points"`` (default, +-hand points / 168),
``"raw"`` (+-hand points) or ``"match"`` (+-1 when the episode ends).

### Episodes

One hand (default), or a whole match to the target with ``match=True`` (the next hand
is dealt as soon as one ends; B6 picks its opener).

### Version History

* v0: initial release.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from mtrain_env.block.codec import BlockAction, BlockCodec
from mtrain_env.block.config import BlockConfig
from mtrain_env.block.dealing import parse_deal
from mtrain_env.block.observation import BlockObservationEncoder, BlockObservationLayout
from mtrain_env.block.public import BlockView, public_view
from mtrain_env.block.render import render_text
from mtrain_env.block.rewards import REWARD_MODES, hand_rewards
from mtrain_env.block.rules import BlockDominoes
from mtrain_env.block.serialize import state_from_dict, state_to_dict
from mtrain_env.block.state import BlockState, Phase
from mtrain_env.common_env import (
    FastDiscrete,
    check_options,
    coerce_action,
    dict_observation_space,
    rng_from_state,
    rng_state,
)
from mtrain_env.core.tiles import Tile
from mtrain_env.layout import View
from mtrain_env.wrappers import wrap

RENDER_MODES = ["ansi", "human"]
ENV_STATE_KEY = "env"

__all__ = ["env", "raw_env"]


def env(**kwargs: Any) -> AECEnv:
    """The block-dominoes AEC env wrapped as PettingZoo classic envs are.

    An illegal action ends the game with reward -1 for the offender
    (``TerminateIllegalWrapper``), out-of-space actions assert, and calls out of order
    raise (``OrderEnforcingWrapper``). Keywords are those of :class:`raw_env`.
    """
    return wrap(raw_env(**kwargs), illegal_reward=-1)


class raw_env(AECEnv, EzPickle):  # noqa: N801 - PettingZoo's naming convention
    """The bare partnership-dominoes AEC environment (illegal actions raise ``ValueError``).

    Args:
        reward: ``"points"`` (default), ``"raw"`` or ``"match"`` (:mod:`mtrain_env.block.rewards`).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        **config: :meth:`BlockConfig.make` keywords: ``rules`` (``"001"``/``"openspiel"``),
            ``num_players``, ``first_opener``, ``opener``, ``double_opening``,
            ``redeal_doubles``, ``closed_scoring``, ``closed_tie``, ``scoring``, ``target``,
            ``counter_clockwise``, ``match``.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "partnership_dominoes_v0",
        "render_modes": RENDER_MODES,
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, reward: str = "points", render_mode: str | None = None, **config: Any) -> None:
        EzPickle.__init__(self, reward=reward, render_mode=render_mode, **config)
        super().__init__()
        self.config = BlockConfig.make(**config)
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {render_mode!r}")
        self.reward_mode = reward
        self.render_mode = render_mode
        self.game = BlockDominoes(self.config)
        self.codec = BlockCodec(self.config)
        self.layout = BlockObservationLayout(self.config)
        self._encoder = BlockObservationEncoder(self.game, self.layout)
        self.PASS = self.codec.PASS
        n = self.config.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self._num_actions = num_actions = self.config.num_actions
        obs_space = dict_observation_space(self.layout.high, num_actions)
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {a: FastDiscrete(num_actions) for a in self.possible_agents}
        self._zero_mask = np.zeros(num_actions, dtype=np.int8)
        self._zero_mask.flags.writeable = False
        self._state: BlockState | None = None
        self.agent_selection = self.possible_agents[0]
        self._rng: np.random.Generator | None = None
        self._legal: list[int] = []
        self._mask = self._zero_mask

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    @property
    def observation_layout(self) -> dict[str, View]:
        """Observation views: name -> ``(slice, shape)`` (see :mod:`mtrain_env.block.observation`)."""
        return self.layout.views

    # ------------------------------------------------------------------- codec
    def encode_action(self, tile: Tile, end: int) -> int:
        """Action of laying ``tile`` (either order) on ``end`` (0 left, 1 right)."""
        return self.codec.encode_action(tile, end)

    def decode_action(self, action: int) -> BlockAction:
        """``BlockAction(kind, tile, end)`` of an action id."""
        return self.codec.decode_action(action)

    # ------------------------------------------------------------------ access
    @property
    def state_obj(self) -> BlockState:
        """The live core state (hidden information included; for tooling, not for agents)."""
        if self._state is None:
            raise RuntimeError("call reset() before using the environment")
        return self._state

    def public_view(self, agent: str) -> BlockView:
        """What ``agent`` may know: the public table and its own hand (for agents)."""
        return public_view(self.state_obj, self.config, self.agent_name_mapping[agent])

    def legal_actions(self) -> list[int]:
        """Legal actions of the agent on turn, increasing."""
        return list(self._legal)

    def action_mask(self, agent: str | None = None) -> np.ndarray:
        """The int8 mask of ``agent`` (default: the agent on turn); all-zero off turn."""
        agent = self.agent_selection if agent is None else agent
        s = self.state_obj
        return self._mask if self.agent_name_mapping[agent] == s.current else self._zero_mask

    # ---------------------------------------------------------------- AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start an episode. ``options``: ``{"deal": {"hands": [...]}}`` and/or ``{"opener": k}``.

        A fixed deal is validated (B1-B4); ``opener`` makes seat ``k`` open the first hand
        with any tile (overriding B5).
        """
        opts = check_options(options, ("deal", "opener"))
        deal = parse_deal(self.config, opts["deal"]) if "deal" in opts else None
        opener = None
        if "opener" in opts:
            k = opts["opener"]
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
                raise TypeError(f"options['opener'] must be an int seat, got {k!r}")
            if not 0 <= k < self.config.num_players:
                raise ValueError(
                    f"B5: options['opener'] must be a seat 0..{self.config.num_players - 1}, got {k}"
                )
            opener = int(k)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        elif self._rng is None:
            self._rng = np.random.default_rng()
        self._state = self.game.new_game(self._rng, deal, opener)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._rewards_given = False
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {"action_mask": self._zero_mask} for a in self.agents}
        self._settle()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        s = self._state
        if s is None:
            raise RuntimeError("call reset() before observe()")
        seat = self.agent_name_mapping[agent]
        return {
            "observation": self._encoder.encode(s, seat),
            "action_mask": self._mask if seat == s.current else self._zero_mask,
        }

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        s = self.state_obj
        move = coerce_action(action, self._num_actions)
        if move not in self._legal:
            reason = self.game.explain_illegal(s, move, self._legal)
            raise ValueError(f"{agent}: {reason} -> legal actions: {self._legal}")
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_given:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewards_given = False
        self.game.apply(s, move)
        if s.phase != Phase.PLAYING:
            values = hand_rewards(self.reward_mode, self.config, s)
            self.rewards = dict(zip(self.possible_agents, values, strict=True))
            self._rewards_given = True
            if s.phase == Phase.GAME_OVER:
                self.terminations = dict.fromkeys(self.agents, True)
            else:
                self.game.next_hand(s, self._rng)  # type: ignore[arg-type]
            self._accumulate_rewards()
        self._settle()
        if self.render_mode == "human":
            self.render()

    def _settle(self) -> None:
        """Refresh legal moves, mask, turn and infos after the state changed."""
        s = self.state_obj
        previous = self.agent_selection
        infos = self.infos
        self._legal = legal = self.game.legal_moves(s)
        if legal:
            mask = np.zeros(self._num_actions, dtype=np.int8)
            mask[legal] = 1
            self._mask = mask
        else:
            self._mask = self._zero_mask
        self.agent_selection = agent = self.possible_agents[s.current]
        if previous != agent and previous in infos:
            infos[previous] = {"action_mask": self._zero_mask}
        if agent in infos:
            infos[agent] = {"action_mask": self._mask}

    # --------------------------------------------------------------- snapshots
    def state_dict(self) -> dict[str, Any]:
        """A JSON-serializable snapshot of the whole env (hidden state, RNG, AEC bookkeeping)."""
        d = state_to_dict(self.game, self.state_obj)
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
        state = state_from_dict(self.game, {k: v for k, v in d.items() if k != ENV_STATE_KEY})
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
        except KeyError:
            raise ValueError("state dict 'env.rng' is missing") from None
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
        if state.phase == Phase.PLAYING and selection != self.possible_agents[state.current]:
            raise ValueError("state dict 'env.agent_selection' is not the seat on turn")
        self._state = state
        self._rng = rng
        self.agents = list(agents)
        self.rewards = books["rewards"]
        self._rewards_given = any(self.rewards.values())
        self._cumulative_rewards = books["cumulative_rewards"]
        self.terminations = books["terminations"]
        self.truncations = books["truncations"]
        self.infos = {a: {"action_mask": self._zero_mask} for a in self.agents}
        self._settle()
        self.agent_selection = selection

    def __getstate__(self) -> dict[str, Any]:
        d = EzPickle.__getstate__(self)
        d["_block_state"] = self.state_dict() if self._state is not None else None
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        snapshot = d.pop("_block_state", None)
        EzPickle.__setstate__(self, d)
        if snapshot is not None:
            self.load_state_dict(snapshot)

    # ------------------------------------------------------------------ render
    def render(self) -> str | None:
        """The table with the hand of the seat on turn only (``ansi`` returns it, ``human`` prints it)."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        text = render_text(self.game, self.state_obj)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass
