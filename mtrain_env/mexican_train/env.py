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
(``i`` -> ``i + 1``). The rules core (:mod:`mtrain_env.mexican_train.core`) decides who is on turn: a
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

``{"observation": float32 vector, "action_mask": int8 vector}``, the vector relative to
the observing seat; ``env.unwrapped.observation_layout`` maps each view name to ``(slice,
shape)`` (the table is on the guide's environment page). The mask (also in
``infos[agent]["action_mask"]``) is all-zero off turn, never all-zero on turn, and
read-only (the env reads legality from it: edit a ``mask.copy()``).

### Rewards

Given to every agent at each round's end (see :mod:`mtrain_env.mexican_train.rewards`):
``reward="zero_sum"`` (default), ``"penalty"`` or ``"win"``.

### Round results

The step that ends a round puts its public result (final hands, ``pips`` (R24),
``went_out``, ``blocked`` (R23), ``scores``, ``round``, ``first_player``) in every live
agent's ``info["round_result"]`` until the next step, so one result reaches several seats
of an ``agent_iter`` loop: key results by their ``round``::

    import numpy as np
    import mtrain_env

    env = mtrain_env.env(num_players=4, max_pips=6, rounds=3)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    results = {}  # round index -> that round's result, once however many seats saw it
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        if "round_result" in info:
            results[info["round_result"]["round"]] = info["round_result"]
        if termination or truncation:
            action = None
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
    print(len(results), [r["pips"] for r in results.values()])  # 3 rounds, pips per seat

### Version History

* v0: initial release.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from mtrain_env.mexican_train.codec import ActionCodec
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.dealing import parse_deal
from mtrain_env.mexican_train.core.public import PublicView, public_view
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.serialize import state_from_dict, state_to_dict
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.mexican_train.observation import (
    OBSERVATION_VERSION,
    ObservationEncoder,
    ObservationLayout,
    check_observation_version,
)
from mtrain_env.mexican_train.rewards import REWARD_MODES, round_rewards
from mtrain_env.mexican_train.round_result import previous_round_problem
from mtrain_env.tilegame.aec import TileGameEnv, seat_option
from mtrain_env.tilegame.tiles import bits_list
from mtrain_env.tilegame.wrappers import wrap

RENDER_MODES = ["ansi", "human", "rgb_array"]
#: the rules engines ``raw_env(backend=...)`` accepts
BACKENDS = ("python", "compiled")
#: ``engine.ENV_STEP_SEATS``: the compiled fused step returns ``legal count * this + seat``
FUSED_SEATS = 64
#: masks allocated together on the compiled backend's fast path (CompiledRawEnv._new_mask_block)
MASK_BLOCK_ROWS = 16


def env(**kwargs: Any) -> AECEnv:
    """The Mexican Train AEC env wrapped as PettingZoo classic envs are.

    An illegal action ends the game with reward -1 for the offender
    (``TerminateIllegalWrapper``); an action outside the action space, or not an integer,
    raises the bare env's ``ValueError``/``TypeError`` (where PettingZoo's
    ``AssertOutOfBoundsWrapper`` asserts; see :mod:`mtrain_env.tilegame.wrappers`); calls
    out of order raise (``OrderEnforcingWrapper``). Keywords are those of :class:`raw_env`.
    """
    return wrap(raw_env(**kwargs), illegal_reward=-1)


class raw_env(TileGameEnv):  # noqa: N801 - PettingZoo's naming convention
    """The bare Mexican Train AEC environment (illegal actions raise ``ValueError``).

    Args:
        num_players: seats (R3), default 4.
        max_pips: N of the double-N set (R1), default 12.
        hand_size: tiles per hand; default from the preset's table (R4).
        rules: preset, ``"pagat"`` (default), ``"wikipedia"`` or ``"cardinal"``.
        rounds: rounds per episode: 1 (default) up to ``max_pips + 1``, a full session (R25).
        reward: ``"zero_sum"`` (default), ``"penalty"`` or ``"win"``.
        render_mode: ``None``, ``"ansi"``, ``"human"`` or ``"rgb_array"``.
        backend: the rules engine, ``"python"`` (default: the readable reference core, no
            numba needed) or ``"compiled"`` (the numba core of
            :mod:`~mtrain_env.mexican_train.compiled`, faster; needs the ``fast`` extra, and
            its first-call compile is cached on disk). Both give the same observations,
            masks, rewards, infos, snapshots and renders for the same seed; a snapshot of
            one loads into the other. With ``"compiled"``, ``state_obj`` is a pure
            ``GameState`` copy built on demand (not the live state).
        observation_version: the observation layout
            (:mod:`~mtrain_env.mexican_train.observation`): 1 (default; every shipped network
            reads it) or an opt-in later one that adds views (python backend only). Policy
            files record the version they were trained on, and ``ppo`` refuses another.
        **flags: RULES.md variant flags (``one_tile_opening=True``, ...), overriding the preset.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "mexican_train_v0",
        "render_modes": RENDER_MODES,
        "is_parallelizable": False,
        "render_fps": 2,
    }
    reward_modes = REWARD_MODES
    round_over_phase = Phase.ROUND_OVER
    option_keys = ("deal", "first_player")
    legal_label = "legal actions (relative encoding)"

    def __new__(cls, *args: Any, **kwargs: Any) -> raw_env:
        """``raw_env(backend="compiled")`` builds a :class:`CompiledRawEnv` (the same env with
        the compiled fast path), so the python backend's calls pay for no backend test."""
        backend = kwargs.get("backend", args[7] if len(args) > 7 else "python")
        if cls is raw_env and backend == "compiled":
            cls = CompiledRawEnv
        return super().__new__(cls)

    def __init__(
        self,
        num_players: int = 4,
        max_pips: int = 12,
        hand_size: int | None = None,
        rules: str = "pagat",
        rounds: int = 1,
        reward: str = "zero_sum",
        render_mode: str | None = None,
        backend: str = "python",
        observation_version: int = OBSERVATION_VERSION,
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
            backend=backend,
            observation_version=observation_version,
            **flags,
        )
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        check_observation_version(observation_version)
        if backend == "compiled" and observation_version != OBSERVATION_VERSION:
            raise ValueError(
                f'observation_version={observation_version} needs backend="python" (the compiled '
                f"encoder writes version {OBSERVATION_VERSION})"
            )
        config = GameConfig.make(
            num_players=num_players,
            max_pips=max_pips,
            hand_size=hand_size,
            rules=rules,
            rounds=rounds,
            **flags,
        )
        self.backend = backend
        #: the pure core: the engine of the python backend, the reference of the compiled one
        self.pure_game = pure = MexicanTrain(config)
        layout = ObservationLayout(config, observation_version)
        self._compiled: Any = None
        game: Any = pure
        encoder: Any = ObservationEncoder(pure, layout)
        if backend == "compiled":
            self._compiled = game = _compiled_backend(config)
            from mtrain_env.mexican_train.compiled.backend import CompiledEncoder

            encoder = CompiledEncoder(game, layout.size)
        self.codec = codec = ActionCodec(config)
        self.DRAW = codec.DRAW
        self.PASS = codec.PASS
        self._setup(
            config,
            game,
            layout,
            encoder,
            config.num_actions,
            codec.rel_to_abs,
            codec.abs_to_rel,
            reward,
            render_mode,
        )

    # ---------------------------------------------------------------- backend
    @property
    def state_obj(self) -> GameState:
        """The core state as a pure ``GameState`` (hidden information included; for tooling).

        The live state on the python backend; on the compiled one a copy built on demand.
        """
        return self._pure(self._live_state())

    def _pure(self, s: Any) -> GameState:
        """``s`` as a pure state (itself on the python backend)."""
        return self._compiled.to_pure(s) if self._compiled is not None else s

    # ------------------------------------------------------------------- hooks
    def _new_state(self, rng: np.random.Generator, options: dict[str, Any]) -> Any:
        deal = (
            parse_deal(self.config, self.config.engine_value(0), options["deal"])
            if "deal" in options
            else None
        )
        first_player = seat_option(options, "first_player", self.config.num_players, "R6")
        return self.game.new_game(rng, deal, first_player)

    def _round_result(self, s: Any) -> tuple[list[float], bool]:
        over = s.phase == Phase.GAME_OVER
        rows = self._compiled.round_scores(s) if self._compiled is not None else s.round_scores
        # R24/R25: every seat is rewarded at each round's end
        return round_rewards(self.reward_mode, self.config, rows, over), over

    def _round_info(self, s: Any) -> dict[str, Any]:
        """The round's public result (R23, R24): every hand is shown when the round is scored.

        ``hands`` (tiles by seat), ``pips`` (R24 penalty by seat), ``went_out`` (R19),
        ``blocked`` (R23), ``scores`` (this round's score by seat, as added to the
        session's), ``round`` and ``first_player`` (R6). Seats are absolute (``player_i``).
        """
        if self._compiled is not None:
            return self._compiled.round_info(s)  # the same dict, read off the compiled array
        tiles = self.config.tiles.tiles
        return {
            "round": s.round_index,
            "first_player": s.first_player,
            "blocked": bool(s.blocked),
            "went_out": [h == 0 for h in s.hands],
            "hands": [[list(tiles[i]) for i in bits_list(h)] for h in s.hands],
            "pips": self.pure_game.penalties(s),
            "scores": list(s.round_scores[-1]),
        }

    def _previous_round_problem(self, s: Any, result: Any) -> str | None:
        return previous_round_problem(self.pure_game, self._pure(s), result)

    def _public_view(self, s: Any, seat: int) -> PublicView:
        return public_view(self._pure(s), self.config, seat)

    def _next_round(self, s: Any, rng: np.random.Generator) -> None:
        self.game.next_round(s, rng)

    def _state_to_dict(self, s: Any) -> dict[str, Any]:
        return state_to_dict(self.pure_game, self._pure(s))

    def _state_from_dict(self, d: dict[str, Any]) -> Any:
        ps = state_from_dict(self.pure_game, d)
        return self._compiled.from_pure(ps) if self._compiled is not None else ps

    def _render_text(self, s: Any) -> str:
        from mtrain_env.mexican_train.render import render_text

        return render_text(self.pure_game, self._pure(s))

    def _render_rgb(self, s: Any) -> np.ndarray:
        from mtrain_env.mexican_train.render import render_rgb

        return render_rgb(self.pure_game, self._pure(s))


class CompiledRawEnv(raw_env):
    """What ``raw_env(backend="compiled")`` builds: :class:`raw_env` on the compiled core, with
    a fast path for the common step (same effects, fewer Python calls).

    A legal plain-int action of the live agent on turn runs the bookkeeping of
    :meth:`TileGameEnv.step` around ONE compiled call, ``engine.env_step``: the move, then
    the next seat's legal moves, mask and observation, written into new arrays. The first
    ``observe`` of that seat returns that observation (later ones encode again: every
    observation is a new array, as on the python backend). Bookkeeping dicts are rebuilt
    only when they change (a round's end, which goes the general way, as does every other
    action: not an int, illegal, or of a dead agent).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._obs_ready: np.ndarray | None = None  #: the observation the fused step wrote
        self._obs_agent: str | None = None  #: ... and whose it is
        super().__init__(*args, **kwargs)  # a clear ImportError here when numba is missing
        from mtrain_env.mexican_train.compiled import engine

        self._fused = engine.env_step
        self._tables = self._compiled.tables
        self._moves = np.empty(engine.MAX_MOVES, np.int64)
        self._obs_size = self.layout.size
        self._empty = np.empty
        self._obs_dtype = np.dtype(np.float32)  # dtype objects: np.empty skips the type lookup
        self._new_mask_block()

    def _new_mask_block(self) -> None:
        """Masks for the next :data:`MASK_BLOCK_ROWS` fast steps: the kernel writes row ``k``
        of the block, the env hands out row ``k`` of a read-only view of it. A mask must be
        read-only (the env reads legality from it) and a new array each step (a caller may
        keep it); a row of a read-only view is both, cheaper than flagging a new array."""
        self._mask_block = np.empty((MASK_BLOCK_ROWS, self._num_actions), np.int8)
        self._mask_block_view = view = self._mask_block.view()
        view.setflags(write=False)
        self._mask_row = -1

    def step(self, action: int | None) -> None:
        if not (type(action) is int and 0 <= action < self._num_actions and self.try_step(action)):
            TileGameEnv.step(self, action)  # everything else: checked, refused or played there

    def try_step(self, action: int) -> bool:
        """:meth:`TileGameEnv.try_step` on the fused call: a legal ``action`` of the live agent
        on turn is played (and ``True``), anything else changes nothing (and ``False``)."""
        # _mask is the zero mask when nobody is on turn (and before reset)
        if not self._mask[action]:
            return False
        agent = self.agent_selection
        if self.terminations.get(agent, True) or self.truncations.get(agent, True):
            return False
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_given or self._round_result_info is not None:
            self._begin_step(agent)
        s = self._state
        obs = self._empty(self._obs_size, self._obs_dtype)
        row = self._mask_row + 1
        if row == MASK_BLOCK_ROWS:
            self._new_mask_block()
            row = 0
        self._mask_row = row
        code: int = self._fused(s.a, self._tables, action, self._moves, obs, self._mask_block, row)
        if code < 0:  # the round is over: scored, dealt or ended, then settled as usual
            self._end_step(s)
            return True
        self.agent_selection = on_turn = self.possible_agents[code % FUSED_SEATS]
        if code >= FUSED_SEATS:
            self._obs_ready = obs
            mask = self._mask_block_view[row]  # read-only: the kernel wrote it through the block
        else:  # no legal move (the rules never leave a live seat without one)
            mask = self._zero_mask
            self._obs_ready = None
        self._mask = mask
        self._obs_agent = on_turn
        infos = self.infos
        if agent != on_turn and agent in infos:
            infos[agent] = {"action_mask": self._zero_mask}
        if on_turn in infos:
            infos[on_turn] = {"action_mask": mask}
        if self.render_mode == "human":
            self.render()
        return True

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self._obs_ready
        if obs is not None and agent == self._obs_agent:
            self._obs_ready = None
            return {"observation": obs, "action_mask": self._mask}
        return TileGameEnv.observe(self, agent)

    def _cached_legal(self) -> list[int]:
        """The legal core moves, read off the mask (the fast path keeps no list)."""
        to_move = self._action_to_move[self._live_state().current]
        return sorted(to_move[a] for a in np.flatnonzero(self._mask).tolist())

    def _settle(self, s: Any) -> None:
        self._obs_ready = None  # the state changed: the fused step's observation is stale
        TileGameEnv._settle(self, s)

    def _legal_and_mask(self, s: Any) -> tuple[list[int], np.ndarray]:
        """Legal moves and mask in one compiled call."""
        legal, mask = self._compiled.legal_and_mask(s)
        mask.setflags(write=False)  # the caller's edit must not change the rules' answer (slow path)
        return legal, mask if legal else self._zero_mask


def _compiled_backend(config: GameConfig) -> Any:
    """The compiled core for ``config``, imported on first use (``import mtrain_env`` loads
    no numba); a clear error when numba is missing."""
    try:
        import numba  # noqa: F401
    except ImportError:
        raise ImportError(
            'backend="compiled" needs numba: install the fast extra (pip install "mtrain_env[fast]")'
        ) from None
    from mtrain_env.mexican_train.compiled.backend import CompiledBackend

    return CompiledBackend(config)
