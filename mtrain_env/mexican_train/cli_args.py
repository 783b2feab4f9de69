"""Command-line checks of a Mexican Train game's size, shared by the commands of every layer.

The game's benchmark modules may not import the ``mtrain`` entry points
(:mod:`mtrain_env.cli` sits above the games: the ``env-layers`` import-linter contract), so
the check they share lives here, beside the game, and
:func:`mtrain_env.cli.players_or_exit` calls it too. Pure: it imports the rules core only.
"""

from __future__ import annotations

import argparse

from mtrain_env.mexican_train.core.config import MIN_PLAYERS, GameConfig

__all__ = ["config_or_exit"]


def config_or_exit(parser: argparse.ArgumentParser, players: int, pips: int = 12) -> GameConfig:
    """The default-rules ``GameConfig`` of ``players`` seats and a double-``pips`` set, or
    ``parser.error`` (exit 2) before any work, naming the option at fault: ``--pips`` when
    the set itself is out of range (R1), else ``--players`` (R3, R4: the set holds too few
    or too many seats)."""
    try:
        return GameConfig.make(num_players=players, max_pips=pips)
    except ValueError as err:
        parser.error(f"{_option_at_fault(pips)}: {err}")


def _option_at_fault(pips: int) -> str:
    """``--pips`` if no game of a double-``pips`` set exists (not even of the fewest seats),
    else ``--players``."""
    try:
        GameConfig.make(num_players=MIN_PLAYERS, max_pips=pips)
    except ValueError:
        return "--pips"
    return "--players"
