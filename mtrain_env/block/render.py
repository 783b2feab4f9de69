"""Text rendering of the table (``ansi``/``human``): public information plus ONE hand.

The hand shown is the hand of the seat on turn (or of ``seat`` when given), never any
other: the render of a seat's view reveals nothing hidden from it. Once a hand is over,
every hand is shown (001: the pairs count their tiles face up).
"""

from __future__ import annotations

from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.block.core.state import DOMINO, GameState, Phase
from mtrain_env.tilegame.tiles import bits_list

__all__ = ["render_text"]


def _tile(a: int, b: int) -> str:
    return f"[{a}|{b}]"


def _hand(game: BlockDominoes, mask: int) -> str:
    return " ".join(_tile(*game.tiles.tiles[i]) for i in bits_list(mask)) or "-"


def render_text(game: BlockDominoes, s: GameState, seat: int | None = None) -> str:
    """The table as text, with the hand of ``seat`` (default: the seat on turn)."""
    c = game.config
    n = c.num_players
    pairs = ("players 0&2", "players 1&3") if n == 4 else ("player_0", "player_1")
    lines = [
        f"Hand {s.hand_index + 1}  ({'counter-' if c.counter_clockwise else ''}clockwise)  "
        f"score {pairs[0]} {s.scores[0]} - {pairs[1]} {s.scores[1]}  (target {c.target}, reaching it loses)"
    ]
    if s.redeals:
        lines.append(f"  redealt {s.redeals} time(s): a hand held {c.redeal_doubles}+ doubles (B4)")
    if s.line:
        lines.append(
            "  line: " + "".join(_tile(a, b) for a, b in s.line) + f"   ends {s.ends[0]} | {s.ends[1]}"
        )
    else:
        lines.append("  line: (empty)")
    over = s.phase != Phase.PLAYING
    for p in range(n):
        count = s.hands[p].bit_count()
        tags = [f"{count} tile{'' if count == 1 else 's'}"]
        if p == s.opener:
            tags.append("opened" if s.line or over else "opens")
        if s.voids[p]:
            tags.append("passed on " + ",".join(str(v) for v in bits_list(s.voids[p])))
        mark = ">" if not over and p == s.current else " "
        row = f" {mark}player_{p}: {', '.join(tags)}"
        if over:
            row += "  " + _hand(game, s.hands[p])
        lines.append(row)
    if not over:
        who = s.current if seat is None else seat
        lines.append(f"  player_{who}'s hand: {_hand(game, s.hands[who])}")
    elif s.results:
        r = s.results[-1]
        how = (
            f"player_{r.seat} went out (domino)"
            if r.kind == DOMINO
            else f"closed by player_{r.seat} (cierre)"
        )
        tie = " on a tie" if r.tie else ""
        lines.append(
            f"  hand over: {how}; {pairs[r.winner]} won it{tie}; points {pairs[0]} +{r.points[0]}, "
            f"{pairs[1]} +{r.points[1]}"
        )
        if s.match_loser >= 0:
            lines.append(f"  match over: {pairs[s.match_loser]} lost it (B13)")
    return "\n".join(lines)
