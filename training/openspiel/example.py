"""OpenSpiel's MCTS on determinizations and NFSP on 2-player double-6 Mexican Train.

Run it (a couple of minutes on one core)::

    python -m training.openspiel.example [--games 100] [--nfsp-episodes 1500] [--seed 0]

1. **MCTS on determinizations** (:class:`DeterminizedMCTS`): for each decision the hidden
   tiles are dealt ``determinizations`` times from the seat's information state
   (``resample``, the project's determinizer), OpenSpiel's :class:`MCTSBot` searches each
   dealt world (perfect information, ``simulations`` simulations, OpenSpiel's random
   rollouts), and the action with the most root visits over all worlds is played
   (perfect-information Monte Carlo with MCTS).
2. **NFSP** (OpenSpiel's PyTorch :class:`~open_spiel.python.pytorch.nfsp.NFSP`): two agents
   trained in self-play through OpenSpiel's ``rl_environment`` on the game's
   information-state tensors (the env's observation), then the AVERAGE policy is played.

Each plays ``games`` games against OpenSpiel's uniform random bot, seats alternating, on
the same seeded deals; the result is the mean return (the env's ``zero_sum`` reward:
pips below the table mean / (hand size * 6)) with a 95 % normal CI.
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import mcts

import mtrain_env.openspiel
from mtrain_env.cli import int_at_least
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.interrupts import run_main

#: the small config of the examples
GAME_PARAMS: dict[str, Any] = {"players": 2, "max_pips": 6}


@dataclass(frozen=True)
class Result:
    """Mean return of a player against uniform random over ``games`` games, with a 95 % CI."""

    name: str
    games: int
    mean: float
    low: float
    high: float
    seconds: float

    def line(self) -> str:
        return (
            f"{self.name:<22} {self.mean:+.3f} [{self.low:+.3f}, {self.high:+.3f}] "
            f"over {self.games} games vs random ({self.seconds:.0f} s)"
        )


def load_game() -> pyspiel.Game:
    """The example's game: Mexican Train as registered with pyspiel, at :data:`GAME_PARAMS`."""
    return pyspiel.load_game(mtrain_env.openspiel.mexican_train.GAME_NAME, GAME_PARAMS)


class DeterminizedMCTS:
    """OpenSpiel's MCTSBot on ``determinizations`` dealt worlds; the most visited action overall."""

    def __init__(
        self,
        game: pyspiel.Game,
        determinizations: int = 3,
        simulations: int = 30,
        uct_c: float = 1.0,
        seed: int = 0,
    ) -> None:
        self.determinizations = determinizations
        self.rng = np.random.default_rng(seed)
        random_state = np.random.RandomState(seed)
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
        self.bot = mcts.MCTSBot(game, uct_c, simulations, evaluator, solve=False, random_state=random_state)

    def step(self, state: Any) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return int(legal[0])
        seat = state.current_player()
        visits: Counter[int] = Counter()
        for _ in range(self.determinizations):
            world = state.resample(seat, self.rng)  # the hidden tiles dealt again
            root = self.bot.mcts_search(world)
            for child in root.children:
                visits[child.action] += child.explore_count
        return int(max(legal, key=lambda a: (visits[a], -a)))


class NFSPPlayer:
    """The average policy of a trained NFSP agent, acting greedily on it (ties: lowest action)."""

    def __init__(self, agents: Sequence[Any]) -> None:
        from open_spiel.python.pytorch import nfsp

        self.agents = agents
        self.mode = nfsp.MODE.AVERAGE_POLICY

    def step(self, state: Any) -> int:
        seat = state.current_player()
        legal = state.legal_actions()
        obs = {
            "info_state": [state.information_state_tensor(p) for p in range(state.num_players())],
            "legal_actions": [legal if p == seat else [] for p in range(state.num_players())],
            "current_player": seat,
        }
        step = rl_environment.TimeStep(observations=obs, rewards=None, discounts=None, step_type=None)
        agent = self.agents[seat]
        with agent.temp_mode_as(self.mode):
            probs = agent.step(step, is_evaluation=True).probs
        return int(max(legal, key=lambda a: (probs[a], -a)))


def play_vs_random(
    game: pyspiel.Game, make_step: Callable[[int], Callable[[Any], int]], games: int, seed: int, name: str
) -> Result:
    """``games`` games of a player (``make_step(game_index)``) against uniform random, seats alternating."""
    start = time.perf_counter()
    returns = []
    for g in range(games):
        rng = np.random.default_rng([seed, g // 2])  # deal g//2 twice, once from each seat
        seat = g % 2
        step = make_step(g)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
            elif state.current_player() == seat:
                state.apply_action(step(state))
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.integers(len(legal)))])
        returns.append(state.returns()[seat])
    mean = float(np.mean(returns))
    half = 1.96 * float(np.std(returns, ddof=1)) / math.sqrt(len(returns)) if len(returns) > 1 else math.inf
    return Result(name, games, mean, mean - half, mean + half, time.perf_counter() - start)


def train_nfsp(game: pyspiel.Game, episodes: int, seed: int, learn_every: int = 64) -> list[Any]:
    """Two NFSP agents trained for ``episodes`` self-play episodes (OpenSpiel's rl_environment)."""
    import torch
    from open_spiel.python.pytorch import nfsp

    torch.manual_seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - OpenSpiel's reservoir buffer samples with numpy's global generator
    env = rl_environment.Environment(game, seed=seed)
    size = env.observation_spec()["info_state"][0]
    actions = env.action_spec()["num_actions"]
    agents = [
        nfsp.NFSP(
            p,
            size,
            actions,
            [128],
            reservoir_buffer_capacity=50_000,
            anticipatory_param=0.1,
            batch_size=128,
            rl_learning_rate=0.01,
            sl_learning_rate=0.01,
            min_buffer_size_to_learn=500,
            learn_every=learn_every,
            seed=seed + p,
            replay_buffer_capacity=50_000,
            epsilon_decay_duration=episodes * 15,
            epsilon_start=0.1,
            epsilon_end=0.01,
        )
        for p in range(2)
    ]
    for _ in range(episodes):
        step = env.reset()
        while not step.last():
            seat = step.observations["current_player"]
            step = env.step([agents[seat].step(step).action])
        for agent in agents:
            agent.step(step)
    return agents


def main(argv: Sequence[str] | None = None) -> list[Result]:
    parser = OneLineErrorParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="evaluation games per player")
    parser.add_argument("--determinizations", type=int, default=3)
    parser.add_argument("--simulations", type=int, default=30, help="MCTS simulations per determinization")
    parser.add_argument("--nfsp-episodes", type=int, default=1500)
    parser.add_argument("--seed", type=int_at_least(0), default=0)
    args = parser.parse_args(argv)
    for name in ("games", "determinizations", "simulations", "nfsp_episodes"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    game = load_game()
    print(f"game: {game}")
    results = [
        play_vs_random(
            game,
            lambda g: (
                DeterminizedMCTS(
                    game, args.determinizations, args.simulations, seed=args.seed * 1000 + g
                ).step
            ),
            args.games,
            args.seed,
            f"MCTS x{args.determinizations} worlds",
        )
    ]
    print(results[-1].line(), flush=True)
    start = time.perf_counter()
    agents = train_nfsp(game, args.nfsp_episodes, args.seed)
    trained = time.perf_counter() - start
    player = NFSPPlayer(agents)
    result = play_vs_random(
        game, lambda g: player.step, args.games, args.seed, f"NFSP {args.nfsp_episodes} ep"
    )
    results.append(
        Result(result.name, result.games, result.mean, result.low, result.high, result.seconds + trained)
    )
    print(results[-1].line(), flush=True)
    return results


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m training.openspiel.example"))
