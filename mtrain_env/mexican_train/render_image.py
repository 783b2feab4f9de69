"""The table as a picture (``render_mode="rgb_array"``), drawn with Pillow.

What the frame shows (public information only, plus the hand of the seat ON TURN):

* a header: round, engine, phase, boneyard COUNT, who is to play (and session scores on
  the seat plates when an episode has several rounds);
* the station (R5) with the engine double laid crossways, and one lane per train in seat
  order, the Mexican train last (R7). Each lane starts with a plate: the train's name
  (``player_i`` / ``Mexican``), the seat's hand COUNT and, when the train is open, a
  marker token (a small locomotive, R10/R16/R17). The tiles run from the station outward
  (the half touching the previous tile on the left), wrapping into more rows and shrinking
  when a train grows long;
* an unsatisfied double at a train's end glows orange; the one that must be satisfied
  next (R20/R21, :meth:`MexicanTrain.double_to_satisfy`) glows red and carries a ``!`` badge;
* at the bottom, the hand of the seat on turn only, its playable tiles underlined in
  green. Other hands and the boneyard order are never drawn. Once a round is over the
  panel shows the round's scores instead.

Tile faces: pips use the classic layouts on a 3x3 grid for 0..9, coloured per value as in
commercial double-12 sets (a colour per number makes matching ends easy to see). Values
10..18 have no standard layout that stays readable at tile size, so they are written as
a numeral in the value's colour: one rule for the whole picture.

The frame size depends only on the config (number of seats), so every frame of a game,
and of every game with that config, has the same shape (video-friendly: both sides are
multiples of 16). Only Pillow's built-in font is used; nothing is loaded at run time.
Tile faces, fonts and the static background are cached per config and tile size.
"""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState, Phase
from mtrain_env.tilegame.tiles import bits_list

Color = tuple[int, int, int]
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

# ------------------------------------------------------------------ geometry
WIDTH = 1280  #: frame width, whatever the config
MARGIN = 12
HEADER_H = 40
HALF = 24  #: side of a tile half at full size (a tile is 2*HALF x HALF)
LANE_H = 2 * HALF + 8  #: a personal train: two rows of full-size tiles
MEXICAN_LANE_H = 3 * HALF + 2 * (HALF // 8) + 8  #: the Mexican train, usually the longest: three rows
LANE_GAP = 8
PLATE_W = 176
STATION_W = 104
SPOKE_W = 26
HAND_HALF = 28  #: the hand is drawn a little larger than the table
HAND_TITLE_H = 28
HAND_ROWS_H = 2 * (HAND_HALF + 10)  #: two rows of tiles, each with room for the "playable" bar
HAND_LEGEND_H = 22
TITLE, BODY, SMALL = 17, 14, 12  #: font sizes
SUPERSAMPLE = 4  #: tile faces are drawn 4x larger and scaled down (smooth pips)
DOT_MAX = 9  #: values above this are drawn as numerals

# ------------------------------------------------------------------ colours
FELT: Color = (28, 84, 52)
FELT_DARK: Color = (18, 58, 36)
LANE_BG: Color = (36, 100, 64)
HEADER_BG: Color = (14, 38, 24)
TEXT: Color = (244, 240, 226)
TEXT_DIM: Color = (170, 200, 180)
IVORY: Color = (250, 246, 234)
TILE_EDGE: Color = (70, 62, 50)
BRASS: Color = (201, 162, 74)
TURN: Color = (255, 214, 0)
GLOW_OPEN: Color = (255, 150, 30)
GLOW_HEAD: Color = (235, 40, 40)
PLAYABLE: Color = (90, 230, 110)
MARKER: Color = (255, 196, 0)

#: Pip colour per value, close to the colours of commercial double-12 sets, extended.
PIP_COLORS: tuple[Color, ...] = (
    (0, 0, 0),  # 0: blank
    (30, 136, 229),  # 1 light blue
    (46, 125, 50),  # 2 green
    (211, 47, 47),  # 3 red
    (121, 72, 36),  # 4 brown
    (26, 35, 126),  # 5 dark blue
    (200, 140, 0),  # 6 dark yellow
    (142, 68, 173),  # 7 violet
    (0, 121, 107),  # 8 teal
    (74, 20, 140),  # 9 deep purple
    (230, 100, 0),  # 10 orange
    (33, 33, 33),  # 11 black
    (110, 110, 110),  # 12 grey
    (216, 27, 96),  # 13 pink
    (130, 119, 23),  # 14 olive
    (0, 131, 143),  # 15 cyan
    (136, 14, 79),  # 16 maroon
    (57, 73, 171),  # 17 indigo
    (78, 52, 46),  # 18 dark brown
)

#: Plate colour per seat (cycled); the Mexican train has its own striped plate.
SEAT_COLORS: tuple[Color, ...] = (
    (31, 95, 160),
    (170, 60, 40),
    (110, 70, 150),
    (30, 120, 120),
    (160, 110, 20),
    (150, 50, 100),
    (70, 110, 40),
    (90, 90, 110),
)
MEXICAN_STRIPES: tuple[Color, Color, Color] = ((0, 104, 71), (245, 245, 245), (206, 17, 38))
MEXICAN_PLATE: Color = (60, 60, 60)

# Classic pip positions on a 3x3 grid (column, row), for a tile lying horizontally.
_GRID_3: dict[int, tuple[tuple[int, int], ...]] = {
    0: (),
    1: ((1, 1),),
    2: ((0, 0), (2, 2)),
    3: ((0, 0), (1, 1), (2, 2)),
    4: ((0, 0), (2, 0), (0, 2), (2, 2)),
    5: ((0, 0), (2, 0), (1, 1), (0, 2), (2, 2)),
    6: ((0, 0), (1, 0), (2, 0), (0, 2), (1, 2), (2, 2)),
    7: ((0, 0), (1, 0), (2, 0), (1, 1), (0, 2), (1, 2), (2, 2)),
    8: ((0, 0), (1, 0), (2, 0), (0, 1), (2, 1), (0, 2), (1, 2), (2, 2)),
    9: tuple((c, r) for r in range(3) for c in range(3)),
}


@cache
def _font(size: int) -> Font:
    """Pillow's built-in font at ``size`` px (a scalable font with FreeType, Pillow >= 10.1)."""
    return ImageFont.load_default(size=max(6, size))


# ------------------------------------------------------------------ text
@lru_cache(maxsize=4096)
def _text_sprite(text: str, size: int, color: Color, anchor: str) -> tuple[Image.Image, int, int]:
    """``text`` rendered once as an RGBA sprite, with its offset from the anchor point.

    Rendering a string with FreeType costs far more than pasting a cached sprite, and most
    strings (names, counts, labels) repeat from frame to frame.
    """
    font = _font(size)
    left, top, right, bottom = (int(v) for v in font.getbbox(text, anchor=anchor))
    img = Image.new("RGBA", (max(1, right - left), max(1, bottom - top)), (*color, 0))
    ImageDraw.Draw(img).text((-left, -top), text, font=font, fill=(*color, 255), anchor=anchor)
    return img, left, top


def _put_text(
    img: Image.Image, xy: tuple[float, float], text: str, size: int, color: Color, anchor: str = "la"
) -> int:
    """Paste ``text`` at ``xy`` (Pillow anchor semantics); returns the right edge."""
    sprite, left, top = _text_sprite(text, size, color, anchor)
    x, y = round(xy[0]) + left, round(xy[1]) + top
    img.paste(sprite, (x, y), sprite)
    return x + sprite.width


# ------------------------------------------------------------------ tile faces
def _draw_half(draw: ImageDraw.ImageDraw, x0: int, y0: int, side: int, v: int, vertical: bool) -> None:
    """Pips of value ``v`` in the square of ``side`` at ``(x0, y0)`` (supersampled pixels)."""
    color = PIP_COLORS[v]
    if v <= DOT_MAX:
        r = side * 0.105
        for c, row in _GRID_3[v]:
            if vertical:  # a tile standing up shows the layouts turned a quarter
                c, row = row, c
            cx = x0 + side * (0.24 + 0.26 * c)
            cy = y0 + side * (0.24 + 0.26 * row)
            draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=color)
        return
    font = _font(int(side * 0.64))
    stroke = max(1, side // 40)  # a little weight, to match the visual mass of the dots
    draw.text(
        (x0 + side / 2, y0 + side / 2),
        str(v),
        font=font,
        fill=color,
        anchor="mm",
        stroke_width=stroke,
        stroke_fill=color,
    )


@lru_cache(maxsize=4096)
def tile_face(a: int, b: int, half: int, vertical: bool = False) -> Image.Image:
    """RGBA image of tile ``a|b``: ``a`` on the left (on top if ``vertical``).

    ``2*half`` x ``half`` px lying down (``half`` x ``2*half`` standing up). Drawn at
    :data:`SUPERSAMPLE` times the size and scaled down for smooth pips; cached.
    """
    k = SUPERSAMPLE
    side = half * k
    w, h = (side, 2 * side) if vertical else (2 * side, side)
    img = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    radius = max(k, side // 6)
    edge = max(k, side // 22)
    draw.rounded_rectangle((0, 0, w - 1, h - 1), radius, fill=(*TILE_EDGE, 255))
    draw.rounded_rectangle(
        (edge, edge, w - 1 - edge, h - 1 - edge), max(1, radius - edge), fill=(*IVORY, 255)
    )
    line = max(k, side // 28)
    if vertical:
        draw.rectangle((side * 0.14, side - line // 2, side * 0.86, side + line // 2), fill=(*TILE_EDGE, 255))
        _draw_half(draw, 0, 0, side, a, True)
        _draw_half(draw, 0, side, side, b, True)
    else:
        draw.rectangle((side - line // 2, side * 0.14, side + line // 2, side * 0.86), fill=(*TILE_EDGE, 255))
        _draw_half(draw, 0, 0, side, a, False)
        _draw_half(draw, side, 0, side, b, False)
    return img.resize((w // k, h // k), Image.Resampling.LANCZOS)


@lru_cache(maxsize=8)
def _marker_icon(h: int) -> Image.Image:
    """The marker token: a small locomotive (R10, R16, R17), ``h`` px high."""
    k = SUPERSAMPLE
    w, hh = int(h * 1.5) * k, h * k
    img = Image.new("RGBA", (w, hh), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    dark = (40, 30, 10, 255)
    fill = (*MARKER, 255)
    u = hh / 10
    d.rounded_rectangle((0.2 * w, 3 * u, w - u, 7.6 * u), int(u), fill=fill, outline=dark, width=int(u * 0.6))
    d.rectangle((0.55 * w, 0.6 * u, w - 1.5 * u, 3.4 * u), fill=fill, outline=dark, width=int(u * 0.6))
    d.rectangle((0.28 * w, 1.2 * u, 0.38 * w, 3.2 * u), fill=dark)  # chimney
    d.polygon([(0.2 * w, 4 * u), (0.2 * w, 7.6 * u), (0, 7.6 * u)], fill=dark)  # cow-catcher
    for cx in (0.35 * w, 0.62 * w, 0.85 * w):
        d.ellipse((cx - 1.3 * u, 7 * u, cx + 1.3 * u, 9.6 * u), fill=dark)
    return img.resize((w // k, hh // k), Image.Resampling.LANCZOS)


# ------------------------------------------------------------------ layout
def _fit(count: int, width: int, height: int, half_max: int, extra_row: int = 0) -> tuple[int, int, int]:
    """Largest tile size that lays ``count`` tiles in a ``width`` x ``height`` box.

    Rows are ``half + gap + extra_row`` px apart. Returns ``(half, per_row, gap)``: tiles
    wrap into more rows, and shrink only when the rows no longer fit, so a train of any
    length fits its lane (a 40-tile Mexican train keeps full-size tiles in three rows).
    """
    for half in range(half_max, 3, -1):
        gap = max(1, half // 8)
        per_row = max(1, (width + gap) // (2 * half + gap))
        rows = -(-count // per_row)
        if rows * half + (rows - 1) * (gap + extra_row) <= height:
            return half, per_row, gap
    return 4, max(1, (width + 1) // 9), 1


class _Layout:
    """Pixel geometry of a frame, a function of the config only."""

    def __init__(self, config: GameConfig) -> None:
        n_lanes = config.num_players + 1
        self.width = WIDTH
        self.lanes_top = MARGIN + HEADER_H + 10
        self.lane_x = MARGIN + STATION_W + SPOKE_W  # plate left edge
        self.tiles_x = self.lane_x + PLATE_W + 10
        self.tiles_w = WIDTH - MARGIN - 8 - self.tiles_x
        self.lane_h = [LANE_H] * (n_lanes - 1) + [MEXICAN_LANE_H]
        self.lane_y = [self.lanes_top + sum(self.lane_h[:i]) + i * LANE_GAP for i in range(n_lanes)]
        lanes_bottom = self.lane_y[-1] + MEXICAN_LANE_H
        self.lanes_bottom = lanes_bottom
        self.hand_top = lanes_bottom + 12
        self.hand_tiles_x = MARGIN + 14
        self.hand_tiles_w = WIDTH - 2 * MARGIN - 28
        height = self.hand_top + HAND_TITLE_H + HAND_ROWS_H + HAND_LEGEND_H + MARGIN
        self.height = -(-height // 16) * 16  # a multiple of 16 (video codecs)


class _Renderer:
    """Layout and static background of one config; draws each frame over a copy of it."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.layout = _Layout(config)
        self.background = self._background()

    def _background(self) -> Image.Image:
        """Everything that never changes during a game: felt, station, lanes, plate names."""
        lay = self.layout
        n = self.config.num_players
        img = Image.new("RGB", (lay.width, lay.height), FELT)
        d = ImageDraw.Draw(img)
        d.rectangle((0, 0, lay.width, MARGIN + HEADER_H), fill=HEADER_BG)
        c = self.config
        _put_text(
            img,
            (lay.width - MARGIN - 6, MARGIN + HEADER_H / 2),
            f"double-{c.max_pips}  |  {n} players  |  {c.rules} rules",
            SMALL,
            TEXT_DIM,
            "rm",
        )
        # the station (R5): a box spanning all lanes, with a spoke to each train
        top, bottom = lay.lanes_top, lay.lanes_bottom
        sx0, sx1 = MARGIN, MARGIN + STATION_W
        d.rounded_rectangle((sx0, top, sx1, bottom), 14, fill=FELT_DARK, outline=BRASS, width=2)
        _put_text(img, ((sx0 + sx1) / 2, top + 14), "STATION", SMALL, BRASS, "mm")
        cy_station = (top + bottom) / 2
        for i, y in enumerate(lay.lane_y):
            cy = y + lay.lane_h[i] / 2
            d.line((sx1 - 8, cy_station, sx1 + 8, cy), fill=BRASS, width=3)
            d.line((sx1 + 8, cy, lay.lane_x, cy), fill=BRASS, width=3)
            d.rounded_rectangle((lay.lane_x, y, lay.width - MARGIN, y + lay.lane_h[i]), 10, fill=LANE_BG)
            self._plate(img, d, i, y)
        d.rounded_rectangle(
            (MARGIN, lay.hand_top, lay.width - MARGIN, lay.height - MARGIN), 12, fill=FELT_DARK, outline=BRASS
        )
        return img

    def _plate(self, img: Image.Image, d: ImageDraw.ImageDraw, lane: int, y: int) -> None:
        x0 = self.layout.lane_x
        h = self.layout.lane_h[lane]
        box = (x0, y, x0 + PLATE_W, y + h)
        if lane == self.config.num_players:
            d.rounded_rectangle(box, 10, fill=MEXICAN_PLATE)
            for j, col in enumerate(MEXICAN_STRIPES):
                d.rectangle((x0 + 8 + 6 * j, y + 8, x0 + 13 + 6 * j, y + h - 8), fill=col)
            _put_text(img, (x0 + 34, y + 9), "Mexican", TITLE, TEXT)
            _put_text(img, (x0 + 34, y + h - 22), "open to all", SMALL, TEXT_DIM)
        else:
            d.rounded_rectangle(box, 10, fill=SEAT_COLORS[lane % len(SEAT_COLORS)])
            _put_text(img, (x0 + 12, y + 9), f"player_{lane}", TITLE, TEXT)

    # ---------------------------------------------------------------- a frame
    def draw(self, game: MexicanTrain, s: GameState, seat: int | None = None) -> np.ndarray:
        img = self.background.copy()
        d = ImageDraw.Draw(img)
        self._header(img, s)
        self._station(img, d, s)
        n = self.config.num_players
        unsatisfied = set(s.pending) | set(s.turn_doubles)
        on_turn = s.current if s.phase < Phase.ROUND_OVER else -1
        next_double = game.double_to_satisfy(s)  # R20, R21
        for t in range(n + 1):
            y = self.layout.lane_y[t]
            if t < n:
                self._plate_state(img, d, s, t, y, t == on_turn)
            open_double = t in unsatisfied
            self._train(img, d, game, s, t, y, open_double, open_double and t == next_double)
        if s.phase < Phase.ROUND_OVER:
            self._hand_panel(img, d, game, s, s.current if seat is None else seat)
        else:
            self._round_over(img, s)
        return np.asarray(img)

    def _header(self, img: Image.Image, s: GameState) -> None:
        c = self.config
        parts = [
            "MEXICAN TRAIN",
            f"Round {s.round_index + 1}/{c.rounds}",
            f"Engine {s.engine}|{s.engine}" + ("" if s.engine_placed else " (not found)"),
            f"Phase: {s.phase.name.lower().replace('_', ' ')}",
            f"Boneyard: {len(s.boneyard)}",
        ]
        if s.phase < Phase.ROUND_OVER:
            parts.append(f"To play: player_{s.current}")
        x = MARGIN + 8
        y = MARGIN + HEADER_H / 2
        for part in parts:
            x = _put_text(img, (x, y), part, TITLE, TURN if part.startswith("To play") else TEXT, "lm") + 26

    def _station(self, img: Image.Image, d: ImageDraw.ImageDraw, s: GameState) -> None:
        lay = self.layout
        top, bottom = lay.lanes_top + 26, lay.lanes_bottom - 8
        half = min(36, (bottom - top) // 2)
        face = tile_face(s.engine, s.engine, half, True)  # laid crossways
        x = MARGIN + (STATION_W - face.width) // 2
        y = (top + bottom) // 2 - face.height // 2
        if s.engine_placed:
            img.paste(face, (x, y), face)
        else:  # R5 variant: seats draw in turn until someone finds the engine
            d.rounded_rectangle((x, y, x + face.width, y + face.height), 6, outline=TEXT_DIM, width=2)
            _put_text(img, (x + face.width / 2, y + face.height / 2), "?", TITLE, TEXT_DIM, "mm")

    def _plate_state(
        self, img: Image.Image, d: ImageDraw.ImageDraw, s: GameState, t: int, y: int, on_turn: bool
    ) -> None:
        x0 = self.layout.lane_x
        hand = s.hands[t].bit_count()  # the COUNT only: it is public
        line = f"hand: {hand} tile{'s' if hand != 1 else ''}"
        if self.config.rounds > 1:
            line += f"   score {s.scores[t]:g}"
        _put_text(img, (x0 + 12, y + LANE_H - 22), line, SMALL, TEXT)
        if s.markers[t]:
            icon = _marker_icon(22)
            img.paste(icon, (x0 + PLATE_W - icon.width - 8, y + 7), icon)
        if on_turn:
            d.rounded_rectangle((x0 - 2, y - 2, x0 + PLATE_W + 2, y + LANE_H + 2), 11, outline=TURN, width=3)
            cy = y + LANE_H / 2
            d.polygon([(x0 - 20, cy - 9), (x0 - 20, cy + 9), (x0 - 5, cy)], fill=TURN)

    def _train(
        self,
        img: Image.Image,
        d: ImageDraw.ImageDraw,
        game: MexicanTrain,
        s: GameState,
        t: int,
        y: int,
        open_double: bool,
        head: bool,
    ) -> None:
        lay = self.layout
        lane_h = lay.lane_h[t]
        tiles = game.oriented_train(s, t)
        if not tiles:
            _put_text(img, (lay.tiles_x + 6, y + lane_h / 2), "not started", SMALL, TEXT_DIM, "lm")
            return
        half, per_row, gap = _fit(len(tiles), lay.tiles_w, lane_h - 6, HALF)
        rows = -(-len(tiles) // per_row)
        y0 = y + (lane_h - rows * half - (rows - 1) * gap) // 2
        x = ty = 0
        for i, (a, b) in enumerate(tiles):
            r, c = divmod(i, per_row)
            x = lay.tiles_x + c * (2 * half + gap)
            ty = y0 + r * (half + gap)
            if open_double and i == len(tiles) - 1:
                glow = GLOW_HEAD if head else GLOW_OPEN
                d.rounded_rectangle((x - 3, ty - 3, x + 2 * half + 2, ty + half + 2), 6, fill=glow)
            face = tile_face(a, b, half)
            img.paste(face, (x, ty), face)
        if open_double:  # R18/R20: the double at this train's end is not satisfied yet
            color = GLOW_HEAD if head else GLOW_OPEN
            if head:  # R20/R21: the one the seat on turn must satisfy first
                bx, by = x + 2 * half, ty
                rr = 8
                d.ellipse((bx - rr, by - rr, bx + rr, by + rr), fill=GLOW_HEAD, outline=TEXT)
                _put_text(img, (bx, by), "!", SMALL, TEXT, "mm")
            label = "satisfy next!" if head else "open double"
            ink = TEXT if head else HEADER_BG
            tx = x + 2 * half + 12
            w = _text_sprite(label, SMALL, ink, "lm")[0].width
            if tx + w + 14 < lay.width - MARGIN - 4:  # a pill after the double, when there is room
                cy = ty + half / 2
                d.rounded_rectangle((tx, cy - 9, tx + w + 14, cy + 9), 9, fill=color)
                _put_text(img, (tx + 7, cy), label, SMALL, ink, "lm")

    def _hand_panel(
        self, img: Image.Image, d: ImageDraw.ImageDraw, game: MexicanTrain, s: GameState, p: int
    ) -> None:
        """The hand of seat ``p`` (R15: only that seat's view), playable tiles underlined when
        ``p`` is on turn."""
        lay = self.layout
        top = lay.hand_top
        hand = bits_list(s.hands[p])
        count = f"{len(hand)} tile{'s' if len(hand) != 1 else ''}"
        if p == s.current:
            title = f"player_{p} to play  -  hand: {count}"
        else:
            title = f"player_{p}'s hand: {count}  -  player_{s.current} to play"
        _put_text(img, (MARGIN + 14, top + 8), title, TITLE, TURN)
        notes = []  # about the turn of the seat on turn (public facts)
        if s.phase == Phase.SEEK_ENGINE:
            notes.append("seeking the engine: draw (R5)")
        if s.owes:
            notes.append("owes a tile after a double (R18)")
        if s.has_drawn:
            notes.append("has drawn")
        if notes:
            _put_text(img, (lay.width - MARGIN - 14, top + 10), ";  ".join(notes), BODY, TEXT, "ra")
        width = game.config.num_trains
        playable = {m // width for m in game.legal_moves(s) if m < game.draw} if p == s.current else set()
        if playable:
            _put_text(
                img, (MARGIN + 14, lay.height - MARGIN - 8), "underlined: playable now", SMALL, PLAYABLE, "ld"
            )
        y0 = top + HAND_TITLE_H + 6
        box_h = lay.height - MARGIN - HAND_LEGEND_H - y0
        half, per_row, gap = _fit(len(hand), lay.hand_tiles_w, box_h, HAND_HALF, extra_row=6)
        for i, tid in enumerate(hand):
            r, c = divmod(i, per_row)
            tx = lay.hand_tiles_x + c * (2 * half + gap)
            ty = y0 + r * (half + gap + 6)
            a, b = game.tiles.tiles[tid]
            face = tile_face(a, b, half)
            img.paste(face, (tx, ty), face)
            if tid in playable:
                d.rounded_rectangle(
                    (tx + 3, ty + half + 2, tx + 2 * half - 3, ty + half + 5), 2, fill=PLAYABLE
                )

    def _round_over(self, img: Image.Image, s: GameState) -> None:
        """After R23/R24: the outcome and each seat's penalty (no hand is shown)."""
        lay = self.layout
        x, top = MARGIN + 14, lay.hand_top
        outcome = "blocked (R23)" if s.blocked else "a player went out (R22)"
        title = "Game over" if s.phase == Phase.GAME_OVER else "Round over"
        head = "round score (session total)" if self.config.rounds > 1 else "round score"
        _put_text(img, (x, top + 8), f"{title}: {outcome}      {head} per seat:", TITLE, TURN)
        last = s.round_scores[-1] if s.round_scores else [0.0] * self.config.num_players
        cell = 200 if self.config.rounds > 1 else 150
        per_line = max(1, (lay.width - 2 * x) // cell)
        for p, v in enumerate(last):
            r, c = divmod(p, per_line)
            text = f"player_{p}: {v:g}" + (f" ({s.scores[p]:g})" if self.config.rounds > 1 else "")
            _put_text(img, (x + c * cell, top + HAND_TITLE_H + 14 + 22 * r), text, BODY, TEXT)


@lru_cache(maxsize=16)
def _renderer(config: GameConfig) -> _Renderer:
    return _Renderer(config)


def frame_shape(config: GameConfig) -> tuple[int, int, int]:
    """``(H, W, 3)`` of every frame drawn for ``config`` (a function of the config only)."""
    lay = _renderer(config).layout
    return (lay.height, lay.width, 3)


def draw_table(game: MexicanTrain, s: GameState, seat: int | None = None) -> np.ndarray:
    """The table as an RGB ``uint8`` array ``(H, W, 3)``; see the module docstring.

    Shows only public information and the hand of ``seat`` (default: the seat on turn;
    never another hand, never the boneyard order); the shape depends only on ``game.config``.
    """
    return _renderer(game.config).draw(game, s, seat)


def with_hands_strip(game: MexicanTrain, s: GameState, frame: np.ndarray) -> np.ndarray:
    """``frame`` with a strip below listing every seat's hand as small tile faces.

    Shows hidden hands: for replays and the game's end (``mtrain replay --all-hands``), never
    for a seat's own view.
    """
    tiles = game.config.tiles.tiles
    half, row_h, label_w = 20, 28, 110
    strip = Image.new("RGB", (frame.shape[1], len(s.hands) * row_h + 8), HEADER_BG)
    for p, h in enumerate(s.hands):
        y = 4 + p * row_h
        _put_text(strip, (12, y + row_h / 2), f"player_{p}", BODY, TEXT, "lm")
        x = label_w
        for i in bits_list(h):
            face = tile_face(*tiles[i], half)
            if x + face.width > strip.width - 4:
                break
            strip.paste(face, (x, y + (row_h - face.height) // 2), face)
            x += face.width + 3
    out = Image.new("RGB", (frame.shape[1], frame.shape[0] + strip.height))
    out.paste(Image.fromarray(frame), (0, 0))
    out.paste(strip, (0, frame.shape[0]))
    return np.asarray(out)
