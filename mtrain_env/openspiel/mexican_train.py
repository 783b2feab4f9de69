"""Mexican Train as an OpenSpiel Python game (``pyspiel.load_game("mtrain_mexican_train", {...})``).

The state wraps the rules core (:class:`~mtrain_env.mexican_train.core.rules.MexicanTrain`
and its :class:`~mtrain_env.mexican_train.core.state.GameState`): every rule is the core's,
none is re-implemented here.

* **Game type**: sequential, explicit stochastic chance, imperfect information, terminal
  rewards; zero-sum for ``reward="zero_sum"`` and ``"win"``, general-sum for ``"penalty"``.
* **Chance** (``max_chance_outcomes`` = tiles in the set; an outcome is a tile id):
  the deal of each round is one chance node PER DEALT TILE (seat 0's hand, then seat 1's,
  ...; uniform over the tiles not dealt yet, the engine set aside, R4/R5); what is left is
  the boneyard, an unordered set. A ``DRAW`` (R5, R16) is the seat's own action, and the
  tile it gets is the next chance node (uniform over the boneyard). So every deal and
  draw the env makes with its seeded shuffle is here an explicit, enumerable chance event
  with the same distribution.
* **Actions**: the env's ``Discrete(T * (n + 1) + 2)`` ids, trains RELATIVE to the acting
  seat (:mod:`mtrain_env.mexican_train.codec`): an action means what ``env.step`` means.
* **Returns**: the sum of the env's rewards over the episode (:mod:`~mtrain_env.mexican_train.rewards`),
  given at the end (0 before).
* **Observations**: the tensor is the env's observation vector of the seat
  (:mod:`~mtrain_env.mexican_train.observation`, its views by name in the observer's
  ``dict``); the observation string is the seat's current view (public table + own hand);
  the information-state string is the seat's whole event log (perfect recall): its hand as
  picked up once the deal is complete (a set: not the order of the chance outcomes that
  dealt it, :func:`~mtrain_env.openspiel.common.log_pick_up`), each tile it drew, every
  public move. The information-state TENSOR is the observation
  vector too: a fixed-size summary (shown voids, hand counts, trains), not a history.
* ``resample_from_infostate(player, sampler)``: a state the player cannot tell from this
  one, by the project's determinizer
  (:func:`~mtrain_env.mexican_train.core.public.sample_state`, as ``agents.mexican_train.mc``).
* :meth:`MexicanTrainGame.state_from_view`: a state built from one seat's leak-free view
  (for bots that act through the agents' Decision interface).

Parameters: ``players`` (4), ``max_pips`` (12), ``hand_size`` (0 = the preset's table),
``rules`` (``"pagat"``), ``rounds`` (1), ``reward`` (``"zero_sum"``), ``flags``
(RULES.md variant flags joined by ``+``, ``"one_tile_opening+blank_penalty"``; ``name:0``
turns a preset's flag off).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from mtrain_env.mexican_train.codec import ActionCodec
from mtrain_env.mexican_train.core.config import (
    MAX_PIPS,
    MIN_PIPS,
    MIN_PLAYERS,
    VARIANT_FLAGS,
    GameConfig,
    max_players,
)
from mtrain_env.mexican_train.core.dealing import Deal
from mtrain_env.mexican_train.core.public import PublicView, public_view, sample_state
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.mexican_train.observation import ObservationEncoder, ObservationLayout
from mtrain_env.mexican_train.rewards import REWARD_MODES, round_rewards
from mtrain_env.openspiel import common
from mtrain_env.openspiel.common import Log, SeatObserver, SeatViews, TileDeal, log_deal, log_pick_up
from mtrain_env.tilegame.tiles import bits_list

__all__ = [
    "GAME_NAME",
    "MexicanTrainGame",
    "MexicanTrainState",
    "config_from_params",
    "params_for_config",
    "view_text",
]

GAME_NAME = "mtrain_mexican_train"
DEFAULT_PARAMS: dict[str, Any] = {
    "players": 4,
    "max_pips": 12,
    "hand_size": 0,
    "rules": "pagat",
    "rounds": 1,
    "reward": "zero_sum",
    "flags": "",
}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
#: deals come as chance outcomes; the core's dealer needs a generator it never uses then
_UNUSED_RNG = np.random.default_rng(0)


def parse_flags(text: str) -> dict[str, bool]:
    """``"a+b:0"`` -> ``{"a": True, "b": False}``; ``ValueError`` naming an unknown flag or value.

    ``+`` and ``:`` (not ``,`` and ``=``) so the value survives OpenSpiel's game strings.
    """
    out: dict[str, bool] = {}
    for item in filter(None, (part.strip() for part in text.split("+"))):
        name, sep, value = item.partition(":")
        name = name.strip()
        if name not in VARIANT_FLAGS:
            raise ValueError(f"flags: unknown variant flag {name!r}; known: {', '.join(VARIANT_FLAGS)}")
        value = value.strip().lower() if sep else "1"
        if value not in _TRUE | _FALSE:
            raise ValueError(f"flags: {name}:{value} must be 1 or 0 (true/false)")
        out[name] = value in _TRUE
    return out


def config_from_params(params: dict[str, Any]) -> tuple[GameConfig, str]:
    """The :class:`GameConfig` and reward mode of OpenSpiel game parameters (defaults filled in)."""
    unknown = sorted(set(params) - set(DEFAULT_PARAMS))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for {GAME_NAME}; known: {sorted(DEFAULT_PARAMS)}")
    p = {**DEFAULT_PARAMS, **params}
    if p["reward"] not in REWARD_MODES:
        raise ValueError(f"reward must be one of {REWARD_MODES}, got {p['reward']!r}")
    config = GameConfig.make(
        num_players=p["players"],
        max_pips=p["max_pips"],
        hand_size=p["hand_size"] or None,
        rules=p["rules"],
        rounds=p["rounds"],
        **parse_flags(p["flags"]),
    )
    return config, p["reward"]


def params_for_config(config: GameConfig, reward: str = "zero_sum") -> dict[str, Any]:
    """OpenSpiel parameters of ``config`` (every flag explicit), the inverse of :func:`config_from_params`."""
    return {
        "players": config.num_players,
        "max_pips": config.max_pips,
        "hand_size": config.hand_size,
        "rules": config.rules,
        "rounds": config.rounds,
        "reward": reward,
        "flags": "+".join(f"{k}:{int(v)}" for k, v in config.flags().items()),
    }


def _game_type(reward: str) -> pyspiel.GameType:
    # every set's bound (R3): 17 seats on double-18, as load_game accepts
    players = (MIN_PLAYERS, max(max_players(pips) for pips in range(MIN_PIPS, MAX_PIPS + 1)))
    zero_sum = reward != "penalty"
    long_name = "Mexican Train (mtrain_env)"
    return common.game_type(GAME_NAME, long_name, zero_sum=zero_sum, players=players, params=DEFAULT_PARAMS)


class Static(common.Static):
    """What every state of one game shares: rules core, codec, encoder (never copied)."""

    def __init__(self, config: GameConfig, reward: str) -> None:
        super().__init__(config, reward)
        self.engine = MexicanTrain(config)
        self.codec = ActionCodec(config)
        self.layout = ObservationLayout(config)
        self.encoder = ObservationEncoder(self.engine, self.layout)

    def deal(self, round_index: int) -> TileDeal:
        """The chance deal of round ``round_index`` (R4; the engine set aside, R5)."""
        c = self.config
        pool = list(range(c.num_tiles))
        if not c.engine_holder_opens:
            pool.remove(c.tiles.double_id(c.engine_value(round_index)))
        return TileDeal(pool, [c.hand_size] * c.num_players)


class MexicanTrainGame(pyspiel.Game):
    """The OpenSpiel game (see the module docstring)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        config, reward = config_from_params(params)
        self.static: Static = common.static_for(Static, config, reward)
        c = config
        scale = c.hand_size * c.max_pips
        bound = (
            1.0 if reward == "win" else c.rounds * c.tiles.hand_value(c.tiles.full, c.blank_penalty) / scale
        )
        info = pyspiel.GameInfo(
            num_distinct_actions=c.num_actions,
            max_chance_outcomes=c.num_tiles,
            num_players=c.num_players,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0 if reward != "penalty" else None,
            max_game_length=c.rounds * c.max_round_actions,
        )
        super().__init__(_game_type(reward), info, {**DEFAULT_PARAMS, **params})

    def new_initial_state(self) -> MexicanTrainState:
        return MexicanTrainState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> SeatObserver:
        return SeatObserver(iig_obs_type, self.static.layout, params)

    def state_from_view(self, view: PublicView, rng: np.random.Generator) -> MexicanTrainState:
        """A state consistent with one seat's view (its hand and the public table), hidden tiles sampled.

        The seat's information state is the view itself (text), so every
        ``resample_from_infostate`` of that seat keeps it: a search from here acts on what
        the seat knows only. Other seats start from their sampled views.
        """
        if view.phase >= Phase.ROUND_OVER:
            raise ValueError("state_from_view needs a round in play (the round is over)")
        state = self.new_initial_state()
        s = sample_state(self.static.engine, view, rng)
        state.set_sampled(s, view.seat, "view " + view_text(view) + "\n")
        return state


def move_text(config: GameConfig, move: int) -> str:
    """An absolute core move as text: ``"3-5 on train 2"`` (train n = the Mexican), ``draw``, ``pass``."""
    if move == config.draw_action:
        return "draw"
    if move == config.pass_action:
        return "pass"
    tile, train = divmod(move, config.num_trains)
    a, b = config.tiles.tiles[tile]
    return f"{a}-{b} on train {train}"


def view_text(v: PublicView) -> str:
    """One line with everything in a seat's view (its hand as tiles; trains as tile lists)."""
    tiles = v.config.tiles.tiles
    hand = common.tiles_text(tiles, v.hand)
    trains = "|".join(" ".join(f"{tiles[i][0]}-{tiles[i][1]}" for i in t) for t in v.trains)
    text = (
        f"seat {v.seat} hand [{hand}] round {v.round_index} engine {v.engine}"
        f"{'' if v.engine_placed else ' unplaced'} phase {v.phase.name} first {v.first_player} "
        f"turn {v.current} counts {list(v.hand_counts)} boneyard {v.boneyard_count} trains [{trains}] "
        f"markers {[int(m) for m in v.markers]} pending {list(v.pending)} doubles {list(v.turn_doubles)} "
        f"opened {[int(x) for x in v.first_turn_done]} laid {v.tiles_this_turn}/{v.doubles_this_turn} "
        f"owes {int(v.owes)} drawn {int(v.has_drawn)} obliged {int(v.obliged_this_turn)} "
        f"voids {[bits_list(x) for x in v.voids]} scores {list(v.scores)}"
    )
    if v.round_scores:
        text += f" rounds {[list(r) for r in v.round_scores]}"
    return text


class MexicanTrainState(SeatViews, pyspiel.State):
    """A state of :class:`MexicanTrainGame`: the core's :class:`GameState` plus the chance bookkeeping."""

    PUBLIC_VIEW = staticmethod(public_view)
    VIEW_TEXT = staticmethod(view_text)

    def __init__(self, game: MexicanTrainGame) -> None:
        super().__init__(game)
        st = game.static
        self._st = st
        self._s: GameState | None = None  #: None while round 0 is dealt
        self._deal: TileDeal | None = st.deal(0)  #: the deal in progress, if any
        self._drawing = False  #: the seat on turn chose DRAW: the tile is the chance outcome
        self._log: Log | None = None
        #: per seat, what it knew before ``_log`` began (states rebuilt by a resample), or None
        self._roots: tuple[str, ...] | None = None
        self._returns = [0.0] * st.config.num_players
        self._terminal = False

    # ------------------------------------------------------------ OpenSpiel API
    def current_player(self) -> int:
        if self._terminal:
            return int(pyspiel.PlayerId.TERMINAL)
        if self._deal is not None or self._drawing:
            return int(pyspiel.PlayerId.CHANCE)
        assert self._s is not None
        return self._s.current

    def _legal_actions(self, player: int) -> list[int]:
        s = self._s
        if s is None or self._deal is not None or self._drawing or player != s.current:
            return []
        to_rel = self._st.codec.abs_to_rel[player]
        return sorted(to_rel[m] for m in self._st.engine.legal_moves(s))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._deal is not None:
            return self._deal.outcomes()
        assert self._s is not None and self._drawing
        bone = sorted(self._s.boneyard)
        p = 1.0 / len(bone)
        return [(t, p) for t in bone]

    def _apply_action(self, action: int) -> None:
        st = self._st
        tiles = st.config.tiles.tiles
        if self._deal is not None:
            self._log = log_deal(self._log, self._deal.give(action))
            if self._deal.done:
                self._log = log_pick_up(self._log, tiles, self._deal.hands)
                self._start_round()
            return
        s = self._s
        assert s is not None
        engine = st.engine
        p = s.current
        if self._drawing:
            self._drawing = False
            bone = s.boneyard
            bone.remove(action)
            bone.append(action)  # the core draws the top (last) tile (R8)
            seeking = s.phase == Phase.SEEK_ENGINE
            engine.apply(s, engine.draw)
            a, b = tiles[action]
            if seeking and s.engine_placed:  # R5 variant: the engine drawn goes to the table
                self._log = Log(self._log, -1, f"p{p} draws the engine {a}-{b}")
            else:
                self._log = Log(self._log, p, f"p{p} draws", f"p{p} draws {a}-{b}")
        else:
            move = st.codec.rel_to_abs[p][action]
            if move == engine.draw:
                self._drawing = True
                return
            self._log = Log(self._log, -1, f"p{p} {move_text(st.config, move)}")
            engine.apply(s, move)
        if s.phase >= Phase.ROUND_OVER:
            self._end_round(s)

    def _start_round(self) -> None:
        deal = self._deal
        assert deal is not None and deal.done
        st = self._st
        cut = Deal(list(deal.hands), list(deal.pool))
        if self._s is None:
            self._s = st.engine.new_game(_UNUSED_RNG, cut)
        else:
            st.engine.next_round(self._s, _UNUSED_RNG, cut)
        self._deal = None

    def _end_round(self, s: GameState) -> None:
        st = self._st
        over = s.phase == Phase.GAME_OVER
        rewards = round_rewards(st.reward, st.config, s.round_scores, over)
        self._returns = [x + r for x, r in zip(self._returns, rewards, strict=True)]
        tiles = st.config.tiles.tiles
        shown = "; ".join(f"p{q} {common.tiles_text(tiles, h)}" for q, h in enumerate(s.hands))
        self._log = Log(self._log, -1, f"round {s.round_index} over: {shown}")  # every hand is shown
        if over:
            self._terminal = True
        else:
            self._deal = st.deal(s.round_index + 1)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            a, b = self._st.config.tiles.tiles[action]
            return f"{'draw' if self._drawing else 'deal'} {a}-{b}"
        return self._st.codec.describe(action)

    def __str__(self) -> str:
        if self._s is None:
            return "dealing round 0"
        from mtrain_env.mexican_train.render import render_text

        return render_text(self._st.engine, self._s)

    # ------------------------------------------------------------ for observers and bots
    def resample(self, player: int, rng: np.random.Generator) -> MexicanTrainState:
        """``resample_from_infostate`` with a numpy generator (reproducible searches).

        The hidden tiles (other hands, boneyard) are dealt again by
        :func:`~mtrain_env.mexican_train.core.public.sample_state` from ``player``'s view;
        ``player``'s information state is kept as it is, the other seats' become their
        sampled views.
        """
        s = self._s
        if s is None or self._deal is not None or self._terminal:
            raise ValueError("resample_from_infostate needs a round in play (not a deal, not the end)")
        st = self._st
        view = public_view(s, st.config, player)
        new_s = sample_state(st.engine, view, rng)
        state = self.get_game().new_initial_state()
        state.set_sampled(new_s, player, self.seat_history(player))
        state._drawing = self._drawing
        state._returns = list(self._returns)
        return state

    @property
    def drawing(self) -> bool:
        """The seat on turn chose DRAW and the tile is the pending chance outcome."""
        return self._drawing

    @property
    def accumulated_returns(self) -> list[float]:
        """The rewards of the rounds finished so far (``returns()`` gives them at the end only)."""
        return list(self._returns)


pyspiel.register_game(_game_type(DEFAULT_PARAMS["reward"]), MexicanTrainGame)
