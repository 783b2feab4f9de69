"""The OpenSpiel games' information states and declared bounds (mtrain_env.openspiel).

* A seat's information-state string holds its dealt hand as a SET: the same hands dealt in
  any order of chance outcomes give the same strings (tabular algorithms key by them),
  while different hands, drawn tiles (R16) and public moves still give different ones
  (perfect recall), and another seat's hidden tiles never enter it.
* ``GameType.max_num_players`` is the bound ``load_game`` accepts (R3: 17 on double-18).
* ``max_game_length`` holds even for a 2-player block match, whose hands can score 0
  (B10) and so follow each other without a bound in the rules: the game cuts the match.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import mtrain_env.openspiel  # noqa: E402  (registers the games)
from mtrain_env.mexican_train.core.config import MAX_PIPS, MIN_PIPS, max_players  # noqa: E402
from mtrain_env.openspiel.block import max_hands  # noqa: E402

MT = mtrain_env.openspiel.mexican_train.GAME_NAME
BLOCK = mtrain_env.openspiel.block.GAME_NAME

#: (game, parameters, seed of the deals): a session and the engine dealt (R5 variant);
#: block with 4 and 2 players, a match, and a first deal thrown back (B4; seed 7 deals it)
CONFIGS = [
    (MT, {"players": 2, "max_pips": 6, "rounds": 2}, 1),
    (MT, {"players": 3, "max_pips": 9, "flags": "engine_holder_opens"}, 1),
    (BLOCK, {}, 1),
    (BLOCK, {"players": 2, "match": True, "target": 15}, 1),
    (BLOCK, {"redeal_doubles": 4}, 7),
]


def _tile(game: Any, t: int) -> str:
    a, b = game.static.config.tiles.tiles[t]
    return f"{a}-{b}"


def _is_deal(state: Any) -> bool:
    return state.is_chance_node() and not getattr(state, "drawing", False)


def _deal_plan(state: Any, deal_rng: np.random.Generator, order_rng: np.random.Generator) -> list[int]:
    """The tiles of the deal starting at ``state`` in the order they are dealt: WHICH tiles each
    seat gets comes from ``deal_rng``, the ORDER within each hand from ``order_rng``."""
    config = state.get_game().static.config
    n, h = config.num_players, config.hand_size
    pool = [t for t, _ in state.chance_outcomes()]
    dealt = [int(t) for t in deal_rng.permutation(pool)[: n * h]]
    return [int(t) for k in range(n) for t in order_rng.permutation(dealt[k * h : (k + 1) * h])]


def _trace(
    name: str, params: dict[str, Any], deal_seed: int, order_seed: int
) -> tuple[list[tuple[Any, ...]], list[int]]:
    """A whole game, everything fixed but the order of the tiles within each dealt hand.

    Returns what every seat sees at every decision (information-state string,
    observation string, information-state tensor) and the history of chance outcomes
    and actions.
    """
    game = pyspiel.load_game(name, params)
    deal_rng, order_rng = np.random.default_rng(deal_seed), np.random.default_rng(order_seed)
    state = game.new_initial_state()
    queue: list[int] = []
    seen: list[tuple[Any, ...]] = []
    while not state.is_terminal():
        if _is_deal(state):
            if not queue:  # a new deal (a new round or hand, or a redeal, B4)
                queue = _deal_plan(state, deal_rng, order_rng)
            state.apply_action(queue.pop(0))
        elif state.is_chance_node():  # a draw (R16): the lowest tile of the boneyard
            state.apply_action(state.chance_outcomes()[0][0])
        else:
            seen.append(
                tuple(
                    (
                        state.information_state_string(p),
                        state.observation_string(p),
                        tuple(state.information_state_tensor(p)),
                    )
                    for p in range(game.num_players())
                )
            )
            legal = state.legal_actions()
            state.apply_action(legal[len(seen) % len(legal)])
    return seen, state.history()


@pytest.mark.parametrize(("name", "params", "deal_seed"), CONFIGS, ids=str)
def test_the_order_a_hand_is_dealt_in_is_not_information(
    name: str, params: dict[str, Any], deal_seed: int
) -> None:
    """The same hands dealt in three orders: every seat's information state and observation,
    at every decision of the game, is the same (one information set, one string)."""
    base, base_history = _trace(name, params, deal_seed, order_seed=0)
    assert len(base) > 10
    if "redeal_doubles" in params:
        assert ": redeal" in base[0][0][0]  # the thrown-back deal is in it too
    for order_seed in (1, 2):
        seen, history = _trace(name, params, deal_seed, order_seed)
        assert history != base_history  # the chance outcomes did come in another order
        assert sorted(history) == sorted(base_history)
        assert len(seen) == len(base)
        for step, (a, b) in enumerate(zip(seen, base, strict=True)):
            assert a == b, f"decision {step}: a seat's view depends on the deal order"


def _dealt_state(name: str, params: dict[str, Any], hands: list[list[int]]) -> Any:
    state = pyspiel.load_game(name, params).new_initial_state()
    for hand in hands:
        for t in hand:
            assert _is_deal(state)
            state.apply_action(t)
    assert not state.is_chance_node()
    return state


@pytest.mark.parametrize(("name", "params"), [(MT, {"players": 2, "max_pips": 6}), (BLOCK, {})])
def test_different_hands_give_different_information_states(name: str, params: dict[str, Any]) -> None:
    game = pyspiel.load_game(name, params)
    n = game.num_players()
    state = game.new_initial_state()
    plan = _deal_plan(state, np.random.default_rng(4), np.random.default_rng(0))
    h = len(plan) // n
    hands = [plan[k * h : (k + 1) * h] for k in range(n)]
    base = _dealt_state(name, params, hands)
    # seat 1 gets another tile than its first one (another seat's or an undealt one): seat 0
    # cannot tell, seat 1 can
    undealt = [t for t, _ in state.chance_outcomes() if t not in plan]
    other = [list(x) for x in hands]
    if undealt:
        other[1][0] = undealt[0]
    else:  # 4-player block: the whole set is dealt; swap a tile between seats 1 and 3
        other[1][0], other[3][0] = other[3][0], other[1][0]
    changed = _dealt_state(name, params, other)
    assert changed.information_state_string(0) == base.information_state_string(0)
    assert changed.observation_string(0) == base.observation_string(0)
    assert changed.information_state_string(1) != base.information_state_string(1)
    assert changed.observation_string(1) != base.observation_string(1)
    # seat 0's own string names its tiles, and no tile of another seat
    info0 = base.information_state_string(0)
    mine = [line for line in info0.splitlines() if line.startswith("p0 picks up ")]
    assert mine == ["p0 picks up " + " ".join(_tile(game, t) for t in sorted(hands[0]))]
    for q in range(1, n):
        assert f"p{q} picks up {h} tiles" in info0.splitlines()
        for t in hands[q]:
            assert _tile(game, t) not in info0


def test_a_drawn_tile_is_the_drawers_information_only() -> None:
    """Perfect recall after the deal: the tile a seat draws (R16) is in its string, not the other's."""
    game = pyspiel.load_game(MT, {"players": 2, "max_pips": 6})
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    while not state.drawing:
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
            continue
        legal = state.legal_actions()
        draw = game.static.config.draw_action
        state.apply_action(draw if draw in legal else legal[int(rng.integers(len(legal)))])
        assert not state.is_terminal()
    drawer = state.game_state.current
    boneyard = [t for t, _ in state.chance_outcomes()]
    assert len(boneyard) >= 2
    after = []
    for t in boneyard[:2]:
        child = state.clone()
        child.apply_action(t)
        after.append(child)
        assert f"p{drawer} draws {_tile(game, t)}" in child.information_state_string(drawer)
        assert f"p{drawer} draws\n" in child.information_state_string(1 - drawer)
    assert after[0].information_state_string(drawer) != after[1].information_state_string(drawer)
    assert after[0].information_state_string(1 - drawer) == after[1].information_state_string(1 - drawer)


def test_the_declared_player_bound_is_what_load_game_accepts() -> None:
    top = max(max_players(pips) for pips in range(MIN_PIPS, MAX_PIPS + 1))
    assert top == 17  # R3: N - 1 seats on double-N past double-12, double-18 the largest set
    registered = {t.short_name: t for t in pyspiel.registered_games()}[MT]
    game = pyspiel.load_game(MT, {"players": top, "max_pips": MAX_PIPS})
    assert game.num_players() == top
    assert registered.max_num_players == game.get_type().max_num_players == top
    assert registered.min_num_players == game.get_type().min_num_players == 2
    assert not game.new_initial_state().is_terminal()
    with pytest.raises(Exception, match="R3: num_players"):
        pyspiel.load_game(MT, {"players": top + 1, "max_pips": MAX_PIPS})


def _zero_point_line(state: Any, budget: list[int]) -> list[int] | None:
    """Actions ending the hand in play with 0 points scored (depth-first), or None."""
    budget[0] -= 1
    if budget[0] < 0:
        return None
    if state.is_chance_node() or state.is_terminal():  # the hand is over
        return [] if state.game_state.results[-1].points == (0, 0) else None
    for action in state.legal_actions():
        child = state.clone()
        child.apply_action(action)
        line = _zero_point_line(child, budget)
        if line is not None:
            return [action, *line]
    return None


def _play_zero_point_hand(state: Any, rng: np.random.Generator) -> tuple[Any, int]:
    """Deal and play a 2-player hand whose loser ends holding only [0|0] (a dominó scoring 0,
    B10): seat 0 gets 7 tiles without a 0, seat 1 [0|0] and 6 such tiles, so [0|0] can never
    be laid. Returns the state after it and the player actions made."""
    game = state.get_game()
    tiles = game.static.config.tiles.tiles
    blanks = [i for i, (a, b) in enumerate(tiles) if a and b]
    double_blank = tiles.index((0, 0))
    for _attempt in range(50):
        pick = [int(t) for t in rng.permutation(blanks)[:13]]
        trial = state.clone()
        for t in sorted(pick[:7]) + sorted([*pick[7:], double_blank]):
            trial.apply_action(t)
        if trial.is_chance_node():  # thrown back (B4)
            continue
        line = _zero_point_line(trial, [5000])
        if line:
            for action in line:
                trial.apply_action(action)
            return trial, len(line)
    raise AssertionError("no 0-point hand found")


def test_a_block_match_of_zero_point_hands_stays_within_max_game_length() -> None:
    """2 players, target 1: every hand scoring 0 leaves the match open. The rules would go on
    without end; the game is cut after ``max_hands`` hands, within ``max_game_length``."""
    game = pyspiel.load_game(BLOCK, {"players": 2, "match": True, "target": 1})
    config = game.static.config
    assert max_hands(config) == 4
    assert game.max_game_length() == 4 * config.max_hand_moves
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    moves = hands = 0
    while not state.is_terminal() and hands < 30:
        state, made = _play_zero_point_hand(state, rng)
        moves += made
        hands += 1
        assert state.game_state.scores == [0, 0]
        assert moves <= game.max_game_length(), f"{hands} hands, {moves} moves"
    assert state.is_terminal()
    assert hands == max_hands(config)
    assert state.returns() == [0.0, 0.0]
    assert state.information_state_string(0).endswith("match cut after 4 hands\n")
