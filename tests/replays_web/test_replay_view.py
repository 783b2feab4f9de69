"""Views of replays (mtrain_env/replay_view.py): text playthroughs and GIFs, one seat's view."""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import mtrain_env
from mtrain_env.mexican_train.render_image import frame_shape
from mtrain_env.replay import read_replay, replay_frames, write_replay
from mtrain_env.replay_view import playthrough, table_image, table_text, write_gif
from tests import REPO
from training.app import main

GOLDEN = REPO / "tests" / "golden"
MC_GAME = GOLDEN / "mt_4p_double12_wikipedia_mc.jsonl"  # seat 1 is mc, with annotations
BLOCK_GAME = GOLDEN / "block_4p_001.jsonl"


def _hidden_twin(env: mtrain_env.raw_env, seat: int) -> mtrain_env.raw_env:
    """A copy of ``env`` whose hidden tiles differ for ``seat``: one tile of another hand is
    swapped with the top of the boneyard (same counts, same public table)."""
    d = copy.deepcopy(env.state_dict())
    other = (seat + 1) % env.config.num_players
    d["hands"][other][0], d["boneyard"][0] = d["boneyard"][0], d["hands"][other][0]
    d["hands"][other].sort()
    twin = mtrain_env.raw_env(**env.config.to_dict())
    twin.load_state_dict(d)
    return twin


def test_a_seats_table_does_not_depend_on_what_it_cannot_see() -> None:
    """Text and picture of seat N's view are the same whatever the other hands and the
    boneyard hold; the view of the seat whose hand changed is not."""
    env = mtrain_env.raw_env(num_players=3, max_pips=9)
    env.reset(seed=4)
    for _ in range(5):
        env.step(env.legal_actions()[0])
    seat = (env.current_seat + 1) % 3  # a seat NOT on turn
    twin = _hidden_twin(env, seat)
    assert table_text(env, seat) == table_text(twin, seat)
    assert np.array_equal(table_image(env, seat), table_image(twin, seat))
    other = (seat + 1) % 3
    assert table_text(env, other) != table_text(twin, other)
    assert not np.array_equal(table_image(env, other), table_image(twin, other))
    hand = " ".join(
        f"[{a}|{b}]" for a, b in (env.config.tiles.tiles[i] for i in _bits(env.state_obj.hands[seat]))
    )
    assert f"player_{seat}'s hand: {hand}" in table_text(env, seat)


def _bits(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def test_a_seats_playthrough_shows_its_own_hand_and_notes_only() -> None:
    replay = read_replay(MC_GAME)
    for seat in range(4):
        text = "\n".join(playthrough(replay, seat=seat))
        others = [p for p in range(4) if p != seat]
        assert not any(f"player_{p}'s hand" in text for p in others)
        assert ("values:" in text) == (seat == 1)  # mc's notes are seen by mc's seat only
        assert text.startswith("Mexican Train, ") and "seed hidden" in text.splitlines()[0]
        assert f"seed {replay.seed}" not in text  # the seed deals every hand again
        # every table line with a hand shows this seat's hand as it was at that position
        hands = re.findall(r"(?:player_\d's )?hand: (.*)", text)
        expected = []
        for frame in replay_frames(replay):
            if frame.index < len(replay.steps):
                view = frame.public_view(seat)
                tiles = frame.env.config.tiles.tiles
                expected.append(" ".join(f"[{a}|{b}]" for a, b in (tiles[i] for i in _bits(view.hand))))
        assert [h for h in hands if not h.startswith("7 tiles")] == expected


def test_the_full_views() -> None:
    replay = read_replay(MC_GAME)
    everything = "\n".join(playthrough(replay, all_hands=True))
    assert all(f"player_{p}'s hand" in everything for p in range(4))
    assert "values:" in everything and "== final scores" in everything
    with pytest.raises(ValueError, match="exclude"):
        list(playthrough(replay, seat=0, all_hands=True))
    with pytest.raises(ValueError, match="seat"):
        list(playthrough(replay, seat=4))
    block = "\n".join(playthrough(read_replay(BLOCK_GAME), seat=2, tables=True))
    assert "player_2's hand" in block and "player_0's hand" not in block


def test_gif_has_one_frame_per_position(tmp_path: Path) -> None:
    replay = read_replay(GOLDEN / "mt_2p_double6_pagat.jsonl")
    out = tmp_path / "g.gif"
    assert write_gif(replay, out, seat=1, scale=0.25) == len(replay.steps) + 1
    with Image.open(out) as im:
        assert im.n_frames == len(replay.steps) + 1
        h, w, _ = frame_shape(mtrain_env.raw_env(**replay.config).config)
        assert im.size == (round(w * 0.25), round(h * 0.25))
    assert write_gif(replay, tmp_path / "all.gif", all_hands=True, scale=0.25) == len(replay.steps) + 1
    with pytest.raises(ValueError, match="no picture render"):
        write_gif(read_replay(BLOCK_GAME), tmp_path / "b.gif")
    assert not (tmp_path / "b.gif").exists()


def test_replay_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "show", "--seat", "1", "--moves-only", str(MC_GAME)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Mexican Train, 4 players, double-12, wikipedia +one_tile_opening; seed hidden\n")
    assert main(["replay", "show", "--moves-only", str(MC_GAME)]) == 0
    assert capsys.readouterr().out.startswith(
        "Mexican Train, 4 players, double-12, wikipedia +one_tile_opening; seed 2\n"
    )
    assert "values: " in out and "== final scores" in out
    gif = tmp_path / "x.gif"
    assert (
        main(
            ["replay", "gif", str(GOLDEN / "mt_2p_double6_pagat.jsonl"), "--out", str(gif), "--scale", "0.2"]
        )
        == 0
    )
    assert gif.exists() and "frames" in capsys.readouterr().out
    # unreadable, malformed, mismatching: exit 2, 2, 1 with one line each
    bad = tmp_path / "bad.jsonl"
    write_replay(bad, replace(read_replay(MC_GAME), seed=3))  # a whole file, closing line and all
    assert main(["replay", "check", str(bad)]) == 1
    assert re.search(r"MISMATCH .*bad.jsonl: step \d+", capsys.readouterr().err)
    bad.write_text("{}\n")
    assert main(["replay", "check", str(bad), str(MC_GAME)]) == 2
    assert main(["replay", "check", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["replay", "show", str(bad)]) == 2
    assert main(["replay", "gif", str(GOLDEN / "block_4p_001.jsonl"), "--out", str(tmp_path / "b.gif")]) == 2
    err = capsys.readouterr().err
    assert "damaged replay" in err and "no picture render" in err
    assert main(["replay", "check", str(GOLDEN)]) == 0


def test_replay_check_refuses_a_replay_cut_at_a_line_boundary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that lost its last lines (closing line included) is not whole: exit 2 with
    one line naming the missing closing line, not "re-simulate bit-exactly"."""
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(MC_GAME.read_text().splitlines(keepends=True)[:-3]))
    assert main(["replay", "check", str(cut)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mtrain replay check: damaged replay: {cut}:") and "no closing line" in err
    assert len(err.strip().splitlines()) == 1


def test_replay_check_opens_only_regular_files(tmp_path: Path) -> None:
    """A FIFO named like a replay (it waited for a writer forever) and a device (``/dev/zero``
    was read until killed) are refused at once: one line each, exit 2, the other files checked."""
    os.mkfifo(tmp_path / "fifo.jsonl")
    (tmp_path / "good.jsonl").write_bytes(Path(SMALL).read_bytes())
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "training.app", "replay", "check", str(tmp_path), "/dev/zero"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"mtrain replay check: cannot read {tmp_path / 'fifo.jsonl'}: not a regular file (a FIFO)",
        "mtrain replay check: cannot read /dev/zero: not a regular file (a character device)",
    ]
    assert done.stdout.startswith("1 of 3 replay(s) re-simulate bit-exactly")


SMALL = str(GOLDEN / "mt_2p_double6_pagat.jsonl")  # 2 players


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        # a GIF delay is 16-bit centiseconds: below 0.0061 fps Pillow's OverflowError (a traceback)
        (["gif", SMALL, "--fps", "0.0001"], "gif: argument --fps: must be in [0.006104, 50] (a GIF"),
        (["gif", SMALL, "--fps", "1e9"], "gif: argument --fps: must be in [0.006104, 50]"),  # "fps must"
        (["gif", SMALL, "--scale", "0.001"], "gif: argument --scale: must be in [0.125, 1]"),  # 1-px frames
        (["gif", SMALL, "--seat", "9"], "gif: --seat: must be in 0..1 (a 2-player replay), got 9"),
        (["show", SMALL, "--seat", "9"], "show: --seat: must be in 0..1 (a 2-player replay), got 9"),
        (["gif", SMALL, "--out", "{tmp}/a.png"], "gif: --out: must end in .gif (the file is written as"),
        (["gif", SMALL, "--out", "{tmp}/a"], "gif: --out: must end in .gif"),
        (["show", "{tmp}"], "show: cannot read {tmp}: not a regular file (a directory)"),
        (["check", "{tmp}"], "check: no replay files found"),
    ],
)
def test_replay_commands_refuse_in_one_line_naming_the_command_and_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    """Every refusal of ``mtrain replay`` is one line, exit 2, nothing written, prefixed
    ``mtrain replay <sub>: `` and naming the option (``--fps``, ``--seat``), not the Python
    parameter of ``write_gif`` / ``playthrough``."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    try:
        status = main(["replay", *argv])
    except SystemExit as exit_:  # argparse's refusals
        status = exit_.code
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("mtrain replay " + says.replace("{tmp}", str(tmp_path))), err
    assert len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


def test_replay_gif_takes_an_upper_case_gif_suffix(tmp_path: Path) -> None:
    out = tmp_path / "A.GIF"
    assert main(["replay", "gif", SMALL, "--out", str(out), "--scale", "0.125", "--fps", "0.006104"]) == 0
    with Image.open(out) as im:
        assert im.format == "GIF" and im.width == 160
