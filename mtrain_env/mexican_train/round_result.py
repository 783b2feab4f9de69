"""A snapshot's ``round_result`` taken between two rounds of a session, checked against its state.

The env shows a round's result (R23, R24) in every agent's info on the round's last step,
when the next round (R25) has already been dealt; a snapshot taken then carries it. The
state no longer holds the finished round's hands, so the result cannot be recomputed;
:func:`previous_round_problem` checks everything the state still determines: the round it
names, its scores (the state's last row), the pips and who went out (from the hands it
shows), how it opened (R6) and that no move of the new round was made yet.
"""

from __future__ import annotations

from typing import Any

from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.scoring import positive_scores
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.deal import shown_hands
from mtrain_env.tilegame.snapshot import json_equal

__all__ = ["previous_round_problem"]

_KEYS = ("round", "first_player", "blocked", "went_out", "hands", "pips", "scores")


def just_dealt(s: GameState) -> bool:
    """No move of ``s``'s round was made yet: no tile laid, no draw, no first turn taken."""
    return (
        not any(s.trains)
        and not any(s.first_turn_done)
        and not s.has_drawn
        and not any(s.voids)
        and s.phase in (Phase.OPENING, Phase.SEEK_ENGINE)
    )


def previous_round_problem(game: MexicanTrain, s: GameState, result: Any) -> str | None:
    """What is wrong with ``result`` as the result of the round before ``s``'s, or ``None``."""
    if s.round_index == 0:
        return "the session's first round is being played: no round has ended yet"
    if not just_dealt(s):
        return "a move of this round was made: a round's result is seen by its last step only"
    if not isinstance(result, dict) or sorted(result) != sorted(_KEYS):
        return f"must be a round result with the keys {', '.join(_KEYS)}"
    n = game.config.num_players
    hands = shown_hands(game.tiles, result["hands"], n)
    if hands is None:
        return f"hands: {n} lists of distinct tiles of the set, each as [a, b] in tile order"
    c = game.config
    pips = [game.tiles.hand_value(h, c.blank_penalty) for h in hands]
    went_out = [h == 0 for h in hands]
    scores = positive_scores(pips, went_out) if c.positive_scoring else list(pips)
    blocked = result["blocked"]
    if type(blocked) is not bool or blocked == any(went_out):
        return "blocked: a round ends blocked (R23) or with a seat out (R19), never both"
    opener = (s.seat_offset + s.round_index - 1) % n  # R6
    holder_opens = c.engine_holder_opens and not s.first_player_forced
    first = result["first_player"]
    if type(first) is not int or not 0 <= first < n or (not holder_opens and first != opener):
        return f"first_player: the seat that opened round {s.round_index - 1} (R5, R6)"
    expected = {
        "round": s.round_index - 1,
        "first_player": first,
        "blocked": blocked,
        "went_out": went_out,
        "hands": result["hands"],
        "pips": pips,
        "scores": list(s.round_scores[-1]),
    }
    wrong = [k for k in _KEYS if not json_equal(result[k], expected[k])]
    if wrong:
        return f"{wrong[0]}: not the last round's (expected {expected[wrong[0]]!r})"
    if scores != expected["scores"]:
        return f"hands: they score {scores}, the state's last round scored {expected['scores']} (R24)"
    return None
