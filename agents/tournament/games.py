"""What the tournament harness needs to know of each game, and nothing more.

The harness is generic: it seats agents, rotates them over duplicate deals, plays
through :mod:`agents.play` and scores rounds from the env's public round results. A
:class:`TournamentGame` supplies the rest for one game: its env, a seeded random deal as
``reset`` options (replayed identically in every rotation), and the per-seat cost of a
round (lower is better), which every statistic, rating and plot is computed from.

* Mexican Train: the cost is the pips left in hand (R24); the score is the engine's
  round score (the pips, or the ``positive_scoring`` share), sessions of several rounds
  are played when the config has ``rounds > 1`` (R25).
* Partnership block dominoes: one hand per game (a match to 100 has a random number of
  hands, so it is not a duplicate unit); the cost of a seat is the points its pair
  scored that hand (B10-B12: points are penalties), the same for both partners.

:func:`game_of` picks the adapter from the type of a game config.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np

from mtrain_env import block, mexican_train
from mtrain_env.block.core import dealing as block_dealing
from mtrain_env.mexican_train.core import dealing as mt_dealing
from mtrain_env.tilegame.tiles import bits_list

__all__ = ["BlockGame", "MexicanTrainGame", "TournamentGame", "game_of", "make_game_config"]


class TournamentGame(abc.ABC):
    """One game as the harness sees it (stateless; one instance per game)."""

    #: the game's name (``--game`` on the command line, the ``game`` of ``run.json``)
    name: ClassVar[str]
    #: what a round is called in tables (``"round"``, ``"hand"``)
    round_word: ClassVar[str] = "round"
    #: what the per-seat cost is called in tables and plots
    cost_label: ClassVar[str] = "penalty"

    @abc.abstractmethod
    def check(self, config: Any) -> None:
        """Refuse, with a ``ValueError`` naming the keyword, a config the harness cannot play."""

    @abc.abstractmethod
    def make_env(self, config: Any) -> Any:
        """A raw env of ``config``."""

    @abc.abstractmethod
    def deal_options(self, config: Any, rng: np.random.Generator) -> dict[str, Any]:
        """The ``reset`` options of a random deal drawn from ``rng`` (round 0, hands by seat)."""

    @abc.abstractmethod
    def costs(self, config: Any, result: dict[str, Any]) -> list[int]:
        """Per seat, the cost of a round from its public result (lower is better)."""

    def rounds(self, config: Any) -> int:
        """Rounds in one game."""
        return 1

    def positive(self, config: Any) -> bool:
        """Whether a higher session score is better (ratings and R25 session winners)."""
        return False

    def partnerships(self, config: Any) -> bool:
        """Whether seats ``s`` and ``s + 2`` play as partners (default lineups keep partners alike)."""
        return False

    def describe(self, config: Any) -> str:
        """The game's part of a run's one-line description."""
        return self.name


class MexicanTrainGame(TournamentGame):
    """Mexican Train (:mod:`mtrain_env.mexican_train`)."""

    name = "mexican_train"

    def check(self, config: mexican_train.GameConfig) -> None:
        pass  # every config is playable, sessions included

    def make_env(self, config: mexican_train.GameConfig) -> Any:
        return mexican_train.raw_env(**config.to_dict(), reward="penalty")

    def deal_options(self, config: mexican_train.GameConfig, rng: np.random.Generator) -> dict[str, Any]:
        """R4/R5/R8 deal of round 0 and an R6 first player (unless R5's engine holder opens)."""
        deal = mt_dealing.random_deal(config, config.engine_value(0), rng)
        first = int(rng.integers(config.num_players))
        tiles = config.tiles.tiles
        options: dict[str, Any] = {
            "deal": {
                "hands": [[list(tiles[i]) for i in bits_list(h)] for h in deal.hands],
                "boneyard": [list(tiles[i]) for i in reversed(deal.boneyard)],  # top first
            }
        }
        if not config.engine_holder_opens:  # forcing the opener would override R5's engine holder
            options["first_player"] = first
        return options

    def costs(self, config: mexican_train.GameConfig, result: dict[str, Any]) -> list[int]:
        return [int(x) for x in result["pips"]]

    def rounds(self, config: mexican_train.GameConfig) -> int:
        return config.rounds

    def positive(self, config: mexican_train.GameConfig) -> bool:
        return config.positive_scoring

    def describe(self, config: mexican_train.GameConfig) -> str:
        flags = [k for k, v in config.flags().items() if v]
        return f"{config.num_players} players, double-{config.max_pips}, {config.rules}" + (
            f" +{','.join(flags)}" if flags else ""
        )


class BlockGame(TournamentGame):
    """Partnership block dominoes (:mod:`mtrain_env.block`), one hand per game."""

    name = "block"
    round_word = "hand"
    cost_label = "pair points"

    def check(self, config: block.GameConfig) -> None:
        if config.match:
            raise ValueError(
                "match=True: a tournament game is one hand (a match has a random number of hands, "
                "so it cannot be replayed as a duplicate unit); use match=False"
            )

    def make_env(self, config: block.GameConfig) -> Any:
        return block.raw_env(**config.to_dict(), reward="raw")

    def deal_options(self, config: block.GameConfig, rng: np.random.Generator) -> dict[str, Any]:
        """B3/B4 deal (redealt while a hand shows too many doubles); B5 picks the opener."""
        deal = block_dealing.random_deal(config, rng)
        tiles = config.tiles.tiles
        return {"deal": {"hands": [[list(tiles[i]) for i in bits_list(h)] for h in deal.hands]}}

    def costs(self, config: block.GameConfig, result: dict[str, Any]) -> list[int]:
        return [int(x) for x in result["scores"]]

    def partnerships(self, config: block.GameConfig) -> bool:
        return config.partners

    def describe(self, config: block.GameConfig) -> str:
        return f"block dominoes, {config.num_players} players, rules {config.rules}"


GAMES: dict[str, TournamentGame] = {g.name: g for g in (MexicanTrainGame(), BlockGame())}


def game_of(config: Any) -> TournamentGame:
    """The adapter of a game config (:class:`mtrain_env.mexican_train.GameConfig` or the block one)."""
    if isinstance(config, mexican_train.GameConfig):
        return GAMES["mexican_train"]
    if isinstance(config, block.GameConfig):
        return GAMES["block"]
    raise TypeError(
        "a tournament's game must be a mtrain_env.mexican_train.GameConfig or a "
        f"mtrain_env.block.GameConfig, got {type(config).__name__}"
    )


def make_game_config(game: str, **kwargs: Any) -> Any:
    """``GameConfig.make(**kwargs)`` of the game named ``game`` (``ValueError`` for an unknown one)."""
    if game == "mexican_train":
        return mexican_train.GameConfig.make(**kwargs)
    if game == "block":
        return block.GameConfig.make(**kwargs)
    raise ValueError(f"game must be one of {sorted(GAMES)}, got {game!r}")
