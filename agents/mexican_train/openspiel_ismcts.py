"""``openspiel_ismcts``: OpenSpiel's ISMCTS bot (``open_spiel.python.algorithms.ismcts``) as an agent.

Each decision with more than one legal action:

1. the seat's leak-free view (``decision.view``: the public table and its own hand) becomes
   an OpenSpiel state of ``mtrain_mexican_train``
   (:meth:`~mtrain_env.openspiel.mexican_train.MexicanTrainGame.state_from_view`): the
   seat's information state is that view, the hidden tiles a sample;
2. OpenSpiel's :class:`ISMCTSBot` searches it for ``iterations`` simulations, re-dealing
   the hidden tiles before each one from the seat's information state (the game's
   ``resample``, the project's determinizer) and keying its tree by information-state
   strings, so what it learns holds for every deal the seat cannot rule out;
3. the most visited action is played (ties: the lowest action id).

Leaf evaluation (the bot's ``evaluator``): ``rollout="greedy"`` (default) plays the round out
on the rules core with the ``mc`` agent's greedy policy
(:class:`~agents.mexican_train.rollout_policies.GreedyPolicy`); ``"random"`` with uniform random moves on
the core; ``"openspiel"`` is OpenSpiel's own ``RandomRolloutEvaluator`` through the
pyspiel state (the same as ``"random"``, ~10x slower). The value is the round's
``zero_sum`` reward (:mod:`mtrain_env.mexican_train.rewards`), plus earlier rounds' in a session.

Seeded and deterministic (the bot's random state, the resampler and the rollouts all
draw from the agent's generator). Needs the ``openspiel`` extra.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts
from open_spiel.python.algorithms.mcts import RandomRolloutEvaluator

from agents.mexican_train.base import Agent, Decision
from agents.mexican_train.rollout_policies import GreedyPolicy
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.state import Phase
from mtrain_env.mexican_train.rewards import round_rewards
from mtrain_env.openspiel.mexican_train import MexicanTrainGame, MexicanTrainState, params_for_config
from mtrain_env.tilegame.validate import as_int

#: leaf evaluators
ROLLOUTS = ("greedy", "random", "openspiel")
#: the reward the search maximizes (the env's default)
SEARCH_REWARD = "zero_sum"


class CoreRolloutEvaluator:
    """An ISMCTS evaluator that plays the round out on the rules core (no pyspiel per step).

    ``evaluate`` returns every seat's returns: those of finished rounds plus this round's
    rewards; ``prior`` is uniform over the legal actions.
    """

    def __init__(self, game: MexicanTrainGame, policy: str, rng: np.random.Generator) -> None:
        st = game.static
        self.engine = st.engine
        self.config = st.config
        self.greedy = GreedyPolicy(st.engine) if policy == "greedy" else None
        self.rng = rng

    def evaluate(self, state: MexicanTrainState) -> np.ndarray:
        s = state.game_state
        assert s is not None
        s = s.copy()
        engine = self.engine
        bone = s.boneyard
        if len(bone) > 1:  # the state keeps the boneyard unordered: draw in a random order
            s.boneyard = [bone[int(i)] for i in self.rng.permutation(len(bone))]
        if state.drawing:  # the seat on turn chose DRAW: its tile comes first
            engine.apply(s, engine.draw)
        if self.greedy is not None:
            self.greedy.rollout(s)
        else:
            rng = self.rng
            while s.phase < Phase.ROUND_OVER:
                moves = engine.legal_moves(s)
                engine.apply(s, moves[int(rng.integers(len(moves)))] if len(moves) > 1 else moves[0])
        rewards = round_rewards(SEARCH_REWARD, self.config, s.round_scores, s.phase == Phase.GAME_OVER)
        return np.add(state.accumulated_returns, rewards)

    def prior(self, state: MexicanTrainState) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


class OpenSpielISMCTSAgent(Agent):
    """OpenSpiel's ISMCTS from the seat's information state (see the module docstring).

    Args:
        seed: seeds the search (deals, tree ties, rollouts).
        iterations: ISMCTS simulations per decision (the budget).
        uct_c: UCT exploration constant (returns are ``zero_sum`` rewards, a few tenths).
        rollout: leaf evaluator, ``"greedy"``, ``"random"`` or ``"openspiel"``.
    """

    name = "openspiel_ismcts"

    def __init__(
        self, seed: int | None = None, iterations: int = 100, uct_c: float = 0.3, rollout: str = "greedy"
    ) -> None:
        super().__init__(seed)
        as_int("iterations", iterations, low=1, numpy=False, error=ValueError)
        if not uct_c > 0:
            raise ValueError(f"uct_c must be > 0, got {uct_c!r}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {ROLLOUTS}, got {rollout!r}")
        self.iterations = iterations
        self.uct_c = float(uct_c)
        self.rollout = rollout
        self._games: dict[GameConfig, MexicanTrainGame] = {}

    def params(self) -> dict[str, Any]:
        return {"iterations": self.iterations, "uct_c": self.uct_c, "rollout": self.rollout}

    def _game(self, config: GameConfig) -> MexicanTrainGame:
        game = self._games.get(config)
        if game is None:
            game = self._games[config] = pyspiel.load_game(
                "mtrain_mexican_train", params_for_config(config, SEARCH_REWARD)
            )
        return game

    def act(self, decision: Decision) -> int:
        legal = decision.legal_actions
        if len(legal) == 1:
            return int(legal[0])
        game = self._game(decision.game.config)
        seed = int(self.rng.integers(1 << 31))
        rng = np.random.default_rng(seed)
        state = game.state_from_view(decision.view, rng)
        if state.legal_actions() != legal:
            raise RuntimeError(f"the OpenSpiel state's legal actions {state.legal_actions()} are not {legal}")
        random_state = np.random.RandomState(seed)
        evaluator: Any
        if self.rollout == "openspiel":
            evaluator = RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
        else:
            evaluator = CoreRolloutEvaluator(game, self.rollout, rng)
        bot = ismcts.ISMCTSBot(
            game,
            evaluator,
            self.uct_c,
            self.iterations,
            random_state=random_state,
            final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
        )
        bot.set_resampler(lambda s, player: s.resample(player, rng))
        policy = bot.get_policy(state)
        best = max(p for _, p in policy)
        return int(min(a for a, p in policy if p == best))
