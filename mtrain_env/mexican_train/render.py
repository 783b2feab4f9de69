"""Rendering: the table as text (``ansi``/``human``) and as a picture (``rgb_array``).

Both show only public information plus ONE hand: the hand of the seat on turn, or of
``seat`` when given (a seat's own view, e.g. of a replay); never another seat's hand,
never the boneyard order.
"""

from __future__ import annotations

import numpy as np

from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.tiles import bits_list


def _tile_text(a: int, b: int) -> str:
    return f"[{a}|{b}]"


def render_text(game: MexicanTrain, s: GameState, seat: int | None = None) -> str:
    """The table as text: station, trains with markers and pending doubles, counts, and the
    hand of ``seat`` (default: the seat on turn)."""
    c = game.config
    n = c.num_players
    lines = []
    head = f"Round {s.round_index + 1}/{c.rounds}  engine [{s.engine}|{s.engine}]"
    if not s.engine_placed:
        head += " (not found yet: seats draw in turn, R5)"
    head += f"  phase {s.phase.name.lower()}  boneyard {len(s.boneyard)}"
    lines.append(head)
    unsatisfied = s.pending + s.turn_doubles
    next_double = game.double_to_satisfy(s)  # R20, R21
    for t in range(n + 1):
        name = "Mexican " if t == n else f"player_{t}"
        tiles = " ".join(_tile_text(a, b) for a, b in game.oriented_train(s, t)) or "(not started)"
        tags = []
        if t < n:
            if s.markers[t]:
                tags.append("MARKER")
            tags.append(f"{s.hands[t].bit_count()} in hand")
        if t in unsatisfied:
            tags.append("UNSATISFIED DOUBLE" + (" (next to satisfy)" if t == next_double else ""))
        tag = f"  <{', '.join(tags)}>" if tags else ""
        lines.append(f"  {name:9s}: {tiles}{tag}")
    if s.phase < Phase.ROUND_OVER:
        p = s.current
        who = p if seat is None else seat
        hand = " ".join(_tile_text(*game.tiles.tiles[i]) for i in bits_list(s.hands[who]))
        turn = []
        if s.owes:
            turn.append("owes a tile after a double")
        if s.has_drawn:
            turn.append("has drawn")
        extra = f" ({'; '.join(turn)})" if turn else ""
        whose = "hand" if who == p else f"player_{who}'s hand"
        lines.append(f"  to play: player_{p}{extra}  {whose}: {hand}")
    else:
        outcome = "blocked" if s.blocked else "went out"
        scores = ", ".join(f"player_{p}: {x:g}" for p, x in enumerate(s.round_scores[-1]))
        lines.append(f"  round over ({outcome}); round scores {scores}")
        if c.rounds > 1:
            lines.append(
                "  session totals " + ", ".join(f"player_{p}: {x:g}" for p, x in enumerate(s.scores))
            )
    return "\n".join(lines)


def render_rgb(game: MexicanTrain, s: GameState, seat: int | None = None) -> np.ndarray:
    """The table as an RGB ``uint8`` image (H, W, 3), with the hand of ``seat`` (default: on turn)."""
    from mtrain_env.mexican_train.render_image import draw_table

    return draw_table(game, s, seat)
