"""Partnership block dominoes as an OpenSpiel Python game (``pyspiel.load_game("mtrain_block_dominoes")``).

The state wraps the rules core (:class:`~mtrain_env.block.core.rules.BlockDominoes`), as
:mod:`mtrain_env.openspiel.mexican_train` does for Mexican Train; see that module for the
conventions (event log, observer, resampling). Here:

* **Game type**: sequential, explicit stochastic chance, imperfect information, zero-sum
  (the pairs' rewards are opposite, B2), terminal rewards.
* **Chance**: each hand's deal is one chance node per dealt tile (7 per seat, seat 0
  first, uniform over the tiles not dealt yet, B3). A deal the redeal rule throws back
  (B4: a hand with ``redeal_doubles`` doubles is shown and everyone redeals) starts
  again from the full set, as the env's dealer does; with 2 players the undealt tiles
  sleep. There is no boneyard, so no other chance node.
* **Actions**: the env's ids (``tile_id * 2 + end``, ``PASS = 56``; ends are absolute).
* **Returns**: the sum of the env's rewards (:mod:`mtrain_env.block.rewards`), at the end.
* **Length**: a match (``match=True``) is cut after :func:`max_hands` hands, so that
  ``max_game_length`` is a true bound; only a 2-player match with hands scoring 0 can get
  there (the rules alone do not bound it).
* ``resample_from_infostate``: :func:`mtrain_env.block.core.public.sample_state`.

Parameters: ``players`` (4 or 2), ``rules`` (``"reference"``, the preset ``"001"``, or
``"openspiel"``), ``reward``
(``"points"``), and the :class:`~mtrain_env.block.core.config.GameConfig` keywords
``first_opener``, ``opener``, ``closed_scoring``, ``closed_tie``, ``scoring`` (``""`` =
the preset's), ``redeal_doubles`` (-1 = the preset's, 0 = no redeal), ``target`` (0 =
the scoring's default), ``double_opening``, ``counter_clockwise``, ``match``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from mtrain_env.block.core.config import GameConfig
from mtrain_env.block.core.dealing import Deal, too_many_doubles
from mtrain_env.block.core.public import PublicView, public_view, sample_state
from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.block.core.state import GameState, Phase
from mtrain_env.block.observation import ObservationEncoder, ObservationLayout
from mtrain_env.block.rewards import REWARD_MODES, hand_rewards
from mtrain_env.openspiel import common
from mtrain_env.openspiel.common import Log, SeatObserver, SeatViews, TileDeal, log_deal, log_pick_up
from mtrain_env.tilegame.tiles import bits_list

__all__ = ["GAME_NAME", "BlockGame", "BlockState", "config_from_params", "max_hands", "view_text"]

GAME_NAME = "mtrain_block_dominoes"
DEFAULT_PARAMS: dict[str, Any] = {
    "players": 4,
    "rules": "reference",
    "reward": "points",
    "first_opener": "",
    "opener": "",
    "closed_scoring": "",
    "closed_tie": "",
    "scoring": "",
    "redeal_doubles": -1,
    "target": 0,
    "double_opening": False,
    "counter_clockwise": False,
    "match": False,
}
_UNUSED_RNG = np.random.default_rng(0)
#: ``rules`` parameter -> preset: OpenSpiel's game strings would read ``001`` as a number
_RULES = {"reference": "001"}


def config_from_params(params: dict[str, Any]) -> tuple[GameConfig, str]:
    """The :class:`GameConfig` and reward mode of OpenSpiel game parameters (defaults filled in)."""
    unknown = sorted(set(params) - set(DEFAULT_PARAMS))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for {GAME_NAME}; known: {sorted(DEFAULT_PARAMS)}")
    p = {**DEFAULT_PARAMS, **params}
    p["rules"] = _RULES.get(p["rules"], p["rules"])
    if p["reward"] not in REWARD_MODES:
        raise ValueError(f"reward must be one of {REWARD_MODES}, got {p['reward']!r}")
    kw: dict[str, Any] = {
        k: p[k] for k in ("first_opener", "opener", "closed_scoring", "closed_tie", "scoring") if p[k]
    }
    if p["redeal_doubles"] != -1:
        kw["redeal_doubles"] = p["redeal_doubles"] or None
    if p["target"]:
        kw["target"] = p["target"]
    for k in ("double_opening", "counter_clockwise", "match"):
        kw[k] = p[k]
    return GameConfig.make(rules=p["rules"], num_players=p["players"], **kw), p["reward"]


def _game_type() -> pyspiel.GameType:
    long_name = "Partnership block dominoes (mtrain_env)"
    return common.game_type(GAME_NAME, long_name, zero_sum=True, players=(2, 4), params=DEFAULT_PARAMS)


class Static(common.Static):
    """What every state of one game shares (never copied)."""

    def __init__(self, config: GameConfig, reward: str) -> None:
        super().__init__(config, reward)
        self.engine = BlockDominoes(config)
        self.layout = ObservationLayout(config)
        self.encoder = ObservationEncoder(self.engine, self.layout)

    def deal(self) -> TileDeal:
        """A hand's chance deal (B3): 7 tiles per seat from the whole set."""
        c = self.config
        return TileDeal(list(range(c.num_tiles)), [c.hand_size] * c.num_players)


def max_hands(config: GameConfig) -> int:
    """The most hands an episode of this game has: ``max_game_length`` is this many times
    ``config.max_hand_moves``, and OpenSpiel takes it as a hard bound.

    One without ``match``. A match (B13) ends after the hand in which a pair reaches
    ``target``; while both are below it they hold at most ``2 * (target - 1)`` points, so
    if every hand scored a point there would be at most that many hands before the last
    one, plus the last, plus a tie-break hand (``closed_scoring="both"``): ``2 * target``.
    But a hand can score 0: a 2-player dominó (B10) whose loser holds only [0|0] (with 4
    players the losing pair holds two tiles or more and only one is [0|0]; a cierre, B11,
    always scores: its losing pair has at least the winning pair's pips, and both at 0
    would need [0|0] in both pairs' hands). Such hands can follow each other without end,
    so the rules do not bound a 2-player match. This game therefore ENDS A MATCH AFTER
    ``2 * target + 2`` HANDS, which takes at least three hands scoring 0 (never the case
    with 4 players); the returns are then the rewards so far (under ``reward="match"``,
    0 each: a drawn match).
    """
    return 2 * config.target + 2 if config.match else 1


class BlockGame(pyspiel.Game):
    """The OpenSpiel game (see the module docstring)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        config, reward = config_from_params(params)
        self.static: Static = common.static_for(Static, config, reward)
        hands = max_hands(config)  # a true bound: a match is cut there (see max_hands)
        bound = {"points": 1.0, "raw": float(config.max_hand_points), "match": 1.0}[reward]
        if reward != "match":
            bound *= hands
        info = pyspiel.GameInfo(
            num_distinct_actions=config.num_actions,
            max_chance_outcomes=config.num_tiles,
            num_players=config.num_players,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=hands * config.max_hand_moves,
        )
        if params.get("rules") == "001":
            params["rules"] = "reference"  # canonical, for the game string
        super().__init__(_game_type(), info, {**DEFAULT_PARAMS, **params})

    def new_initial_state(self) -> BlockState:
        return BlockState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> SeatObserver:
        return SeatObserver(iig_obs_type, self.static.layout, params)

    def state_from_view(self, view: PublicView, rng: np.random.Generator) -> BlockState:
        """A state consistent with one seat's view, hidden tiles sampled (see the Mexican Train game)."""
        if view.phase != Phase.PLAYING:
            raise ValueError("state_from_view needs a hand in play")
        state = self.new_initial_state()
        state.set_sampled(
            sample_state(self.static.engine, view, rng), view.seat, "view " + view_text(view) + "\n"
        )
        return state


def _tiles_text(config: GameConfig, mask: int) -> str:
    return common.tiles_text(config.tiles.tiles, mask)


def view_text(v: PublicView) -> str:
    """One line with everything in a seat's view."""
    c = v.config
    line = " ".join(f"{a}-{b}" for a, b in v.line)
    return (
        f"seat {v.seat} hand [{_tiles_text(c, v.hand)}] hand_index {v.hand_index} phase {v.phase.name} "
        f"turn {v.current} opener {v.opener} forced {v.forced_opening} counts {list(v.hand_counts)} "
        f"line [{line}] laid {[_tiles_text(c, m) for m in v.played_by]} "
        f"voids {[bits_list(x) for x in v.voids]} "
        f"last {v.last_player} moves {v.moves} redeals {v.redeals} scores {list(v.scores)} "
        f"results {len(v.results)} tiebreak {int(v.tiebreak)}"
    )


class BlockState(SeatViews, pyspiel.State):
    """A state of :class:`BlockGame`: the core's :class:`GameState` plus the chance deal."""

    PUBLIC_VIEW = staticmethod(public_view)
    VIEW_TEXT = staticmethod(view_text)

    def __init__(self, game: BlockGame) -> None:
        super().__init__(game)
        st = game.static
        self._st = st
        self._s: GameState | None = None  #: None while the first hand is dealt
        self._deal: TileDeal | None = st.deal()
        self._redeals = 0  #: deals of this hand thrown back so far (B4)
        self._log: Log | None = None
        self._roots: tuple[str, ...] | None = None
        self._returns = [0.0] * st.config.num_players
        self._terminal = False

    def current_player(self) -> int:
        if self._terminal:
            return int(pyspiel.PlayerId.TERMINAL)
        if self._deal is not None:
            return int(pyspiel.PlayerId.CHANCE)
        assert self._s is not None
        return self._s.current

    def _legal_actions(self, player: int) -> list[int]:
        s = self._s
        if s is None or self._deal is not None or player != s.current:
            return []
        return self._st.engine.legal_moves(s)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        assert self._deal is not None
        return self._deal.outcomes()

    def _apply_action(self, action: int) -> None:
        st = self._st
        c = st.config
        if self._deal is not None:
            self._log = log_deal(self._log, self._deal.give(action))
            if self._deal.done:
                self._log = log_pick_up(self._log, c.tiles.tiles, self._deal.hands)
                self._dealt()
            return
        s = self._s
        assert s is not None
        p = s.current
        if action == c.pass_action:
            text = "pass"
        else:
            a, b = c.tiles.tiles[action >> 1]
            text = f"{a}-{b} on end {action & 1}"
        self._log = Log(self._log, -1, f"p{p} {text}")
        st.engine.apply(s, action)
        if s.phase != Phase.PLAYING:
            self._returns = [x + r for x, r in zip(self._returns, hand_rewards(st.reward, c, s), strict=True)]
            shown = "; ".join(f"p{q} {_tiles_text(c, h)}" for q, h in enumerate(s.hands))
            self._log = Log(self._log, -1, f"hand {s.hand_index} over: {shown}")  # every hand is shown
            if s.phase == Phase.GAME_OVER:
                self._terminal = True
            elif s.hand_index + 1 >= max_hands(c):
                # only after hands scoring 0 (2 players); OpenSpiel needs max_game_length to hold
                self._log = Log(self._log, -1, f"match cut after {s.hand_index + 1} hands")
                self._terminal = True
            else:
                self._deal = st.deal()

    def _dealt(self) -> None:
        """The deal is complete: thrown back (B4) or played."""
        st = self._st
        c = st.config
        deal = self._deal
        assert deal is not None
        seat = too_many_doubles(c, deal.hands)
        if seat >= 0:  # B4: the doubles are shown and the tiles dealt again
            self._redeals += 1
            shown = _tiles_text(c, deal.hands[seat] & c.tiles.doubles)
            self._log = Log(self._log, -1, f"p{seat} shows {shown}: redeal")
            self._deal = st.deal()
            return
        sleeping = 0
        for i in deal.pool:
            sleeping |= 1 << i
        cut = Deal(list(deal.hands), sleeping, self._redeals)
        if self._s is None:
            self._s = st.engine.new_game(_UNUSED_RNG, cut)
        else:
            st.engine.next_hand(self._s, _UNUSED_RNG, cut)
        self._deal = None
        self._redeals = 0

    def _action_to_string(self, player: int, action: int) -> str:
        c = self._st.config
        if player == pyspiel.PlayerId.CHANCE:
            a, b = c.tiles.tiles[action]
            return f"deal {a}-{b}"
        if action == c.pass_action:
            return "PASS"
        a, b = c.tiles.tiles[action >> 1]
        return f"({a}, {b}) on end {action & 1}"

    def __str__(self) -> str:
        if self._s is None:
            return "dealing hand 0"
        from mtrain_env.block.render import render_text

        return render_text(self._st.engine, self._s)

    def resample(self, player: int, rng: np.random.Generator) -> BlockState:
        """``resample_from_infostate`` with a numpy generator (see the Mexican Train game)."""
        s = self._s
        if s is None or self._deal is not None or self._terminal:
            raise ValueError("resample_from_infostate needs a hand in play (not a deal, not the end)")
        new_s = sample_state(self._st.engine, public_view(s, self._st.config, player), rng)
        state = self.get_game().new_initial_state()
        state.set_sampled(new_s, player, self.seat_history(player))
        state._returns = list(self._returns)
        return state


pyspiel.register_game(_game_type(), BlockGame)
