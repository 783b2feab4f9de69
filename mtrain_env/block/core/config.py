"""The static configuration of partnership block dominoes: one frozen, validated object.

Every rule flag of ``RULES.md`` (last section) and ``reference/001`` lives here; what
changes during play lives in :class:`mtrain_env.block.core.state.GameState`. Derived sizes
(tiles, actions, pairs, the longest possible hand) are computed here, in one place.

Presets (``rules=``):

* ``"001"`` (default): the standard rules of ``reference/001`` (B1-B13).
* ``"openspiel"``: the mode that matches OpenSpiel's ``python_team_dominoes``: seat 0 opens
  with any tile (``first_opener="seat0"``) and there is no redeal (``redeal_doubles=None``).

Any keyword passed explicitly overrides the preset.

No two keywords contradict each other, but some have no effect under others
(:data:`KEYWORD_PRECEDENCE`, also on the guide's rules and variants page). Those
combinations are accepted, not refused: one config serves single-hand play (training,
``mtrain bench --game block``) and whole matches alike, so its match keywords stay valid in
a single hand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from mtrain_env.tilegame.tiles import TileSet, tile_set
from mtrain_env.tilegame.validate import as_bool, as_choice, as_int, as_optional_int

#: B1: the double-six set.
MAX_PIPS = 6
#: B3: tiles per hand.
HAND_SIZE = 7
#: B2: the seat counts this game supports (two pairs, or two players alone).
PLAYER_COUNTS = (2, 4)

#: B5/B6: who opens a hand after the first one.
OPENERS = ("winner", "partner", "double_six")
#: B5: who opens the first hand.
FIRST_OPENERS = ("double_six", "seat0")
#: B11 (001 "Partida cerrada"): who scores in a closed hand.
CLOSED_SCORING = ("loser", "both")
#: B11 (001 "Partida cerrada"): who wins a closed hand whose pairs hold equal pips.
CLOSED_TIE = ("closer", "closer_loses", "opener")
#: B12: how a hand's pips become points.
SCORING = ("pips", "ten")
#: B4: the redeal thresholds ``001`` names (``None`` = no redeal).
REDEAL_THRESHOLDS = (4, 5, 6, 7)
#: B13: default targets by scoring system.
DEFAULT_TARGET = {"pips": 100, "ten": 40}

#: Keywords that have no effect under others, and why. ``(keywords, rule)``.
KEYWORD_PRECEDENCE: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("opener", "match"),
        "opener picks who opens the hands after the first (B6): a single hand (match=False) has none",
    ),
    (
        ("target", "match"),
        "target ends a match (B13): a single hand (match=False) ends on its own; target only "
        "scales the match scores in the last observation",
    ),
    (
        ("double_opening", "first_opener", "opener"),
        "double_opening binds an opener that chooses its tile: a hand opened with the double six "
        "(first_opener='double_six' for the first hand, opener='double_six' for the others) has no choice",
    ),
)

PRESETS: dict[str, dict[str, Any]] = {
    "001": {},
    "openspiel": {"first_opener": "seat0", "redeal_doubles": None},
}


@dataclass(frozen=True)
class GameConfig:
    """Frozen, validated configuration (build it with :meth:`make` to resolve presets).

    Args:
        num_players: 4 (two pairs, seats 0&2 vs 1&3, B2) or 2 (two players alone).
        rules: the preset the flags came from (``"001"`` or ``"openspiel"``).
        first_opener: B5, ``"double_six"`` (its holder lays it) or ``"seat0"`` (seat 0 with any tile).
        opener: B6, who opens later hands: ``"winner"`` (the player who won the last hand),
            ``"partner"`` (that player's partner) or ``"double_six"`` (001 variant: always the
            holder of the double six, laying it).
        double_opening: 001 variant: the opening tile must be a double when the opener holds one.
        redeal_doubles: B4 threshold (4, 5, 6, 7) or ``None`` (no redeal).
        closed_scoring: B11, ``"loser"`` (the losing pair scores its own pips) or ``"both"``
            (each pair scores its own pips, 001 variant).
        closed_tie: B11 tie, ``"closer"`` (the closer's pair wins), ``"closer_loses"`` or
            ``"opener"`` (the pair that opened the hand wins).
        scoring: B12, ``"pips"`` or ``"ten"`` (points = pips / 10 rounded up).
        target: B13 match target; the pair that reaches it loses (default 100, or 40 for ``"ten"``).
        counter_clockwise: B7, play goes from seat ``i`` to ``i - 1``.
        match: an episode is a whole match to ``target`` (B13) instead of one hand.
    """

    num_players: int = 4
    rules: str = "001"
    first_opener: str = "double_six"
    opener: str = "winner"
    double_opening: bool = False
    redeal_doubles: int | None = 5
    closed_scoring: str = "loser"
    closed_tie: str = "closer"
    scoring: str = "pips"
    target: int = 100
    counter_clockwise: bool = False
    match: bool = False

    @classmethod
    def make(cls, rules: str = "001", **kwargs: Any) -> GameConfig:
        """Resolve the preset, then explicit keywords (``None`` = keep the preset / default).

        ``target=None`` takes the scoring system's default (B13). Unknown keywords raise
        ``TypeError``; bad values raise before any play.
        """
        if not isinstance(rules, str) or rules not in PRESETS:
            raise ValueError(f"rules must be one of {sorted(PRESETS)}, got {rules!r}")
        names = {f.name for f in fields(cls)} - {"rules"}
        unknown = sorted(set(kwargs) - names)
        if unknown:
            raise TypeError(f"unknown config keyword(s) {unknown}; known: {sorted(names)}")
        resolved: dict[str, Any] = dict(PRESETS[rules])
        for key, value in kwargs.items():
            # None keeps the preset, except for redeal_doubles where it means "no redeal"
            if value is not None or key == "redeal_doubles":
                resolved[key] = value
        if resolved.get("target") is None:
            scoring = resolved.get("scoring", "pips")
            resolved["target"] = DEFAULT_TARGET.get(scoring, 100) if isinstance(scoring, str) else 100
        return cls(rules=rules, **resolved)

    def __post_init__(self) -> None:
        n = as_int("num_players", self.num_players)
        if n not in PLAYER_COUNTS:
            raise ValueError(f"B2: num_players must be 4 (two pairs) or 2 (no partners), got {n}")
        object.__setattr__(self, "num_players", n)
        as_choice("rules", self.rules, PRESETS)
        as_choice("first_opener", self.first_opener, FIRST_OPENERS)
        as_choice("opener", self.opener, OPENERS)
        if self.opener == "partner" and n == 2:
            raise ValueError("B6: opener='partner' needs partners (num_players=4)")
        object.__setattr__(self, "double_opening", as_bool("double_opening", self.double_opening))
        redeal = as_optional_int("redeal_doubles", self.redeal_doubles)
        if redeal is not None and redeal not in REDEAL_THRESHOLDS:
            raise ValueError(f"B4: redeal_doubles must be one of {REDEAL_THRESHOLDS} or None, got {redeal}")
        object.__setattr__(self, "redeal_doubles", redeal)
        as_choice("closed_scoring", self.closed_scoring, CLOSED_SCORING)
        as_choice("closed_tie", self.closed_tie, CLOSED_TIE)
        as_choice("scoring", self.scoring, SCORING)
        target = as_int("target", self.target)
        if target < 1:
            raise ValueError(f"B13: target must be >= 1 point, got {target}")
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "counter_clockwise", as_bool("counter_clockwise", self.counter_clockwise))
        object.__setattr__(self, "match", as_bool("match", self.match))

    # ---- derived, in one place ----
    @property
    def tiles(self) -> TileSet:
        """The double-six tile tables (B1)."""
        return tile_set(MAX_PIPS)

    @property
    def max_pips(self) -> int:
        return MAX_PIPS

    @property
    def hand_size(self) -> int:
        return HAND_SIZE

    @property
    def num_tiles(self) -> int:
        """28 tiles (B1)."""
        return (MAX_PIPS + 1) * (MAX_PIPS + 2) // 2

    @property
    def num_actions(self) -> int:
        """``2 T + 1``: (tile, end) plays, then PASS."""
        return 2 * self.num_tiles + 1

    @property
    def pass_action(self) -> int:
        return 2 * self.num_tiles

    @property
    def partners(self) -> bool:
        return self.num_players == 4

    @property
    def direction(self) -> int:
        """+1 clockwise (seat ``i`` -> ``i + 1``), -1 counter-clockwise (B7)."""
        return -1 if self.counter_clockwise else 1

    @property
    def max_hand_points(self) -> int:
        """Bound on one hand's points for a pair: every pip of the set (168; 17 under ``"ten"``)."""
        return points(self, sum(self.tiles.pips))

    @property
    def max_hand_moves(self) -> int:
        """Longest hand in actions: every tile laid, and at most ``n - 1`` passes after each."""
        return self.num_tiles * self.num_players

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the fully resolved keywords)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def points(config: GameConfig, pips: int) -> int:
    """B12: the points ``pips`` are worth: the pips, or ``ceil(pips / 10)`` under ``"ten"``."""
    return math.ceil(pips / 10) if config.scoring == "ten" else pips
