"""Every RULES.md variant flag and preset, each against the default on the SAME deal and
actions: the test shows what the flag changes (masks, markers, pending doubles, scores).

Double-6 set, engine 6-6; ``*`` marks a marker in the pictures.
"""

from __future__ import annotations

from typing import Any

import pytest

import mtrain_env
from mtrain_env.mexican_train.core.config import VARIANT_FLAGS
from mtrain_env.mexican_train.core.scoring import positive_scores
from tests.core.test_rules_doubles import _two_doubles_game
from tests.core.test_rules_scoring import SEAT0, SEAT1
from tests.core.test_rules_turns import _marker_game
from tests.scripted import act, boneyard, deal_env, full_deal, hand, legal, line, rest_of_set

OFF: dict[str, Any] = {}

# --------------------------------------------------------------------------- opening variants


@pytest.mark.parametrize("flag", [False, True])
def test_one_tile_opening(flag: bool) -> None:
    """``one_tile_opening``: the first turn is one tile (R9 chain by default), and a seat
    that cannot start draws as in R16 (R10 passes by default).

        seat 0 holds 6-3 3-1; seat 1 holds 0-5 4-4 and would draw 6-4
    """
    env = deal_env([["6-3", "3-1", "2-2"], ["0-5", "4-4"]], ["6-4"], one_tile_opening=flag)
    act(env, "6-3 @0")
    if not flag:
        assert env.state_dict()["current_player"] == 0
        assert legal(env) == {"1-3 @0", "PASS"}  # the chain may go on
        act(env, "PASS")
        assert legal(env) == {"PASS"}  # R10: no draw on the first turn
        act(env, "PASS")
        assert env.state_dict()["markers"] == [False, True]
        return
    assert env.state_dict()["current_player"] == 1  # one tile, the turn is over
    assert hand(env, 0) == {"1-3", "2-2"}
    assert legal(env) == {"DRAW"}
    act(env, "DRAW")
    assert legal(env) == {"4-6 @1"}  # own train only, even with a draw
    act(env, "6-4 @1")
    d = env.state_dict()
    assert d["phase"] == "NORMAL" and d["markers"] == [False, False]
    assert d["trains"] == [line("6-3"), line("6-4")]


@pytest.mark.parametrize("flag", [False, True])
def test_opening_draw(flag: bool) -> None:
    """``opening_draw``: a seat that cannot start draws once; a drawn starter is played and
    the chain may go on (R10 by default: pass and marker, no draw)."""
    env = deal_env([["1-2", "2-3"], ["6-5"]], ["6-1", "0-0"], opening_draw=flag)
    if not flag:
        assert legal(env) == {"PASS"}
        act(env, "PASS")
        assert env.state_dict()["markers"] == [True, False]
        assert boneyard(env)[0] == "1-6"
        return
    assert legal(env) == {"DRAW"}
    act(env, "DRAW")
    assert legal(env) == {"1-6 @0"}
    act(env, "6-1 @0")
    assert legal(env) == {"1-2 @0", "PASS"}  # the first-turn chain goes on
    act(env, "1-2 @0", "2-3 @0")
    assert env.state_dict()["trains"][0] == line("6-1 1-2 2-3")


def test_opening_draw_unplayable_draw_passes_with_marker() -> None:
    """``opening_draw``: only one draw; an unplayable tile means PASS and a marker."""
    env = deal_env([["1-2"], ["6-5"]], ["0-0", "6-1"], opening_draw=True)
    act(env, "DRAW")
    assert legal(env) == {"PASS"}  # one draw only (0-0 does not start the train)
    act(env, "PASS")
    assert env.state_dict()["markers"] == [True, False]


@pytest.mark.parametrize("flag", [False, True])
def test_draw_until_engine_match(flag: bool) -> None:
    """``draw_until_engine_match``: a seat without its own train keeps drawing (one DRAW
    step each) until a tile can start it; by default (R10) it just passes.

        boneyard (top first): 0-0 3-4 6-5
    """
    env = deal_env([["1-2"], ["6-1"]], ["0-0", "3-4", "6-5"], draw_until_engine_match=flag)
    if not flag:
        assert legal(env) == {"PASS"}
        return
    for drawn in ("0-0", "3-4"):
        assert legal(env) == {"DRAW"}
        act(env, "DRAW")
        assert drawn in hand(env, 0)
    assert legal(env) == {"DRAW"}
    act(env, "DRAW")
    assert legal(env) == {"5-6 @0"}
    act(env, "6-5 @0")
    assert env.state_dict()["trains"][0] == line("6-5")


def test_draw_until_engine_match_stops_on_an_empty_boneyard() -> None:
    """``draw_until_engine_match``: with the boneyard exhausted the seat passes and marks."""
    env = deal_env([["1-2"], ["6-1"]], ["0-0", "3-4"], rest_to=1, draw_until_engine_match=True)
    act(env, "DRAW", "DRAW")
    assert boneyard(env) == []
    assert legal(env) == {"PASS"}
    act(env, "PASS")
    assert env.state_dict()["markers"] == [True, False]


@pytest.mark.parametrize("flag", [False, True])
def test_engine_holder_opens(flag: bool) -> None:
    """``engine_holder_opens``: the engine is dealt; its holder (seat 1) places it and opens.
    By default (R5) the engine is set aside and a deal holding it is rejected."""
    hands = [["0-1", "2-3"], ["6-6", "6-2", "4-5"]]
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=3, engine_holder_opens=flag)
    deal = full_deal(6, hands, engine_dealt=True)
    if not flag:
        with pytest.raises(ValueError, match="R5"):
            env.reset(options={"deal": deal})
        return
    env.reset(seed=0, options={"deal": deal})
    d = env.state_dict()
    assert d["phase"] == "OPENING" and d["engine"] == [6, 6]
    assert d["first_player"] == 1 and d["current_player"] == 1
    assert hand(env, 1) == {"2-6", "4-5"}
    assert legal(env) == {"2-6 @1"}
    # options["first_player"] overrides the holder as opener; the engine is still placed
    env.reset(seed=0, options={"deal": deal, "first_player": 0})
    d = env.state_dict()
    assert d["current_player"] == 0 and hand(env, 1) == {"2-6", "4-5"}
    assert legal(env) == {"PASS"}


def test_engine_holder_opens_nobody_holds_it_seats_draw_in_turn() -> None:
    """``engine_holder_opens`` (R5): nobody holds 6-6, so seats draw in turn from the first
    player (seat 0 in round 0, R6) until it appears; its finder (seat 1) opens.

        boneyard (top first): 0-0 6-6 ...
    """
    env = deal_env(
        [["6-1", "2-3"], ["6-2", "4-5"]], ["0-0", "6-6"], first_player=None, engine_holder_opens=True
    )
    d = env.state_dict()
    assert d["phase"] == "SEEK_ENGINE" and d["current_player"] == 0
    assert legal(env) == {"DRAW"}
    act(env, "DRAW")
    assert hand(env, 0) == {"1-6", "2-3", "0-0"}
    assert legal(env) == {"DRAW"}
    act(env, "DRAW")
    d = env.state_dict()
    assert d["phase"] == "OPENING" and d["current_player"] == 1 and d["first_player"] == 1
    assert hand(env, 1) == {"2-6", "4-5"}  # the engine went to the station, not the hand
    assert "6-6" not in boneyard(env)
    assert legal(env) == {"2-6 @1"}


@pytest.mark.parametrize("flag", [False, True])
def test_engine_holder_opens_deals_the_whole_set(flag: bool) -> None:
    """R4 with ``engine_holder_opens``: the engine is dealable, so 2 x 14 tiles fit a
    double-6 set (28 tiles); with the engine set aside (default) only 27 do."""
    if not flag:
        with pytest.raises(ValueError, match="R4"):
            mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=14)
        return
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=14, engine_holder_opens=True)
    env.reset(seed=0)
    d = env.state_dict()
    assert d["boneyard"] == [] and sorted(len(h) for h in d["hands"]) == [13, 14]


# --------------------------------------------------------------------------- marker variants


@pytest.mark.parametrize(
    ("flags", "marks"),
    [
        # plays:  6-4 @mex (seat 0), 4-5 @mex (owner elsewhere), 6-3 @1 (seat 2 on it),
        #         1-0 @0 (seat 0), 3-2 @1 (owner on it); seat 1's marker after each
        (OFF, [True, True, True, True, False]),
        ({"marker_off_by_any_play_on_it": True}, [True, True, False, False, False]),
        # the owner's play on the Mexican lifts it: train 1 is closed to seat 2's 6-3 (it
        # must draw instead), so the script stops there
        ({"marker_off_by_owner_play_anywhere": True}, [True, False]),
    ],
)
def test_marker_variants(flags: dict[str, bool], marks: list[bool]) -> None:
    """R17 and its variants ``marker_off_by_any_play_on_it`` (another seat's play on the
    marked train lifts it) and ``marker_off_by_owner_play_anywhere``."""
    env, got = _marker_game(**flags)
    assert got == marks
    if len(marks) == 2:
        assert legal(env) == {"DRAW"}


@pytest.mark.parametrize("flag", [False, True])
def test_no_marker_when_forced_to_satisfy(flag: bool) -> None:
    """``no_marker_when_forced_to_satisfy``: seat 1, bound to cover seat 0's 1-1 (R20),
    draws 0-4 and passes: no marker with the flag (R16/R20 marker by default). A pass
    that owes no double still marks (seat 2 below, in the opening, R10).

        train 0: [6|6] 6-1 1-1 | pending
        train 1: [6|6] 6-2        seat 1 holds 2-4 5-0, draws 0-4
    """
    env = deal_env(
        [["6-1", "1-1", "6-5", "0-0"], ["6-2", "2-4", "5-0"], ["1-5", "3-4"]],
        ["0-4"],
        no_marker_when_forced_to_satisfy=flag,
    )
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS", "PASS")
    assert env.state_dict()["markers"] == [False, False, True]  # R10 pass, flag or not
    act(env, "1-1 @0", "6-5 @mex")
    act(env, "DRAW", "PASS")
    d = env.state_dict()
    assert d["markers"] == [False, not flag, True]
    assert d["pending_doubles"] == [0] and d["current_player"] == 2


# --------------------------------------------------------------------------- double variants


@pytest.mark.parametrize("flag", [False, True])
def test_no_double_satisfaction(flag: bool) -> None:
    """``no_double_satisfaction``: doubles bind nobody (R20/R21 off) but R18 stays: after
    1-1 seat 0 still owes a tile. Seat 1 then plays freely instead of covering the 1-1.

        train 0: [6|6] 6-1 1-1      seat 1 holds 2-5 1-0
        train 1: [6|6] 6-2
        Mexican: [6|6] 6-4
    """
    env = deal_env([["6-1", "1-1", "1-3", "6-4", "0-0"], ["6-2", "2-5", "1-0"]], no_double_satisfaction=flag)
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS", "1-1 @0")
    assert env.state_dict()["current_player"] == 0
    assert legal(env) == {"1-3 @0", "4-6 @mex"}  # R18 in both rule sets
    act(env, "6-4 @mex")
    d = env.state_dict()
    assert d["pending_doubles"] == ([] if flag else [0])
    assert legal(env) == ({"2-5 @1"} if flag else {"0-1 @0"})


@pytest.mark.parametrize("flag", [False, True])
def test_satisfy_in_reverse_order(flag: bool) -> None:
    """``satisfy_in_reverse_order``: of seat 0's 1-1 (first) and 0-0 (second), the LAST
    is covered first (R21: the first).

        train 0: [6|6] 6-1 1-1 | pending
        Mexican: [6|6] 6-5 5-0 0-0 | pending        seat 1 holds 1-4 0-2
    """
    env = _two_doubles_game(satisfy_in_reverse_order=flag)
    assert env.state_dict()["pending_doubles"] == [0, "mexican"]  # play order either way
    assert legal(env) == ({"0-2 @mex"} if flag else {"1-4 @0"})


@pytest.mark.parametrize("flag", [False, True])
def test_one_double_per_turn_normal_turn(flag: bool) -> None:
    """``one_double_per_turn``: after 3-3 the owed tile may not be the 4-4 (R18 allows it).

    train 0: [6|6] 6-1 1-3 3-3
    Mexican: [6|6] 6-4              seat 0 holds 4-4 4-5
    """
    env = deal_env(
        [["6-1", "1-3", "3-3", "4-4", "4-5", "0-0"], ["6-2", "6-4", "2-0"]], one_double_per_turn=flag
    )
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS", "1-3 @0", "6-4 @mex", "3-3 @0")
    assert legal(env) == ({"4-5 @mex"} if flag else {"4-4 @mex", "4-5 @mex"})


@pytest.mark.parametrize("flag", [False, True])
def test_one_double_per_turn_opening_chain(flag: bool) -> None:
    """``one_double_per_turn`` also limits a first-turn chain to one double.

    train 0: [6|6] 6-1 1-1 1-3     then 3-3 only without the flag
    """
    env = deal_env([["6-1", "1-1", "1-3", "3-3", "3-4"], ["6-2"]], one_double_per_turn=flag)
    act(env, "6-1 @0", "1-1 @0", "1-3 @0")
    assert legal(env) == ({"3-4 @0", "PASS"} if flag else {"3-3 @0", "3-4 @0", "PASS"})


@pytest.mark.parametrize("flag", [False, True])
def test_cover_own_double_on_it(flag: bool) -> None:
    """``cover_own_double_on_it``: the tile owed after a double goes on that double (R18:
    anywhere).

        train 0: [6|6] 6-1 1-1      seat 0 holds 1-3 6-4
    """
    env = deal_env([["6-1", "1-1", "1-3", "6-4", "0-0"], ["6-2", "2-5"]], cover_own_double_on_it=flag)
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS", "1-1 @0")
    assert legal(env) == ({"1-3 @0"} if flag else {"1-3 @0", "4-6 @mex"})


def test_cover_own_double_on_it_draws_for_the_double() -> None:
    """``cover_own_double_on_it``: without a tile for the double, the seat draws; a drawn
    tile that fits only the Mexican cannot be played, so it passes with a marker."""
    env = deal_env([["6-1", "1-1", "6-4", "0-0"], ["6-2", "2-5"]], ["6-3"], cover_own_double_on_it=True)
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS", "1-1 @0")
    assert legal(env) == {"DRAW"}  # 6-4 would fit the Mexican, but not the 1-1
    act(env, "DRAW")
    assert legal(env) == {"PASS"}
    act(env, "PASS")
    d = env.state_dict()
    assert d["markers"] == [True, False] and d["pending_doubles"] == [0]


# --------------------------------------------------------------------------- scoring variants


@pytest.mark.parametrize(("flag", "penalty"), [(False, 0 + 5 + 6), (True, 50 + 30 + 6)])
def test_blank_penalty(flag: bool, penalty: int) -> None:
    """``blank_penalty``: a blank half is worth 25 (0-5: 25 + 5), the double blank 50;
    R24 counts plain pips (0-0: 0, 0-5: 5). Seat 1 keeps 0-0 0-5 2-4."""
    env = deal_env([["6-1", "1-3"], ["6-2", "0-0", "0-5", "2-4"]], blank_penalty=flag)
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS", "1-3 @0")
    assert env.state_dict()["scores"] == [0, penalty]


@pytest.mark.parametrize("flag", [False, True])
def test_positive_scoring_going_out(flag: bool) -> None:
    """``positive_scoring``: the seat that went out takes the others' pips (16 + 2);
    everyone else scores 0. By default (R24) each seat scores its own pips."""
    env = deal_env([["6-1", "1-3"], ["6-2", "0-0", "5-5", "2-4"], ["6-3", "1-1"]], positive_scoring=flag)
    act(env, "6-1 @0", "PASS", "6-2 @1", "PASS", "6-3 @2", "PASS", "1-3 @0")
    assert env.state_dict()["scores"] == ([18, 0, 0] if flag else [0, 16, 2])
    best = max(env.rewards, key=lambda a: env.rewards[a])
    assert best == "player_0"  # higher reward is better in both scorings


@pytest.mark.parametrize("flag", [False, True])
def test_positive_scoring_blocked_round(flag: bool) -> None:
    """``positive_scoring`` in a blocked round (R23 deal): the lowest hand (seat 0, 0-0)
    takes the others' pips."""
    rest = rest_of_set(6, SEAT0, SEAT1)
    env = deal_env([SEAT0, SEAT1 + rest], positive_scoring=flag)
    act(env, "6-0 @0", "0-1 @0", "1-6 @0", "PASS", "6-2 @1", "2-3 @1", "3-6 @1", "PASS")
    act(env, "6-4 @mex", "4-5 @mex", "5-6 @mex")
    d = env.state_dict()
    assert d["blocked"] is True
    pot = sum(a + b for a, b in (map(int, t.split("-")) for t in rest))
    assert d["scores"] == ([pot, 0] if flag else [0, pot])


def test_positive_scoring_two_seats_out_in_the_opening_share() -> None:
    """``positive_scoring`` + R12: seats 0 and 1 both go out on their first turns; they
    share seat 2's 0-5 (5 pips). Default R24: 0, 0, 5."""
    for flag, expected in ((False, [0, 0, 5]), (True, [2.5, 2.5, 0])):
        env = deal_env([["6-1"], ["6-2"], ["6-3", "0-5"]], positive_scoring=flag)
        act(env, "6-1 @0", "6-2 @1", "6-3 @2", "PASS")
        assert all(env.terminations.values())
        assert env.state_dict()["scores"] == expected


def test_positive_scoring_tied_winners_share() -> None:
    """``positive_scoring``: tied lowest hands in a block share the pot (scoring core)."""
    assert positive_scores([4, 4, 12], [False, False, False]) == [6.0, 6.0, 0.0]
    assert positive_scores([0, 7, 5], [True, False, False]) == [12.0, 0.0, 0.0]


# --------------------------------------------------------------------------- presets


def test_pagat_preset_is_the_default() -> None:
    """The ``pagat`` preset: every variant flag off, R4 table 15/15/15/12/12/11/11."""
    env = mtrain_env.raw_env()
    assert env.config.rules == "pagat"
    assert not any(getattr(env.config, f) for f in VARIANT_FLAGS)
    sizes = [mtrain_env.raw_env(num_players=n).config.hand_size for n in range(2, 9)]
    assert sizes == [15, 15, 15, 12, 12, 11, 11]


def test_wikipedia_preset() -> None:
    """``wikipedia`` (``002``): one-tile opening; 2x12 table 16/15/14/12/11/10/9."""
    on = {f for f in VARIANT_FLAGS if getattr(mtrain_env.raw_env(rules="wikipedia").config, f)}
    assert on == {"one_tile_opening"}
    sizes = [mtrain_env.raw_env(num_players=n, rules="wikipedia").config.hand_size for n in range(2, 9)]
    assert sizes == [16, 15, 14, 12, 11, 10, 9]
    env = mtrain_env.raw_env(num_players=3, rules="wikipedia")
    env.reset(seed=0)
    assert [len(h) for h in env.state_dict()["hands"]] == [15, 15, 15]
    # same deal: one tile then the turn passes; an explicit flag overrides the preset
    for override, chain in ((None, False), (False, True)):
        e = deal_env([["6-3", "3-1"], ["6-2"]], rules="wikipedia", one_tile_opening=override)
        act(e, "6-3 @0")
        assert (e.state_dict()["current_player"] == 0) is chain


def test_cardinal_preset() -> None:
    """``cardinal`` (``003``/``004``): 12 tiles up to 6 players, 10 for 7-8; the engine
    holder opens (else seats draw for it); draw until the train can start."""
    on = {f for f in VARIANT_FLAGS if getattr(mtrain_env.raw_env(rules="cardinal").config, f)}
    assert on == {"one_tile_opening", "engine_holder_opens", "draw_until_engine_match"}
    sizes = [mtrain_env.raw_env(num_players=n, rules="cardinal").config.hand_size for n in range(2, 9)]
    assert sizes == [12, 12, 12, 12, 12, 10, 10]
    phases = set()
    for seed in range(6):
        env = mtrain_env.raw_env(num_players=4, rules="cardinal")
        env.reset(seed=seed)
        d = env.state_dict()
        sizes_now = [len(h) for h in d["hands"]]
        phases.add(d["phase"])
        if d["phase"] == "OPENING":  # the holder placed 12-12 and opens
            assert sorted(sizes_now) == [11, 12, 12, 12]
            assert sizes_now[d["current_player"]] == 11
            assert len(d["boneyard"]) == 91 - 48
        else:  # nobody holds it: it is in the boneyard and seats draw for it
            assert d["phase"] == "SEEK_ENGINE" and sizes_now == [12] * 4
            assert [12, 12] in d["boneyard"]
            assert legal(env) == {"DRAW"}
    assert "OPENING" in phases
    # scripted: the cardinal opening is one tile, a seat that cannot start draws
    e = deal_env([["6-6", "6-1", "1-2"], ["0-0", "3-4"]], ["0-3", "6-5"], rules="cardinal")
    assert e.state_dict()["current_player"] == 0
    act(e, "6-1 @0")
    assert legal(e) == {"DRAW"}
    act(e, "DRAW", "DRAW")
    assert legal(e) == {"5-6 @1"}
