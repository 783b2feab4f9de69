"""Reward modes, given to EVERY seat at each hand's end; zero-sum between the pairs.

Both members of a pair always get the same reward. With ``d_p`` = points the OTHER pair
scored this hand minus the points pair ``p`` scored (points are penalties, B10-B12):

* ``"points"`` (default): ``d_p / config.max_hand_points`` (168 pips, or 17 under
  ``scoring="ten"``), at the end of every hand (so a match gives one reward per hand).
* ``"raw"``: ``d_p`` unscaled, at the end of every hand (OpenSpiel's returns are on this
  scale, see ``tests/openspiel/block_crosscheck.py`` for where the rules differ).
* ``"match"``: +1 to the winners and -1 to the losers, once, when the episode ends: the
  match (B13) with ``match=True``, else the hand (its winning pair, B10/B11).
"""

from __future__ import annotations

from mtrain_env.block.core.config import GameConfig
from mtrain_env.block.core.state import GameState, Phase

REWARD_MODES: tuple[str, ...] = ("points", "raw", "match")

__all__ = ["REWARD_MODES", "hand_rewards"]


def hand_rewards(mode: str, config: GameConfig, s: GameState) -> list[float]:
    """Rewards of every seat for the hand that just ended (``s.results[-1]``)."""
    n = config.num_players
    result = s.results[-1]
    if mode in ("points", "raw"):
        scale = 1.0 / config.max_hand_points if mode == "points" else 1.0
        pts = result.points
        per_pair = [(pts[1] - pts[0]) * scale, (pts[0] - pts[1]) * scale]
    elif mode == "match":
        if s.phase != Phase.GAME_OVER:
            return [0.0] * n
        loser = s.match_loser if config.match else 1 - result.winner
        per_pair = [-1.0, 1.0] if loser == 0 else [1.0, -1.0]
    else:
        raise ValueError(f"reward must be one of {REWARD_MODES}, got {mode!r}")
    return [per_pair[p % 2] for p in range(n)]
