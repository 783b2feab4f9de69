"""``oracle_champion``: the ``champion``'s search on the TRUE hands (CHEATS; a bound, never a baseline).

Everything is :class:`~agents.mexican_train.champion.ChampionAgent` (the network's move as
the default, successive halving, the ``z`` gate, the network playing the seat's later
choices and the chain policy the others') except its worlds: instead of re-dealing the
hidden tiles from the seat's view, every world is the true state with only the boneyard
shuffled (from its tiles sorted, so the true draw order cannot leak in; world ``i`` of a
decision is a function of the decision's stream and ``i``). It is the champion with
*perfect inference* of the hands and none of the draws, so what it scores bounds what any
weighting of the champion's worlds can win; ``oracle[boneyard=hidden]`` is the same bound
for the one-ply search with chain rollouts.

``reveal=f`` < 1 measures how much inference the champion needs: in each world every
hidden tile is kept where it truly is with probability ``f`` (independently, world by
world), and the others are re-dealt as a fair world would deal them (the hand counts and
the shown voids kept, :func:`~mtrain_env.tilegame.deal.hall_deal`). ``reveal=0`` is a fair
world; ``reveal=1`` (default) the true hands.

It reads hidden state the one sanctioned way (:class:`~agents.mexican_train.oracle.CheatDecision`,
``cheats``); its name says ``oracle`` wherever it is printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from agents.mexican_train.base import Decision
from agents.mexican_train.champion import ChampionAgent
from agents.mexican_train.mc import VALUE_CHUNK, Runner
from agents.mexican_train.oracle import CheatDecision
from agents.mexican_train.particles import shuffled_boneyards
from mtrain_env.mexican_train.core.public import PublicView, banned_tiles
from mtrain_env.mexican_train.core.state import GameState
from mtrain_env.tilegame.deal import hall_deal
from mtrain_env.tilegame.tiles import bits_list

__all__ = ["OracleChampionAgent", "partly_revealed"]


def partly_revealed(truth: GameState, view: PublicView, reveal: float, rng: np.random.Generator) -> GameState:
    """A world of ``view``'s seat in which each hidden tile stays where ``truth`` has it with
    probability ``reveal`` and the rest are re-dealt: the opponents' hand counts filled from the
    tiles their shown voids allow (R15, R16), the boneyard the rest, every boneyard in random order."""
    seat = view.seat
    opponents = [q for q in range(len(truth.hands)) if q != seat]
    unseen = bits_list(view.unseen)
    kept = 0
    for t, keep in zip(unseen, rng.random(len(unseen)) < reveal, strict=True):
        if keep:
            kept |= 1 << t
    free = view.unseen & ~kept
    needs = [view.hand_counts[q] - (truth.hands[q] & kept).bit_count() for q in opponents]
    allowed = [free & ~banned_tiles(view, q) for q in opponents]
    dealt, rest = hall_deal(free, needs, allowed, rng)
    world = truth.copy()
    for q, hand in zip(opponents, dealt, strict=True):
        world.hands[q] = (truth.hands[q] & kept) | hand
    boneyard = rest + [t for t in truth.boneyard if kept >> t & 1]
    world.boneyard = [boneyard[i] for i in rng.permutation(len(boneyard))]
    return world


class OracleChampionAgent(ChampionAgent):
    """``champion`` whose worlds are the true hands, boneyard shuffled (CHEATS: sees all hands).

    Args:
        seed: seeds the boneyard shuffles.
        sims: rollouts a decision, as :class:`~agents.mexican_train.champion.ChampionAgent`'s.
        ms: a time budget instead, as ``ChampionAgent``'s.
        z: the gate's margin in standard errors, as ``ChampionAgent``'s.
        path: the self-play policy file, as ``ChampionAgent``'s.
        reveal: the probability that a world keeps a hidden tile where it truly is (module
            docstring); 1 (default): every hand true, only the boneyard's order re-dealt.
    """

    name = "oracle_champion"
    #: this agent reads hidden state: the play loop hands it a :class:`CheatDecision`
    cheats: ClassVar[bool] = True
    decision_class = CheatDecision

    def __init__(
        self,
        seed: int | None = None,
        sims: int | None = None,
        ms: float | None = None,
        z: float = 1.0,
        path: str | Path | None = None,
        reveal: float = 1.0,
    ) -> None:
        super().__init__(seed, sims=sims, ms=ms, z=z, path=path)
        if isinstance(reveal, bool) or not 0.0 <= reveal <= 1.0:
            raise ValueError(f"reveal must be a probability in [0, 1], got {reveal!r}")
        self.reveal = float(reveal)

    def params(self) -> dict[str, Any]:
        params = super().params()
        return params if self.reveal == 1.0 else {**params, "reveal": self.reveal}

    def _compiled_runner(self, decision: Decision, moves: list[int]) -> Runner:
        if not isinstance(decision, CheatDecision):
            raise TypeError(
                "oracle_champion needs a CheatDecision (its decision_class): it plays the true hands"
            )
        config = decision.game.config
        cgame, sc, _ = self._compiled_game(config)
        leaves = self._network_leaves(config)
        seat = decision.seat
        state = decision.true_state()
        truth = cgame.to_compiled(state)
        view = decision.view

        def worlds(base: int, first: int, count: int) -> np.ndarray:
            if self.reveal == 1.0:
                return shuffled_boneyards(truth, base, first, count)
            return np.stack(
                [
                    cgame.to_compiled(
                        partly_revealed(state, view, self.reveal, np.random.default_rng([base, d, 5]))
                    )
                    for d in range(first, first + count)
                ]
            )

        def rows(det: Any, base: int, first: int, count: int, candidates: list[int]) -> np.ndarray:
            return leaves.results_on(worlds(base, first, count), cgame.tables, seat, candidates, sc)

        return self._staged_runner(decision, moves, rows, VALUE_CHUNK)
