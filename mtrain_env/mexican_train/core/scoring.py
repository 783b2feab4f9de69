"""Scoring (R24) and session results (R25): round scores, ranking and tie-breaks.

Score types are fixed by the config: pip scores (R24) are ``int``; ``positive_scoring``
scores are ``float`` from the start of the episode, since tied winners split a pot that
need not divide evenly. A snapshot keeps them so (:func:`score_type`).
"""

from __future__ import annotations

from collections.abc import Sequence

from mtrain_env.mexican_train.core.config import GameConfig


def score_type(config: GameConfig) -> type:
    """``float`` under ``positive_scoring`` (shared pots), else ``int`` (pips, R24)."""
    return float if config.positive_scoring else int


def zero_scores(config: GameConfig) -> list[float]:
    """The session totals before any round is scored, typed as :func:`score_type`."""
    return [score_type(config)(0)] * config.num_players


def positive_scores(penalties: Sequence[int], went_out: Sequence[bool]) -> list[float]:
    """``positive_scoring`` (R24 variant): the winner takes the others' pips; ties share.

    The winners are the seats that went out or, in a blocked round, the lowest hands.
    """
    winners = [i for i, out in enumerate(went_out) if out]
    if not winners:
        low = min(penalties)
        winners = [i for i, x in enumerate(penalties) if x == low]
    pot = sum(x for i, x in enumerate(penalties) if i not in winners)
    share = pot / len(winners)
    return [share if i in winners else 0.0 for i in range(len(penalties))]


def session_sort_key(round_scores: Sequence[Sequence[float]], seat: int, positive: bool) -> tuple[float, ...]:
    """R25 ranking key of one seat (smaller is better).

    Penalty scoring: lowest total, then most rounds scored 0, then the lowest single
    round score other than zero. ``positive_scoring`` mirrors it: highest total, then
    most rounds won (scored above 0), then the highest single round score.
    """
    mine = [r[seat] for r in round_scores]
    total = sum(mine)
    if positive:
        wins = sum(1 for x in mine if x > 0)
        best = max(mine, default=0.0)
        return (-total, -wins, -best)
    zeros = sum(1 for x in mine if x == 0)
    nonzero = [x for x in mine if x != 0]
    lowest = min(nonzero) if nonzero else 0.0
    return (total, -zeros, lowest)


def session_winners(round_scores: Sequence[Sequence[float]], num_players: int, positive: bool) -> list[int]:
    """Seats that win the session by R25 (several only if tied after the tie-breaks)."""
    keys = [session_sort_key(round_scores, p, positive) for p in range(num_players)]
    best = min(keys)
    return [p for p in range(num_players) if keys[p] == best]
