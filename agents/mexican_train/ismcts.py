"""``ismcts``: information-set Monte Carlo tree search on the compiled engine.

Single-observer ISMCTS (Cowling, Powley and Whitehouse 2012) over the seat's information
set (:mod:`mtrain_env.mexican_train.compiled.ismcts`): every iteration deals a fresh world
consistent with the seat's view (the hidden tiles re-dealt under the shown voids and hand
counts, as ``mc``'s worlds), walks one shared tree by UCB over the moves legal in that world
with the opponents playing ``mc``'s chain policy inside the tree too, so only the seat's
own decisions branch (several a turn after doubles, R18), expands one node and plays the
round out with the chain policy. The move played is the root child visited
most (ties: the better mean, then the lower action id).

Where ``mc`` scores each of our moves by a flat average over worlds, the tree also
searches the replies and our follow-ups, and spends its iterations on the promising moves
(UCB) instead of halving. It sees only its :class:`~agents.mexican_train.base.Decision`.

Budget: ``sims`` iterations per decision (default 200; deterministic given the seed) or
``ms`` milliseconds (iterations run in chunks until the clock passes; not reproducible).
With one legal action there is no search.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from agents.mexican_train.base import Agent, Decision
from mtrain_env.mexican_train.core.config import GameConfig

__all__ = ["DEFAULT_SIMS", "ISMCTSAgent"]

#: iterations per decision when neither ``sims`` nor ``ms`` is given
DEFAULT_SIMS = 200
#: iterations per compiled call under a time budget (the clock is read between calls)
CHUNK = 8
#: the UCB exploration constant by default, in pips a round (the results' scale)
DEFAULT_C = 30.0
#: tree nodes allotted under a time budget (the search stops early when they run out)
MS_CAPACITY = 50_000


def _compiled() -> tuple[Any, Any]:
    """The compiled ISMCTS and rollout modules; ``ValueError`` without numba."""
    try:
        from mtrain_env.mexican_train.compiled import ismcts, rollout
    except ImportError:
        raise ValueError("ismcts runs on the compiled engine: pip install 'mtrain_env[fast]'") from None
    return ismcts, rollout


class ISMCTSAgent(Agent):
    """Single-observer ISMCTS with chain-policy rollouts (see the module docstring).

    Args:
        seed: seeds the worlds.
        sims: iterations per decision (default :data:`DEFAULT_SIMS` when ``ms`` is not given).
        ms: wall-clock milliseconds per decision instead (not reproducible).
        c: UCB exploration constant, in pips a round (the results' scale; default
            :data:`DEFAULT_C`).
    """

    name = "ismcts"

    def __init__(
        self,
        seed: int | None = None,
        sims: int | None = None,
        ms: float | None = None,
        c: float = DEFAULT_C,
    ) -> None:
        super().__init__(seed)
        if sims is not None and ms is not None:
            raise ValueError("give sims or ms, not both")
        if sims is None and ms is None:
            sims = DEFAULT_SIMS
        if sims is not None and sims < 1:
            raise ValueError(f"sims must be >= 1, got {sims}")
        if ms is not None and ms <= 0:
            raise ValueError(f"ms must be > 0, got {ms}")
        if c < 0:
            raise ValueError(f"c must be >= 0, got {c}")
        self.sims = sims
        self.ms = ms
        self.c = float(c)
        self._modules: tuple[Any, Any] | None = None
        self._games: dict[GameConfig, tuple[Any, Any]] = {}
        self.last_iterations = 0  #: iterations run for the last decision
        self.last_visits: dict[int, tuple[float, float]] = {}  #: action -> (visits, mean result)

    def params(self) -> dict[str, Any]:
        return {"sims": self.sims, "ms": self.ms, "c": self.c}

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the compiled modules and per-config caches (rebuilt on use)."""
        state = self.__dict__.copy()
        state["_modules"] = None
        state["_games"] = {}
        return state

    def _game(self, config: GameConfig) -> tuple[Any, Any]:
        """The compiled game of ``config`` and its rollout scratch (one per config)."""
        if self._modules is None:
            self._modules = _compiled()
        pair = self._games.get(config)
        if pair is None:
            from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain

            pair = self._games[config] = (CompiledMexicanTrain(config), self._modules[1].scratch())
        return pair

    def search(self, decision: Decision) -> dict[int, tuple[float, float]]:
        """``{legal action: (visits, mean result)}`` of one search from ``decision``."""
        start = time.perf_counter()
        ismcts, rollout = self._modules or _compiled()
        cgame, sc = self._game(decision.game.config)
        legal = [int(a) for a in decision.legal_actions]
        moves = [decision.to_move(a) for a in legal]
        base = int(self.rng.integers(1 << 62))
        det = rollout.Determinizer(cgame, decision.view, np.random.default_rng([base, 0, 2]))
        order = np.argsort(moves, kind="stable")
        capacity = self.sims if self.sims is not None else MS_CAPACITY
        tree = ismcts.Tree(
            det,
            base,
            capacity,
            [moves[i] for i in order],
            c_uct=self.c,
            sc=sc,
        )
        if self.ms is None:
            tree.grow(capacity)
        else:
            deadline = start + self.ms / 1000.0
            while True:
                before = tree.iterations
                tree.grow(CHUNK)
                if time.perf_counter() >= deadline or tree.iterations == before:
                    break
        self.last_iterations = tree.iterations
        by_move = tree.root_stats()
        return {a: by_move.get(m, (0.0, 0.0)) for a, m in zip(legal, moves, strict=True)}

    def act(self, decision: Decision) -> int:
        legal = decision.legal_actions
        self.last_iterations = 0
        self.last_visits = {}
        if len(legal) == 1:
            return int(legal[0])
        stats = self.search(decision)
        self.last_visits = stats
        return max(stats, key=lambda a: (stats[a][0], stats[a][1], -a))

    def last_annotations(self) -> dict[str, Any] | None:
        """Visits and mean result of each legal action at the last decision (the seat's own
        estimate, for replays); None when the move was forced."""
        if not self.last_visits:
            return None
        return {
            "visits": {str(a): int(v) for a, (v, _q) in self.last_visits.items()},
            "values": {str(a): round(q, 4) for a, (_v, q) in self.last_visits.items()},
        }
