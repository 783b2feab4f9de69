"""Scripted deals and positions for every partnership-dominoes rule (B1-B13) and every flag.

Rule ids are those of :mod:`mtrain_env.block.core.rules` (mapped to ``reference/001``). Everything
goes through the public env API: ``reset(options={"deal": ..., "opener": k})``, the action
mask, ``encode_action``, ``state_dict``/``load_state_dict``. Tiles are text (``"6-3"``),
moves ``"3-6 L"`` / ``"3-6 R"`` (end 0 / end 1 of the line) or ``"PASS"``. Expected points
are computed here from the tile texts, never read back from the engine.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from mtrain_env.block import raw_env
from mtrain_env.block.core.config import GameConfig, points
from mtrain_env.mexican_train.core import rules as mexican_rules
from mtrain_env.tilegame.actions import IllegalMoveError

ALL_TILES = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]


# ----------------------------------------------------------------------------- helpers
def tile(t: str) -> tuple[int, int]:
    a, b = t.split("-")
    return int(a), int(b)


def norm(t: str | tuple[int, int]) -> str:
    a, b = sorted(tile(t) if isinstance(t, str) else t)
    return f"{a}-{b}"


def pips(text: str) -> int:
    """Pips of the tiles in ``text`` ("1-2 3-3" -> 9), from the texts alone (B1)."""
    return sum(sum(tile(t)) for t in text.split())


def rest_of(*named: str) -> str:
    used = {norm(t) for group in named for t in group.split()}
    return " ".join(t for t in ALL_TILES if t not in used)


def deal_env(
    hands: list[str],
    *,
    rest_to: int | None = None,
    open_seat: int | None = None,
    seed: int = 0,
    **config: Any,
) -> raw_env:
    """A reset ``raw_env`` on a scripted deal; unnamed tiles go to hand ``rest_to``.

    ``redeal_doubles`` defaults to ``None`` here so uneven scripted hands are never refused (B4).
    """
    hands = list(hands)
    if rest_to is not None:
        hands[rest_to] = (hands[rest_to] + " " + rest_of(*hands)).strip()
    config.setdefault("redeal_doubles", None)
    env = raw_env(**config)
    options: dict[str, Any] = {"deal": {"hands": [[list(tile(t)) for t in h.split()] for h in hands]}}
    if open_seat is not None:
        options["opener"] = open_seat
    env.reset(seed=seed, options=options)
    return env


def on_turn(env: raw_env) -> int:
    seat = env.state_dict()["current_player"]
    assert env.agent_selection == f"player_{seat}"
    return int(seat)


def legal(env: raw_env) -> set[str]:
    """The on-turn mask decoded to move texts; checks every other seat's mask is all zero."""
    seat = on_turn(env)
    out = set()
    for p, agent in enumerate(env.possible_agents):
        mask = env.observe(agent)["action_mask"]
        assert mask.dtype == np.int8
        if p != seat:
            assert not mask.any(), f"{agent} is off turn but has a mask"
            continue
        ids = np.flatnonzero(mask).tolist()
        assert ids == env.legal_actions()
        for a in ids:
            d = env.decode_action(a)
            if d.kind == "pass":
                out.add("PASS")
            else:
                assert d.tile is not None and d.end is not None
                out.add(f"{norm(d.tile)} {'LR'[d.end]}")
    return out


def encode(env: raw_env, move: str) -> int:
    if move == "PASS":
        return int(env.PASS)
    t, end = move.split()
    return env.encode_action(tile(t), "LR".index(end))


def act(env: raw_env, *moves: str) -> None:
    for move in moves:
        assert move in legal(env), f"{move!r} not in {sorted(legal(env))}"
        env.step(encode(env, move))


def hand_of(env: raw_env, seat: int) -> set[str]:
    return {norm((a, b)) for a, b in env.state_dict()["hands"][seat]}


def line_text(env: raw_env) -> str:
    return " ".join(f"{a}-{b}" for a, b in env.state_dict()["line"])


def position(line: str, hands: list[str], current: int, open_seat: int = 0, **config: Any) -> raw_env:
    """A ``raw_env`` loaded (``load_state_dict``) at a mid-hand position.

    ``line`` is oriented from end 0 to end 1; every line tile is recorded as laid by seat
    ``open_seat``, also the opener (who laid what only feeds the observation). Hands must hold
    every other tile.
    """
    n = len(hands)
    env = deal_env(
        [" ".join(ALL_TILES[k] for k in range(p, 28, n)) if n == 4 else h for p, h in enumerate(hands)],
        num_players=n,
        **config,
    )
    d = env.state_dict()
    line_tiles = [list(tile(t)) for t in line.split()]
    d["line"] = line_tiles
    d["hands"] = [[list(tile(t)) for t in h.split()] for h in hands]
    if n == 2:
        d["sleeping"] = [list(tile(t)) for t in rest_of(line, *hands).split()]
    d["played_by"] = [[sorted(t) for t in line_tiles] if p == open_seat else [] for p in range(n)]
    d["voids"] = [[] for _ in range(n)]
    d["current_player"] = current
    d["opener"] = open_seat
    d["forced_opening"] = None
    d["last_player"] = (current - env.config.direction) % n
    d["moves"] = len(line_tiles)
    d["env"]["agent_selection"] = f"player_{current}"
    env.load_state_dict(d)
    return env


# A 4-player deal used by several tests: seat 2 holds the double six.
DEAL_A = [
    "0-0 0-1 0-2 0-3 0-4 0-5 0-6",
    "1-1 1-2 1-3 1-4 1-5 1-6 2-2",
    "6-6 2-3 2-4 2-5 2-6 3-3 3-4",
    "3-5 3-6 4-4 4-5 4-6 5-5 5-6",
]

# B11 cierre position: the line ends 0 | 6 and holds six of the seven 0s; seat 1 closes it
# with 0-6. The 18 tiles left out of the line weigh 126 pips: 63 per pair here (a tie).
CIERRE_LINE = "0-1 1-2 2-0 0-0 0-3 3-4 4-0 0-5 5-6"
CIERRE_TIE = ["6-6 5-5 4-6 4-5", "0-6 1-1 1-3 1-5 1-6 2-2", "3-6 4-4 1-4", "2-3 2-4 2-5 2-6 3-3 3-5"]
# the same with 1-4 moved from seat 2 to seat 3: pair 0 holds 58, pair 1 holds 68
CIERRE_SPLIT = ["6-6 5-5 4-6 4-5", "0-6 1-1 1-3 1-5 1-6 2-2", "3-6 4-4", "1-4 2-3 2-4 2-5 2-6 3-3 3-5"]


# ----------------------------------------------------------------------------- B1-B3
def test_b1_double_six_set_and_codec_formula() -> None:
    """B1: 28 tiles, lexicographic ids a*(15-a)/2 + (b-a); action = id*2 + end, PASS = 56."""
    env = raw_env()
    c = env.config
    assert c.num_tiles == 28 and len(ALL_TILES) == 28
    space: Any = env.action_space("player_0")
    assert space.n == 57 and env.PASS == 56
    for k, t in enumerate(ALL_TILES):
        a, b = tile(t)
        assert a * (15 - a) // 2 + (b - a) == k
        for end in (0, 1):
            action = env.encode_action((b, a), end)
            assert action == 2 * k + end
            d = env.decode_action(action)
            assert d.kind == "play" and d.tile == (a, b) and d.end == end
    assert env.decode_action(56).kind == "pass"
    assert c.max_hand_points == sum(pips(t) for t in ALL_TILES) == 168


def test_b2_b3_random_deal_seven_each_whole_set() -> None:
    """B2/B3: four hands of 7 covering the set (no boneyard); two players: 7 each, 14 sleep."""
    for n in (4, 2):
        env = raw_env(num_players=n)
        for seed in range(20):
            env.reset(seed=seed)
            d = env.state_dict()
            hands = [{norm(tuple(t)) for t in h} for h in d["hands"]]
            assert [len(h) for h in hands] == [7] * n
            sleeping = {norm(tuple(t)) for t in d["sleeping"]}
            assert len(sleeping) == 28 - 7 * n
            assert set().union(*hands, sleeping) == set(ALL_TILES)


def test_b3_sleeping_tiles_are_never_playable() -> None:
    """B3 (2 players): a sleeping tile that would fit never appears; the hand closes instead."""
    # 6-6 opens (B5); 6-5 would fit but sleeps; nobody can play -> cierre at once
    env = deal_env(["6-6 1-2", "5-5 0-1"], num_players=2)
    assert legal(env) == {"6-6 L"}
    act(env, "6-6 L")
    d = env.state_dict()
    assert d["phase"] == "GAME_OVER" and d["results"][0]["kind"] == "cierre"
    assert all(env.terminations.values())


# ----------------------------------------------------------------------------- B4
def _first_bad_seed(threshold: int, players: int = 4) -> int:
    """A seed whose FIRST permutation deals some hand ``threshold``+ doubles (found independently)."""
    doubles = {k for k, t in enumerate(ALL_TILES) if tile(t)[0] == tile(t)[1]}
    for seed in range(20000):
        perm = np.random.default_rng(seed).permutation(28)
        if any(len(doubles & set(perm[7 * p : 7 * p + 7].tolist())) >= threshold for p in range(players)):
            return seed
    raise AssertionError("no such seed")


def _replayed_deal(seed: int, threshold: int | None, players: int = 4) -> tuple[list[set[int]], int]:
    """B4 as 001 states it, replayed: reshuffle (a permutation each) until no hand has too many doubles."""
    doubles = {k for k, t in enumerate(ALL_TILES) if tile(t)[0] == tile(t)[1]}
    rng = np.random.default_rng(seed)
    redeals = 0
    while True:
        perm = rng.permutation(28).tolist()
        hands = [set(perm[7 * p : 7 * p + 7]) for p in range(players)]
        if threshold is None or all(len(h & doubles) < threshold for h in hands):
            return hands, redeals
        redeals += 1


@pytest.mark.parametrize("threshold", [4, 5, 6, None])
@pytest.mark.parametrize("players", [4, 2])
def test_b4_redeal_on_too_many_doubles(threshold: int | None, players: int) -> None:
    """B4: a hand with ``redeal_doubles``+ doubles is thrown back and redealt (seeded); None: never."""
    seed = _first_bad_seed(threshold if threshold is not None else 5, players)
    env = raw_env(redeal_doubles=threshold, num_players=players)
    env.reset(seed=seed)
    d = env.state_dict()
    expected, redeals = _replayed_deal(seed, threshold, players)
    got = [{ALL_TILES.index(norm(tuple(t))) for t in h} for h in d["hands"]]
    assert got == expected
    assert d["redeals"] == redeals
    if threshold is None:
        assert redeals == 0
    else:
        assert redeals >= 1
        assert all(sum(a == b for a, b in h) < threshold for h in d["hands"])


def test_b4_seven_doubles() -> None:
    """B4 threshold 7 (all seven doubles in one hand is too rare to seed-search): a fixed deal is
    refused under 7 and accepted under None; random deals still follow the replayed shuffle."""
    hands = ["0-0 1-1 2-2 3-3 4-4 5-5 6-6", "0-1 0-2 0-3 0-4 0-5 0-6 1-2"]
    as_json = {"hands": [[list(tile(t)) for t in h.split()] for h in hands]}
    with pytest.raises(ValueError, match="B4"):
        raw_env(redeal_doubles=7, num_players=2).reset(options={"deal": as_json})
    deal_env(hands, num_players=2, redeal_doubles=None)
    env = raw_env(redeal_doubles=7)
    env.reset(seed=3)
    expected, redeals = _replayed_deal(3, 7)
    assert [{ALL_TILES.index(norm(tuple(t))) for t in h} for h in env.state_dict()["hands"]] == expected
    assert redeals == 0


def test_b4_default_threshold_is_five_and_fixed_deals_obey_it() -> None:
    """B4: 001's standard threshold is 5; a fixed deal it would throw back is refused."""
    assert GameConfig.make().redeal_doubles == 5
    hands = ["0-0 1-1 2-2 3-3 4-4 0-1 0-2", "5-5 6-6 0-3 0-4 0-5 0-6 1-2"]
    env = raw_env(redeal_doubles=5, num_players=2)
    with pytest.raises(ValueError, match="B4"):
        env.reset(options={"deal": {"hands": [[list(tile(t)) for t in h.split()] for h in hands]}})
    env = deal_env(hands, num_players=2, redeal_doubles=6)  # 5 doubles are fine under 6
    assert on_turn(env) == 1  # B5: 6-6 opens


def test_b4_statistics_no_hand_reaches_the_threshold() -> None:
    """B4 over many seeded deals: no hand ever shows the threshold; redeals happen."""
    env = raw_env(redeal_doubles=4)
    total = 0
    for seed in range(300):
        env.reset(seed=seed)
        d = env.state_dict()
        assert all(sum(a == b for a, b in h) < 4 for h in d["hands"])
        total += d["redeals"]
    assert total > 0


# ----------------------------------------------------------------------------- B5
def test_b5_double_six_holder_opens_with_it() -> None:
    """B5: the first hand is opened by the double-six holder, laying it (only legal move)."""
    env = deal_env(DEAL_A)
    assert on_turn(env) == 2
    assert legal(env) == {"6-6 L"}
    act(env, "6-6 L")
    assert line_text(env) == "6-6"
    assert on_turn(env) == 3  # B7: clockwise


def test_b5_random_deals_open_with_double_six() -> None:
    """B5 on seeded deals: the opener is whoever holds 6-6 and its only move is 6-6."""
    env = raw_env()
    for seed in range(30):
        env.reset(seed=seed)
        seat = on_turn(env)
        assert "6-6" in hand_of(env, seat)
        assert legal(env) == {"6-6 L"}


def test_b5_two_players_highest_double_or_heaviest_tile_when_six_six_sleeps() -> None:
    """B5 (2 players, our choice): 6-6 asleep -> highest double dealt opens; no double -> heaviest tile."""
    env = deal_env(["5-5 1-2", "4-4 5-6"], num_players=2)
    assert on_turn(env) == 0 and legal(env) == {"5-5 L"}
    env = deal_env(["1-2 3-4", "5-6 0-1"], num_players=2)
    assert on_turn(env) == 1 and legal(env) == {"5-6 L"}


def test_b5_first_opener_seat0_any_tile() -> None:
    """B5 flag first_opener='seat0' (OpenSpiel's rule, preset 'openspiel'): seat 0 opens with any tile."""
    choices: list[dict[str, Any]] = [{"first_opener": "seat0"}, {"rules": "openspiel"}]
    for kwargs in choices:
        env = deal_env(DEAL_A, **kwargs)
        assert on_turn(env) == 0
        assert legal(env) == {f"{t} L" for t in DEAL_A[0].split()}


def test_b5_reset_option_opener_overrides() -> None:
    """reset option 'opener': that seat opens the first hand with any tile."""
    env = deal_env(DEAL_A, open_seat=1)
    assert on_turn(env) == 1
    assert legal(env) == {f"{t} L" for t in DEAL_A[1].split()}


# ----------------------------------------------------------------------------- B6
def _domino_hand(**config: Any) -> raw_env:
    """Match mode; seat 0 holds only 6-6 and goes out at once (B5 + B10)."""
    env = deal_env(["6-6", "0-0 0-1", "", "0-2 1-1"], rest_to=2, match=True, **config)
    act(env, "6-6 L")
    return env


@pytest.mark.parametrize(("opener", "expected"), [("winner", 0), ("partner", 2)])
def test_b6_later_hand_opened_by_winning_pair_with_any_tile(opener: str, expected: int) -> None:
    """B6: the next hand is opened by the player who won (or the partner), with ANY tile."""
    env = _domino_hand(opener=opener)
    d = env.state_dict()
    assert d["hand_index"] == 1 and d["phase"] == "PLAYING"
    assert on_turn(env) == expected
    assert legal(env) == {f"{t} L" for t in hand_of(env, expected)}
    assert d["forced_opening"] is None


def test_b6_opener_double_six_every_hand() -> None:
    """B6 variant opener='double_six': every hand is opened by the 6-6 holder, laying it."""
    env = _domino_hand(opener="double_six")
    seat = on_turn(env)
    assert "6-6" in hand_of(env, seat)
    assert legal(env) == {"6-6 L"}


def test_b6_double_opening_variant() -> None:
    """001 variant double_opening: the opener must lay a double when holding one (any tile otherwise)."""
    env = deal_env(DEAL_A, open_seat=0, double_opening=True)
    assert legal(env) == {"0-0 L"}
    env = deal_env(_split4("0-1 0-2", rest_of("0-1 0-2")), open_seat=0, double_opening=True)
    assert legal(env) == {"0-1 L", "0-2 L"}
    env = _domino_hand(double_opening=True)  # hand 2: opener = winner seat 0, random deal
    doubles = {t for t in hand_of(env, 0) if tile(t)[0] == tile(t)[1]}
    assert legal(env) == {f"{t} L" for t in (doubles or hand_of(env, 0))}


def test_b6_cierre_lead_is_winning_member_with_fewer_pips() -> None:
    """B6 after a cierre: the winning pair's member with fewer pips opens the next hand."""
    env = position(CIERRE_LINE, CIERRE_SPLIT, current=1, match=True)
    act(env, "0-6 R")
    d = env.state_dict()
    result = d["results"][0]
    assert result["kind"] == "cierre" and result["winner"] == 0
    # seat 0 holds 6-6 5-5 4-6 4-5 (41), seat 2 holds 3-6 4-4 (17)
    assert pips(CIERRE_SPLIT[0]) == 41 and pips(CIERRE_SPLIT[2]) == 17
    assert result["lead"] == 2 and on_turn(env) == 2


# ----------------------------------------------------------------------------- B7
def test_b7_clockwise_and_counter_clockwise() -> None:
    """B7: after the opener, clockwise play goes to seat+1; counter_clockwise to seat-1."""
    env = deal_env(DEAL_A)
    act(env, "6-6 L")
    assert on_turn(env) == 3
    env = deal_env(DEAL_A, counter_clockwise=True)
    act(env, "6-6 L")
    assert on_turn(env) == 1
    # relative seats follow play order: from seat 0, seat 1 is "previous" (index 3) when counter-clockwise
    obs = env.observe("player_0")["observation"]
    turn = obs[env.observation_layout["turn"].slice]
    assert turn.tolist() == [0, 0, 0, 1]


# ----------------------------------------------------------------------------- B8, B9
def test_b8_line_ends_and_mirror_placements() -> None:
    """B8: a tile goes on an end it matches; equal ends offer end 0 only; its other half becomes the end."""
    env = deal_env(DEAL_A)
    act(env, "6-6 L")
    assert legal(env) == {"3-6 L", "4-6 L", "5-6 L"}  # both ends show 6: one placement each
    act(env, "5-6 L")
    assert line_text(env) == "5-6 6-6"
    assert legal(env) == {"0-5 L", "0-6 R"}  # seat 0
    act(env, "0-6 R")
    assert line_text(env) == "5-6 6-6 6-0"
    assert legal(env) == {"1-5 L"}  # seat 1: no 0, one 5
    act(env, "1-5 L")
    assert line_text(env) == "1-5 5-6 6-6 6-0"
    assert env.state_obj.ends == [1, 0]


def test_b8_tile_matching_both_ends_two_actions() -> None:
    """B8: a tile that matches both (different) ends has two actions with different results."""
    rest = rest_of("5-6 6-6 6-0", "0-5 1-2")
    env = position("5-6 6-6 6-0", _split4("0-5 1-2", rest), current=0)
    assert legal(env) == {"0-5 L", "0-5 R"}
    act(env, "0-5 L")
    assert line_text(env) == "0-5 5-6 6-6 6-0" and env.state_obj.ends == [0, 0]
    env = position("5-6 6-6 6-0", _split4("0-5 1-2", rest), current=0)
    act(env, "0-5 R")
    assert line_text(env) == "5-6 6-6 6-0 0-5" and env.state_obj.ends == [5, 5]


def _split4(first: str, rest: str) -> list[str]:
    """Seat 0 holds ``first``; the other tiles go round-robin to seats 1-3."""
    others = rest.split()
    return [first] + [" ".join(others[k::3]) for k in range(3)]


def test_b9_forced_play_and_explicit_pass_with_voids() -> None:
    """B9: PASS is legal only when no tile fits; it is the seat's own step and shows both pips as voids."""
    env = deal_env(DEAL_A)
    act(env, "6-6 L", "5-6 L", "0-6 R", "1-5 L")
    assert legal(env) == {"PASS"}
    with pytest.raises(ValueError, match="B8"):
        env.step(env.encode_action((2, 3), 0))
    act(env, "PASS")
    assert env.state_dict()["voids"][2] == [0, 1]
    # seen by seat 0: seat 2 is relative index 2 (the partner), row 1 of "voids"
    voids = env.observe("player_0")["observation"][env.observation_layout["voids"].slice].reshape(3, 7)
    assert voids[1].tolist() == [1, 1, 0, 0, 0, 0, 0] and not voids[0].any() and not voids[2].any()
    act(env, "PASS")  # seat 3 (3-5 3-6 4-4 4-5 4-6 5-5) has neither 1 nor 0 either
    voids = env.observe("player_0")["observation"][env.observation_layout["voids"].slice].reshape(3, 7)
    assert voids[2].tolist() == [1, 1, 0, 0, 0, 0, 0]
    # seat 0 can play (0-1 on the left, any of its 0s on the right), so PASS is illegal for it
    assert legal(env) == {"0-1 L", "0-0 R", "0-1 R", "0-2 R", "0-3 R", "0-4 R", "0-5 R"}
    with pytest.raises(ValueError, match="B9"):
        env.step(env.PASS)


def test_b9_the_core_refuses_an_illegal_move_with_the_shared_illegal_move_error() -> None:
    """``checked_apply`` of the block core raises the same ``IllegalMoveError`` (a
    ``ValueError``) as the Mexican Train core and the env, naming the rule, changing nothing."""
    env = deal_env(DEAL_A)
    act(env, "6-6 L", "5-6 L", "0-6 R", "1-5 L")
    s = env.state_obj
    before = env.state_dict()
    with pytest.raises(IllegalMoveError, match="B8"):
        env.game.checked_apply(s, env.encode_action((2, 3), 0))  # 2-3 does not match 1
    with pytest.raises(IllegalMoveError, match="B8"):
        env.step(env.encode_action((2, 3), 0))
    assert env.state_dict() == before
    assert mexican_rules.IllegalMoveError is IllegalMoveError  # the old import path still works


# ----------------------------------------------------------------------------- B10
def test_b10_domino_losing_pair_scores_own_pips() -> None:
    """B10: seat 0 goes out; pair 1&3 scores the pips in ITS hands (the partner's pips do not count)."""
    hands = ["6-6", "0-0 0-1", "", "0-2 1-1"]
    env = deal_env(hands, rest_to=2, reward="raw")
    act(env, "6-6 L")
    d = env.state_dict()
    lost = pips("0-0 0-1") + pips("0-2 1-1")
    assert lost == 5
    r = d["results"][0]
    assert r["kind"] == "domino" and r["seat"] == 0 and r["winner"] == 0
    assert r["points"] == [0, lost] and d["scores"] == [0, lost]
    # the winning pair holds far more pips (seat 2) and still wins: B10, not a pip count
    assert r["pair_pips"][0] > r["pair_pips"][1]
    assert env.rewards == {"player_0": 5.0, "player_1": -5.0, "player_2": 5.0, "player_3": -5.0}


def test_b10_domino_two_players() -> None:
    """B10 with 2 players: the player who goes out wins; the other scores its own pips."""
    env = deal_env(["6-6", "1-2 3-4"], num_players=2, reward="raw")
    act(env, "6-6 L")
    d = env.state_dict()
    assert d["results"][0]["winner"] == 0 and d["scores"] == [0, 10]
    assert env.rewards == {"player_0": 10.0, "player_1": -10.0}


# ----------------------------------------------------------------------------- B11
def test_b11_cierre_fewer_pips_win_loser_scores_own() -> None:
    """B11: closed hand; fewer pips wins; the losing pair scores its own pips (standard)."""
    env = position(CIERRE_LINE, CIERRE_SPLIT, current=1, reward="raw")
    assert legal(env) == {"0-6 L", "0-6 R", "1-6 R"}  # ends 0 | 6
    act(env, "0-6 R")
    d = env.state_dict()
    assert line_text(env).split()[-1] == "6-0" and env.state_obj.ends == [0, 0]
    r = d["results"][0]
    p0 = pips(CIERRE_SPLIT[0]) + pips(CIERRE_SPLIT[2])
    p1 = pips(CIERRE_SPLIT[1]) - 6 + pips(CIERRE_SPLIT[3])
    assert (p0, p1) == (58, 68)
    assert r["kind"] == "cierre" and r["seat"] == 1 and r["pair_pips"] == [p0, p1]
    assert r["winner"] == 0 and r["points"] == [0, p1] and not r["tie"]
    assert env.rewards["player_0"] == p1 and env.rewards["player_3"] == -p1
    assert all(env.terminations.values())  # ends at once: no useless passes


def test_b11_cierre_checked_right_after_the_tile() -> None:
    """B11: the hand ends on the closing tile; no seat gets a mask afterwards."""
    env = position(CIERRE_LINE, CIERRE_TIE, current=1)
    act(env, "0-6 R")
    assert env.state_dict()["phase"] == "GAME_OVER"
    for agent in env.possible_agents:
        assert not env.observe(agent)["action_mask"].any()


def test_b11_closed_scoring_both() -> None:
    """B11 variant closed_scoring='both': each pair scores its own pips (001 'Partida cerrada')."""
    env = position(CIERRE_LINE, CIERRE_SPLIT, current=1, closed_scoring="both", reward="raw")
    act(env, "0-6 R")
    r = env.state_dict()["results"][0]
    assert r["points"] == [58, 68] and r["winner"] == 0
    assert env.rewards["player_0"] == 10.0 and env.rewards["player_1"] == -10.0


@pytest.mark.parametrize(
    ("closed_tie", "opener", "winner"),
    [("closer", 0, 1), ("closer_loses", 0, 0), ("opener", 0, 0), ("opener", 3, 1)],
)
def test_b11_tie_rules(closed_tie: str, opener: int, winner: int) -> None:
    """B11 tie (63 pips each): the closer's pair wins (standard), or loses, or the opening pair wins."""
    assert pips(CIERRE_TIE[0]) + pips(CIERRE_TIE[2]) == 63
    assert pips(CIERRE_TIE[1]) - 6 + pips(CIERRE_TIE[3]) == 63
    env = position(CIERRE_LINE, CIERRE_TIE, current=1, open_seat=opener, closed_tie=closed_tie)
    act(env, "0-6 R")
    r = env.state_dict()["results"][0]
    assert r["tie"] and r["winner"] == winner
    expected = [0, 0]
    expected[1 - winner] = 63
    assert r["points"] == expected


def test_b11_two_players_cierre() -> None:
    """B11 with 2 players: closed with different ends is possible (tiles sleep); fewer pips wins."""
    env = deal_env(["6-6 1-2", "5-5 0-1"], num_players=2)
    act(env, "6-6 L")
    r = env.state_dict()["results"][0]
    assert r["pair_pips"] == [3, 11] and r["winner"] == 0 and r["points"] == [0, 11]


# ----------------------------------------------------------------------------- B12
def test_b12_ten_scoring_rounds_up() -> None:
    """B12 'ten': points = pips / 10 rounded up; default target 40."""
    c = GameConfig.make(scoring="ten")
    assert c.target == 40 and GameConfig.make().target == 100
    for p in (0, 1, 9, 10, 11, 58, 68, 168):
        assert points(c, p) == math.ceil(p / 10)
    env = position(CIERRE_LINE, CIERRE_SPLIT, current=1, scoring="ten", closed_scoring="both")
    act(env, "0-6 R")
    assert env.state_dict()["results"][0]["points"] == [6, 7]
    assert env.rewards["player_0"] == pytest.approx(1 / 17)  # scaled by ceil(168 / 10)


# ----------------------------------------------------------------------------- B13
@pytest.mark.parametrize("target", [5, 6, 50, 100, 200])
def test_b13_pair_reaching_the_target_loses(target: int) -> None:
    """B13: the pair that reaches (or passes) the target loses the match; otherwise the next hand is dealt."""
    env = deal_env(["6-6", "0-0 0-1", "", "0-2 1-1"], rest_to=2, match=True, target=target, reward="match")
    act(env, "6-6 L")  # pair 1 scores 5
    d = env.state_dict()
    if target <= 5:
        assert d["phase"] == "GAME_OVER" and d["match_loser"] == 1
        assert env.rewards == {"player_0": 1.0, "player_1": -1.0, "player_2": 1.0, "player_3": -1.0}
        assert all(env.terminations.values())
    else:
        assert d["phase"] == "PLAYING" and d["hand_index"] == 1 and d["match_loser"] == -1
        assert not any(env.terminations.values()) and set(env.rewards.values()) == {0.0}


def test_b13_both_over_target_plays_a_tiebreak_hand() -> None:
    """B13: both pairs over the target at once ('both' scoring) -> one more hand; its loser loses."""
    env = position(CIERRE_LINE, CIERRE_SPLIT, current=1, closed_scoring="both", target=50, match=True)
    act(env, "0-6 R")
    d = env.state_dict()
    assert d["scores"] == [58, 68] and d["tiebreak"] and d["phase"] == "PLAYING" and d["hand_index"] == 1
    rng = np.random.default_rng(0)
    while not all(env.terminations.values()):
        env.step(int(rng.choice(env.legal_actions())))
    d = env.state_dict()
    assert d["hand_index"] == 1 and d["match_loser"] == 1 - d["results"][1]["winner"]


def test_b13_default_target_and_full_match_terminates() -> None:
    """B13: a random match to 100 ends with exactly one pair at or over 100, the loser."""
    env = raw_env(match=True)
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    while not all(env.terminations.values()):
        env.step(int(rng.choice(env.legal_actions())))
    d = env.state_dict()
    loser = d["match_loser"]
    assert d["scores"][loser] >= 100 > d["scores"][1 - loser]
    assert d["scores"] == [sum(r["points"][p] for r in d["results"]) for p in (0, 1)]
    assert len(d["results"]) == d["hand_index"] + 1 > 1
