"""``oracle``: a CHEATING perfect-information agent, the headroom bound (never a fair baseline).

It sees every hand and the boneyard in its order, which no seat may know, and searches on
that true state: every legal move is played out to the end of the round with the
chain-keeping rollout policy of ``mc`` (the planner's rule,
:func:`mtrain_env.mexican_train.compiled.rollout.chain_rollout`, or the pure
:class:`agents.mexican_train.rollout_policies.ChainPolicy` without numba), and the move with the best
result is chosen (ties: the planner's move, then the lowest action id). The rollouts are
deterministic on a known state, so one per move is the whole search. What it scores against
fair agents bounds what search over hidden hands can hope to gain from knowing them.

``oracle[boneyard=hidden]`` splits that bound in two: it sees every hand but NOT the
boneyard's order, which no inference from play can reveal (the draws are pure luck). Each
move is played out on ``worlds`` copies of the true state whose boneyards are shuffled
(from the tiles sorted, so the true order cannot leak in; deterministic given the seed),
and the best mean wins. What it scores is what perfect inference of the hidden hands
would give this search; the rest of the full oracle's margin is knowing the draws.

How it gets the hidden state without breaking the house rule (nothing above the env reads
hidden state for a fair agent): the play loop builds each agent's decision as
``agent.decision_class(env, agent_id)``. Fair agents get
:class:`~agents.mexican_train.base.Decision` (the leak-free view); this agent declares
:attr:`OracleAgent.cheats` and :class:`CheatDecision`, the one decision type with a
:meth:`~CheatDecision.true_state`. ``tests/agents/test_oracle.py`` checks that no registered agent
other than those declaring ``cheats`` gets it, and tournament labels of this agent say
``oracle`` (read: cheat) wherever they are printed.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from agents.mexican_train.base import Agent, Decision
from agents.mexican_train.planner import PlannerAgent
from agents.mexican_train.rollout_policies import ChainPolicy, compiled_rollouts, round_result
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.state import GameState
from mtrain_env.tilegame.validate import as_int

__all__ = ["BONEYARD", "WORLDS", "CheatDecision", "OracleAgent"]

#: what the oracle sees of the boneyard: its order too, or only its tiles
BONEYARD = ("seen", "hidden")
#: boneyard shuffles a move is played out on, by default, when the order is hidden
WORLDS = 32


class CheatDecision(Decision):
    """A seat's decision PLUS the true hidden state: for agents declaring ``cheats`` only."""

    __slots__ = ()

    def true_state(self) -> GameState:
        """A copy of the whole game state: every hand and the boneyard in draw order."""
        return self._env.state_obj.copy()


class OracleAgent(Agent):
    """Perfect-information one-ply search with chain-policy rollouts (CHEATS: sees all hands).

    Args:
        seed: seeds the boneyard shuffles of ``boneyard="hidden"`` (unused otherwise: the
            search on the true state is deterministic).
        engine: ``"auto"`` (compiled when numba is installed), ``"compiled"`` or ``"python"``.
        boneyard: ``"seen"`` (default): the boneyard in its true order too; ``"hidden"``:
            every hand, the boneyard's tiles but not their order (module docstring).
        worlds: boneyard shuffles a move is played out on with ``boneyard="hidden"``
            (default :data:`WORLDS`); refused with the seen boneyard, which needs none.
    """

    name = "oracle"
    #: this agent reads hidden state: the play loop hands it a :class:`CheatDecision`
    cheats: ClassVar[bool] = True
    decision_class = CheatDecision

    def __init__(
        self,
        seed: int | None = None,
        engine: str = "auto",
        boneyard: str = "seen",
        worlds: int | None = None,
    ) -> None:
        super().__init__(seed)
        if engine not in ("auto", "compiled", "python"):
            raise ValueError(f"engine must be one of ('auto', 'compiled', 'python'), got {engine!r}")
        if boneyard not in BONEYARD:
            raise ValueError(f"boneyard must be one of {BONEYARD}, got {boneyard!r}")
        if boneyard == "seen" and worlds is not None:
            raise ValueError("worlds= counts boneyard shuffles: it needs boneyard=hidden")
        worlds = WORLDS if worlds is None else worlds
        as_int("worlds", worlds, low=1, numpy=False, error=ValueError)
        self.boneyard = boneyard
        self.worlds = worlds
        module = compiled_rollouts() if engine != "python" else None
        if engine == "compiled" and module is None:
            raise ValueError("engine='compiled' needs numba: pip install 'mtrain_env[fast]'")
        self.engine = "compiled" if module is not None else "python"
        self._rollout = module
        self._prior = PlannerAgent()
        self._games: dict[GameConfig, Any] = {}
        self.last_values: dict[int, float] = {}  #: result of each legal action (last decision)

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"engine": self.engine}
        if self.boneyard != "seen":
            out |= {"boneyard": self.boneyard, "worlds": self.worlds}
        return out

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the compiled module and its per-config caches (rebuilt on use)."""
        state = self.__dict__.copy()
        state["_rollout"] = None
        state["_games"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._rollout = compiled_rollouts() if self.engine == "compiled" else None
        if self.engine == "compiled" and self._rollout is None:
            raise ValueError("this oracle was saved with engine='compiled', which needs numba")

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._games.clear()
        self._prior.reset()

    def act(self, decision: Decision) -> int:
        legal = decision.legal_actions
        self.last_values = {}
        if len(legal) == 1:
            return int(legal[0])
        if not isinstance(decision, CheatDecision):
            raise TypeError("oracle needs a CheatDecision (its decision_class): it plays on the true state")
        truth = decision.true_state()
        moves = [decision.to_move(a) for a in legal]
        if self.boneyard == "seen":
            values = self._values(decision, truth, moves)
        else:
            values = self._shuffled_values(decision, truth, moves)
        self.last_values = dict(zip(legal, values, strict=True))
        prior = legal.index(self._prior.act(decision))
        best = max(range(len(legal)), key=lambda i: (values[i], i == prior, -i))
        return int(legal[best])

    def _shuffled_values(self, decision: Decision, truth: GameState, moves: list[int]) -> list[float]:
        """Each move's mean result over :attr:`worlds` copies of ``truth`` with the boneyard
        shuffled (from its tiles sorted: the true order never matters)."""
        tiles = sorted(truth.boneyard)
        totals = np.zeros(len(moves))
        for _ in range(self.worlds):
            world = truth.copy()
            world.boneyard = [tiles[i] for i in self.rng.permutation(len(tiles))]
            totals += self._values(decision, world, moves)
        return [float(x) for x in totals / self.worlds]

    def _values(self, decision: Decision, truth: GameState, moves: list[int]) -> list[float]:
        game = decision.game
        seat = decision.seat
        if self._rollout is not None:
            pair = self._games.get(game.config)
            if pair is None:
                from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain

                pair = self._games[game.config] = (CompiledMexicanTrain(game.config), self._rollout.scratch())
            cgame, sc = pair
            root = cgame.to_compiled(truth)
            out = np.zeros(len(moves))
            self._rollout.rollout_root(root, cgame.tables, np.array(moves, np.int64), seat, 2, out, sc)
            return [float(x) for x in out]
        policy = self._games.get(game.config)
        if policy is None:
            policy = self._games[game.config] = ChainPolicy(game)
        values = []
        for m in moves:
            s = truth.copy()
            game.apply(s, m)
            policy.rollout(s)
            values.append(round_result(game.config, s, seat))
        return values
