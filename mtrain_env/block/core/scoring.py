"""Hand and match scoring (B10-B13): pure functions of the hand's end, no state.

Points are penalties, as ``001`` writes them on the score sheet: a hand's losing pair
"se anota" its points, and the pair that reaches the target loses the match. 001's note
that some players credit the winners instead (and the winners reaching the target win) is
the same game under another bookkeeping; it is not a flag.
"""

from __future__ import annotations

from collections.abc import Sequence

from mtrain_env.block.core.config import GameConfig, points
from mtrain_env.block.core.state import DOMINO, HandResult

__all__ = ["score_hand", "settle_match"]


def score_hand(
    config: GameConfig, kind: str, seat: int, opener: int, pips: Sequence[int], order: Sequence[int]
) -> HandResult:
    """The :class:`HandResult` of a hand that ended.

    Args:
        config: the rules.
        kind: ``"domino"`` (``seat`` laid its last tile, B10) or ``"cierre"`` (``seat`` laid
            the tile after which nobody could play, B11).
        seat: the player who went out / closed.
        opener: the player who opened the hand (for ``closed_tie="opener"``).
        pips: pips left in each seat's hand.
        order: the seats in play order starting from ``seat`` (B7).
    """
    n = config.num_players
    pair_pips = (sum(pips[q] for q in range(0, n, 2)), sum(pips[q] for q in range(1, n, 2)))
    tie = False
    if kind == DOMINO:
        winner = seat % 2  # B10: the pair of the player who went out
    elif pair_pips[0] != pair_pips[1]:
        winner = 0 if pair_pips[0] < pair_pips[1] else 1  # B11: fewer pips wins
    else:
        tie = True
        if config.closed_tie == "closer":
            winner = seat % 2
        elif config.closed_tie == "closer_loses":
            winner = 1 - seat % 2
        else:  # "opener": the pair that "llevaba la mano"
            winner = opener % 2
    loser = 1 - winner
    if kind != DOMINO and config.closed_scoring == "both":
        pts = (points(config, pair_pips[0]), points(config, pair_pips[1]))
    else:
        lost = points(config, pair_pips[loser])
        pts = (lost, 0) if loser == 0 else (0, lost)
    if kind == DOMINO:
        lead = seat
    else:
        members = [q for q in order if q % 2 == winner]
        lead = min(members, key=lambda q: pips[q])  # min keeps the first in play order on ties
    return HandResult(
        kind=kind,
        seat=seat,
        opener=opener,
        winner=winner,
        lead=lead,
        pips=tuple(pips),
        pair_pips=pair_pips,
        points=pts,
        tie=tie,
    )


def settle_match(
    config: GameConfig, scores: Sequence[int], result: HandResult, tiebreak: bool
) -> tuple[int, bool]:
    """B13 after a hand (``scores`` already include it): ``(match loser or -1, tie-break next)``.

    The pair that reaches or passes the target loses. Both at once (only possible with
    ``closed_scoring="both"``) is the tie 001 describes: a tie-break hand follows, and the
    pair that loses that hand loses the match.
    """
    if tiebreak:
        return 1 - result.winner, False
    over = [p for p in (0, 1) if scores[p] >= config.target]
    if len(over) == 1:
        return over[0], False
    if len(over) == 2:
        return -1, True
    return -1, False
