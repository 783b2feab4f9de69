"""The compiled core behind the AEC env (``raw_env(backend="compiled")``).

The live state is the compiled ``int64`` array, wrapped in :class:`LiveState` (the env's
generic machinery reads ``s.current`` and ``s.phase``). The hot path — legal moves and
mask (``engine.mask_into``), apply, observation (``engine.encode_into``) — runs compiled;
everything rare (snapshots, render, public views, round results, error messages) goes
through ``to_pure``, so it is the pure core's code and gives the pure core's output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mtrain_env.mexican_train.compiled import engine
from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.dealing import Deal
from mtrain_env.mexican_train.core.state import GameState, Phase

__all__ = ["CompiledBackend", "CompiledEncoder", "LiveState"]

_PHASES = tuple(Phase(i) for i in range(len(Phase)))


class LiveState:
    """A compiled state array with the two fields the AEC machinery reads."""

    __slots__ = ("a",)

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    @property
    def current(self) -> int:
        """The seat on turn."""
        return int(self.a[engine.S_CURRENT])

    @property
    def phase(self) -> Phase:
        return _PHASES[int(self.a[engine.S_PHASE])]


class CompiledBackend:
    """The core interface ``TileGameEnv`` needs (``new_game``, ``legal_moves``, ``apply``,
    ``explain_illegal``, ``next_round``) on :class:`LiveState`, plus the fused mask call."""

    def __init__(self, config: GameConfig) -> None:
        self.core = CompiledMexicanTrain(config)
        self.reference = self.core.reference
        self.tables = self.core.tables
        self.num_actions = config.num_actions
        self._moves = np.empty(engine.MAX_MOVES, np.int64)
        self._tiles = config.tiles.tiles

    def new_game(
        self, rng: np.random.Generator, deal: Deal | None = None, first_player: int | None = None
    ) -> LiveState:
        return LiveState(self.core.new_game(rng, deal, first_player))

    def next_round(self, s: LiveState, rng: np.random.Generator) -> None:
        self.core.next_round(s.a, rng)

    def legal_moves(self, s: LiveState) -> list[int]:
        """The legal core moves of the seat on turn, increasing (as the pure core's)."""
        count = engine.legal_moves_into(s.a, self.tables, self._moves)
        return self._moves[:count].tolist()

    def legal_and_mask(self, s: LiveState) -> tuple[list[int], np.ndarray]:
        """Legal core moves and the seat's RELATIVE int8 mask (a new array) in one call."""
        mask = np.zeros(self.num_actions, np.int8)
        count = engine.mask_into(s.a, self.tables, self._moves, mask)
        return self._moves[:count].tolist(), mask

    def apply(self, s: LiveState, move: int) -> None:
        engine.apply(s.a, self.tables, move)

    def explain_illegal(self, s: LiveState, move: int, legal: list[int]) -> str:
        """The pure core's explanation, read on the pure twin of the state."""
        return self.reference.explain_illegal(self.to_pure(s), move, legal)

    def round_info(self, s: LiveState) -> dict[str, Any]:
        """The public result of the round just scored, as ``raw_env._round_info`` builds it
        from the pure state (R23, R24), read off the array without converting it."""
        a = s.a
        n = self.core.n
        tiles = self._tiles
        loc = a[engine.S_LOC : engine.S_LOC + len(tiles)].tolist()
        hands: list[list[list[int]]] = [[] for _ in range(n)]
        for tile, where in enumerate(loc):  # increasing ids, as bits_list gives them
            if 0 <= where < n:
                hands[where].append(list(tiles[tile]))
        return {
            "round": int(a[engine.S_ROUND]),
            "first_player": int(a[engine.S_FIRST_PLAYER]),
            "blocked": bool(a[engine.S_BLOCKED]),
            "went_out": [not h for h in hands],
            "hands": hands,
            "pips": self.core.penalties(a),
            "scores": self.core.round_scores(a)[-1],
        }

    def round_scores(self, s: LiveState) -> list[list[float]]:
        return self.core.round_scores(s.a)

    def to_pure(self, s: LiveState) -> GameState:
        return self.core.to_pure(s.a)

    def from_pure(self, ps: GameState) -> LiveState:
        return LiveState(self.core.to_compiled(ps))


class CompiledEncoder:
    """``encode(s, seat)``: the observation vector of the Python encoder, compiled."""

    def __init__(self, backend: CompiledBackend, size: int) -> None:
        self.tables = backend.tables
        self.size = size

    def encode(self, s: LiveState, seat: int) -> np.ndarray:
        out = np.zeros(self.size, np.float32)
        engine.encode_into(s.a, self.tables, seat, out)
        return out
