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
  when another player is about to win"; measured: ~0.7 pips a round better than keeping
  the double rule first).

Every choice is a lexicographic key over the legal plays (see :meth:`PlannerAgent.key`):
the follower on its own double, the heaviest tile in danger, no unfollowable double,
marker lifted, least chain damage, not the own train, most pips, then the lowest relative
action id. Deterministic (the seed is unused).
"""

from __future__ import annotations

from typing import Any

from agents.mexican_train.base import Agent, Decision
from agents.mexican_train.chains import ChainSolver
from agents.mexican_train.greedy import value_table
from mtrain_env.mexican_train.core.public import PublicView
from mtrain_env.mexican_train.core.state import Phase

Key = tuple[int, ...]


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
        keys = {a: self.key(decision, a, m, chain, exact=False) for a, m in plays}
        moves = dict(plays)
        exact = {a for a, m in plays if self._damage_known(decision, m, chain)}
        while True:
            a = max(keys, key=keys.__getitem__)
            if a in exact:
                return int(a)
            keys[a] = self.key(decision, a, moves[a], chain)
            exact.add(a)

    def key(
        self, decision: Decision, action: int, move: int, chain: tuple[int, ...], exact: bool = True
    ) -> Key:
        """The preference key of one legal play (higher is better); see the module docstring.

        With ``exact=False`` the chain damage is its lower bound (no search), so the key
        is an upper bound of the exact one.
        """
        game = decision.game
        view = decision.view
        tiles = game.tiles
        seat = view.seat
        tile, train = divmod(move, game.width)
        values = value_table(tiles.max_pips, game.config.blank_penalty)
        hand_after = view.hand & ~(1 << tile)
        a, b = tiles.tiles[tile]
        # R18: a double is good only if another tile of its number can follow it
        double_ok = int(a != b or bool(hand_after & tiles.match[a]))
        covers = int(view.owes and bool(view.turn_doubles) and train == view.turn_doubles[-1])
        lifts = int(
            view.phase == Phase.NORMAL
            and train == seat
            and view.markers[seat]
            and not game.config.marker_off_by_owner_play_anywhere
        )
        damage = (
            self._damage(decision, tile, train, chain) if exact else self._damage_bound(decision, move, chain)
        )
        shed = int(self._danger(view)) * values[tile]
        return (covers, shed, double_ok, lifts, -damage, int(train != seat), values[tile], -action)

    def _danger(self, view: PublicView) -> bool:
        if view.phase != Phase.NORMAL:
            return False
        return any(c <= self.danger for q, c in enumerate(view.hand_counts) if q != view.seat)

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
