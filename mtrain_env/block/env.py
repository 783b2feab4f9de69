"""
# Partnership Dominoes (Latin-American block dominoes)

| Import             | `import mtrain_env; env = mtrain_env.block_dominoes_env()`  |
|--------------------|-------------------------------------------------------------|
| Actions            | Discrete                                                    |
| Parallel API       | No                                                          |
| Manual Control     | No                                                          |
| Agents             | `agents= ['player_0', 'player_1', 'player_2', 'player_3']`  |
| Agents             | 4 (pairs 0&2 vs 1&3), or 2 (`num_players=2`)                |
| Action Shape       | (1,)                                                        |
| Action Values      | Discrete(57)                                                |
| Observation Shape  | (`observation_layout` size,) float32 + mask                 |
| Observation Values | [0, 1] (match scores may exceed 1)                          |

The dominó of ``reference/001``: a double-six set, four players in two pairs sitting
opposite, seven tiles each and no boneyard; one line with two open ends; a player who
cannot play passes; a hand ends on "dominó" (a player goes out) or "cierre" (nobody can
play); the pair that reaches the target (100) loses the match. Rules B1-B13 and their
flags are listed in :mod:`mtrain_env.block.core.rules`; the keywords are those of
:class:`mtrain_env.block.core.config.GameConfig` (``rules="openspiel"`` is the mode that
plays exactly as OpenSpiel's ``python_team_dominoes``). The environment never acts for
a seat: a player who cannot lay a tile steps ``PASS`` (B9).

### Action Space

``T = 28`` tiles::

    action = tile_id * 2 + end     (lay tile_id on end 0 = left or 1 = right of the line)
    PASS   = 2 * T = 56

``tile_id(a, b)`` with ``a <= b`` is ``a * (15 - a) / 2 + (b - a)`` (lexicographic). The
opening tile is ``end 0``; when both ends show the same pip only ``end 0`` is legal (the
placements are mirror images). Use ``env.unwrapped.encode_action((a, b), end)``,
``decode_action(action)`` and ``PASS``.

### Observation Space

``{"observation": float32 vector, "action_mask": int8 vector}``. Seats in the vector are
relative to the observer in play order (1 = next, 2 = partner, 3 = previous);
``env.unwrapped.observation_layout`` maps each view name to ``(slice, shape)`` (table in
:mod:`mtrain_env.block.observation`): own hand, tiles played (and by whom), the two open
ends, each seat's shown voids, hand counts, opener, seat on turn, match scores. The mask
(also ``infos[agent]["action_mask"]``) is all-zero off turn and never all-zero on turn.

### Rewards

Given to every agent at each hand's end, zero-sum between the pairs (see
:mod:`mtrain_env.block.rewards`): ``reward="points"`` (default, +-hand points / 168),
``"raw"`` (+-hand points) or ``"match"`` (+-1 when the episode ends).

### Episodes

One hand (default), or a whole match to the target with ``match=True`` (the next hand
is dealt as soon as one ends; B6 picks its opener).

### Version History

* v0: initial release.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from mtrain_env.block.codec import ActionCodec
from mtrain_env.block.core.config import GameConfig
from mtrain_env.block.core.dealing import parse_deal
from mtrain_env.block.core.public import PublicView, public_view
from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.block.core.serialize import state_from_dict, state_to_dict
from mtrain_env.block.core.state import CIERRE, DOMINO, GameState, Phase
from mtrain_env.block.observation import ObservationEncoder, ObservationLayout
from mtrain_env.block.render import render_text
from mtrain_env.block.rewards import REWARD_MODES, hand_rewards
from mtrain_env.tilegame.aec import TileGameEnv, seat_option
from mtrain_env.tilegame.deal import shown_hands
from mtrain_env.tilegame.snapshot import json_equal
from mtrain_env.tilegame.tiles import bits_list
from mtrain_env.tilegame.wrappers import wrap

RENDER_MODES = ["ansi", "human"]

__all__ = ["env", "raw_env"]


def env(**kwargs: Any) -> AECEnv:
    """The block-dominoes AEC env wrapped as PettingZoo classic envs are.

    An illegal action ends the game with reward -1 for the offender
    (``TerminateIllegalWrapper``); an action outside the action space, or not an integer,
    raises the bare env's ``ValueError``/``TypeError`` (where PettingZoo's
    ``AssertOutOfBoundsWrapper`` asserts; see :mod:`mtrain_env.tilegame.wrappers`); calls
    out of order raise (``OrderEnforcingWrapper``). Keywords are those of :class:`raw_env`.
    """
    return wrap(raw_env(**kwargs), illegal_reward=-1)


class raw_env(TileGameEnv):  # noqa: N801 - PettingZoo's naming convention
    """The bare partnership-dominoes AEC environment (illegal actions raise ``ValueError``).

    Args:
        reward: ``"points"`` (default), ``"raw"`` or ``"match"`` (:mod:`mtrain_env.block.rewards`).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        **config: :meth:`GameConfig.make` keywords: ``rules`` (``"001"``/``"openspiel"``),
            ``num_players``, ``first_opener``, ``opener``, ``double_opening``,
            ``redeal_doubles``, ``closed_scoring``, ``closed_tie``, ``scoring``, ``target``,
            ``counter_clockwise``, ``match``.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "partnership_dominoes_v0",
        "render_modes": RENDER_MODES,
        "is_parallelizable": False,
        "render_fps": 2,
    }
    reward_modes = REWARD_MODES
    round_over_phase = Phase.HAND_OVER
    option_keys = ("deal", "opener")

    def __init__(self, reward: str = "points", render_mode: str | None = None, **config: Any) -> None:
        EzPickle.__init__(self, reward=reward, render_mode=render_mode, **config)
        block_config = GameConfig.make(**config)
        game = BlockDominoes(block_config)
        layout = ObservationLayout(block_config)
        self.codec = ActionCodec(block_config)
        self.PASS = self.codec.PASS
        identity = list(range(block_config.num_actions))  # actions are core moves (no relative trains)
        self._setup(
            block_config,
            game,
            layout,
            ObservationEncoder(game, layout),
            block_config.num_actions,
            [identity] * block_config.num_players,
            [identity] * block_config.num_players,
            reward,
            render_mode,
        )

    # ------------------------------------------------------------------- hooks
    def _new_state(self, rng: np.random.Generator, options: dict[str, Any]) -> GameState:
        """``options``: ``{"deal": {"hands": [...]}}`` and/or ``{"opener": k}``.

        A fixed deal is validated (B1-B4); ``opener`` makes seat ``k`` open the first hand
        with any tile (overriding B5).
        """
        deal = parse_deal(self.config, options["deal"]) if "deal" in options else None
        opener = seat_option(options, "opener", self.config.num_players, "B5")
        return self.game.new_game(rng, deal, opener)

    def _round_result(self, s: GameState) -> tuple[list[float], bool]:
        return hand_rewards(self.reward_mode, self.config, s), s.phase == Phase.GAME_OVER

    def _round_info(self, s: GameState) -> dict[str, Any]:
        """The hand's public result (B10-B12): every hand is shown when it is scored.

        The keys every game shares: ``hands`` (tiles by seat), ``pips`` (by seat),
        ``went_out`` (the seat that dominoed), ``blocked`` (a cierre), ``scores`` (by seat:
        the points its pair scored this hand, penalties), ``round`` and ``first_player``
        (the opener); and ``kind`` (``"domino"``/``"cierre"``), ``winner`` (the pair) and
        ``points`` (by pair), ``match_scores`` (points per pair so far, B13) and
        ``match_loser`` (the pair that reached the target, or -1). Seats and pairs are absolute.
        """
        r = s.results[-1]
        tiles = self.config.tiles.tiles
        n = self.config.num_players
        return {
            "round": len(s.results) - 1,
            "first_player": r.opener,
            "blocked": r.kind == CIERRE,
            "went_out": [r.kind == DOMINO and seat == r.seat for seat in range(n)],
            "hands": [[list(tiles[i]) for i in bits_list(h)] for h in s.hands],
            "pips": list(r.pips),
            "scores": [r.points[seat % 2] for seat in range(n)],
            "kind": r.kind,
            "winner": r.winner,
            "points": list(r.points),
            "match_scores": list(s.scores),
            "match_loser": s.match_loser,
        }

    def _previous_round_problem(self, s: GameState, result: Any) -> str | None:
        """A snapshot taken between two hands: the result of ``s.results[-1]`` (B10-B13), the
        hands it shows leaving the pips that hand recorded, no move of the new hand made."""
        if not s.results:
            return "the match's first hand is being played: no hand has ended yet"
        if s.moves or s.phase != Phase.PLAYING:
            return "a move of this hand was made: a hand's result is seen by its last step only"
        expected = self._round_info(s)  # the new hand's tiles stand in for the hands shown
        if not isinstance(result, dict) or sorted(result) != sorted(expected):
            return f"must be a hand's result with the keys {', '.join(expected)}"
        hands = shown_hands(self.config.tiles, result["hands"], self.config.num_players)
        if hands is None:
            return f"hands: {self.config.num_players} lists of distinct tiles, each as [a, b] in tile order"
        expected["hands"] = result["hands"]
        wrong = [k for k in expected if not json_equal(result[k], expected[k])]
        if wrong:
            return f"{wrong[0]}: not the last hand's (expected {expected[wrong[0]]!r})"
        pips = [self.config.tiles.hand_value(h) for h in hands]
        if pips != list(s.results[-1].pips):
            return f"hands: they leave {pips} pips, the last hand left {list(s.results[-1].pips)} (B10-B12)"
        return None

    def _public_view(self, s: GameState, seat: int) -> PublicView:
        return public_view(s, self.config, seat)

    def _next_round(self, s: GameState, rng: np.random.Generator) -> None:
        self.game.next_hand(s, rng)

    def _state_to_dict(self, s: GameState) -> dict[str, Any]:
        return state_to_dict(self.game, s)

    def _state_from_dict(self, d: dict[str, Any]) -> GameState:
        return state_from_dict(self.game, d)

    def _render_text(self, s: GameState) -> str:
        return render_text(self.game, s)
