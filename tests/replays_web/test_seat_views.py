"""What one seat may see, pinned where mutation testing found it unpinned: the replay views
(mtrain_env/replay_view.py), replay files (mtrain_env/replay_file.py), the web table's
state (agents/web/games.py), the OpenSpiel game's strings (mtrain_env/openspiel/mexican_train.py)
and the terminal (agents/terminal.py).

The most important gap: ``write_gif(seat=N)`` handing its frames the hand on turn instead of
seat N's survived every fast test: a GIF for one seat showing the other hands, which the
rules keep face down (R4, R8).
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageSequence

import mtrain_env.replay_view as replay_view
from mtrain_env.replay import REPLAY_VERSION, ReplayStep, describe_move, read_replay, replay_frames
from mtrain_env.replay_view import annotation_text, playthrough, round_lines, table_text, write_gif
from tests import REPO

GOLDEN = REPO / "tests" / "golden"
SMALL_GAME = GOLDEN / "mt_2p_double6_pagat.jsonl"  # 11 decisions, 1 round, no flag, player_1 goes out
SESSION = GOLDEN / "mt_3p_double6_session_positive.jsonl"  # 7 rounds (one blocked), reward "win"
MC_GAME = GOLDEN / "mt_4p_double12_wikipedia_mc.jsonl"  # seat 1 is mc, with annotations
EXCLUDE = "seat and all_hands exclude each other: a seat's view shows its own hand only"


def _hand_text(hand: Any) -> str:
    """A hand as the views write it: ``[a|b]`` tiles, ``-`` when empty."""
    return " ".join(f"[{a}|{b}]" for a, b in hand) or "-"


def _bits(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


# ----------------------------------------------------------------- replay_view: text
def test_a_playthrough_numbers_every_decision_and_round_in_order() -> None:
    """Each decision is ``#i player_s (agent): move`` with nothing after the move when it has
    no notes; each round's result follows the decision that ended it, numbered from 1, with
    how it ended (blocked, R23, or who went out) and every hand shown (R24); then the final
    scores and returns under the reward mode named in the file."""
    replay = read_replay(SESSION)
    lines = list(playthrough(replay, tables=False))
    c = replay.config
    assert lines[0] == (
        f"Mexican Train, 3 players, double-{c['max_pips']}, {c['rules']}, {c['rounds']} rounds "
        f"+positive_scoring; seed {replay.seed}"
    )
    assert lines[1] == "seats: " + ", ".join(f"player_{p} {a}" for p, a in enumerate(replay.agents))
    assert lines[2] == f"showing: the hand on turn; {len(replay.steps)} decisions"
    decisions = [(i, line) for i, line in enumerate(lines) if line.startswith("#")]
    assert len(decisions) == len(replay.steps)
    for k, ((_, line), step) in enumerate(zip(decisions, replay.steps, strict=True)):
        m = re.fullmatch(r"#(\d+) +player_(\d+) \((\w+)\): (.*)", line)
        assert m is not None, line
        assert int(m[1]) == k and int(m[2]) == step.seat
        assert m[3] == replay.agents[step.seat] and m[4] == step.move
    assert [x.get("blocked") for x in replay.rounds].count(True) == 1
    for k, (end, result) in enumerate(zip(replay.round_ends, replay.rounds, strict=True)):
        at = decisions[end][0]
        out = [f"player_{p}" for p, gone in enumerate(result["went_out"]) if gone]
        how = "blocked" if result["blocked"] else "went out: " + ", ".join(out)
        scores = ", ".join(f"player_{p} {x:g}" for p, x in enumerate(result["scores"]))
        assert lines[at + 1] == f"== round {k + 1} over ({how}); scores {scores}"
        hands = "; ".join(f"player_{p} " + _hand_text(h) for p, h in enumerate(result["hands"]))
        assert lines[at + 2] == f"   hands shown: {hands}"
    assert replay.final is not None
    scores = ", ".join(f"player_{p} {x:g}" for p, x in enumerate(replay.final["scores"]))
    returns = ", ".join(f"player_{p} {x:+.3f}" for p, x in enumerate(replay.final["returns"]))
    assert lines[-2:] == [f"== final scores: {scores}", f"   returns (win reward): {returns}"]


def test_a_playthrough_header_names_the_view_the_rounds_and_the_flags_only_when_there_are_any() -> None:
    replay = read_replay(SMALL_GAME)
    assert next(playthrough(replay)) == f"Mexican Train, 2 players, double-6, pagat; seed {replay.seed}"
    two = dataclasses.replace(replay, config={**replay.config, "rounds": 2})
    assert next(playthrough(two)).startswith("Mexican Train, 2 players, double-6, pagat, 2 rounds; ")
    n = len(replay.steps)
    assert (
        list(playthrough(replay, seat=1, tables=False))[2] == f"showing: player_1's view only; {n} decisions"
    )
    assert list(playthrough(replay, all_hands=True, tables=False))[2] == f"showing: every hand; {n} decisions"
    assert list(playthrough(replay, tables=False))[2] == f"showing: the hand on turn; {n} decisions"
    variants = read_replay(GOLDEN / "mt_6p_double12_cardinal_variants.jsonl")
    flags = [k for k, v in variants.config.items() if v is True]
    assert len(flags) > 1
    assert next(playthrough(variants, seat=0)).endswith(f"cardinal +{','.join(flags)}; seed hidden")
    default = dataclasses.replace(replay, reward=None)
    assert list(playthrough(default, tables=False))[-1].startswith("   returns (default reward): ")


def test_a_cut_short_playthrough_says_so_and_each_table_follows_a_blank_line() -> None:
    replay = read_replay(SMALL_GAME)
    short = dataclasses.replace(replay, steps=replay.steps[:3], rounds=[], round_ends=[], final=None)
    lines = list(playthrough(short, seat=0))
    assert lines[-1] == "== the game was cut short here (no final scores)"
    blanks = [i for i, line in enumerate(lines) if line == ""]
    assert len(blanks) == 3  # one table per decision, each after an empty line
    for i in blanks:
        assert lines[i + 1].startswith("Round 1/1")
        assert "hand: [" in lines[i + 1] and "player_1's hand" not in lines[i + 1]


def test_the_all_hands_table_is_the_table_then_every_hand() -> None:
    """``all_hands``: the render of the table, then one line per seat with its hand, ``-``
    for an empty one (the seat that went out, R24)."""
    replay = read_replay(SMALL_GAME)
    for frame in replay_frames(replay):
        env = frame.env
        text = table_text(env, all_hands=True)
        plain = table_text(env)
        assert text.startswith(plain + "\n")
        tiles = env.config.tiles.tiles
        hands = [_hand_text([tiles[i] for i in _bits(h)]) for h in env.state_obj.hands]
        assert text[len(plain) + 1 :].split("\n") == [
            f"  player_{p}'s hand: {h}" for p, h in enumerate(hands)
        ]
    assert hands[1] == "-" and hands[0] != "-"  # the last frame: player_1 went out


def test_annotations_in_words_best_first_with_other_notes_as_they_are() -> None:
    """A decision's ``values`` and ``probs`` name their 4 best actions as the acting seat's
    moves (trains are relative to it), best first; other notes are shown as they are."""
    replay = read_replay(MC_GAME)
    frames = replay_frames(replay)
    frame = next(frames)
    seat = 2
    while frame.env.current_seat != seat:
        frame = next(frames)
    env = frame.env
    actions = [1 + 5 * k for k in range(6)]  # personal trains and the Mexican one, seat-relative
    values = {str(a): float(v) for a, v in zip(actions, (0.5, 3.25, -1.0, 2.0, 7.0, 1.0), strict=True)}
    probs = {str(actions[0]): 0.2, str(actions[1]): 0.8, "bogus": 0.5}
    step = ReplayStep(seat, actions[0], "x", {"values": values, "probs": probs, "visits": 12})
    text = annotation_text(env, step)
    best = sorted(actions, key=lambda a: -values[str(a)])[:4]
    assert text.split("; ") == [
        "values: " + ", ".join(f"{describe_move(env, seat, a)} {values[str(a)]:.3g}" for a in best),
        f"probabilities: {describe_move(env, seat, actions[1])} 0.8, bogus 0.5, "
        f"{describe_move(env, seat, actions[0])} 0.2",
        "notes: {'visits': 12}",
    ]
    assert describe_move(env, seat, actions[0]) != describe_move(env, 0, actions[0])  # the seat matters
    assert annotation_text(env, ReplayStep(seat, 0, "x", {"probs": {"4": 1}})).startswith("probabilities: ")


def test_round_lines_say_how_the_round_ended() -> None:
    """R23: a blocked round; R24: the scores and every hand, ``-`` for an empty one."""
    blocked = {
        "blocked": True,
        "went_out": [False, False],
        "scores": [3, 12.5],
        "hands": [[[1, 2]], [[0, 0]]],
    }
    assert round_lines(2, blocked) == [
        "== round 3 over (blocked); scores player_0 3, player_1 12.5",
        "   hands shown: player_0 [1|2]; player_1 [0|0]",
    ]
    out = {
        "blocked": False,
        "went_out": [False, True, True],
        "scores": [9, 0, 0],
        "hands": [[[3, 4], [5, 5]], [], []],
    }
    assert round_lines(0, out) == [
        "== round 1 over (went out: player_1, player_2); scores player_0 9, player_1 0, player_2 0",
        "   hands shown: player_0 [3|4] [5|5]; player_1 -; player_2 -",
    ]


# ----------------------------------------------------------------- replay_view: GIFs
@pytest.fixture
def spy_frames(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[Any, ...]]]:
    """Replace the picture of each frame with a small one; record who it was drawn for."""
    calls: list[tuple[Any, ...]] = []

    def fake_image(env: Any, seat: int | None = None, all_hands: bool = False) -> np.ndarray:
        calls.append((env.current_seat, seat, all_hands))
        img = np.zeros((20, 40, 3), np.uint8)
        img[:, : 4 * (len(calls) % 10)] = 200  # frames differ: no two merged by the GIF writer
        return img

    monkeypatch.setattr(replay_view, "table_image", fake_image)
    yield calls


def _frames(im: Image.Image) -> int:
    return sum(1 for _ in ImageSequence.Iterator(im))


def _short_replay(steps: int) -> Any:
    replay = read_replay(SMALL_GAME)
    return dataclasses.replace(replay, steps=replay.steps[:steps], rounds=[], round_ends=[], final=None)


def _saved_durations(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    seen: list[Any] = []
    save = Image.Image.save

    def spy(self: Image.Image, fp: Any, format: Any = None, **params: Any) -> None:
        seen.append(params.get("duration"))
        save(self, fp, format, **params)

    monkeypatch.setattr(Image.Image, "save", spy)
    return seen


def test_a_seats_gif_draws_every_frame_for_that_seat_only(tmp_path: Path, spy_frames: list[Any]) -> None:
    """R4, R8 (hands and boneyard face down): ``write_gif(seat=N)`` draws each position with
    seat N's hand, whoever is on turn (a frame drawn for the seat on turn would show the
    other hands); ``all_hands`` draws every hand; a seat that does not exist is refused."""
    replay = _short_replay(5)
    assert write_gif(replay, tmp_path / "s1.gif", seat=1) == 6
    assert [(s, a) for _, s, a in spy_frames] == [(1, False)] * 6
    assert {on_turn for on_turn, _, _ in spy_frames} == {0, 1}  # seat 0 was on turn too
    spy_frames.clear()
    assert write_gif(replay, tmp_path / "all.gif", all_hands=True) == 6
    assert [(s, a) for _, s, a in spy_frames] == [(None, True)] * 6
    with pytest.raises(ValueError, match=r"seat must be in 0\.\.1, got 2"):
        write_gif(replay, tmp_path / "x.gif", seat=2)
    with pytest.raises(ValueError, match=f"^{re.escape(EXCLUDE)}$"):
        write_gif(replay, tmp_path / "x.gif", seat=0, all_hands=True)
    with pytest.raises(ValueError, match=f"^{re.escape(EXCLUDE)}$"):
        next(playthrough(replay, seat=0, all_hands=True))
    assert not (tmp_path / "x.gif").exists()


def test_gif_frame_times_and_bounds(
    tmp_path: Path, spy_frames: list[Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One frame per position, ``1000 / fps`` ms each (2 fps by default), the last position
    held 4 times as long; ``fps`` in [0.006104, 50], ``scale`` in [0.125, 1]; no progress bar unless asked."""
    replay = _short_replay(2)
    durations = _saved_durations(monkeypatch)
    write_gif(replay, tmp_path / "a.gif", scale=1)
    write_gif(replay, tmp_path / "b.gif", fps=3, scale=1)
    write_gif(replay, tmp_path / "c.gif", fps=50, scale=0.5)
    write_gif(replay, tmp_path / "d.gif", fps=0.5, scale=0.5)
    assert durations == [[500, 500, 2000], [333, 333, 1332], [20, 20, 80], [2000, 2000, 8000]]
    with Image.open(tmp_path / "a.gif") as im:
        assert im.size == (40, 20) and _frames(im) == 3
    with Image.open(tmp_path / "c.gif") as im:
        assert im.size == (20, 10)
    assert capsys.readouterr().err == ""
    for bad in (0, 1.5, -1):
        says = r"^scale must be in \[0\.125, 1\] .*, got " + re.escape(str(bad)) + "$"
        with pytest.raises(ValueError, match=says):
            write_gif(replay, tmp_path / "x.gif", scale=bad)
    for bad in (0, 50.5):
        says = r"^fps must be in \[0\.006104, 50\] .*, got " + re.escape(str(bad)) + "$"
        with pytest.raises(ValueError, match=says):
            write_gif(replay, tmp_path / "x.gif", fps=bad)
    write_gif(replay, tmp_path / "p.gif", progress=True)
    err = capsys.readouterr().err
    assert "frames: 100%" in err and "3/3" in err
    assert re.search(r"[\d?](frame/s|s/frame)\]", err), err


def test_gif_fps_and_scale_stop_where_a_gif_and_its_tiles_do(
    tmp_path: Path, spy_frames: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A GIF delay is a 16-bit count of centiseconds (655.35 s): at the lowest ``fps`` the
    held last frame (4 steps) still fits and the file is written; below it, a one-line
    ``ValueError`` before any work (was Pillow's OverflowError at save). A scale under 1/8
    (a tile a dot, a small table 0 pixels high) is refused (was 1-pixel frames)."""
    replay = _short_replay(1)
    durations = _saved_durations(monkeypatch)
    write_gif(replay, tmp_path / "slow.gif", fps=replay_view.MIN_FPS, scale=replay_view.MIN_SCALE)
    assert durations[0][-1] == 4 * durations[0][0] and durations[0][-1] <= 655_350
    with Image.open(tmp_path / "slow.gif") as im:
        im.seek(1)
        assert im.info["duration"] == durations[0][-1] // 10 * 10
    spy_frames.clear()
    # 100/65535 fps: a one-step frame fits a GIF delay, the 4-step held last frame does not
    for fps in (0.0001, 100 / 65535, replay_view.MIN_FPS * 0.999):
        with pytest.raises(ValueError, match=r"^fps must be in \[0\.006104, 50\] \(a GIF frame shows for"):
            write_gif(replay, tmp_path / "x.gif", fps=fps)
    for scale in (0.001, 0.12):
        with pytest.raises(ValueError, match=r"^scale must be in \[0\.125, 1\]"):
            write_gif(replay, tmp_path / "x.gif", scale=scale)
    assert spy_frames == [] and not (tmp_path / "x.gif").exists()


def test_gif_frames_share_one_palette_of_128_colours_undithered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first frame's 128-colour palette is every frame's (stable colours), frames are
    mapped to it without dithering, the GIF loops forever, and its folder is made."""
    rng = np.random.default_rng(0)
    pictures = [
        rng.integers(0, 256, (24, 32, 3), dtype=np.uint8),
        np.full((24, 32, 3), (13, 200, 77), np.uint8),
    ]
    monkeypatch.setattr(replay_view, "table_image", lambda env, seat=None, all_hands=False: pictures.pop(0))
    saved: list[Image.Image] = []
    save = Image.Image.save

    def spy(self: Image.Image, fp: Any, format: Any = None, **params: Any) -> None:
        saved.extend([self, *params["append_images"]])
        save(self, fp, format, **params)

    monkeypatch.setattr(Image.Image, "save", spy)
    out = tmp_path / "new" / "folder" / "g.gif"
    assert write_gif(_short_replay(1), out, scale=1) == 2
    first, second = saved
    assert len(first.getpalette() or []) == 3 * 128
    assert second.getpalette() == first.getpalette()
    assert len(np.unique(np.asarray(second))) == 1  # one flat colour, one index: no dithering
    with Image.open(out) as im:
        assert im.info["loop"] == 0 and _frames(im) == 2


def test_a_table_picture_with_every_hand_adds_a_strip_below() -> None:
    env = next(replay_frames(read_replay(SMALL_GAME))).env
    plain = replay_view.table_image(env, 0)
    every = replay_view.table_image(env, all_hands=True)
    assert every.shape[1] == plain.shape[1] and every.shape[0] > plain.shape[0]
    block = next(replay_frames(read_replay(GOLDEN / "block_4p_001.jsonl"))).env
    with pytest.raises(ValueError, match=f"^{re.escape(replay_view.NO_PICTURE)}$"):
        replay_view.table_image(block, 0)


# ----------------------------------------------------------------- OpenSpiel: what a seat knows
def _load(params: dict[str, Any]) -> Any:
    pyspiel = pytest.importorskip("pyspiel")
    import mtrain_env.openspiel  # noqa: F401  (registers the games)

    return pyspiel.load_game("mtrain_mexican_train", params)


def _tile_text(config: Any, t: int) -> str:
    a, b = config.tiles.tiles[t]
    return f"{a}-{b}"


def _hand_tiles(config: Any, hand: int) -> str:
    return " ".join(_tile_text(config, t) for t in _bits(hand))


def test_an_information_state_only_grows_and_shows_what_the_seat_may_know() -> None:
    """Perfect recall over a 2-round session: each seat's information state only grows (no
    event is ever dropped, across the round's end and the next deal); it starts with every
    tile dealt face down and the seat's own hand picked up (the others' as counts, R4); a
    draw (R16) is seen as a tile by the drawer only; each round's end shows every hand
    (R24). ``returns()`` stay 0 until the end (R25), legal actions are the seat on turn's
    only, never at a chance node; chance outcomes read as ``deal``/``draw`` tiles."""
    game = _load({"players": 2, "max_pips": 6, "rounds": 2})
    config = game.static.config
    n, h = config.num_players, config.hand_size
    rng = np.random.default_rng(5)
    state = game.new_initial_state()
    assert state.drawing is False and state.is_terminal() is False and str(state) == "dealing round 0"
    assert state.returns() == [0.0] * n
    seen = [f"p{p}\n" for p in range(n)]
    rounds_over = draws = deals = 0
    while not state.is_terminal():
        for p in range(n):
            info = state.information_state_string(p)
            assert info.startswith(seen[p]), f"seat {p} forgot an event"
            seen[p] = info
        assert state.returns() == [0.0] * n
        if state.is_chance_node():
            assert all(state._legal_actions(p) == [] for p in range(n))  # OpenSpiel's hook
            t = int(rng.choice([t for t, _ in state.chance_outcomes()]))
            word = "draw" if state.drawing else "deal"
            assert state.action_to_string(pyspiel_chance(), t) == f"{word} {_tile_text(config, t)}"
            drawer = state.game_state.current if state.drawing else None
            deals += word == "deal"
            state.apply_action(t)
            if drawer is not None:
                draws += 1
                assert state.drawing is False
                for p in range(n):
                    last = state.information_state_string(p).splitlines()[-1]
                    shown = f" {_tile_text(config, t)}" if p == drawer else ""
                    assert last == f"p{drawer} draws{shown}"
            elif deals == n * h:  # the first deal is complete: every seat picks its hand up
                s = state.game_state
                for p in range(n):
                    lines = state.information_state_string(p).splitlines()
                    assert lines[: 1 + n * h] == [f"p{p}"] + [
                        f"deal p{q}" for q in range(n) for _ in range(h)
                    ]
                    assert lines[1 + n * h :] == [
                        f"p{q} picks up {_hand_tiles(config, s.hands[q])}"
                        if q == p
                        else f"p{q} picks up {h} tiles"
                        for q in range(n)
                    ]
        else:
            p = state.current_player()
            assert str(state).startswith(f"Round {state.game_state.round_index + 1}/2")
            assert all(state._legal_actions(q) == [] for q in range(n) if q != p)
            for q in range(n):  # the information-state tensor is the observation vector
                assert state.information_state_tensor(q) == state.observation_tensor(q)
            legal = state.legal_actions()
            a = int(rng.choice(legal))
            assert state.action_to_string(p, a) == game.static.codec.describe(a)
            state.apply_action(a)
        if state.information_state_string(0).splitlines()[-1].startswith("round "):  # a round just ended
            s = state.game_state
            shown = "; ".join(f"p{q} {_hand_tiles(config, s.hands[q])}" for q in range(n))
            for p in range(n):
                last = state.information_state_string(p).splitlines()[-1]
                assert last == f"round {s.round_index} over: {shown}"
            rounds_over += 1
            if not state.is_terminal():
                assert state.returns() == [0.0] * n and state.accumulated_returns != [0.0] * n
    assert rounds_over == 2 and draws > 0
    assert state.returns() == state.accumulated_returns


def pyspiel_chance() -> int:
    pyspiel = pytest.importorskip("pyspiel")
    return int(pyspiel.PlayerId.CHANCE)


def _play_to(state: Any, rng: np.random.Generator, stop: Any) -> Any:
    """Random chance outcomes and actions until ``stop(state)``."""
    while not stop(state):
        if state.is_chance_node():
            state.apply_action(int(rng.choice([t for t, _ in state.chance_outcomes()])))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def test_an_observation_string_is_the_seats_hand_and_the_public_table_in_a_later_round() -> None:
    """The observation string of round 2 still starts with the seat's own hand and shows
    every train as laid (R7) and the scores of the rounds before (R24)."""
    game = _load({"players": 2, "max_pips": 6, "rounds": 2})
    config = game.static.config
    state = game.new_initial_state()

    def laid_in_round_2(st: Any) -> bool:
        s = st.game_state
        return (
            s is not None and s.round_index == 1 and not st.is_chance_node() and sum(map(len, s.trains)) >= 2
        )

    _play_to(state, np.random.default_rng(1), laid_in_round_2)
    s = state.game_state
    trains = "|".join(" ".join(_tile_text(config, t) for t in train) for train in s.trains)
    for p in range(2):
        obs = state.observation_string(p)
        assert obs.startswith(f"seat {p} hand [{_hand_tiles(config, s.hands[p])}] round 1 engine ")
        assert f" trains [{trains}] " in obs
        assert obs.endswith(f" rounds {[list(r) for r in s.round_scores]}")


def test_the_engine_drawn_when_nobody_holds_it_is_public() -> None:
    """R5 (``engine_holder_opens``): nobody holds the engine, the first seat draws it, and
    every seat's information state shows it going to the table; other draws (R16) stay private."""
    game = _load({"players": 2, "max_pips": 6, "flags": "engine_holder_opens"})
    config = game.static.config
    engine = config.tiles.double_id(config.engine_value(0))
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(next(t for t, _ in state.chance_outcomes() if t != engine))
    seat = state.current_player()
    assert state.legal_actions() == [config.draw_action]
    state.apply_action(config.draw_action)
    assert state.is_chance_node() and state.drawing is True
    before = [state.information_state_string(p) for p in range(2)]
    state.apply_action(engine)
    for p in range(2):
        assert state.information_state_string(p) == before[p] + f"p{seat} draws the engine 6-6\n"
    assert state.game_state.engine_placed


def test_resampling_keeps_a_pending_draw_and_refuses_deals_and_the_end() -> None:
    """A resample (a state the seat cannot tell apart) keeps a pending draw a chance node;
    ``resample_from_infostate`` seeds the determinizer from OpenSpiel's sampler, so equal
    draws of the sampler give equal states; a deal in progress and the end are refused."""
    game = _load({"players": 2, "max_pips": 6, "rounds": 2})
    state = game.new_initial_state()
    rng = np.random.default_rng(3)
    _play_to(state, rng, lambda st: st.drawing)
    p = state.game_state.current
    twin = state.resample(1 - p, np.random.default_rng(0))
    assert twin.is_chance_node() and twin.drawing is True
    assert len(twin.chance_outcomes()) == len(state.game_state.boneyard)
    other = 1 - p
    for u in (0.25, 0.75):
        got = state.resample_from_infostate(other, lambda u=u: u)
        want = state.resample(other, np.random.default_rng(int(u * 2**53)))
        assert got.game_state.hands == want.game_state.hands
        assert got.information_state_string(other) == state.information_state_string(other)
    hands = {
        tuple(state.resample_from_infostate(other, lambda u=u: u).game_state.hands) for u in (0.1, 0.5, 0.9)
    }
    assert len(hands) > 1  # the sampler's draws matter
    _play_to(state, rng, lambda st: st.game_state.round_index == 0 and st.is_chance_node() and not st.drawing)
    with pytest.raises(
        ValueError, match=r"^resample_from_infostate needs a round in play \(not a deal, not the end\)$"
    ):
        state.resample(0, np.random.default_rng(0))
    _play_to(state, rng, lambda st: st.is_terminal())
    with pytest.raises(ValueError, match="needs a round in play"):
        state.resample(0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="observation parameters are not supported"):
        game.make_py_observer(params={"x": 1})


def test_a_state_from_a_finished_rounds_view_is_refused() -> None:
    """A round over (R23, R24) is no round in play: no state to search from, even when the
    session goes on (the next deal is chance's)."""
    from mtrain_env.mexican_train.core.public import public_view
    from mtrain_env.mexican_train.core.state import Phase

    game = _load({"players": 2, "max_pips": 6, "rounds": 2})
    state = game.new_initial_state()
    _play_to(
        state,
        np.random.default_rng(2),
        lambda st: st.game_state is not None and st.game_state.phase == Phase.ROUND_OVER,
    )
    view = public_view(state.game_state, game.static.config, 0)
    with pytest.raises(ValueError, match=r"^state_from_view needs a round in play \(the round is over\)$"):
        game.state_from_view(view, np.random.default_rng(0))


def test_moves_in_the_public_log_read_as_tile_and_absolute_train() -> None:
    """Every seat reads a played tile as ``a-b on train k`` (k absolute, n = the Mexican
    train) and a pass as ``pass`` (R16); the draw's own word is ``draw``."""
    from mtrain_env.openspiel.mexican_train import move_text

    game = _load({"players": 3, "max_pips": 6})
    c = game.static.config
    assert move_text(c, c.draw_action) == "draw" and move_text(c, c.pass_action) == "pass"
    tile = c.tiles.tiles.index((2, 5))
    assert move_text(c, tile * c.num_trains + 3) == "2-5 on train 3"
    state = game.new_initial_state()
    _play_to(
        state,
        np.random.default_rng(4),
        lambda st: (
            not st.is_chance_node()
            and c.pass_action
            in [game.static.codec.rel_to_abs[st.current_player()][a] for a in st.legal_actions()]
        ),
    )
    p = state.current_player()
    rel = game.static.codec.abs_to_rel[p][c.pass_action]
    state.apply_action(rel)
    assert all(state.information_state_string(q).endswith(f"\np{p} pass\n") for q in range(3))


# ----------------------------------------------------------------- the web table's games
def _table_game(tmp_path: Path, seat: int = 1, seed: int = 3, players: int = 3, agent: str = "greedy") -> Any:
    pytest.importorskip("fastapi")
    from agents.web.games import TableGame, TableSetup
    from mtrain_env.mexican_train import GameConfig

    config = GameConfig.make(num_players=players, max_pips=6)
    setup = TableSetup(config=config, seat=seat, opponents=(agent,) * (players - 1), seed=seed)
    return TableGame("g" * 32, setup, tmp_path / "saved")


def test_the_page_lists_the_moves_since_the_humans_last_move_as_the_replay_has_them(tmp_path: Path) -> None:
    """``last_moves``: the human's move, then each agent's up to the human's next turn, with
    its seat, agent name and the move in words (public plays, draws and passes only)."""
    game = _table_game(tmp_path)
    moves_seen = 0
    while not game.over:
        state = game.state()
        steps = game.recorder.replay.steps
        assert state["last_moves"] == [
            {"seat": s.seat, "agent": game.names[s.seat], "text": s.move} for s in steps[moves_seen:]
        ]
        moves_seen = len(steps)
        game.move(game.seat, state["legal"][0]["action"], state["step"])
        assert game.state()["last_moves"][0]["seat"] == game.seat
    assert len(game.recorder.replay.steps) > 5


def test_refused_moves_name_what_is_wrong(tmp_path: Path) -> None:
    """Each refusal says why: the agent that plays a seat, a seat that does not exist, the
    action range, an illegal move in words with the legal ones, a game that is over."""
    from agents.web.games import ConflictError, ForbiddenError, WebError

    game = _table_game(tmp_path, seat=1)
    step = game.steps
    with pytest.raises(
        ForbiddenError, match=r"^this game's human seat is 1; seat 0 is played by agent 'greedy'$"
    ):
        game.move(0, 0, step)
    with pytest.raises(ForbiddenError, match=r"^this game's human seat is 1; seat 3 does not exist$"):
        game.move(3, 0, step)
    mask = game.env.observe_mask(game.agent_id)
    n = len(mask)
    with pytest.raises(WebError, match=rf"^action must be 0\.\.{n - 1} \(Discrete\({n}\)\), got {n}$"):
        game.move(1, n, step)
    legal = game.state()["legal"]
    illegal = next(a for a in range(n) if not mask[a])
    words = describe_move(game.env, 1, illegal)
    with pytest.raises(WebError) as err:
        game.move(1, illegal, step)
    assert str(err.value) == (
        f"illegal move {words} (action {illegal}); legal now: {', '.join(m['text'] for m in legal)}"
    )
    assert game.steps == step
    game.abandon()
    assert game.over and game.state()["legal"] == []  # nothing to play once abandoned mid-round
    with pytest.raises(ConflictError, match=f"^game {game.id} is over; start a new one$"):
        game.move(1, legal[0]["action"], step)


def test_the_store_skips_a_busy_game_evicts_one_idle_for_exactly_its_limit_and_names_refusals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy game (a request in flight) is never evicted nor waited for; a game idle for
    exactly ``idle_seconds`` may go; the store's default idle time is the app's."""
    import inspect
    import threading

    pytest.importorskip("fastapi")
    import agents.web.games as games
    from agents.web.app import create_app

    assert (
        games.GameStore(1, tmp_path).idle_seconds
        == inspect.signature(create_app).parameters["idle_seconds"].default
    )
    with pytest.raises(ValueError, match=r"^max_games must be >= 1, got 0$"):
        games.GameStore(0, tmp_path)
    config = games.GameConfig.make(num_players=2, max_pips=6)
    setup = games.TableSetup(config=config, seat=0, opponents=("random",), seed=1)
    monkeypatch.setattr(games.time, "monotonic", lambda: 100.0)  # no time passes
    store = games.GameStore(1, tmp_path, idle_seconds=0)
    first = store.create(setup)
    second = store.create(setup)  # idle for 0 s, the limit: evicted
    assert len(store) == 1 and first.over and store.get(second.id) is second
    busy = games.GameStore(1, tmp_path, idle_seconds=0)
    held = busy.create(setup)
    errors: list[Exception] = []

    def create() -> None:
        try:
            busy.create(setup)
        except games.StoreFullError as err:
            errors.append(err)

    with held.lock:  # a request is being served: the game is not evicted, nor waited for
        worker = threading.Thread(target=create, daemon=True)
        worker.start()
        worker.join(timeout=5)
        assert not worker.is_alive()
    assert len(errors) == 1 and "none has been idle for 0 s" in str(errors[0]) and not held.over
    with pytest.raises(games.NotFoundError, match=r"^no game 'nope'$"):
        store.remove("nope")

    def no_extra(name: str, **kw: Any) -> Any:
        raise ImportError("torch is not installed")

    monkeypatch.setattr(games, "make_agent", no_extra)
    with pytest.raises(games.WebError, match=r"^an agent cannot be loaded here: torch is not installed$"):
        store.create(setup)


def test_a_table_game_is_reproducible_and_no_agent_shares_the_deals_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same setup plays the same game (each agent seeded from the game's seed), yet no
    agent gets the deal's own seed (which deals every hand again: R4, R8); a bad setup is refused."""
    import agents.web.games as games

    seeds: list[Any] = []
    make = games.make_agent

    def spy(name: str, **kw: Any) -> Any:
        seeds.append(kw.get("seed"))
        return make(name, **kw)

    monkeypatch.setattr(games, "make_agent", spy)
    played = []
    for _ in range(2):
        game = _table_game(tmp_path, seat=0, seed=9, players=4, agent="random")
        assert game.state()["over"] is False
        while not game.over:
            state = game.state()
            game.move(0, state["legal"][-1]["action"], state["step"])
        played.append([(s.seat, s.action) for s in game.recorder.replay.steps])
    assert played[0] == played[1]
    assert len(seeds) == 6 and None not in seeds and 9 not in seeds and len(set(seeds[:3])) == 3
    config = games.GameConfig.make(num_players=3, max_pips=6)
    with pytest.raises(ValueError, match=r"^3 players need 2 opponents, got 1$"):
        games.TableGame("x", games.TableSetup(config, 0, ("random",), 1), tmp_path)
    with pytest.raises(ValueError, match=r"^seat must be 0\.\.2, got 3$"):
        games.TableGame("x", games.TableSetup(config, 3, ("random", "random"), 1), tmp_path)


# ----------------------------------------------------------------- replay files
def _small_lines() -> list[str]:
    return SMALL_GAME.read_text().splitlines()


def _with_header(**changes: Any) -> str:
    lines = _small_lines()
    header = {**json.loads(lines[0]), **changes}
    header = {k: v for k, v in header.items() if v is not _DROP}
    return "\n".join([json.dumps(header), *lines[1:]]) + "\n"


def _with_line(no: int, obj: dict[str, Any]) -> str:
    lines = _small_lines()
    lines[no - 1] = json.dumps(obj)
    return "\n".join(lines) + "\n"


_DROP = object()
_STEP = {"seat": 0, "action": 85, "move": "pass"}
_DAMAGED_FILES = {
    "bad version": (lambda: _with_header(version=0), 1, "bad version 0"),
    "newer version": (
        lambda: _with_header(version=99),
        1,
        f"replay format version 99 is newer than this reader's {REPLAY_VERSION}",
    ),
    "header misses": (lambda: _with_header(agents=_DROP), 1, "header misses ['agents']"),
    "header key": (lambda: _with_header(cheat=1), 1, "unexpected key(s) ['cheat']"),
    "game": (
        lambda: _with_header(game="chess"),
        1,
        "game must be one of ('mexican_train', 'block'), got 'chess'",
    ),
    "config": (lambda: _with_header(config=[]), 1, "config must be an object"),
    "versions": (lambda: _with_header(versions="1"), 1, "versions must be an object"),
    "seed": (lambda: _with_header(seed=-1), 1, "seed must be an int >= 0, got -1"),
    "reward": (lambda: _with_header(reward=3), 1, "reward must be a string, got 3"),
    "invalid config": (
        lambda: _with_header(config={**json.loads(_small_lines()[0])["config"], "max_pips": 99}),
        1,
        "invalid game config: ",
    ),
    "unresolved config": (
        lambda: _with_header(config={"num_players": 2, "max_pips": 6}),
        1,
        "config is not a resolved game config (GameConfig.to_dict())",
    ),
    "agents": (lambda: _with_header(agents=["a"]), 1, "agents must be 2 names (one per seat)"),
    "step key": (lambda: _with_line(3, {**_STEP, "cheat": 1}), 3, "unexpected key(s) ['cheat']"),
    "seat n": (lambda: _with_line(3, {**_STEP, "seat": 2}), 3, "seat must be an int in 0..1, got 2"),
    "move": (lambda: _with_line(3, {**_STEP, "move": 5}), 3, "move must be a string, got 5"),
    "annotations": (
        lambda: _with_line(3, {**_STEP, "annotations": [1]}),
        3,
        "annotations must be an object, got list",
    ),
    "round scores": (
        lambda: _with_line(13, {"round_end": {"scores": ["9", "0"]}}),
        13,
        "round_end must be a round result with 2 scores",
    ),
    "final scores": (
        lambda: _with_line(14, {"final": {"returns": [0, 0], "scores": ["9", 0]}}),
        14,
        "final must be {'returns': [2 numbers], 'scores': [...]}",
    ),
    "Infinity": (
        lambda: _with_line(3, {**_STEP, "action": "X"}).replace('"X"', "Infinity"),
        3,
        "not a JSON object: Infinity is not valid JSON",
    ),
    "empty": (lambda: "", 0, "empty file: no header line"),
    "no newline": (lambda: SMALL_GAME.read_text()[:-1], 15, "the last line has no newline (cut short?)"),
    "after final": (
        lambda: "\n".join([*_small_lines()[:14], json.dumps(_STEP), _small_lines()[14]]) + "\n",
        15,
        "a line after the final line",
    ),
    "after closing": (
        lambda: SMALL_GAME.read_text() + json.dumps(_STEP) + "\n",
        16,
        "a line after the closing line",
    ),
    "old version": (
        lambda: "\n".join(_with_header(version=1).splitlines()[:-1]) + "\n",
        1,
        "replay format version 1 has no closing line (decision count, scores, checksum)",
    ),
    "closing key": (
        lambda: _with_line(15, {**json.loads(_small_lines()[14]), "cheat": 1}),
        15,
        "unexpected key(s) ['cheat']",
    ),
    "round_end key": (
        lambda: _with_line(13, {**json.loads(_small_lines()[12]), "cheat": 1}),
        13,
        "unexpected key(s) ['cheat']",
    ),
    "final key": (
        lambda: _with_line(14, {**json.loads(_small_lines()[13]), "cheat": 1}),
        14,
        "unexpected key(s) ['cheat']",
    ),
}


@pytest.mark.parametrize("kind", sorted(_DAMAGED_FILES))
def test_a_damaged_replay_file_is_refused_naming_its_path_line_and_reason(kind: str) -> None:
    from mtrain_env.replay import DamagedReplayError, loads_replay

    make, line, reason = _DAMAGED_FILES[kind]
    text = make()
    assert loads_replay(SMALL_GAME.read_text(), "g.jsonl").final is not None  # the file itself is fine
    with pytest.raises(DamagedReplayError) as err:
        loads_replay(text, "g.jsonl")
    e = err.value
    assert (e.path, e.line) == ("g.jsonl", line), str(e)
    assert e.reason.startswith(reason), e.reason
    assert str(e) == (f"g.jsonl:{line}: " if line else "g.jsonl: ") + e.reason


def test_a_replay_built_by_hand_finds_where_its_rounds_ended(tmp_path: Path) -> None:
    """Without ``round_ends`` (a replay built by hand), each ``round_end`` line is written
    right after the decision that ended its round, found by replaying the actions with the
    file's seed and reset options (R6: the first player given)."""
    from agents.play import play_until
    from agents.registry import make_agent
    from mtrain_env.mexican_train import raw_env
    from mtrain_env.replay import ReplayRecorder, dumps_replay, loads_replay

    session = read_replay(SESSION)
    text = dumps_replay(session)
    assert text == SESSION.read_text()
    assert dumps_replay(dataclasses.replace(session, round_ends=[])) == text
    env = raw_env(num_players=2, max_pips=6, rounds=2)
    env.reset(seed=4, options={"first_player": 1})
    recorder = ReplayRecorder(env, 4, ["random", "random"], options={"first_player": 1})
    play_until(env, [make_agent("random", seed=1), make_agent("random", seed=2)], recorder)
    replay = recorder.replay
    assert len(replay.rounds) == 2 and replay.options == {"first_player": 1}
    full = dumps_replay(replay)
    assert dumps_replay(dataclasses.replace(replay, round_ends=[])) == full
    back = loads_replay(full)
    assert back.round_ends == replay.round_ends and back.options == {"first_player": 1}
    assert dumps_replay(back) == full  # the file round-trips, reset options included


# ----------------------------------------------------------------- the terminal
def _session(config: dict[str, Any], answers: list[str], prompts: list[str] | None = None) -> Any:
    from agents.terminal import TerminalSession

    queue = list(answers)

    def read(prompt: str) -> str:
        if prompts is not None:
            prompts.append(prompt)
        if not queue:
            raise EOFError
        answer = queue.pop(0)
        if answer == "^C":
            raise KeyboardInterrupt
        return answer

    opponents = ["greedy"] * (config["num_players"] - 1)
    return TerminalSession("mexican_train", config, opponents, 5, read=read, out=io.StringIO())


def test_the_terminal_shows_seat_0s_table_numbered_moves_and_every_move_made(tmp_path: Path) -> None:
    """R8: before each prompt the table as seat 0 sees it (its own hand only); the legal
    moves numbered from 1; each move made, the human's and the agents', in words; a number
    out of range or a word asks again; the final scores and the human's place (R25)."""
    from mtrain_env.replay_view import table_text as view

    prompts: list[str] = []
    session = _session({"num_players": 2, "max_pips": 9}, ["abc", "1"] + ["1"] * 200, prompts)
    tables = []
    ask = session.ask

    def ask_and_keep() -> Any:
        tables.append((view(session.env, 0), session.env.legal_actions()))
        return ask()

    session.ask = ask_and_keep
    assert session.run(tmp_path / "t.jsonl") == 0
    lines = session.out.getvalue().split("\n")
    replay = read_replay(tmp_path / "t.jsonl")
    assert lines[:3] == [
        "mtrain play: you are player_0; seed 5",
        "seats: player_0 (you), player_1 greedy",
        "Mexican Train, double-9, pagat rules, 1 round(s)",
    ]
    forced = " (your only move: played for you)"
    made = [line.removesuffix(forced) for line in lines if re.match(r"  player_\d \(", line)]
    names = ["you", "greedy"]
    assert made == [f"  player_{s.seat} ({names[s.seat]}): {s.move}" for s in replay.steps]
    assert lines.count(f"  please type a number from 1 to {len(tables[0][1])}, or q to quit (got 'abc')") == 1
    at = 0
    for table, legal in tables:
        at = lines.index(table.split("\n")[0], at)
        assert lines[at - 1] == ""
        assert "\n".join(lines[at : at + table.count("\n") + 1]) == table
        menu = lines[at + table.count("\n") + 1 :][: 1 + len(legal)]
        assert menu[0] == "your turn (player_0): choose a move"
        assert menu[1:] == [f"  {i:2d}) {describe_move(session.env, 0, a)}" for i, a in enumerate(legal, 1)]
        chosen = next(line for line in lines[at:] if line.startswith("  player_0 (you): "))
        assert chosen == f"  player_0 (you): {describe_move(session.env, 0, legal[0])}"  # "1" is option 1
        at += 1
    assert sum(len(legal) > 1 for _, legal in tables) > 0
    assert all(p.startswith("your move [1-") and p.endswith(", q quits]: ") for p in prompts)
    assert replay.final is not None and "session scores" not in session.out.getvalue()
    scores = replay.final["scores"]
    assert f"final scores: player_0 {scores[0]:g}, player_1 {scores[1]:g}" in lines
    assert f"you placed {1 + (scores[1] < scores[0])} of 2" in lines


def test_the_terminal_places_by_the_lowest_total_or_the_highest_with_positive_scoring() -> None:
    """R25 (the lowest total wins; the highest with ``positive_scoring``, R24): the human's
    place counts the seats strictly better (ties share a place)."""
    for positive, place in ((False, 3), (True, 2)):
        session = _session({"num_players": 4, "max_pips": 6, "positive_scoring": positive}, [])
        session.show_final({"scores": [5, 3, 9, 1], "returns": [0, 0, 0, 0]})
        session.show_final({"scores": [5, 5, 5, 9], "returns": [0, 0, 0, 0]})
        session.show_final(None)  # a game cut short: nothing
        out = session.out.getvalue().split("\n")
        assert out[0] == "final scores: player_0 5, player_1 3, player_2 9, player_3 1"
        assert out[1] == f"you placed {place} of 4"
        assert out[3] == f"you placed {2 if positive else 1} of 4" and out[4] == ""


def test_the_terminal_shows_session_scores_only_in_sessions_and_quits_on_q_or_ctrl_c(tmp_path: Path) -> None:
    """A one-round game has no session scores; a session shows them after each round (R24);
    ``Q`` quits (130 on Ctrl-C), the game so far saved."""
    result = {"blocked": False, "went_out": [True, False], "scores": [0, 7], "hands": [[], [[1, 2]]]}
    for rounds, after_first in ((1, False), (2, True)):
        session = _session({"num_players": 2, "max_pips": 6, "rounds": rounds}, [])
        session.show_round(result)
        assert ("session scores" in session.out.getvalue()) == after_first
        session.show_round(result)
        lines = session.out.getvalue().split("\n")
        assert lines[-2] == "   session scores: player_0 0, player_1 14"
        assert sum(line.startswith("   session scores: ") for line in lines) == 1 + after_first
    for answer, status in (("Q", 0), ("^C", 130)):
        session = _session({"num_players": 2, "max_pips": 9}, [answer])
        assert session.run(tmp_path / f"{status}.jsonl") == status
        text = session.out.getvalue()
        assert f"you quit; the game so far is saved: {tmp_path / f'{status}.jsonl'}" in text
        assert "final scores" not in text and read_replay(tmp_path / f"{status}.jsonl").final is None


def test_the_games_parameters_and_declared_bounds() -> None:
    """The OpenSpiel parameters: flags as ``name:value`` (any case), a hand size given is kept,
    an unknown parameter or flag value is refused by name; ``params_for_config`` inverts
    them. The declared game: every string and tensor provided, utilities within the bound
    of a whole set left in hand (R24) or +-1 (``win``, R25), summing to 0 unless ``penalty``,
    and a game length bound no played game reaches."""
    from mtrain_env.openspiel.mexican_train import config_from_params, params_for_config

    config, reward = config_from_params(
        {"players": 3, "hand_size": 3, "flags": "blank_penalty:TRUE+one_tile_opening:Off"}
    )
    assert (config.hand_size, config.blank_penalty, config.one_tile_opening, reward) == (
        3,
        True,
        False,
        "zero_sum",
    )
    assert params_for_config(config)["reward"] == "zero_sum"
    assert config_from_params(params_for_config(config, "win")) == (config, "win")
    with pytest.raises(ValueError, match=r"^flags: blank_penalty:maybe must be 1 or 0 \(true/false\)$"):
        config_from_params({"flags": "blank_penalty:maybe"})
    with pytest.raises(
        ValueError, match=r"^unknown parameter\(s\) \['bogus'\] for mtrain_mexican_train; known: "
    ):
        config_from_params({"bogus": 1})
    cases = (("zero_sum", "", 7.0, 0.0), ("win", "", 1.0, 0.0), ("penalty", "blank_penalty", 46 / 3, None))
    for reward, flags, bound, total in cases:
        game = _load({"players": 2, "max_pips": 6, "reward": reward, "flags": flags})
        c = game.static.config
        if reward != "win":  # a whole set left in hand (R24; the blank double at 50, R24 variant)
            assert bound == pytest.approx(
                c.tiles.hand_value(c.tiles.full, c.blank_penalty) / (c.hand_size * c.max_pips)
            )
        assert (game.min_utility(), game.max_utility()) == pytest.approx((-bound, bound))
        assert game.utility_sum() == total
        t = game.get_type()
        assert t.provides_information_state_string and t.provides_information_state_tensor
        assert t.provides_observation_string and t.provides_observation_tensor
        rng = np.random.default_rng(len(reward))
        for _ in range(3):
            state = _play_to(game.new_initial_state(), rng, lambda st: st.is_terminal())
            moves = [pa.action for pa in state.full_history() if pa.player >= 0]
            assert 0 < len(moves) <= game.max_game_length()
            assert all(-bound <= r <= bound for r in state.returns())
