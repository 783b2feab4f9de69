"""The pure-Python rollout policies of ``mc`` and ``oracle``: play a state to the end of its
round straight on the rules core (no env, no observation), and score it.

:class:`ChainPolicy` (the planner's ranking of plays with a cheap chain-damage estimate,
``mc``'s default) and :class:`GreedyPolicy` (the highest-value tile); :func:`round_result`
(the finished round's zero-sum result for a seat); :func:`compiled_rollouts` (the compiled
kernels, :mod:`mtrain_env.mexican_train.compiled.rollout`, when numba is installed). Moved
here from :mod:`agents.mexican_train.mc`, which imports them back, so pickles that name
``agents.mexican_train.mc.ChainPolicy`` still load.
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

from agents.mexican_train.chains import ChainSolver
from agents.mexican_train.greedy import greedy_key, value_table
from agents.mexican_train.planner import lifts_marker, play_key, sheds
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase

__all__ = ["ChainPolicy", "GreedyPolicy", "compiled_rollouts", "greedy_keys", "round_result"]

_ROUND_OVER = Phase.ROUND_OVER


@cache
def greedy_keys(config: GameConfig) -> tuple[tuple[int, ...], ...]:
    """Per seat, a key per absolute move for the greedy rollout policy (higher is better).

    The ``greedy`` agent's :func:`~agents.mexican_train.greedy.greedy_key` (the tile's value,
    R2 / ``blank_penalty``, then the seat's own train), then the lowest move id (``max``
    keeps the first); DRAW and PASS rank below every play, so an R9 opening chain is never
    stopped early.
    """
    values = value_table(config.max_pips, config.blank_penalty)
    width = config.num_trains
    out = []
    for seat in range(config.num_players):
        keys = [greedy_key(values[m // width], m % width == seat) for m in range(config.draw_action)]
        keys += [-1, -1]  # DRAW, PASS
        out.append(tuple(keys))
    return tuple(out)


class GreedyPolicy:
    """Rollout policy: the highest-value legal tile (:func:`greedy_keys`). Deterministic."""

    def __init__(self, game: MexicanTrain) -> None:
        self.game = game
        self.keys = greedy_keys(game.config)

    def rollout(self, s: GameState) -> None:
        """Play ``s`` to the end of its round (in place)."""
        legal_moves = self.game.legal_moves
        apply = self.game.apply
        keys = self.keys
        while s.phase < _ROUND_OVER:
            moves = legal_moves(s)
            if len(moves) == 1:
                apply(s, moves[0])
            else:
                apply(s, max(moves, key=keys[s.current].__getitem__))


class ChainPolicy:
    """Rollout policy: the planner's choice (:mod:`agents.mexican_train.planner`), cheap enough for rollouts.

    Plays are ranked by the planner's own :func:`~agents.mexican_train.planner.play_key`
    (with its :func:`~agents.mexican_train.planner.sheds` and
    :func:`~agents.mexican_train.planner.lifts_marker`); only the chain damage is
    estimated instead of searched. When a rollout starts, every seat's longest own-train
    chain is reserved (:class:`agents.mexican_train.chains.ChainSolver`, a small node
    budget), and the damage of a play is read off that reservation (:attr:`DAMAGE`). In the
    R9 opening a seat lays reserved tiles and stops when none fits. Ties go to the lowest
    move id. Deterministic.

    ``play_key`` is a sum of independent terms, one per criterion, so the terms are taken
    from it once per config (:meth:`__init__`) and a rollout step adds up those of each
    play instead of calling it.
    """

    #: estimated chain damage by (on the own train, reserved tile): an extra laid elsewhere
    #: costs nothing; the chain's next tile on the own train costs itself; another tile on
    #: the own train moves its end off the chain; a reserved tile laid elsewhere cuts the
    #: chain for good (the worst)
    DAMAGE: ClassVar[dict[tuple[bool, bool], int]] = {
        (False, False): 0,
        (True, True): 1,
        (True, False): 2,
        (False, True): 3,
    }

    def __init__(self, game: MexicanTrain, danger: int = 2) -> None:
        config = game.config
        self.game = game
        self.danger = danger
        self.solver = ChainSolver(config.tiles, config.blank_penalty, node_limit=500)
        self.values = values = value_table(config.max_pips, config.blank_penalty)
        self.multi_opening = config.multi_tile_opening
        # the terms of play_key (see the class docstring)
        zero = play_key(0, 0, 0, 0, 0, 0, 0)
        self.covers_term = play_key(1, 0, 0, 0, 0, 0, 0) - zero
        self.double_ok_term = play_key(0, 0, 1, 0, 0, 0, 0) - zero
        self.lifts_term = play_key(0, 0, 0, 1, 0, 0, 0) - zero
        self.shed_terms = tuple(play_key(0, v, 0, 0, 0, 0, 0) - zero for v in values)
        #: per ``4 * tile + 2 * own + reserved``: the damage, off-own and value terms
        self.tile_keys = tuple(
            play_key(0, 0, 0, 0, self.DAMAGE[i >> 1 == 1, i & 1 == 1], i >> 1 == 0, v)
            for v in values
            for i in range(4)
        )

    def rollout(self, s: GameState) -> None:
        """Play ``s`` to the end of its round (in place)."""
        game = self.game
        config = game.config
        legal_moves = game.legal_moves
        apply = game.apply
        width = game.width
        draw = game.draw
        pass_ = game.pass_
        match = game.tiles.match
        pairs = game.tiles.tiles
        danger = self.danger
        longest = self.solver.longest
        tile_keys = self.tile_keys
        shed_terms = self.shed_terms
        covers_term = self.covers_term
        double_ok_term = self.double_ok_term
        lifts_term = self.lifts_term
        bit_count = int.bit_count
        reserved = []
        for q in range(game.n):
            m = 0
            for t in longest(s.ends[q], s.hands[q]):
                m |= 1 << t
            reserved.append(m)
        while s.phase < _ROUND_OVER:
            moves = legal_moves(s)
            if len(moves) == 1:
                apply(s, moves[0])
                continue
            p = s.current
            res = reserved[p]
            phase = s.phase
            if phase == Phase.OPENING and self.multi_opening:
                pick = -1
                for m in moves:
                    if m < draw and res >> (m // width) & 1:
                        pick = m
                        break
                if pick < 0:
                    pick = pass_ if pass_ in moves else moves[0]
                apply(s, pick)
                continue
            hand = s.hands[p]
            owed = s.turn_doubles[-1] if s.owes and s.turn_doubles else -1
            lift = lifts_marker(config, phase, s.markers[p])
            shed = sheds(phase, map(bit_count, s.hands), p, danger)
            best = moves[0]
            best_key = -1
            for m in moves:
                if m >= draw:
                    continue
                t, tr = divmod(m, width)
                own = tr == p
                key = tile_keys[t << 2 | own << 1 | (res >> t & 1)]
                if tr == owed:
                    key += covers_term
                if shed:
                    key += shed_terms[t]
                a, b = pairs[t]
                if a != b or hand & ~(1 << t) & match[a]:
                    key += double_ok_term
                if own and lift:
                    key += lifts_term
                if key > best_key:
                    best_key, best = key, m
            apply(s, best)


def round_result(config: GameConfig, s: GameState, seat: int) -> float:
    """The finished round's zero-sum result for ``seat`` (higher is better)."""
    scores = s.round_scores[-1]
    mean = sum(scores) / len(scores)
    own = scores[seat]
    return own - mean if config.positive_scoring else mean - own


def compiled_rollouts() -> Any:
    """The compiled rollout module (:mod:`mtrain_env.mexican_train.compiled.rollout`), or
    None when numba (the ``fast`` extra) is not installed."""
    try:
        from mtrain_env.mexican_train.compiled import rollout
    except ImportError:
        return None
    return rollout
