"""``planner``: the strategy good players describe (reference/000 tips, 004 steps 4-6).

* Find the LONGEST chain the hand can lay on the seat's own train from its open end
  (:mod:`agents.mexican_train.chains`) and keep it for that train; every other tile is an "extra".
* Opening (R9): lay the chain, tile by tile, and stop (PASS) when it is laid;
  ``one_tile_opening``: lay its first tile.
* Normal turns: play extras on the Mexican and marked trains first (starting the Mexican
  train with one when it can), own-train chain tiles only when no extra fits; a double only
  when the hand holds a tile to follow it (R18), and that follower goes on the double; a
  double to satisfy (R20) takes the tile that costs the chain least (then the heaviest).
* A marked own train is unmarked (R17) by a play on it before other plans.
* When an opponent holds ``danger`` tiles or fewer, shed: the highest-value legal tile,
  doubles included even without a follower (the 000 tip: a double "to get rid of points
  when another player is about to win"), so shedding ranks above the double rule.

Every choice is a lexicographic key over the legal plays, :func:`play_key`: the tile the
double owed needs, the heaviest tile in danger, no unfollowable double, marker lifted,
least chain damage, not the own train, most pips; ties go to the lowest relative action
id. Deterministic (the seed is unused). The ``mc`` agent's rollout policy
(:class:`agents.mexican_train.rollout_policies.ChainPolicy`) ranks its plays with the same
:func:`play_key`, :func:`sheds` and :func:`lifts_marker`, on a cheaper chain-damage
estimate.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agents.mexican_train.base import Agent, Decision
from agents.mexican_train.chains import ChainSolver
from agents.mexican_train.greedy import value_table
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.state import Phase

_NORMAL = Phase.NORMAL


def play_key(
    covers: int, shed: int, double_ok: int, lifts: int, damage: int, off_own: int, value: int
) -> int:
    """The planner's preference for one legal play (higher is better), as one int.

    Lexicographic over, in this order:

    * ``covers``: the tile goes on the double this turn owes a tile to (R18, R20);
    * ``shed``: the tile's value when shedding (:func:`sheds`), else 0;
    * ``double_ok``: not a double, or a double the hand can follow (R18);
    * ``lifts``: the play lifts the seat's own marker (R17, :func:`lifts_marker`);
    * ``damage``: tiles the own-train chain loses, fewer first;
    * ``off_own``: not on the seat's own train;
    * ``value``: the tile's value (R2), more first.

    Packed into one int, fields from high bits to low: covers (1 bit), shed (8),
    double_ok (1), lifts (1), ``255 - damage`` (8), off_own (1), value (8) (tile values are
    at most 50 with ``blank_penalty``, a chain has fewer than 190 tiles). So comparing two
    plays is one int comparison, and the key is a sum of one term per criterion, which
    ``mc``'s rollouts add up from tables instead of calling this for every play.
    """
    return (
        covers << 27 | shed << 19 | double_ok << 18 | lifts << 17 | (255 - damage) << 9 | off_own << 8 | value
    )


def sheds(phase: int, hand_counts: Iterable[int], seat: int, danger: int) -> bool:
    """Whether ``seat`` sheds pips: in normal play, an opponent holds ``danger`` tiles or fewer."""
    return phase == _NORMAL and any(c <= danger for q, c in enumerate(hand_counts) if q != seat)


def lifts_marker(config: GameConfig, phase: int, marked: bool) -> bool:
    """Whether a play on the seat's own train lifts its marker (R17) in a way worth a preference.

    Not under ``marker_off_by_owner_play_anywhere``, where any play of the owner lifts it.
    """
    return phase == _NORMAL and marked and not config.marker_off_by_owner_play_anywhere


class PlannerAgent(Agent):
    """Longest own-train chain kept; extras first elsewhere; doubles only with a follower.

    Args:
        seed: unused (the planner is deterministic); kept for the common interface.
        danger: shed the highest-value tile once an opponent holds this many tiles or fewer.
        node_limit: longest-chain search budget (:class:`agents.mexican_train.chains.ChainSolver`).
    """

    name = "planner"

    def __init__(self, seed: int | None = None, danger: int = 2, node_limit: int | None = None) -> None:
        super().__init__(seed)
        self.danger = danger
        self.node_limit = node_limit
        self._solvers: dict[tuple[int, bool], ChainSolver] = {}

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"danger": self.danger}
        if self.node_limit is not None:
            out["node_limit"] = self.node_limit
        return out

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._solvers.clear()  # a fresh memo: results never depend on earlier games

    def solver(self, decision: Decision) -> ChainSolver:
        """The chain solver of this set (memo kept between decisions of a game)."""
        config = decision.game.config
        k = (config.max_pips, config.blank_penalty)
        solver = self._solvers.get(k)
        if solver is None:
            kwargs = {} if self.node_limit is None else {"node_limit": self.node_limit}
            solver = self._solvers[k] = ChainSolver(config.tiles, config.blank_penalty, **kwargs)
        return solver

    def act(self, decision: Decision) -> int:
        legal = decision.legal_actions
        if len(legal) == 1:
            return int(legal[0])
        game = decision.game
        view = decision.view
        seat = view.seat
        moves = [decision.to_move(a) for a in legal]
        plays = [(a, m) for a, m in zip(legal, moves, strict=True) if m < game.draw]
        if not plays:
            return int(legal[0])
        solver = self.solver(decision)
        chain = solver.longest(view.ends[seat], view.hand)
        if view.phase == Phase.OPENING and game.config.multi_tile_opening:
            # R9: lay the chain; once it is laid, stop
            if chain:
                head = chain[0] * game.width + seat
                if head in moves:
                    return int(decision.to_action(head))
            elif game.pass_ in moves:
                return int(decision.to_action(game.pass_))
        return self._best(decision, plays, chain)

    def _best(self, decision: Decision, plays: list[tuple[int, int]], chain: tuple[int, ...]) -> int:
        """The play of highest :meth:`key`, computing chain damage lazily.

        The damage is 0 for an extra laid off the own train, 1 for the chain's head on it,
        and at least 1 for anything else; only the candidates that could still win get an
        exact (searched) damage, best-first.
        """
        keys = {a: self.key(decision, m, chain, exact=False) for a, m in plays}
        moves = dict(plays)
        exact = {a for a, m in plays if self._damage_known(decision, m, chain)}
        while True:
            a = max(keys, key=lambda a: (keys[a], -a))  # ties: the lowest action id
            if a in exact:
                return int(a)
            keys[a] = self.key(decision, moves[a], chain)
            exact.add(a)

    def key(self, decision: Decision, move: int, chain: tuple[int, ...], exact: bool = True) -> int:
        """:func:`play_key` of one legal play, the absolute core ``move`` (higher is better).

        With ``exact=False`` the chain damage is its lower bound (no search), so the key
        is an upper bound of the exact one.
        """
        game = decision.game
        view = decision.view
        tiles = game.tiles
        seat = view.seat
        tile, train = divmod(move, game.width)
        value = value_table(tiles.max_pips, game.config.blank_penalty)[tile]
        a, b = tiles.tiles[tile]
        damage = (
            self._damage(decision, tile, train, chain) if exact else self._damage_bound(decision, move, chain)
        )
        return play_key(
            covers=view.owes and bool(view.turn_doubles) and train == view.turn_doubles[-1],
            shed=value if sheds(view.phase, view.hand_counts, seat, self.danger) else 0,
            double_ok=a != b or bool(view.hand & ~(1 << tile) & tiles.match[a]),
            lifts=train == seat and lifts_marker(game.config, view.phase, view.markers[seat]),
            damage=damage,
            off_own=train != seat,
            value=value,
        )

    @staticmethod
    def _damage_bound(decision: Decision, move: int, chain: tuple[int, ...]) -> int:
        """A lower bound of :meth:`_damage`, exact when :meth:`_damage_known`.

        An extra laid off the own train costs nothing; any other play costs at least one
        tile (a play on the own train that is not the head of a longest chain leaves a
        shorter one, else that chain would extend to a longer one).
        """
        tile, train = divmod(move, decision.game.width)
        return 0 if train != decision.seat and tile not in chain else 1

    @staticmethod
    def _damage_known(decision: Decision, move: int, chain: tuple[int, ...]) -> bool:
        tile, train = divmod(move, decision.game.width)
        if train != decision.seat:
            return tile not in chain
        return bool(chain) and tile == chain[0]

    def _damage(self, decision: Decision, tile: int, train: int, chain: tuple[int, ...]) -> int:
        """Tiles the own-train chain loses if ``tile`` is laid on ``train``."""
        view = decision.view
        seat = view.seat
        if train != seat:
            if tile not in chain:
                return 0  # an extra: the chain is untouched
            end = view.ends[seat]
        else:
            if chain and tile == chain[0]:
                return 1  # the chain's head: the rest is still a longest chain
            tiles = decision.game.tiles
            end = tiles.other_end[tile * (tiles.max_pips + 1) + view.ends[seat]]
        after = self.solver(decision).length(end, view.hand & ~(1 << tile))
        return len(chain) - after
