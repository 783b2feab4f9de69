"""The batched API: ``B`` games of one config stepped at once, in one jitted call.

:class:`BatchedMexicanTrain` plays ``B`` independent games of Mexican Train on the compiled
core. Each call returns, for every game, the decision to take next: the observation of the
seat on turn (``(B, D)`` float32, the :class:`~mtrain_env.mexican_train.observation.ObservationLayout`
of the AEC env, relative to that seat), its action mask (``(B, A)`` int8, the env's RELATIVE
action encoding, never all zero) and the seat itself (``(B,)`` int64)::

    batch = BatchedMexicanTrain(1024, num_players=4, reward="zero_sum")
    obs, mask, seat, info = batch.reset(seed=7)
    obs, mask, seat, rewards, terminated, info = batch.step(actions)   # actions: (B,) ints

Rewards (``(B, n)`` float32) are given to EVERY seat of a game at each round's end, as the
AEC env gives them (``reward="zero_sum"``, ``"penalty"`` or ``"win"``, see
:mod:`mtrain_env.mexican_train.rewards`); 0 otherwise. A session (``rounds > 1``) deals its
next round inside the step that ended a round (``info["round_over"]``), as the env does.

Autoreset: Gymnasium 1.x's ``SAME_STEP`` mode. The step in which game ``i``'s episode ends
returns ``terminated[i] = True`` with that episode's last rewards, and ALREADY the first
decision of game ``i``'s next episode in ``obs[i]``, ``mask[i]`` and ``seat[i]``; the
terminal observation (of the seat that made the last move) is ``info["final_obs"][i]``
(rows of games that did not end are stale). There is no step to skip and no action is
ever ignored: every game always has a seat on turn. Episodes never truncate.

Seeds: ``reset(seed=s)`` plays in game ``i`` exactly the game that
``mtrain_env.raw_env(**config).reset(seed=derived_seed(s, i))`` plays, with
``derived_seed(s, i) = int(np.random.SeedSequence([s, i]).generate_state(1, np.uint64)[0])``;
each game owns the ``numpy`` Generator ``default_rng(derived_seed(s, i))``, and its later
rounds and episodes are dealt from it, as ``raw_env.reset()`` (no seed) continues from
its generator. Deals: the pure core's :func:`~mtrain_env.mexican_train.core.dealing.random_deal`
draws exactly one ``rng.permutation(len(pool))`` per deal; each game keeps its next
permutation drawn ahead (Python, only for games whose round ended), and the jitted step
turns it into the same deal (``engine.deal_from_permutation``).

Bad input changes nothing: the whole batch is validated before any game moves.
``TypeError`` for actions that are not an integer array (floats, bools, objects);
``ValueError`` for a wrong shape, an action outside ``Discrete(A)`` or an illegal action,
naming the game, the seat, the rule (RULES.md) and the legal actions.

The returned arrays are buffers of this object, overwritten by the next call, unless
``copy=True`` (then each call returns fresh arrays).

Save and restore: :meth:`BatchedMexicanTrain.state_dict` is a snapshot of every game
(plain numpy arrays, the generators' states and plain values: what a training checkpoint
stores); :meth:`BatchedMexicanTrain.load_state_dict` restores one into a batch of the same
size and config, which then continues exactly as the original would (same decisions,
rewards and episode ends at every later step).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mtrain_env.mexican_train.compiled import engine
from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.state import GameState
from mtrain_env.mexican_train.observation import ObservationLayout
from mtrain_env.mexican_train.rewards import REWARD_MODES
from mtrain_env.tilegame.actions import check_seed

__all__ = ["SNAPSHOT_ARRAYS", "BatchedMexicanTrain", "derived_seed"]

#: the buffers a snapshot holds: the compiled states, each game's next deal drawn ahead
#: (its permutation) and the pending decisions (observation, mask, seat, legal moves)
SNAPSHOT_ARRAYS = ("states", "perms", "obs", "masks", "seats", "legal", "legal_len")
SNAPSHOT_KEYS = ("config", "num_games", "reward", "seed", "arrays", "rngs")

_MODE_CODES = {
    "zero_sum": engine.REWARD_ZERO_SUM,
    "penalty": engine.REWARD_PENALTY,
    "win": engine.REWARD_WIN,
}


def derived_seed(seed: int, index: int) -> int:
    """The ``raw_env.reset`` seed of game ``index`` in a batch reset with ``seed``."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, np.uint64)[0])


class BatchedMexicanTrain:
    """``num_games`` games of one config, stepped together (see the module docstring).

    Args:
        num_games: ``B``, at least 1.
        reward: ``"zero_sum"`` (default), ``"penalty"`` or ``"win"``, as ``raw_env``.
        copy: return fresh arrays from every call instead of this object's buffers.
        **config: the ``raw_env`` game keywords (``num_players``, ``max_pips``,
            ``hand_size``, ``rules``, ``rounds`` and variant flags).
    """

    def __init__(
        self, num_games: int, *, reward: str = "zero_sum", copy: bool = False, **config: Any
    ) -> None:
        if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)):
            raise TypeError(f"num_games must be an int, got {type(num_games).__name__}")
        if num_games < 1:
            raise ValueError(f"num_games must be at least 1, got {num_games}")
        if reward not in _MODE_CODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.config = GameConfig.make(**config)
        self.env_kwargs = dict(config, reward=reward)  #: the matching ``raw_env`` keywords
        self.game = CompiledMexicanTrain(self.config)
        self.layout = ObservationLayout(self.config)
        self.num_games = B = int(num_games)
        self.num_players = n = self.config.num_players
        self.num_actions = A = self.config.num_actions
        self.obs_size = D = self.layout.size
        self.reward_mode = reward
        self.copy = copy
        self._mode = _MODE_CODES[reward]
        tables = self.game.tables
        self._tables = tables
        # the pool of random_deal: the set minus the engine (R5) unless the holder opens
        self._pool = self.config.num_tiles - (0 if self.config.engine_holder_opens else 1)
        self._states = np.empty((B, engine.STATE_SIZE), np.int64)
        self._perms = np.empty((B, self._pool), np.int64)
        self._obs = np.zeros((B, D), np.float32)
        self._final_obs = np.zeros((B, D), np.float32)
        self._masks = np.zeros((B, A), np.int8)
        self._seats = np.zeros(B, np.int64)
        self._legal = np.zeros((B, engine.MAX_MOVES), np.int64)
        self._legal_len = np.zeros(B, np.int64)
        self._rewards = np.zeros((B, n), np.float32)
        self._terminated = np.zeros(B, np.bool_)
        self._round_over = np.zeros(B, np.bool_)
        self._hand_of = np.empty(engine.MAX_TILES, np.int64)
        self._boneyard = np.empty(engine.MAX_TILES, np.int64)
        self._rngs: list[np.random.Generator] = []
        self.seed: int | None = None

    # ----------------------------------------------------------------- the API
    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """New episodes in every game; ``(obs, mask, seat, info)`` of their first decisions.

        ``seed=None`` draws fresh entropy (``self.seed`` tells which); game ``i`` is seeded
        ``derived_seed(seed, i)``.
        """
        seed = int(np.random.SeedSequence().entropy) if seed is None else check_seed(seed)  # type: ignore[arg-type]
        self.seed = seed
        self._rngs = [np.random.default_rng(derived_seed(seed, i)) for i in range(self.num_games)]
        self._draw_permutations(range(self.num_games))
        engine.batch_reset(
            self._states,
            self._tables,
            self._perms,
            self._obs,
            self._masks,
            self._seats,
            self._legal,
            self._legal_len,
            self._hand_of,
            self._boneyard,
        )
        self._draw_permutations(range(self.num_games))
        info = {"seed": seed}
        return self._out(self._obs), self._out(self._masks), self._out(self._seats), info

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Every game's seat on turn plays its RELATIVE action ``actions[i]``.

        Returns ``(obs, mask, seat, rewards, terminated, info)``: the next decisions (of the
        next episode where one ended: SAME_STEP autoreset), rewards ``(B, n)`` for every
        seat, ``terminated`` ``(B,)``; ``info["round_over"]`` ``(B,)`` marks the games whose
        round ended (rewards given) and ``info["final_obs"]`` holds the terminal
        observations of the terminated games. Nothing changes if any action is bad.
        """
        if not self._rngs:
            raise RuntimeError("call reset() before step()")
        acts = self._check_actions(actions)
        bad, reason = engine.batch_step(
            self._states,
            self._tables,
            acts,
            self._mode,
            self._perms,
            self._obs,
            self._masks,
            self._seats,
            self._legal,
            self._legal_len,
            self._rewards,
            self._terminated,
            self._round_over,
            self._final_obs,
            self._hand_of,
            self._boneyard,
        )
        if bad >= 0:
            raise self._bad_action(int(bad), int(reason), actions)
        used = np.flatnonzero(self._round_over)
        if used.size:
            self._draw_permutations(used.tolist())
        info = {"round_over": self._out(self._round_over), "final_obs": self._out(self._final_obs)}
        return (
            self._out(self._obs),
            self._out(self._masks),
            self._out(self._seats),
            self._out(self._rewards),
            self._out(self._terminated),
            info,
        )

    # ----------------------------------------------------------- save/restore
    def state_dict(self) -> dict[str, Any]:
        """A snapshot of every game: copies of the buffers ``SNAPSHOT_ARRAYS``, every game's
        generator state (``bit_generator.state``), the batch seed, size, reward mode and
        game config (``GameConfig.to_dict()``). Plain numpy arrays and Python values only,
        so ``torch.load(weights_only=True)``-style readers and ``pickle`` both hold it."""
        if not self._rngs:
            raise RuntimeError("call reset() before state_dict()")
        return {
            "config": self.config.to_dict(),
            "num_games": self.num_games,
            "reward": self.reward_mode,
            "seed": self.seed,
            "arrays": {name: getattr(self, f"_{name}").copy() for name in SNAPSHOT_ARRAYS},
            "rngs": [rng.bit_generator.state for rng in self._rngs],
        }

    def load_state_dict(self, state: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Restore a :meth:`state_dict` snapshot; returns the pending decisions ``(obs,
        mask, seat)`` as :meth:`reset` does (the batch's buffers, written in place).

        The batch then continues exactly as the one that was saved. Everything is checked
        first (keys, size, reward mode, config, each array's dtype and shape, each
        generator's state): a bad snapshot is a one-line ``ValueError`` and changes nothing.
        """
        arrays, rngs, seed = self._check_snapshot(state)
        for name, arr in arrays.items():
            getattr(self, f"_{name}")[...] = arr
        self._rngs = rngs
        self.seed = seed
        return self._out(self._obs), self._out(self._masks), self._out(self._seats)

    def _check_snapshot(
        self, state: Any
    ) -> tuple[dict[str, np.ndarray], list[np.random.Generator], int | None]:
        """The arrays, generators and seed of a valid snapshot; ``ValueError`` otherwise."""
        if not isinstance(state, dict) or set(state) != set(SNAPSHOT_KEYS):
            got = sorted(state) if isinstance(state, dict) else type(state).__name__
            raise ValueError(f"a batch snapshot is a dict with keys {sorted(SNAPSHOT_KEYS)}, got {got}")
        if state["num_games"] != self.num_games:
            raise ValueError(f"the snapshot holds {state['num_games']} games, this batch {self.num_games}")
        if state["reward"] != self.reward_mode:
            raise ValueError(
                f"the snapshot's reward mode is {state['reward']!r}, this batch's {self.reward_mode!r}"
            )
        if state["config"] != self.config.to_dict():
            mine = self.config.to_dict()
            theirs = state["config"] if isinstance(state["config"], dict) else {}
            diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
            raise ValueError(f"the snapshot was taken with another game config (differs in {diff})")
        seed = state["seed"]
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError(f"the snapshot's seed must be an int or None, got {seed!r}")
        given = state["arrays"]
        if not isinstance(given, dict) or set(given) != set(SNAPSHOT_ARRAYS):
            raise ValueError(f"the snapshot's arrays must be {sorted(SNAPSHOT_ARRAYS)}")
        arrays = {}
        for name in SNAPSHOT_ARRAYS:
            mine, arr = getattr(self, f"_{name}"), given[name]
            if not isinstance(arr, np.ndarray) or arr.dtype != mine.dtype or arr.shape != mine.shape:
                got = f"{arr.dtype} {arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
                raise ValueError(
                    f"the snapshot's {name} must be a {mine.dtype} array of shape {mine.shape}, got {got}"
                )
            arrays[name] = arr
        n = self.num_players
        if not ((arrays["seats"] >= 0) & (arrays["seats"] < n)).all():
            raise ValueError(f"the snapshot's seats must be in 0..{n - 1}")
        if not ((arrays["legal_len"] >= 1) & (arrays["legal_len"] <= engine.MAX_MOVES)).all():
            raise ValueError(f"the snapshot's legal_len must be in 1..{engine.MAX_MOVES}")
        if not (arrays["masks"] != 0).any(axis=1).all():
            raise ValueError("every game of the snapshot must have a legal action in its mask")
        states = state["rngs"]
        if not isinstance(states, list) or len(states) != self.num_games:
            raise ValueError(f"the snapshot must hold {self.num_games} generator states")
        rngs = []
        for i, bit_state in enumerate(states):
            rng = np.random.default_rng(0)
            kind = bit_state.get("bit_generator") if isinstance(bit_state, dict) else None
            if kind != type(rng.bit_generator).__name__:
                raise ValueError(
                    f"the snapshot's generator {i} is not a {type(rng.bit_generator).__name__} state"
                )
            try:
                rng.bit_generator.state = bit_state
            except (TypeError, ValueError, KeyError) as err:
                raise ValueError(f"the snapshot's generator {i} has a bad state ({err})") from None
            rngs.append(rng)
        return arrays, rngs, None if seed is None else int(seed)

    # ------------------------------------------------------------- inspection
    @property
    def states(self) -> np.ndarray:
        """A read-only view of the compiled states ``(B, engine.STATE_SIZE)`` (hidden
        information included: for tooling and tests, never for agents)."""
        view = self._states.view()
        view.flags.writeable = False
        return view

    def game_state(self, index: int) -> GameState:
        """The pure :class:`GameState` of game ``index`` (hidden information included)."""
        if not self._rngs:
            raise RuntimeError("call reset() before game_state()")
        if not 0 <= index < self.num_games:
            raise IndexError(f"game index {index} is outside 0..{self.num_games - 1}")
        return self.game.to_pure(self._states[index])

    def legal_actions(self, index: int) -> list[int]:
        """Legal RELATIVE actions of game ``index``'s seat on turn, increasing."""
        if not self._rngs:
            raise RuntimeError("call reset() before legal_actions()")
        return np.flatnonzero(self._masks[index]).tolist()

    # ---------------------------------------------------------------- helpers
    def _out(self, a: np.ndarray) -> np.ndarray:
        return a.copy() if self.copy else a

    def _draw_permutations(self, games: Any) -> None:
        """The next deal's ``rng.permutation`` of each game (what ``random_deal`` draws)."""
        perms, rngs, pool = self._perms, self._rngs, self._pool
        for i in games:
            perms[i] = rngs[i].permutation(pool)

    def _check_actions(self, actions: Any) -> np.ndarray:
        """``actions`` as a C-contiguous int64 ``(B,)`` array, or ``TypeError``/``ValueError``."""
        a = np.asarray(actions)
        if a.dtype == np.bool_ or a.dtype.kind not in "iu":
            raise TypeError(
                f"actions must be an integer array of shape ({self.num_games},), got dtype {a.dtype} "
                "(one relative action per game: a tile on a train, DRAW or PASS)"
            )
        if a.shape != (self.num_games,):
            raise ValueError(f"actions must have shape ({self.num_games},), one per game, got {a.shape}")
        if a.dtype.kind == "u" and a.size and int(a.max()) >= self.num_actions:
            i = int(np.argmax(a >= self.num_actions))
            raise self._bad_action(i, 0, a)  # before a cast could wrap it into range
        return np.ascontiguousarray(a, dtype=np.int64)

    def _bad_action(self, i: int, reason: int, actions: Any) -> ValueError:
        action = int(np.asarray(actions)[i])
        seat = int(self._seats[i])
        legal = self.legal_actions(i)
        where = f"game {i} (seat {seat} on turn)"
        if reason == 0:
            return ValueError(
                f"{where}: action {action} is outside Discrete({self.num_actions}) "
                f"(a seat lays a tile, draws or passes) -> legal actions (relative encoding): {legal}; "
                "no game of the batch changed"
            )
        move = int(engine.to_absolute(self._tables, seat, action))
        ps = self.game.to_pure(self._states[i])
        moves = self._legal[i, : self._legal_len[i]].tolist()
        why = self.game.reference.explain_illegal(ps, move, moves)
        return ValueError(
            f"{where}: action {action} is illegal: {why} -> legal actions (relative encoding): {legal}; "
            "no game of the batch changed"
        )
