"""Views of a replay: a text playthrough (``mtrain replay show``) and a GIF (``mtrain replay gif``).

A replay file is a full record (every seat's actions), but a view for one seat
(``seat=N``) shows only what that seat knew: its own hand, the public table, every
seat's moves (laid tiles, draws and passes are public), the rounds' results (every hand
is shown when a round is scored) and its own annotations, never another seat's (a
search's values over its legal moves would tell its tiles). Without ``seat`` a view
shows the hand of the seat on turn, as the env's own render does; ``all_hands=True``
shows every hand.

The text is the env's own ``ansi`` render; the pictures are its ``rgb_array`` render
(Mexican Train only: partnership dominoes has no picture render).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from mtrain_env.replay import Replay, ReplayFrame, ReplayStep, describe_move, replay_frames
from mtrain_env.tilegame.files import atomic_path
from mtrain_env.tilegame.tiles import bits_list

__all__ = [
    "MAX_FPS",
    "MIN_FPS",
    "MIN_SCALE",
    "annotation_text",
    "fps_problem",
    "hands_text",
    "playthrough",
    "round_lines",
    "scale_problem",
    "table_image",
    "table_text",
    "write_gif",
]

NO_PICTURE = (
    "partnership dominoes has no picture render (rgb_array): view its replays with `mtrain replay show`"
)


def _check_seat(replay: Replay, seat: int | None, all_hands: bool) -> None:
    if seat is not None and not 0 <= seat < replay.num_players:
        raise ValueError(f"seat must be in 0..{replay.num_players - 1}, got {seat}")
    if seat is not None and all_hands:
        raise ValueError("seat and all_hands exclude each other: a seat's view shows its own hand only")


def hands_text(env: Any) -> list[str]:
    """One line per seat with its hand (the ``all_hands`` view: hidden information)."""
    s = env.state_obj
    tiles = env.config.tiles.tiles
    return [
        f"  player_{p}'s hand: "
        + (" ".join(f"[{a}|{b}]" for a, b in (tiles[i] for i in bits_list(h))) or "-")
        for p, h in enumerate(s.hands)
    ]


def table_text(env: Any, seat: int | None = None, all_hands: bool = False) -> str:
    """The env's text render of the table with the hand of ``seat`` (default: on turn), or every hand."""
    s = env.state_obj
    if hasattr(env, "pure_game"):
        from mtrain_env.mexican_train.render import render_text

        text = render_text(env.pure_game, s, seat)
    else:
        from mtrain_env.block.render import render_text as block_render_text

        text = block_render_text(env.game, s, seat)
    if all_hands:
        text += "\n" + "\n".join(hands_text(env))
    return text


def _describe_config(replay: Replay) -> str:
    c = replay.config
    if replay.game == "block":
        return f"partnership dominoes, {c['num_players']} players, rules {c['rules']}"
    rounds = f", {c['rounds']} rounds" if c["rounds"] > 1 else ""
    flags = [k for k, v in c.items() if v is True]
    extra = f" +{','.join(flags)}" if flags else ""
    return f"Mexican Train, {c['num_players']} players, double-{c['max_pips']}, {c['rules']}{rounds}{extra}"


def _action_text(env: Any, seat: int, key: str) -> str:
    """An annotation's action key as its move (``"5|8 on player_1's train"``), else as is."""
    try:
        return describe_move(env, seat, int(key))
    except (TypeError, ValueError):
        return key


def annotation_text(env: Any, step: ReplayStep, top: int = 4) -> str:
    """A decision's annotations in words: the ``top`` best actions of ``values`` / ``probs``
    as moves (``env`` is positioned at that decision), other notes as they are."""
    notes = step.annotations or {}
    parts = []
    for key, label in (("values", "values"), ("probs", "probabilities")):
        table = notes.get(key)
        if isinstance(table, dict):
            best = sorted(table.items(), key=lambda kv: -float(kv[1]))[:top]
            parts.append(
                f"{label}: " + ", ".join(f"{_action_text(env, step.seat, a)} {float(v):.3g}" for a, v in best)
            )
    rest = {k: v for k, v in notes.items() if k not in ("values", "probs")}
    if rest:
        parts.append(f"notes: {rest}")
    return "; ".join(parts)


def round_lines(k: int, result: dict[str, Any]) -> list[str]:
    """Round ``k``'s public result (``round_result``) as two lines: outcome and scores, hands shown."""
    n = len(result["scores"])
    if result.get("blocked"):
        how = "blocked"
    else:
        how = "went out: " + ", ".join(f"player_{p}" for p in range(n) if result["went_out"][p])
    scores = ", ".join(f"player_{p} {x:g}" for p, x in enumerate(result["scores"]))
    hands = "; ".join(
        f"player_{p} " + (" ".join(f"[{a}|{b}]" for a, b in hand) or "-")
        for p, hand in enumerate(result["hands"])
    )
    return [f"== round {k + 1} over ({how}); scores {scores}", f"   hands shown: {hands}"]


def playthrough(
    replay: Replay, seat: int | None = None, all_hands: bool = False, tables: bool = True
) -> Iterator[str]:
    """The replay as text lines: a header, then each decision (with the table before it when
    ``tables``), round results and the final scores. ``seat``: that seat's view only (its
    hand, its own search values, no seed)."""
    _check_seat(replay, seat, all_hands)
    # a seat's view leaves the seed out: it deals every hand and the boneyard again
    yield f"{_describe_config(replay)}; " + (f"seed {replay.seed}" if seat is None else "seed hidden")
    yield "seats: " + ", ".join(f"player_{p} {name}" for p, name in enumerate(replay.agents))
    view = (
        "every hand"
        if all_hands
        else (f"player_{seat}'s view only" if seat is not None else "the hand on turn")
    )
    yield f"showing: {view}; {len(replay.steps)} decisions"
    frames = replay_frames(replay)
    frame: ReplayFrame = next(frames)
    rounds = 0
    for step in replay.steps:
        if tables:
            yield ""
            yield table_text(frame.env, seat, all_hands)
        notes = ""
        if step.annotations and (seat is None or seat == step.seat):  # a seat's own notes only
            notes = f"    [{annotation_text(frame.env, step)}]"
        frame = next(frames)
        who = f"player_{step.seat} ({replay.agents[step.seat]})"
        yield f"#{frame.index - 1:<4d} {who}: {step.move}{notes}"
        if frame.round_result is not None:
            yield from round_lines(rounds, frame.round_result)
            rounds += 1
    if replay.final is not None:
        scores = ", ".join(f"player_{p} {x:g}" for p, x in enumerate(replay.final["scores"]))
        returns = ", ".join(f"player_{p} {x:+.3f}" for p, x in enumerate(replay.final["returns"]))
        yield f"== final scores: {scores}"
        yield f"   returns ({replay.reward or 'default'} reward): {returns}"
    else:
        yield "== the game was cut short here (no final scores)"


# ------------------------------------------------------------------- pictures
#: the end of a round and the final position stay on screen this many frames
HOLD = 4
#: a GIF frame's delay is a 16-bit count of centiseconds: 655.35 s at most
GIF_MAX_DELAY_MS = 65535 * 10
#: the slowest frame rate whose held frames (``HOLD`` steps of ``round(1000 / fps)`` ms)
#: still fit a GIF delay (about 0.0061 fps); below it Pillow cannot write the delay
#: (``OverflowError``)
MIN_FPS = 1000 / (GIF_MAX_DELAY_MS // HOLD)
#: a 2 cs delay: browsers show shorter GIF delays as 10 cs, slower than asked
MAX_FPS = 50.0
#: 1/8 of the 1280 px frame (1/4 of the default 0.5): a 160 px thumbnail whose tiles are
#: 6 x 3 px (a tile half is 24 px at full size, render_image.HALF), still tiles on trains;
#: any smaller and a tile is a dot, and a small table rounds to a 0-pixel side
MIN_SCALE = 0.125


def fps_problem(fps: float) -> str | None:
    """Why ``fps`` cannot be a GIF's frame rate (``"must be in ..."``), or None."""
    if MIN_FPS <= fps <= MAX_FPS:
        return None
    return (
        f"must be in [{MIN_FPS:.4g}, {MAX_FPS:g}] (a GIF frame shows for at most "
        f"{GIF_MAX_DELAY_MS / 1000:g} s, and a round's end is held {HOLD} frames)"
    )


def scale_problem(scale: float) -> str | None:
    """Why ``scale`` cannot size a GIF's frames (``"must be in ..."``), or None."""
    if MIN_SCALE <= scale <= 1:
        return None
    return f"must be in [{MIN_SCALE:g}, 1] (smaller frames draw a tile as a dot)"


def table_image(env: Any, seat: int | None = None, all_hands: bool = False) -> np.ndarray:
    """The env's ``rgb_array`` picture of the table with the hand of ``seat`` (default: on
    turn), or with every hand in a strip below it (Mexican Train only)."""
    if not hasattr(env, "pure_game"):
        raise ValueError(NO_PICTURE)
    from mtrain_env.mexican_train.render_image import draw_table, with_hands_strip

    frame = draw_table(env.pure_game, env.state_obj, seat)
    return with_hands_strip(env.pure_game, env.state_obj, frame) if all_hands else frame


def write_gif(
    replay: Replay,
    path: str | os.PathLike[str],
    seat: int | None = None,
    all_hands: bool = False,
    fps: float = 2.0,
    scale: float = 0.5,
    progress: bool = False,
) -> int:
    """Write the replay as an animated GIF (one frame per position, the end of each round
    and the final position held ``HOLD`` times as long); the number of frames. Pillow only.

    ``fps`` in [``MIN_FPS``, ``MAX_FPS``], ``scale`` (of the 1280 px frames) in
    [``MIN_SCALE``, 1]; a ``ValueError`` names the parameter otherwise, before any work."""
    from PIL import Image

    _check_seat(replay, seat, all_hands)
    problem = scale_problem(scale)
    if problem is not None:
        raise ValueError(f"scale {problem}, got {scale}")
    problem = fps_problem(fps)
    if problem is not None:
        raise ValueError(f"fps {problem}, got {fps}")
    if replay.game != "mexican_train":
        raise ValueError(NO_PICTURE)
    images: list[Image.Image] = []
    durations: list[int] = []
    step_ms = round(1000 / fps)
    frames = replay_frames(replay)
    if progress:
        from tqdm import tqdm

        frames = tqdm(frames, total=len(replay.steps) + 1, desc="frames", unit="frame")
    palette: Image.Image | None = None
    for frame in frames:
        img = Image.fromarray(table_image(frame.env, seat, all_hands))
        if scale != 1:
            img = img.resize((round(img.width * scale), round(img.height * scale)), Image.Resampling.LANCZOS)
        if palette is None:  # one palette for every frame: stable colours, small deltas
            palette = img.quantize(colors=128, method=Image.Quantize.MEDIANCUT)
        images.append(img.quantize(palette=palette, dither=Image.Dither.NONE))
        held = frame.round_result is not None or frame.index == len(replay.steps)
        durations.append(step_ms * HOLD if held else step_ms)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        images[0].save(
            tmp,
            format="GIF",
            save_all=True,
            append_images=images[1:],
            duration=durations,
            loop=0,
            optimize=False,
        )
    return len(images)
