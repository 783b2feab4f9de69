"""The static game configuration: one frozen, validated object (R1, R3, R4, variants).

Everything a game needs to know before play lives here; everything that changes during
play lives in :class:`mtrain_env.mexican_train.core.state.GameState`. Derived sizes (tile count, action
count, hand size) are computed here, in one place.

Presets (``rules=``) fix the hand-size table and the variant flags of one rule source;
any flag passed explicitly overrides its preset value:

* ``pagat`` (default, ``reference/000``): R1-R25 as written in RULES.md.
* ``wikipedia`` (``reference/002`` basic rules): ``one_tile_opening``; the 2x12 table
  16/15/14/12/11/10/9 for 2..8 players.
* ``cardinal`` (``reference/003``, ``004``): 12 tiles up to 6 players, 10 for 7-8, 8 for
  9-10; ``one_tile_opening``, ``engine_holder_opens``, ``draw_until_engine_match``.

Flags that contradict each other (:data:`CONTRADICTORY_FLAGS`) are refused together, the
preset's included; the other combinations compose, by the precedence rules of
:data:`FLAG_PRECEDENCE` (both tables are on the guide's rules and variants page).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from mtrain_env.tilegame.tiles import TileSet, tile_set
from mtrain_env.tilegame.validate import as_bool, as_int

#: Names of the rule variants (RULES.md), all ``False`` in the default rule set.
VARIANT_FLAGS: tuple[str, ...] = (
    "one_tile_opening",
    "opening_draw",
    "draw_until_engine_match",
    "engine_holder_opens",
    "marker_off_by_any_play_on_it",
    "marker_off_by_owner_play_anywhere",
    "no_marker_when_forced_to_satisfy",
    "no_double_satisfaction",
    "satisfy_in_reverse_order",
    "one_double_per_turn",
    "cover_own_double_on_it",
    "blank_penalty",
    "positive_scoring",
)

#: Pairs refused together (``ValueError`` naming both): the first flag would be overruled by
#: the second or modify a rule the second switches off, so asking for both is a mistake to
#: report, not a choice to guess. ``(flag, other, why)``.
CONTRADICTORY_FLAGS: tuple[tuple[str, str, str], ...] = (
    (
        "opening_draw",
        "draw_until_engine_match",
        "a seat that cannot start its train draws once (opening_draw) or keeps drawing "
        "until it can (draw_until_engine_match), not both",
    ),
    (
        "satisfy_in_reverse_order",
        "no_double_satisfaction",
        "satisfy_in_reverse_order orders the satisfaction of doubles (R21), which "
        "no_double_satisfaction switches off (R20)",
    ),
    (
        "no_marker_when_forced_to_satisfy",
        "no_double_satisfaction",
        "no_marker_when_forced_to_satisfy spares the marker of a seat bound to satisfy a double "
        "(R20), and under no_double_satisfaction no seat ever is",
    ),
)

#: Combinations that are accepted, and the rule that decides them. ``(flags, rule)``.
FLAG_PRECEDENCE: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("one_tile_opening", "opening_draw"),
        "opening_draw adds nothing: the one-tile first turn already draws once (R16)",
    ),
    (
        ("one_tile_opening", "draw_until_engine_match"),
        "both apply (the cardinal preset): a one-tile first turn, and a seat without its own "
        "train draws until a drawn tile can be played",
    ),
    (
        ("marker_off_by_any_play_on_it", "marker_off_by_owner_play_anywhere"),
        "both apply: a marker comes off when anyone plays on its train or its owner plays anywhere",
    ),
    (
        ("cover_own_double_on_it", "no_double_satisfaction"),
        "both apply: R18's extra tile is still owed and goes on the double just played; "
        "a double left open binds nobody",
    ),
    (
        ("one_double_per_turn", "cover_own_double_on_it"),
        "both apply, but after a double the tile laid on it can never be a double, so "
        "one_double_per_turn only limits a first-turn chain (R9)",
    ),
)

#: how snapshots and error messages name the Mexican train (a personal train is its seat index)
MEXICAN = "mexican"

MIN_PIPS = 6
MAX_PIPS = 18
MIN_PLAYERS = 2


@dataclass(frozen=True)
class Preset:
    """A rule source: its hand-size table for double-12 (R4) and its variant flags."""

    source: str
    hand_table_12: dict[int, int]
    flags: dict[str, bool] = field(default_factory=dict)


PRESETS: dict[str, Preset] = {
    "pagat": Preset(
        source="reference/000 (complete rules)",
        hand_table_12={2: 15, 3: 15, 4: 15, 5: 12, 6: 12, 7: 11, 8: 11},
    ),
    "wikipedia": Preset(
        source="reference/002 (basic rules, University Games 2x12 table)",
        hand_table_12={2: 16, 3: 15, 4: 14, 5: 12, 6: 11, 7: 10, 8: 9},
        flags={"one_tile_opening": True},
    ),
    "cardinal": Preset(
        source="reference/003 and 004 (12/10/8 deal)",
        hand_table_12={2: 12, 3: 12, 4: 12, 5: 12, 6: 12, 7: 10, 8: 10, 9: 8, 10: 8},
        flags={
            "one_tile_opening": True,
            "engine_holder_opens": True,
            "draw_until_engine_match": True,
        },
    ),
}

#: Names that are known but not implemented yet.
PLANNED_PRESETS = ("chicken_foot",)


def max_players(max_pips: int) -> int:
    """Most seats a set supports (R3): 8 up to double-12, ``N - 1`` for bigger sets."""
    return 8 if max_pips <= 12 else max_pips - 1


def default_hand_size(rules: str, num_players: int, max_pips: int) -> int:
    """The preset's hand size (R4) for this set and player count.

    Double-12 uses the preset's table. Other sets (and player counts past the table, which
    only bigger sets allow) scale the double-12 figure by the tiles available::

        h = floor(h12(n) * (tiles - 1) / 90),  h12(n) = 80 // n past the table

    Every table has ``n * h12(n) < 90``, so the deal always leaves a boneyard.
    """
    table = PRESETS[rules].hand_table_12
    h12 = table.get(num_players, 80 // num_players)
    if max_pips == 12 and num_players in table:
        return h12
    available = (max_pips + 1) * (max_pips + 2) // 2 - 1
    return max(1, h12 * available // 90)


@dataclass(frozen=True)
class GameConfig:
    """Frozen, validated configuration of a Mexican Train game.

    Build it with :meth:`GameConfig.make`, which resolves the preset and the hand-size
    table; the constructor validates a fully resolved config.

    Args:
        num_players: seats, 2..8 with double-12 (R3).
        max_pips: N of the double-N set (R1), 6..18.
        hand_size: tiles per hand (R4), already resolved.
        rules: preset name.
        rounds: rounds per episode, 1 (default) up to a full session of N + 1 (R25).

    The boolean fields after ``rounds`` (``one_tile_opening`` ... ``positive_scoring``,
    :data:`VARIANT_FLAGS`) are the RULES.md variants.
    """

    num_players: int = 4
    max_pips: int = 12
    hand_size: int = 15
    rules: str = "pagat"
    rounds: int = 1
    one_tile_opening: bool = False
    opening_draw: bool = False
    draw_until_engine_match: bool = False
    engine_holder_opens: bool = False
    marker_off_by_any_play_on_it: bool = False
    marker_off_by_owner_play_anywhere: bool = False
    no_marker_when_forced_to_satisfy: bool = False
    no_double_satisfaction: bool = False
    satisfy_in_reverse_order: bool = False
    one_double_per_turn: bool = False
    cover_own_double_on_it: bool = False
    blank_penalty: bool = False
    positive_scoring: bool = False

    @classmethod
    def make(
        cls,
        num_players: int = 4,
        max_pips: int = 12,
        hand_size: int | None = None,
        rules: str = "pagat",
        rounds: int = 1,
        **flags: bool | None,
    ) -> GameConfig:
        """Resolve a preset, explicit flags and the hand-size table into a config.

        A flag left out (or ``None``) takes the preset's value; an explicit flag wins.
        Raises ``ValueError`` for out-of-range values and unknown names, ``TypeError``
        for wrongly typed ones, before any play.
        """
        if not isinstance(rules, str):
            raise TypeError(f"rules must be a preset name (str), got {rules!r}")
        if rules in PLANNED_PRESETS:
            raise ValueError(f"rules={rules!r} is a variant this version does not implement yet")
        if rules not in PRESETS:
            raise ValueError(f"unknown rules preset {rules!r}; choose one of {sorted(PRESETS)}")
        unknown = sorted(set(flags) - set(VARIANT_FLAGS))
        if unknown:
            raise TypeError(f"unknown config keyword(s) {unknown}; variant flags are {VARIANT_FLAGS}")
        resolved = dict(PRESETS[rules].flags)
        resolved.update({k: v for k, v in flags.items() if v is not None})
        num_players = as_int("num_players", num_players)
        max_pips = as_int("max_pips", max_pips)
        _check_set_and_players(num_players, max_pips)
        if hand_size is None:
            hand_size = default_hand_size(rules, num_players, max_pips)
        return cls(
            num_players=num_players,
            max_pips=max_pips,
            hand_size=hand_size,
            rules=rules,
            rounds=rounds,
            **{k: resolved.get(k, False) for k in VARIANT_FLAGS},
        )

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in VARIANT_FLAGS:
                object.__setattr__(self, f.name, as_bool(f.name, value))
            elif f.name != "rules":
                object.__setattr__(self, f.name, as_int(f.name, value))
        if self.rules not in PRESETS:
            raise ValueError(f"unknown rules preset {self.rules!r}; choose one of {sorted(PRESETS)}")
        _check_set_and_players(self.num_players, self.max_pips)
        tiles = self.num_tiles
        dealable = tiles if self.engine_holder_opens else tiles - 1
        if self.hand_size < 1:
            raise ValueError(f"R4: hand_size must be >= 1, got {self.hand_size}")
        if self.num_players * self.hand_size > dealable:
            raise ValueError(
                f"R4: {self.num_players} hands of {self.hand_size} tiles need "
                f"{self.num_players * self.hand_size} tiles, but the double-{self.max_pips} set "
                f"has only {dealable} to deal"
            )
        if not 1 <= self.rounds <= self.max_pips + 1:
            raise ValueError(
                f"R25: rounds must be in 1..{self.max_pips + 1} for a double-{self.max_pips} "
                f"set, got {self.rounds}"
            )
        preset = PRESETS[self.rules].flags
        for flag, other, why in CONTRADICTORY_FLAGS:
            if getattr(self, flag) and getattr(self, other):
                if preset.get(other) and not preset.get(flag):
                    fix = f"{other} comes from the {self.rules!r} preset: pass {other}=False to use {flag}"
                else:
                    fix = "set only one of them"
                raise ValueError(f"{flag}=True contradicts {other}=True: {why}; {fix}")

    # ---- derived sizes, computed in one place ----
    @property
    def tiles(self) -> TileSet:
        """The shared tile tables of this set."""
        return tile_set(self.max_pips)

    @property
    def num_tiles(self) -> int:
        """Tiles in the set (R1)."""
        return (self.max_pips + 1) * (self.max_pips + 2) // 2

    @property
    def num_trains(self) -> int:
        """One personal train per seat plus the Mexican train (R7)."""
        return self.num_players + 1

    @property
    def mexican(self) -> int:
        """Absolute index of the Mexican train (after the personal trains)."""
        return self.num_players

    def train_ref(self, t: int) -> int | str:
        """Train ``t`` as snapshots and messages name it: its seat, or ``"mexican"``."""
        return MEXICAN if t == self.mexican else t

    @property
    def num_actions(self) -> int:
        """``T * (n + 1) + 2``: (tile, train) plays, then DRAW and PASS."""
        return self.num_tiles * self.num_trains + 2

    @property
    def draw_action(self) -> int:
        """The draw's action id: right after the ``tile * num_trains + train`` plays."""
        return self.num_tiles * self.num_trains

    @property
    def pass_action(self) -> int:
        """The pass's action id, the last one (``num_actions - 1``)."""
        return self.num_tiles * self.num_trains + 1

    @property
    def multi_tile_opening(self) -> bool:
        """R9: the first turn lays a chain (unless ``one_tile_opening``)."""
        return not self.one_tile_opening

    @property
    def opening_may_draw(self) -> bool:
        """Whether a player who cannot start their train draws on the first turn (R10 vs variants)."""
        return self.one_tile_opening or self.opening_draw or self.draw_until_engine_match

    @property
    def max_round_actions(self) -> int:
        """A bound on the player actions of one round, all seats together: every tile is laid
        or drawn at most once, and between two tiles each seat passes at most once (R15,
        R16, R23)."""
        t, n = self.num_tiles, self.num_players
        return 2 * t + n * (t + 2)

    def engine_value(self, round_index: int) -> int:
        """R5: round k uses the double (N - k, N - k)."""
        return self.max_pips - round_index

    def flags(self) -> dict[str, bool]:
        """The resolved variant flags."""
        return {k: getattr(self, k) for k in VARIANT_FLAGS}

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable form (the keywords of :meth:`make`, fully resolved)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _check_set_and_players(num_players: int, max_pips: int) -> None:
    if not MIN_PIPS <= max_pips <= MAX_PIPS:
        raise ValueError(f"R1: max_pips must be in {MIN_PIPS}..{MAX_PIPS}, got {max_pips}")
    top = max_players(max_pips)
    if not MIN_PLAYERS <= num_players <= top:
        raise ValueError(
            f"R3: num_players must be in {MIN_PLAYERS}..{top} with a double-{max_pips} set, got {num_players}"
        )
