"""A Gymnasium env in which one learner seat plays Mexican Train against a pool of agents.

:class:`SingleAgentEnv` wraps :class:`mtrain_env.raw_env`. After ``import mtrain_env`` it is
also Gymnasium's ``"mtrain_env/MexicanTrain-v0"`` (``gymnasium.make(id, opponents=[...],
num_players=..., ...)``, keywords as :class:`SingleAgentEnv`). It needs the agents for the
opponents, never torch (unless a snapshot opponent plays). Each episode:

1. the learner's seat is chosen — ``seat="random"`` (default): uniformly from the env's
   seeded generator; ``"rotate"``: seat ``(offset + episode) mod n`` with ``offset``
   drawn once at the first seeded reset; or a fixed seat ``k``;
2. every other seat gets an opponent drawn from the pool (a
   :class:`~agents.mexican_train.league.League`: heuristic agents of :mod:`agents` and
   frozen snapshots of the learner); each opponent is re-seeded from the env's generator;
3. the deal comes from a seed drawn from the same generator, so ``reset(seed=s)`` fixes
   the whole episode (deal, seat, opponents and their choices).

Opponents act only through :func:`agents.decision_for` — their own observation, mask and
leak-free public view — so no agent ever sees a hidden tile. The learner's observation is
``raw_env.observe(learner)["observation"]`` (a ``Box`` float32 vector) and its legal
actions come from :meth:`SingleAgentEnv.action_masks` (the method sb3-contrib's
MaskablePPO looks for; the same mask is in every ``info["action_mask"]``). Actions are
the env's relative ``Discrete`` codec.

Reward: the env's reward mode for the learner's seat (``reward=`` in ``env_kwargs``),
summed over everything that happens until the learner is on turn again (a round can end
during an opponent's turn). An episode is the raw env's episode: one round by default, a
session with ``rounds > 1``. Optional potential-based shaping (``shaping > 0``): ``F =
gamma * phi(s') - phi(s)`` with ``phi = -shaping * own hand pips / (hand_size * max_pips)``
and ``phi(terminal) = 0``; it telescopes, so for ``gamma = 1`` the return changes by the
constant ``-phi(s0)`` and the optimal policy is unchanged (Ng et al., 1999).

Illegal actions: ``illegal_action="terminate"`` (default, as PettingZoo classic's
``TerminateIllegalWrapper``): the episode ends with ``illegal_reward`` and
``info["illegal_action"] = True`` — needed by the env checkers, which step random actions;
``"raise"``: ``ValueError`` (the trainer uses this, so a masking bug can never become a
training signal).

The env's full state (deal, RNGs, opponents, league copy) is :meth:`get_state` /
:meth:`set_state`, so a training run can be resumed exactly mid-episode. It names no
directory: a snapshot opponent's policy file is stored by its name in the league, and
:meth:`set_state` points it into this env's ``league_root``, so a run directory can be
copied or moved and resumed where it is.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from agents.mexican_train import pickles
from agents.mexican_train.base import Agent, Decision, decision_for
from agents.mexican_train.features import FeatureEncoder, feature_size
from agents.mexican_train.league import HEURISTIC, SNAPSHOT, League, OpponentSpec, snapshot_path
from agents.play import play_until
from agents.registry import make_agent
from mtrain_env.mexican_train.env import raw_env
from mtrain_env.tilegame.actions import IllegalMoveError, coerce_action

SEAT_MODES = ("random", "rotate")
ILLEGAL_MODES = ("terminate", "raise")


def _as_league(opponents: League | Sequence[str] | Mapping[str, float]) -> League:
    if isinstance(opponents, League):
        return copy.deepcopy(opponents)
    if isinstance(opponents, Mapping):
        return League(heuristics=dict(opponents), snapshot_every=0)
    return League(heuristics=dict.fromkeys(opponents, 1.0), snapshot_every=0)


def finite_high(env: raw_env) -> np.ndarray:
    """The layout's upper bounds with each unbounded view given a bound it can never exceed.

    The AEC env publishes ``inf`` for counts that have no natural maximum; the learner's
    ``Box`` gets the real maxima of this configuration instead (a train cannot hold more
    than every tile, a hand more than every tile, a seat cannot score more per round than
    every tile at its highest penalty), which keeps the env checkers' bounds checks useful.
    """
    c = env.config
    layout = env.layout
    high = layout.high.astype(np.float32).copy()
    t = float(c.num_tiles)
    per_tile = float(max(2 * c.max_pips, 50))  # blank_penalty counts 50 for the double blank
    bounds = {
        "train_length": t / (c.max_pips + 1),
        "pending_count": float(c.num_players + 1),
        "opponent_hand_count": t / c.hand_size,
        "scores": c.rounds * t * per_tile / (c.hand_size * c.max_pips),
    }
    for name, bound in bounds.items():
        if name in layout:
            view = layout[name].slice
            high[view] = np.where(np.isinf(high[view]), bound, high[view])
    return high


class SingleAgentEnv(gymnasium.Env):
    """One learner seat against a pool of opponents (see the module docstring).

    Args:
        env_kwargs: keywords of :class:`mtrain_env.raw_env` (players, set, rules, rounds,
            reward mode, variant flags).
        opponents: a :class:`League`, a list of registered agent names (uniform) or a
            name -> weight mapping.
        seat: ``"random"``, ``"rotate"`` or a fixed seat index.
        league_root: directory of the league's snapshot files.
        illegal_action: ``"terminate"`` or ``"raise"``.
        illegal_reward: learner reward when an illegal action ends the episode.
        shaping: coefficient of the potential-based shaping (0 = none).
        gamma: discount used by the shaping term (match the learner's).
        snapshot_deterministic: snapshot opponents play argmax (else they sample).
        features: the learner's input (:mod:`agents.mexican_train.features`): ``"env"`` (the env's
            observation vector) or ``"planner"`` (plus the planner's advice views).
        render_mode: ``None``, ``"ansi"`` (the learner's table view as text) or
            ``"rgb_array"`` (as a picture: what SB3's ``make_vec_env`` and gymnasium's
            video wrappers ask for).
        **config: more keywords of :class:`mtrain_env.raw_env`, merged into ``env_kwargs``
            (so ``gymnasium.make("mtrain_env/MexicanTrain-v0", num_players=2, max_pips=6)``
            works); a keyword given both ways is a ``TypeError``.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}  # noqa: RUF012 - gymnasium's instance attribute

    def __init__(
        self,
        env_kwargs: Mapping[str, Any] | None = None,
        opponents: League | Sequence[str] | Mapping[str, float] = ("random",),
        seat: str | int = "random",
        league_root: str | Path | None = None,
        illegal_action: str = "terminate",
        illegal_reward: float = -1.0,
        shaping: float = 0.0,
        gamma: float = 1.0,
        snapshot_deterministic: bool = False,
        features: str = "env",
        render_mode: str | None = None,
        **config: Any,
    ) -> None:
        super().__init__()
        self.env_kwargs = dict(env_kwargs or {})
        twice = sorted(set(config) & set(self.env_kwargs))
        if twice:
            raise TypeError(f"SingleAgentEnv: {', '.join(twice)} given both as a keyword and in env_kwargs")
        self.env_kwargs.update(config)
        self.env_kwargs.pop("render_mode", None)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            modes = self.metadata["render_modes"]
            raise ValueError(f"render_mode must be None or one of {modes}, got {render_mode!r}")
        self._raw = raw_env(**self.env_kwargs, render_mode=render_mode)
        self.num_players = self._raw.config.num_players
        if isinstance(seat, str):
            if seat not in SEAT_MODES:
                raise ValueError(f"seat must be one of {SEAT_MODES} or a seat index, got {seat!r}")
        elif not 0 <= int(seat) < self.num_players:
            raise ValueError(f"seat must be 0..{self.num_players - 1}, got {seat}")
        if illegal_action not in ILLEGAL_MODES:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_MODES}, got {illegal_action!r}")
        self.seat_mode = seat
        self.league = _as_league(opponents)
        for name in self.league.heuristics:  # each can play this table: found here, not at a reset
            make_agent(name, **self.league.heuristic_params.get(name, {})).check_game(self._raw.config)
        self.league_root = Path(league_root) if league_root is not None else None
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.shaping = float(shaping)
        self.gamma = float(gamma)
        self.snapshot_deterministic = bool(snapshot_deterministic)
        self.render_mode = render_mode

        layout = self._raw.layout
        self.features = features
        self._features = FeatureEncoder(features)
        high = finite_high(self._raw)
        size = feature_size(features, self._raw.config, layout.size)
        if size > layout.size:  # the advice views are 0/1
            high = np.concatenate((high, np.ones(size - layout.size, dtype=np.float32)))
        self.observation_space = spaces.Box(low=0.0, high=high, shape=(size,), dtype=np.float32)
        self.action_space = spaces.Discrete(self._raw.config.num_actions)
        game = self._raw.config
        self._hand_view = layout["hand"].slice
        self._tile_pips = np.array([a + b for a, b in game.tiles.tiles], dtype=np.float64)
        self._pip_scale = float(game.hand_size * game.max_pips)

        self._rng = np.random.default_rng()
        self._seeded = False
        self._episode = 0
        self._rotate_offset = 0
        self.learner_seat = 0
        self._learner_id = self._raw.possible_agents[0]
        self.opponent_specs: dict[int, OpponentSpec] = {}
        self.opponents: dict[int, Agent] = {}
        self._potential = 0.0
        self._done = True
        self.bc_seed = 0  #: default seed of :meth:`collect_expert`

    # ----------------------------------------------------------------- access
    @property
    def raw(self) -> raw_env:
        """The wrapped AEC env (hidden state inside: for tests and tooling only)."""
        return self._raw

    @property
    def learner_id(self) -> str:
        """Agent id of the learner's seat this episode (``player_k``)."""
        return self._learner_id

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (all False once the episode is over,
        also when an illegal action ended it with the table mid-round)."""
        infos = getattr(self._raw, "infos", None)
        if infos is None or self._done:  # never reset, or over
            return np.zeros(self._raw.config.num_actions, dtype=bool)
        return infos[self._learner_id]["action_mask"].astype(bool)

    def learner_decision(self) -> Decision:
        """The learner seat's :class:`Decision` (for experts playing the learner's seat)."""
        return decision_for(self._raw, self._learner_id)

    def set_league_state(self, state: Mapping[str, Any], root: str | None = None) -> None:
        """Replace the pool (from :meth:`League.state_dict`); takes effect at the next episode."""
        self.league = League.from_state_dict(state)
        if root is not None:
            self.league_root = Path(root)
        from agents.mexican_train import ppo

        if self.league_root is not None:
            keep = {str((self.league_root / f).resolve()) for f in self.league.files()}
            seated = (getattr(a, "path", None) for a in self.opponents.values())
            keep |= {str(Path(p).resolve()) for p in seated if p is not None}  # mc's path is None
            ppo.clear_cache(keep)

    # ---------------------------------------------------------------- episode
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode (see the module docstring); ``options`` go to the raw env's reset."""
        super().reset(seed=seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            self._episode = 0
            self._rotate_offset = int(self._rng.integers(self.num_players))
            self._seeded = True
        n = self.num_players
        while True:
            if self.seat_mode == "random":
                seat = int(self._rng.integers(n))
            elif self.seat_mode == "rotate":
                seat = (self._rotate_offset + self._episode) % n
            else:
                seat = int(self.seat_mode)
            self.learner_seat = seat
            self._learner_id = self._raw.possible_agents[seat]
            others = [s for s in range(n) if s != seat]
            specs = self.league.sample(self._rng, len(others))
            self.opponent_specs = dict(zip(others, specs, strict=True))
            self.opponents = {s: self._build_opponent(spec) for s, spec in self.opponent_specs.items()}
            for agent in self.opponents.values():
                agent.reset(int(self._rng.integers(2**31)))
            self._raw.reset(seed=int(self._rng.integers(2**63)), options=options)
            self._episode += 1
            self._advance()
            if not self._raw.terminations[self._learner_id]:
                break
            # the episode ended before the learner ever moved: deal again (never seen in practice)
        self._done = False
        obs = self._observe()
        self._potential = self._phi(obs)
        return obs, self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner plays ``action``; opponents play until it is on turn again or the episode ends."""
        if self._done:
            raise RuntimeError("the episode is over: call reset()")
        a = coerce_action(action, self._raw.config.num_actions)  # refuses 85.9 and "85"
        mask = self._raw.infos[self._learner_id]["action_mask"]
        if not mask[a]:
            if self.illegal_action == "raise":
                legal = np.flatnonzero(mask).tolist()
                raise IllegalMoveError(f"{self._learner_id}: illegal action {a}; legal actions: {legal}")
            gymnasium.logger.warn(f"illegal action {a} by the learner: episode terminated")
            self._done = True
            info = self._info()
            info["illegal_action"] = True
            return self._observe(), self.illegal_reward, True, False, info
        raw = self._raw
        raw.step(a)
        reward = float(raw.rewards[self._learner_id]) + self._advance()
        terminated = bool(raw.terminations[self._learner_id])
        obs = self._observe()
        if self.shaping:
            phi = 0.0 if terminated else self._phi(obs)
            reward += self.gamma * phi - self._potential
            self._potential = phi
        self._done = terminated
        return obs, reward, terminated, False, self._info()

    def _advance(self) -> float:
        """Opponents play (:func:`agents.play.play_until`) until the learner is on turn or the
        episode ends; returns the learner's rewards meanwhile."""
        seats: list[Agent | None] = [self.opponents.get(s) for s in range(self.num_players)]
        return play_until(self._raw, seats).returns[self.learner_seat]

    def _observe(self) -> np.ndarray:
        if self.features == "env":
            return self._raw.observe(self._learner_id)["observation"]
        return self._features(decision_for(self._raw, self._learner_id))

    def _phi(self, obs: np.ndarray) -> float:
        if not self.shaping:
            return 0.0
        pips = float(obs[self._hand_view] @ self._tile_pips)
        return -self.shaping * pips / self._pip_scale

    def _info(self) -> dict[str, Any]:
        return {
            "seat": self.learner_seat,
            "opponents": [self.opponent_specs[s].label for s in sorted(self.opponent_specs)],
            "action_mask": self.action_masks(),  # lets training.vec.VecMaskCache skip a round trip
        }

    def _build_opponent(self, spec: OpponentSpec) -> Agent:
        if spec.kind == HEURISTIC:
            return make_agent(spec.name, **dict(spec.params))
        if self.league_root is None:
            raise ValueError("snapshot opponents need a league_root")
        from agents.mexican_train.ppo import PPOAgent

        return PPOAgent(path=snapshot_path(self.league_root, spec), deterministic=self.snapshot_deterministic)

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]  # gymnasium types frames as a TypeVar
        """The learner's table view: text (``"ansi"``), a picture (``"rgb_array"``), else
        ``None`` with a warning."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        # between steps the learner is on turn, so the only hand shown is the learner's
        frame = self._raw.render()
        if self.render_mode == "rgb_array":
            return frame
        return f"learner: {self._learner_id}\n{frame}"

    # ------------------------------------------------------------- snapshots
    def get_state(self) -> dict[str, Any]:
        """Everything needed to continue this env exactly (picklable; no directory in it: the
        snapshot opponents' paths are their file names in the league)."""
        opponents: dict[int, Agent] = {}
        for seat, agent in self.opponents.items():
            spec = self.opponent_specs.get(seat)
            if spec is not None and spec.kind == SNAPSHOT:
                agent = copy.copy(agent)  # the pickled copy (not the network: PPOAgent.__getstate__)
                agent.path = spec.name  # type: ignore[attr-defined]
            opponents[seat] = agent
        return {
            "raw": self._raw.state_dict(),
            "rng": copy.deepcopy(self._rng.bit_generator.state),
            "episode": self._episode,
            "rotate_offset": self._rotate_offset,
            "seeded": self._seeded,
            "learner_seat": self.learner_seat,
            "opponent_specs": {s: spec for s, spec in self.opponent_specs.items()},
            "opponents": pickle.dumps(opponents),
            "potential": self._potential,
            "done": self._done,
            "league": self.league.state_dict(),
        }

    def set_state(self, state: Mapping[str, Any]) -> np.ndarray:
        """Restore :meth:`get_state` output; returns the learner's current observation.

        Snapshot opponents play the files of this env's ``league_root`` (whatever directory
        the state was saved from: a state of an earlier version names one, it is ignored)."""
        specs = dict(state["opponent_specs"])
        if self.league_root is None and any(spec.kind == SNAPSHOT for spec in specs.values()):
            raise ValueError("snapshot opponents need a league_root")  # refused before any change
        self._raw.load_state_dict(state["raw"])
        rng = np.random.default_rng()
        rng.bit_generator.state = copy.deepcopy(state["rng"])
        self._rng = rng
        self._episode = int(state["episode"])
        self._rotate_offset = int(state["rotate_offset"])
        self._seeded = bool(state["seeded"])
        self.learner_seat = int(state["learner_seat"])
        self._learner_id = self._raw.possible_agents[self.learner_seat]
        self.opponent_specs = specs
        self.opponents = pickles.loads(state["opponents"])
        root = self.league_root
        for seat, spec in specs.items():
            if spec.kind == SNAPSHOT and root is not None:  # a root there is: checked above
                self.opponents[seat].path = str(snapshot_path(root, spec))  # type: ignore[attr-defined]
        self._potential = float(state["potential"])
        self._done = bool(state["done"])
        self.league = League.from_state_dict(state["league"])
        return self._observe()

    # ------------------------------------------------------- behaviour cloning
    def collect_expert(
        self,
        expert: str,
        samples: int,
        seed: int | None = None,
        expert_params: Mapping[str, Any] | None = None,
    ) -> dict[str, np.ndarray]:
        """``samples`` learner decisions played by the registered agent ``expert``.

        ``seed`` seeds the expert and the episodes (default: the ``bc_seed`` attribute,
        which lets a vectorised caller give every worker its own seed).
        Returns arrays ``obs`` (float32), ``mask`` (bool), ``action`` (int64) and
        ``returns`` (the learner's discounted return from that decision on, float32).
        The env is left mid-episode: reset it before training on it.
        """
        if seed is None:
            seed = self.bc_seed
        agent = make_agent(expert, seed=seed, **dict(expert_params or {}))
        obs_rows: list[np.ndarray] = []
        masks: list[np.ndarray] = []
        actions: list[int] = []
        returns: list[float] = []
        obs, _ = self.reset(seed=seed)
        episode_rewards: list[float] = []
        while True:
            mask = self.action_masks()
            action = agent.act(self.learner_decision())
            obs_rows.append(obs)
            masks.append(mask)
            actions.append(int(action))
            obs, reward, terminated, truncated, _ = self.step(action)
            episode_rewards.append(float(reward))
            if terminated or truncated:
                g = 0.0
                tail: list[float] = []
                for r in reversed(episode_rewards):
                    g = r + self.gamma * g
                    tail.append(g)
                returns.extend(reversed(tail))
                if len(actions) >= samples:
                    break
                episode_rewards = []
                obs, _ = self.reset()
        n = samples
        return {
            "obs": np.stack(obs_rows[:n]).astype(np.float32),
            "mask": np.stack(masks[:n]).astype(bool),
            "action": np.array(actions[:n], dtype=np.int64),
            "returns": np.array(returns[:n], dtype=np.float32),
        }
