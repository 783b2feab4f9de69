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
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from agents.tournament.results import Row
from mtrain_env import block, mexican_train
from mtrain_env.block.core import dealing as block_dealing
from mtrain_env.mexican_train.core import dealing as mt_dealing
from mtrain_env.mexican_train.core.scoring import positive_scores
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

    @abc.abstractmethod
    def round_problem(self, config: Any, rows: Sequence[Row]) -> tuple[int, str] | None:
        """What one round's rows (one per seat, in seat order) contradict of the game's rules,
        as ``(index of the row, the fact and its rule)``; ``None`` if nothing.

        The facts a round implies beyond those every game shares (checked by
        :func:`agents.tournament.results.check_round`): each seat's score from the costs,
        the bounds on costs and on the actions of one round.
        """

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

    def round_problem(self, config: mexican_train.GameConfig, rows: Sequence[Row]) -> tuple[int, str] | None:
        """R24: the pips of every hand add up to at most the set's; the score is the penalty,
        or under ``positive_scoring`` the winners' share of the others' pips; at most
        ``max_round_actions`` actions (R15, R16, R23)."""
        penalties = [r.penalty for r in rows]
        most = config.tiles.hand_value(config.tiles.full, config.blank_penalty)
        if sum(penalties) > most:
            fact = f"the round's penalties {penalties} add up to more than the set's {most} pips (R24)"
            return _largest(penalties), fact
        if config.positive_scoring:
            rule = "R24, positive_scoring: the winners share the others' pips"
            scores = positive_scores(penalties, [bool(r.went_out) for r in rows])
        else:
            rule = "R24: the score is the penalty"
            scores = [float(p) for p in penalties]
        for i, (r, score) in enumerate(zip(rows, scores, strict=True)):
            if r.score != score:
                return i, f"seat {r.seat}'s score {r.score!r} is not {score!r} ({rule})"
        return _actions_problem(rows, config.max_round_actions, "R15, R16, R23")

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

    def round_problem(self, config: block.GameConfig, rows: Sequence[Row]) -> tuple[int, str] | None:
        """B10-B12: a seat's cost and score are its pair's points (partners alike), at most
        every pip of the set; after a dominó, or a cierre scored by the loser only, the
        winning pair scores nothing; at most ``max_hand_moves`` actions (B8, B9, B11)."""
        costs = [r.penalty for r in rows]
        most = config.max_hand_points
        for i, r in enumerate(rows):
            if r.score != r.penalty:
                return i, f"seat {r.seat}'s score {r.score!r} is not its cost {r.penalty} (B10-B12)"
            if r.penalty > most:
                return i, f"seat {r.seat}'s {r.penalty} points are more than a hand holds ({most}, B12)"
            partner = r.seat - 2
            if config.partners and partner >= 0 and r.penalty != costs[partner]:
                return i, f"partners {partner} and {r.seat} score {costs[partner]} and {r.penalty} (B2, B12)"
        if (any(r.went_out for r in rows) or config.closed_scoring == "loser") and min(costs) != 0:
            return _largest(costs), f"the points {costs}: the pair that won the hand scores none (B10, B11)"
        return _actions_problem(rows, config.max_hand_moves, "B8, B9, B11")

    def partnerships(self, config: block.GameConfig) -> bool:
        return config.partners

    def describe(self, config: block.GameConfig) -> str:
        return f"block dominoes, {config.num_players} players, rules {config.rules}"


def _largest(values: Sequence[int]) -> int:
    """The index of the largest value (the row a bound is broken at)."""
    return max(range(len(values)), key=values.__getitem__)


def _actions_problem(rows: Sequence[Row], bound: int, rule: str) -> tuple[int, str] | None:
    """The seats of one round took at most ``bound`` actions together (the longest round)."""
    actions = [r.actions for r in rows]
    if sum(actions) > bound:
        return _largest(actions), (
            f"the round's seats took {sum(actions)} actions {actions}, more than the longest "
            f"possible round ({bound} actions: {rule})"
        )
    return None


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
