"""Hidden information never reaches a seat's view (STYLE point 6; R8 boneyard face down).

Pairs of deals that differ ONLY in what a given seat cannot know (the tiles of its
opponents' hands and the order of the boneyard below what that seat draws) are played with
the same public action sequence; that seat's observation, infos, mask and render must be
identical step by step. The ``opponent_void`` view is checked for soundness (a shown void
is a real void) and for completeness after forced passes (R16, R20) and plays of a drawn
tile (R16).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mtrain_env
from mtrain_env.mexican_train import render_image
from mtrain_env.mexican_train.core.state import GameState, Phase
from tests.backends import BACKENDS

Tile = tuple[int, int]

CONFIGS = [
    pytest.param({}, id="pagat-4p"),
    pytest.param({"num_players": 2, "max_pips": 6}, id="pagat-2p-d6"),
    pytest.param({"num_players": 3, "max_pips": 9}, id="pagat-3p-d9"),
    pytest.param({"num_players": 6}, id="pagat-6p"),
    pytest.param({"rules": "wikipedia", "num_players": 5}, id="wikipedia-5p"),
    pytest.param({"rules": "cardinal", "num_players": 4}, id="cardinal-4p"),
    pytest.param({"rules": "cardinal", "num_players": 2, "max_pips": 6}, id="cardinal-2p-d6"),
    pytest.param({"opening_draw": True, "one_double_per_turn": True}, id="opening_draw-one_double"),
    pytest.param({"cover_own_double_on_it": True, "satisfy_in_reverse_order": True}, id="cover-reverse"),
    pytest.param({"no_double_satisfaction": True, "num_players": 3, "max_pips": 9}, id="no_satisfaction"),
    pytest.param(
        {"marker_off_by_any_play_on_it": True, "no_marker_when_forced_to_satisfy": True}, id="markers"
    ),
]


def key(t: Any) -> Tile:
    a, b = int(t[0]), int(t[1])
    return (a, b) if a <= b else (b, a)


def tile_id(max_pips: int, t: Tile) -> int:
    """The documented id formula ``a * (2N + 3 - a) / 2 + (b - a)`` (env docstring)."""
    a, b = key(t)
    return a * (2 * max_pips + 3 - a) // 2 + (b - a)


def random_deal(kwargs: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """A random full deal for ``reset(options={"deal": ...})`` (engine set aside unless dealt, R5)."""
    probe = mtrain_env.raw_env(**kwargs)
    c = probe.config
    engine = (c.max_pips, c.max_pips)
    pool = [(a, b) for a in range(c.max_pips + 1) for b in range(a, c.max_pips + 1)]
    if not c.engine_holder_opens:
        pool.remove(engine)
    order = rng.permutation(len(pool))
    shuffled = [list(pool[i]) for i in order]
    h = c.hand_size
    hands = [shuffled[p * h : (p + 1) * h] for p in range(c.num_players)]
    return {"hands": hands, "boneyard": shuffled[c.num_players * h :]}


def new_env(kwargs: dict[str, Any], deal: dict[str, Any], backend: str = "python") -> Any:
    env = mtrain_env.raw_env(render_mode="ansi", backend=backend, **kwargs)
    env.reset(seed=0, options={"deal": deal})
    return env


@dataclass
class Trace:
    """A random game from a fixed deal: the actions, and where every tile went."""

    actions: list[int]
    laid: set[Tile]  #: tiles laid on a train (or placed as the engine)
    drawn_by: dict[int, int]  #: boneyard position (0 = top) -> seat that drew it


def random_trace(kwargs: dict[str, Any], deal: dict[str, Any], rng: np.random.Generator) -> Trace:
    """Play uniformly random legal actions through round 0 and record the public history."""
    env = new_env(kwargs, deal)
    actions: list[int] = []
    drawn_by: dict[int, int] = {}
    drawn = 0
    laid: set[Tile] = set()
    while env.state_obj.phase < Phase.ROUND_OVER:
        a = int(rng.choice(env.legal_actions()))
        if a == env.DRAW:
            drawn_by[drawn] = env.current_seat
            drawn += 1
        actions.append(a)
        env.step(a)
    d = env.state_dict()
    for tr in [*d["trains"], d["mexican_train"]]:
        laid |= {key(t) for t in tr}
    laid.add(key(d["engine"]))
    return Trace(actions, laid, drawn_by)


def hidden_twin(
    deal: dict[str, Any], trace: Trace, observer: int, rng: np.random.Generator, how: str
) -> dict[str, Any]:
    """A deal that differs from ``deal`` only in what ``observer`` cannot see.

    The movable tiles are those never laid on the table and never in the observer's hand
    (dealt or drawn); they sit in opponents' hands or in boneyard places the observer does
    not draw. ``how``: ``"shuffle"`` permutes all of them, ``"swap"`` exchanges two,
    ``"boneyard"`` permutes only the boneyard places nobody draws.
    """
    hands = [[key(t) for t in h] for h in deal["hands"]]
    bone = [key(t) for t in deal["boneyard"]]
    # (kind, index, position) of every place holding a movable tile
    places: list[tuple[str, int, int]] = []
    for q, hand in enumerate(hands):
        if q == observer:
            continue
        places += [("hand", q, i) for i, t in enumerate(hand) if t not in trace.laid]
    for i, t in enumerate(bone):
        if t in trace.laid or trace.drawn_by.get(i) == observer:
            continue
        if how == "boneyard" and i in trace.drawn_by:
            continue
        places.append(("bone", 0, i))
    if how == "boneyard":
        places = [p for p in places if p[0] == "bone"]

    def get(p: tuple[str, int, int]) -> Tile:
        return hands[p[1]][p[2]] if p[0] == "hand" else bone[p[2]]

    tiles = [get(p) for p in places]
    if how == "swap" and len(places) >= 2:
        i, j = rng.choice(len(places), size=2, replace=False)
        tiles[i], tiles[j] = tiles[j], tiles[i]
    elif how != "swap":
        tiles = [tiles[int(k)] for k in rng.permutation(len(tiles))]
    for p, t in zip(places, tiles, strict=True):
        if p[0] == "hand":
            hands[p[1]][p[2]] = t
        else:
            bone[p[2]] = t
    return {"hands": [[list(t) for t in h] for h in hands], "boneyard": [list(t) for t in bone]}


def view(env: Any, seat: int) -> dict[str, Any]:
    """Everything ``seat`` is shown: observation, mask, infos, turn, and the render on its turn."""
    agent = f"player_{seat}"
    obs = env.observe(agent)
    out = {
        "observation": obs["observation"].copy(),
        "action_mask": obs["action_mask"].copy(),
        "infos": {k: np.asarray(v).copy() for k, v in env.infos[agent].items()},
        "agent_selection": env.agent_selection,
        "reward": env.rewards[agent],
    }
    if env.current_seat == seat:
        out["ansi"] = env.render()
    return out


def assert_same_view(a: dict[str, Any], b: dict[str, Any], context: str) -> None:
    assert a.keys() == b.keys(), context
    for k in a:
        if isinstance(a[k], np.ndarray):
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{k} differs: {context}")
        elif isinstance(a[k], dict):
            assert a[k].keys() == b[k].keys(), context
            for kk in a[k]:
                np.testing.assert_array_equal(a[k][kk], b[k][kk], err_msg=f"infos {kk}: {context}")
        else:
            assert a[k] == b[k], f"{k} differs: {context}"


def compare_twins(
    kwargs: dict[str, Any],
    deal_a: dict[str, Any],
    deal_b: dict[str, Any],
    actions: list[int],
    observer: int,
    backend: str = "python",
) -> tuple[int, int]:
    """Replay ``actions`` on both deals while legal in both; compare ``observer``'s views.

    Returns (steps compared, steps taken by opponents). Stops when an action is illegal in
    the twin or a round ends (the end of a round reveals hands, R24).
    """
    env_a, env_b = new_env(kwargs, deal_a, backend), new_env(kwargs, deal_b, backend)
    compared = opp_steps = 0
    for i, action in enumerate(actions):
        sa, sb = env_a.state_obj, env_b.state_obj
        if sa.phase >= Phase.ROUND_OVER or sb.phase >= Phase.ROUND_OVER:
            break
        ctx = f"{kwargs} observer {observer} before step {i}"
        assert_same_view(view(env_a, observer), view(env_b, observer), ctx)
        compared += 1
        if action not in env_b.legal_actions():
            break
        opp_steps += env_a.current_seat != observer
        env_a.step(action)
        env_b.step(action)
    return compared, opp_steps


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kwargs", CONFIGS)
def test_views_ignore_hidden_tiles(kwargs: dict[str, Any], backend: str) -> None:
    """For EVERY seat: obs, mask, infos and its ansi render only depend on what it may know."""
    n = mtrain_env.raw_env(**kwargs).config.num_players
    total = opp_total = 0
    for seed in range(3):
        rng = np.random.default_rng(1000 + seed)
        deal = random_deal(kwargs, rng)
        trace = random_trace(kwargs, deal, rng)
        for observer in range(n):
            for how in ("shuffle", "swap", "boneyard"):
                twin = hidden_twin(deal, trace, observer, rng, how)
                assert sorted(map(key, deal["hands"][observer])) == sorted(map(key, twin["hands"][observer]))
                compared, opp = compare_twins(kwargs, deal, twin, trace.actions, observer, backend)
                total += compared
                opp_total += opp
    # the comparison must have covered real play, opponents' turns included
    assert total >= 10 * n
    assert opp_total >= 5 * n


@pytest.mark.parametrize("kwargs", CONFIGS[:3])
def test_rgb_render_ignores_hidden_tiles(kwargs: dict[str, Any]) -> None:
    """The rgb_array picture of the seat on turn depends only on what that seat may know."""
    probe = mtrain_env.raw_env(**kwargs)
    probe.reset(seed=0)
    image = render_image.draw_table(probe.game, probe.state_obj)
    if image.shape[0] * image.shape[1] <= 100:
        pytest.skip("render_image.draw_table is still the 10x10 placeholder")
    n = probe.config.num_players
    compared = 0
    rng = np.random.default_rng(7)
    deal = random_deal(kwargs, rng)
    trace = random_trace(kwargs, deal, rng)
    for observer in range(n):
        twin = hidden_twin(deal, trace, observer, rng, "shuffle")
        env_a, env_b = new_env(kwargs, deal), new_env(kwargs, twin)
        for action in trace.actions:
            if max(env_a.state_obj.phase, env_b.state_obj.phase) >= Phase.ROUND_OVER:
                break
            if env_a.current_seat == observer:
                img_a = render_image.draw_table(env_a.game, env_a.state_obj)
                img_b = render_image.draw_table(env_b.game, env_b.state_obj)
                np.testing.assert_array_equal(img_a, img_b)
                compared += 1
            if action not in env_b.legal_actions():
                break
            env_a.step(action)
            env_b.step(action)
    assert compared >= n


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_hand_view_is_exactly_own_hand(kwargs: dict[str, Any]) -> None:
    """The ``hand`` view holds the observer's tiles (documented id formula) and nobody else's."""
    env = mtrain_env.raw_env(**kwargs)
    env.reset(seed=11)
    layout = env.observation_layout
    rng = np.random.default_rng(11)
    n_pips = env.config.max_pips
    steps = 0
    while env.state_obj.phase < Phase.ROUND_OVER and steps < 400:
        d = env.state_dict()
        for seat in range(env.config.num_players):
            obs = env.observe(f"player_{seat}")["observation"]
            hand_view = obs[layout["hand"].slice].reshape(layout["hand"].shape)
            expected = np.zeros(env.config.num_tiles, dtype=np.float32)
            for t in d["hands"][seat]:
                expected[tile_id(n_pips, t)] = 1.0
            np.testing.assert_array_equal(hand_view, expected)
            # no other seat's private tile leaks into any view of the vector except the table
            table_view = obs[layout["table"].slice]
            for q, hand in enumerate(d["hands"]):
                for t in hand:
                    assert table_view[tile_id(n_pips, t)] == 0
                    if q != seat:
                        assert hand_view[tile_id(n_pips, t)] == 0
        env.step(int(rng.choice(env.legal_actions())))
        steps += 1


# --------------------------------------------------------------------------- voids
def void_rows(env: Any, observer: int) -> np.ndarray:
    """The observer's ``opponent_void`` view: row k-1 is seat ``observer + k``."""
    layout = env.observation_layout
    obs = env.observe(f"player_{observer}")["observation"]
    return obs[layout["opponent_void"].slice].reshape(layout["opponent_void"].shape)


def provable_voids(env: Any, s: GameState) -> set[int]:
    """Pip values the seat on turn is proven to lack when it is forced to DRAW or PASS now.

    A value v is proven absent when every tile with a v half that is not on the table
    would be a legal play (found by giving the seat every such tile); a tile that would not
    be legal (e.g. a second double under ``one_double_per_turn``) could still be held.
    """
    g = env.game
    tiles = g.tiles
    width = env.config.num_trains
    probe = s.copy()
    off_table = tiles.full & ~s.table
    probe.hands[s.current] = off_table
    plays = [m for m in g.legal_moves(probe) if m < env.config.draw_action]
    would_be = {m // width for m in plays}
    values = {s.ends[m % width] for m in plays}
    out = set()
    for v in values:
        v_tiles = [i for i in range(tiles.num_tiles) if off_table >> i & 1 and v in tiles.tiles[i]]
        if all(i in would_be for i in v_tiles):
            out.add(v)
    return out


def holds_pip(hand: list[list[int]], v: int) -> bool:
    return any(v in t for t in hand)


@st.composite
def void_games(draw: st.DrawFn) -> tuple[dict[str, Any], int]:
    kwargs = dict(draw(st.sampled_from([p.values[0] for p in CONFIGS])))
    kwargs["rounds"] = draw(st.sampled_from([1, 2]))
    return kwargs, draw(st.integers(0, 2**32 - 1))


@given(game=void_games())
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
def test_opponent_void_is_sound_and_complete(game: tuple[dict[str, Any], int]) -> None:
    """``opponent_void``: shown voids are real, and forced passes / drawn plays reveal them.

    * soundness: whenever any observer sees void[q][v] == 1, seat q holds no v tile;
    * after a forced PASS (R10, R16, R20; not the voluntary stop of an R9 chain), every
      other seat sees void = 1 for each value proven absent at that moment;
    * after a DRAW (R16) the void row of the drawer is not claimed beyond what is known,
      and once the drawn tile is laid, the values proven absent at the draw are shown.
    """
    kwargs, seed = game
    env = mtrain_env.raw_env(**kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    n = env.config.num_players
    multi_opening = env.config.multi_tile_opening
    pending_draw: dict[int, set[int]] = {}  # seat -> values proven absent at its last draw
    while not all(env.terminations.values()):
        s = env.state_obj
        seat = s.current
        round_before = s.round_index
        action = int(rng.choice(env.legal_actions()))
        forced = provable_voids(env, s) if s.phase != Phase.SEEK_ENGINE else set()
        voluntary_stop = s.phase == Phase.OPENING and multi_opening and s.tiles_this_turn > 0
        after_draw = s.has_drawn
        env.step(action)
        s = env.state_obj
        if s.round_index != round_before or s.phase >= Phase.ROUND_OVER:
            pending_draw.clear()
            continue
        expect: set[int] = set()
        if action == env.PASS and not voluntary_stop:
            expect = forced
        elif action == env.DRAW:
            pending_draw[seat] = forced
        elif after_draw and seat in pending_draw:
            expect = pending_draw.pop(seat)  # the drawn tile was laid: the old hand is known
        d = env.state_dict()
        for observer in range(n):
            rows = void_rows(env, observer)
            for k in range(1, n):
                q = (observer + k) % n
                for v in np.flatnonzero(rows[k - 1]):
                    assert not holds_pip(d["hands"][q], int(v)), f"seat {q} shown void in {v} but holds one"
                if q == seat:
                    for v in expect:
                        assert rows[k - 1][v] == 1, (
                            f"seat {q} proved void in {v}; observer {observer} misses it"
                        )


def test_forced_opening_pass_shows_void() -> None:
    """R10: a seat that cannot start its train passes; the others then see it void in the engine.

    Double-6, 2 seats; seat 1 holds no 6, so after seat 0's opening chain it must pass
    (no draw on the first turn under pagat) and seat 0's view marks seat 1 void in 6 only.
    """
    hands = [[[6, 1], [1, 2], [3, 4], [0, 0]], [[0, 1], [0, 2], [0, 3], [2, 2]]]
    dealt = {key(t) for h in hands for t in h} | {(6, 6)}
    bone = [[a, b] for a in range(7) for b in range(a, 7) if (a, b) not in dealt]
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=4)
    env.reset(seed=0, options={"deal": {"hands": hands, "boneyard": bone}})
    env.step(env.encode_action((6, 1), 0))
    env.step(env.PASS)  # seat 0 stops its chain voluntarily: nothing is revealed
    assert not void_rows(env, 1).any()
    assert env.current_seat == 1
    assert env.legal_actions() == [env.PASS]
    assert not void_rows(env, 0).any()
    env.step(env.PASS)
    rows = void_rows(env, 0)
    expected = np.zeros_like(rows)
    expected[0, 6] = 1
    np.testing.assert_array_equal(rows, expected)
    # the passer's own view shows nothing about itself (opponent rows only) and seat 0 is not void
    assert not void_rows(env, 1).any()


#: every registered fair agent at a small budget (``oracle`` declares
#: ``cheats`` and are given the truth on purpose)
FAIR_AGENTS = [
    "random", "greedy", "planner", "mc[rollouts=8]",
    "ismcts[sims=16]", "openspiel_ismcts[iterations=10]",
    "champion[sims=8]", "champion_policy", "ppo",
]  # fmt: skip


def test_every_registered_agent_is_checked_for_leaks() -> None:
    from agents.registry import agent_class, agent_names, parse_spec

    checked = {parse_spec(spec)[0] for spec in FAIR_AGENTS}
    fair = {name for name in agent_names() if not getattr(agent_class(name), "cheats", False)}
    assert checked == fair


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("spec", FAIR_AGENTS)
def test_fair_agents_choose_the_same_move_whatever_the_hidden_tiles(spec: str, backend: str) -> None:
    """An agent seeded alike chooses the same action in two positions that differ only in
    tiles its seat cannot see (opponents' hands, the boneyard), on either backend: a
    function of its seat's view, not of the hidden state. (An agent given the truth, like
    ``oracle``, fails this.)"""
    from agents.registry import make_agent

    decided = 0
    for kwargs in ({}, {"num_players": 3, "max_pips": 9}):
        try:  # the networks play the 4-player double-12 table they were trained for
            make_agent(spec).check_game(mtrain_env.raw_env(**kwargs).config)
        except ValueError:
            continue
        rng = np.random.default_rng(7)
        deal = random_deal(kwargs, rng)
        trace = random_trace(kwargs, deal, rng)
        for observer, how in ((0, "swap"), (1, "shuffle"), (2, "swap")):
            twin = hidden_twin(deal, trace, observer, rng, how)
            env_a, env_b = new_env(kwargs, deal, backend), new_env(kwargs, twin, backend)
            for action in trace.actions:
                if env_a.state_obj.phase >= Phase.ROUND_OVER or action not in env_b.legal_actions():
                    break
                if env_a.current_seat == observer and len(env_a.legal_actions()) > 1:
                    chosen = []
                    for env in (env_a, env_b):
                        agent = make_agent(spec, seed=11)
                        chosen.append(agent.act(agent.decision_class(env, f"player_{observer}")))
                    assert chosen[0] == chosen[1], f"{spec} reads hidden tiles ({kwargs}, seat {observer})"
                    decided += 1
                env_a.step(action)
                env_b.step(action)
    assert decided >= 5  # real decisions were compared
