"""Reward modes, given to EVERY seat at each round's end (R24, R25).

* ``"zero_sum"`` (default): each seat's result relative to the table mean, scaled —
  ``(mean(penalty) - penalty_i) / scale``; the rewards of a round sum to 0.
* ``"penalty"``: ``-penalty_i / scale`` (the raw objective of R24).
* ``"win"``: given once, when the episode ends: the winners (the round's winners for
  ``rounds=1``; the R25 session winners otherwise, tie-breaks included) share +1, the
  others share -1, so the rewards sum to 0 (all tied: 0 each).

``scale = hand_size * max_pips``, the expected pips of a dealt hand. Under
``positive_scoring`` the result of a seat is its (positive) round score instead of minus
its penalty, so higher is better in every mode.
"""

from __future__ import annotations

from collections.abc import Sequence

from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.scoring import session_winners

REWARD_MODES: tuple[str, ...] = ("zero_sum", "penalty", "win")


def round_rewards(
    mode: str,
    config: GameConfig,
    round_scores: Sequence[Sequence[float]],
    episode_over: bool,
) -> list[float]:
    """Rewards of every seat for the round that just ended (the last row of ``round_scores``)."""
    n = config.num_players
    last = round_scores[-1]
    sign = 1.0 if config.positive_scoring else -1.0
    scale = float(config.hand_size * config.max_pips)
    if mode == "zero_sum":
        mean = sum(last) / n
        return [sign * (x - mean) / scale for x in last]
    if mode == "penalty":
        return [sign * x / scale for x in last]
    if mode == "win":
        if not episode_over:
            return [0.0] * n
        winners = session_winners(round_scores, n, config.positive_scoring)
        if len(winners) == n:
            return [0.0] * n
        win, lose = 1.0 / len(winners), -1.0 / (n - len(winners))
        return [win if p in winners else lose for p in range(n)]
    raise ValueError(f"reward must be one of {REWARD_MODES}, got {mode!r}")
