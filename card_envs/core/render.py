"""Pictures of the table: ``render_mode="rgb_array"`` frames, replays as frames, and GIFs (extra ``render``).

Drawn with Pillow in the spirit of the web table (``agents/play``): a felt table, a panel per seat with its
zones labelled in the game's own words, cards as small rounded rectangles with rank and suit (hearts and
diamonds red, clubs and spades black), face-down cards as blue backs, the seat to act edged in gold.

==========================================  ===================================================================
function                                    what it gives
==========================================  ===================================================================
``frame(state, seat=None)``                 an ``H x W x 3`` ``uint8`` picture of ``state``: every hand face
                                            up (``seat=None``), or what ``seat`` sees -- drawn from
                                            ``state.view(seat)`` alone, so no hidden card can show
``draw_table(table)``                       the picture of a :class:`~card_envs.core.table.Table` (the
                                            game's ``picture.table(game, views)``)
``game_frames(game, actions, ...)``         the frames of a recorded game: the deal, then one frame after
                                            each action (``len(actions) + 1`` frames); the arguments are a
                                            saved game's ``game``, ``config``, ``seed``, ``options`` and
                                            ``actions``
``state_frames(states, seat=None)``         the frames of a sequence of states (e.g. a kept history)
``save_gif(frames, path, fps=2.0)``         an animated GIF (imageio), written to a temporary file and
                                            renamed into place
==========================================  ===================================================================

Every frame of one game config has the same size (about 960 pixels wide; the height depends on the
game and its seat count): the layout is fixed by the config, never by the position, as video writers
(``gymnasium.wrappers.RecordVideo``) need. A GIF merges consecutive identical frames into one longer
frame (Pillow's GIF writer), so it holds as many frames as the sequence has changes, plus one.

Pillow and imageio are optional (``pip install card-envs[render]``): this module imports them only
when a picture is drawn, and a missing one raises ``gymnasium.error.DependencyNotInstalled`` naming
that command. ``import card_envs`` never imports them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from card_envs.core.engine import Game, GameState
from card_envs.core.errors import ConfigError
from card_envs.core.table import Card, Seat, Table, Zone, table_of

INSTALL_HINT = "pip install card-envs[render]"

WIDTH = 960
MARGIN = 14
CARD_W, CARD_H = 44, 62
CARD_STEP = CARD_W + 4  #: pixels per unit of a zone's ``width``
GROUP_GAP = 8
MIN_STEP = 19  #: the narrowest strip of an overlapped card: its rank still shows
ZONE_GAP = 14
ROW_GAP = 6
LABEL_H, TAG_H, NOTE_H = 16, 13, 13
ZONE_H = LABEL_H + CARD_H + TAG_H + NOTE_H
PAD = 10
SEAT_HEAD_H = 24
HEADER_H = 96
SUPERSAMPLE = 3  #: cards are drawn this many times larger and scaled down: smooth suit shapes

FELT = (24, 86, 52)
HEADER = (16, 60, 36)
PANEL = (33, 104, 64)
PANEL_EDGE = (62, 134, 90)
PANEL_OUT = (38, 72, 52)
GOLD = (236, 198, 72)
TEXT = (242, 246, 240)
MUTED = (186, 214, 194)
CHIP = (44, 118, 74)
CARD_FACE = (252, 251, 246)
CARD_EDGE = (140, 140, 132)
RED = (196, 30, 42)
BLACK = (28, 28, 28)
JOKER = (112, 52, 160)
BACK = (40, 74, 166)
BACK_LINE = (92, 126, 212)
SUIT_OF_LETTER = {"C": 0, "D": 1, "H": 2, "S": 3}


def frame(state: GameState, seat: int | None = None) -> np.ndarray:
    """The ``H x W x 3`` uint8 picture of ``state``: every hand face up, or ``seat``'s view."""
    return draw_table(table_of(state, seat))


def state_frames(states: Iterable[GameState], seat: int | None = None) -> list[np.ndarray]:
    """One frame per state, in order."""
    return [frame(state, seat) for state in states]


def game_frames(game: str | Game, actions: Sequence[int], *, config: Mapping[str, Any] | None = None,
                seed: int | None = None, options: Mapping[str, Any] | None = None,
                seat: int | None = None) -> list[np.ndarray]:
    """The frames of a recorded game: dealt as ``game.new_state(numpy.random.default_rng(seed), options)``,
    then every action applied in turn (each checked: an illegal one raises ``IllegalActionError``).
    ``game`` is an environment name (with its ``config``) or a built :class:`Game`. Returns
    ``len(actions) + 1`` frames: the deal, then the table after each action."""
    if isinstance(game, str):
        import card_envs

        game = card_envs.make_game(game, **(config or {}))
    elif config:
        raise ConfigError(f"pass the config either to the Game or here, not both (got {dict(config)})")
    state = game.new_state(np.random.default_rng(seed), options)
    frames = [frame(state, seat)]
    for action in actions:
        state.apply(action)
        frames.append(frame(state, seat))
    return frames


def save_gif(frames: Sequence[np.ndarray], path: str | os.PathLike, fps: float = 2.0, loop: int = 0) -> None:
    """Write ``frames`` (equal-size ``H x W x 3`` uint8) as an animated GIF at ``path``, atomically;
    ``loop=0`` repeats forever."""
    if not frames:
        raise ValueError("save_gif needs at least one frame")
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    shapes = {np.shape(f) for f in frames}
    if len(shapes) != 1:
        raise ValueError(f"every frame of a GIF must have the same size, got {sorted(shapes)}")
    imageio = _imageio()
    path = os.fspath(path)
    handle, temporary = tempfile.mkstemp(suffix=".gif", dir=os.path.dirname(os.path.abspath(path)))
    os.close(handle)
    try:
        imageio.imwrite(temporary, np.stack(frames), extension=".gif", duration=1000.0 / fps, loop=loop)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def check_render_seat(render_seat: Any, render_mode: str | None, num_players: int) -> int | None:
    """``render_seat`` checked: None, or a seat drawn in ``render_mode="rgb_array"`` (whose Pillow is checked
    here, so a missing extra fails when the env is made, not at its first frame)."""
    if render_mode == "rgb_array":
        require_pillow()
    if render_seat is None:
        return None
    if render_mode != "rgb_array":
        raise ConfigError(f"render_seat={render_seat!r} draws one seat's view in render_mode='rgb_array'; got "
                          f"render_mode={render_mode!r} (the text of 'ansi'/'human' always shows the whole table)")
    if isinstance(render_seat, bool) or not isinstance(render_seat, (int, np.integer)) \
            or not 0 <= render_seat < num_players:
        raise ConfigError(f"render_seat must be None (every hand face up) or a seat 0..{num_players - 1}, "
                          f"got {render_seat!r}")
    return int(render_seat)


# -- the table -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Box:
    x: int
    y: int
    w: int
    h: int


def draw_table(table: Table) -> np.ndarray:
    """The picture of ``table`` as an ``H x W x 3`` uint8 array."""
    image_module, draw_module, _ = _pillow()
    panels = _panels(table)
    height = max(box.y + box.h for box, _ in panels) + MARGIN
    image = image_module.new("RGB", (WIDTH, height), FELT)
    draw = draw_module.Draw(image)
    _draw_header(draw, table)
    for box, content in panels:
        if isinstance(content, Seat):
            _draw_seat(image, draw, box, content, viewer=table.viewer)
        else:
            _draw_panel(draw, box, edge=PANEL_EDGE)
            _draw_zones(image, draw, Box(box.x + PAD, box.y + PAD, box.w - 2 * PAD, box.h - 2 * PAD), content)
    return np.array(image, dtype=np.uint8)


Panel = tuple[Box, Seat | tuple[Zone, ...]]  #: where a panel goes, and a seat or the center zones in it
FULL = WIDTH - 2 * MARGIN
TOP = HEADER_H + MARGIN


def _panels(table: Table) -> list[Panel]:
    """Two seats face each other across the center, the viewer (or seat 0) at the bottom; more seats sit in
    two columns under the center."""
    center = [table.center] if table.center else []
    if len(table.seats) <= 2:
        bottom = table.viewer if table.viewer is not None else 0
        others = [seat for index, seat in enumerate(table.seats) if index != bottom]
        return _stacked([*others, *center, table.seats[bottom]], TOP)
    placed = _stacked(center, TOP)
    y = placed[-1][0].y + placed[-1][0].h + MARGIN if placed else TOP
    column = (FULL - MARGIN) // 2
    for row in range(0, len(table.seats), 2):
        pair = table.seats[row:row + 2]
        h = max(_panel_height(seat, column) for seat in pair)
        placed += [(Box(MARGIN + k * (column + MARGIN), y, column, h), seat) for k, seat in enumerate(pair)]
        y += h + MARGIN
    return placed


def _stacked(contents: Sequence[Seat | tuple[Zone, ...]], y: int) -> list[Panel]:
    """Full-width panels one under the other from ``y``."""
    placed = []
    for content in contents:
        h = _panel_height(content, FULL)
        placed.append((Box(MARGIN, y, FULL, h), content))
        y += h + MARGIN
    return placed


def _panel_height(content: Seat | tuple[Zone, ...], width: int) -> int:
    if isinstance(content, Seat):
        return SEAT_HEAD_H + _zones_height(content.zones, width - 2 * PAD) + 2 * PAD
    return _zones_height(content, width - 2 * PAD) + 2 * PAD


def _zone_width(zone: Zone, room: int) -> int:
    return min(room, round(zone.width * CARD_STEP))


def _zone_rows(zones: Sequence[Zone], room: int) -> list[list[Zone]]:
    """Zones left to right, wrapping into a new row when the next one does not fit."""
    rows: list[list[Zone]] = [[]]
    used = 0
    for zone in zones:
        w = _zone_width(zone, room)
        if rows[-1] and used + ZONE_GAP + w > room:
            rows.append([])
            used = 0
        used += (ZONE_GAP if rows[-1] else 0) + w
        rows[-1].append(zone)
    return rows


def _row_widths(row: Sequence[Zone], room: int) -> list[int]:
    """Pixel widths of a row's zones: their own widths, the room left over shared by the ``stretch`` ones."""
    widths = [_zone_width(zone, room) for zone in row]
    left = room - sum(widths) - ZONE_GAP * (len(row) - 1)
    share = sum(w for w, zone in zip(widths, row, strict=True) if zone.stretch)
    return [w + (left * w // share if zone.stretch and share else 0) for w, zone in zip(widths, row, strict=True)]


def _zones_height(zones: Sequence[Zone], room: int) -> int:
    rows = len(_zone_rows(zones, room))
    return rows * ZONE_H + (rows - 1) * ROW_GAP


def _draw_header(draw: Any, table: Table) -> None:
    draw.rectangle((0, 0, WIDTH, HEADER_H), fill=HEADER)
    title_font = _font(20, bold=True)
    draw.text((MARGIN, 10), table.title, font=title_font, fill=TEXT)
    if table.viewer is not None:
        x = MARGIN + draw.textlength(table.title, font=title_font) + 12
        draw.text((x, 15), f"view of player_{table.viewer}: hidden cards face down", font=_font(13), fill=MUTED)
    x = MARGIN
    for label, value in table.info:
        x = _draw_chip(draw, x, 40, label, str(value))
        if x is None:
            break
    draw.text((MARGIN, 68), _fit(draw, table.status, _font(15, bold=True), WIDTH - 2 * MARGIN),
              font=_font(15, bold=True), fill=TEXT)


def _draw_chip(draw: Any, x: int, y: int, label: str, value: str) -> int | None:
    """A rounded ``label value`` chip; the x after it, or None (not drawn) when it would not fit."""
    label_font, value_font = _font(12), _font(12, bold=True)
    w = draw.textlength(label + " ", font=label_font) + draw.textlength(value, font=value_font) + 16
    if x + w > WIDTH - MARGIN:
        return None
    draw.rounded_rectangle((x, y, x + w, y + 20), radius=9, fill=CHIP)
    draw.text((x + 8, y + 3), label + " ", font=label_font, fill=MUTED)
    draw.text((x + 8 + draw.textlength(label + " ", font=label_font), y + 3), value, font=value_font, fill=TEXT)
    return int(x + w + 6)


def _draw_panel(draw: Any, box: Box, *, edge: tuple[int, int, int], fill: tuple[int, int, int] = PANEL,
                width: int = 1) -> None:
    draw.rounded_rectangle((box.x, box.y, box.x + box.w, box.y + box.h), radius=8, fill=fill, outline=edge,
                           width=width)


def _draw_seat(image: Any, draw: Any, box: Box, seat: Seat, viewer: int | None) -> None:
    _draw_panel(draw, box, edge=GOLD if seat.to_act else PANEL_EDGE, fill=PANEL_OUT if seat.out else PANEL,
                width=2 if seat.to_act else 1)
    name_font = _font(14, bold=True)
    x, y = box.x + PAD, box.y + PAD - 2
    draw.text((x, y), seat.name, font=name_font, fill=TEXT)
    x += draw.textlength(seat.name, font=name_font) + 8
    flags = [("to act", GOLD)] if seat.to_act else []
    flags += [("out", MUTED)] if seat.out else []
    flags += [("you", MUTED)] if viewer is not None and seat.name == f"player_{viewer}" else []
    for flag, color in flags:
        draw.text((x, y), flag, font=name_font, fill=color)
        x += draw.textlength(flag, font=name_font) + 8
    stats = "  ·  ".join(f"{label} {value}" for label, value in seat.stats)
    room = box.x + box.w - PAD - x
    draw.text((x, y + 2), _fit(draw, stats, _font(12), room), font=_font(12), fill=MUTED)
    _draw_zones(image, draw, Box(box.x + PAD, box.y + PAD + SEAT_HEAD_H, box.w - 2 * PAD, box.h), seat.zones)


def _draw_zones(image: Any, draw: Any, box: Box, zones: Sequence[Zone]) -> None:
    y = box.y
    for row in _zone_rows(zones, box.w):
        x = box.x
        for zone, w in zip(row, _row_widths(row, box.w), strict=True):
            _draw_zone(image, draw, Box(x, y, w, ZONE_H), zone)
            x += w + ZONE_GAP
        y += ZONE_H + ROW_GAP


def _draw_zone(image: Any, draw: Any, box: Box, zone: Zone) -> None:
    draw.text((box.x, box.y), _fit(draw, zone.label, _font(12), box.w), font=_font(12), fill=TEXT)
    top = box.y + LABEL_H
    x = box.x
    if zone.pile:
        _paste(image, _back(), x, top)
        count = str(zone.pile)
        font = _font(14, bold=True)
        w = draw.textlength(count, font=font)
        draw.rounded_rectangle((x + CARD_W / 2 - w / 2 - 4, top + CARD_H - 24, x + CARD_W / 2 + w / 2 + 4,
                                top + CARD_H - 6), radius=4, fill=BACK)
        draw.text((x + CARD_W / 2 - w / 2, top + CARD_H - 24), count, font=font, fill=TEXT)
        x += CARD_W + 6
    elif not zone.cards:
        draw.rounded_rectangle((x, top, x + CARD_W, top + CARD_H), radius=5, outline=PANEL_EDGE)
    for cx, card, room in _card_positions(zone.cards, x, box.x + box.w):
        _paste(image, _face(card.code, card.highlight) if card.code else _back(card.highlight), cx, top)
        if card.tag:
            draw.text((cx + 1, top + CARD_H + 1), _fit(draw, card.tag, _font(10), room - 2), font=_font(10),
                      fill=MUTED)
    if zone.note:
        draw.text((box.x, top + CARD_H + TAG_H), _fit(draw, zone.note, _font(10), box.w), font=_font(10),
                  fill=MUTED)


def _card_positions(cards: Sequence[Card], left: int, right: int) -> list[tuple[int, Card, int]]:
    """``(left edge, card, room for its tag)`` of each card drawn: side by side, with a gap where the group
    changes, overlapping evenly when they do not fit between ``left`` and ``right``; when even a rank's
    width each is too much, only the last cards (the newest of a pile) that fit are drawn."""
    fitting = max(1, 1 + (right - left - CARD_W) // MIN_STEP)
    cards = cards[-fitting:]
    if not cards:
        return []
    gaps = [GROUP_GAP if i and cards[i].group != cards[i - 1].group else 0 for i in range(len(cards))]
    room = right - left - CARD_W - sum(gaps)
    step = CARD_W + 4 if len(cards) == 1 else max(0, min(CARD_W + 4, room / (len(cards) - 1)))
    xs, x = [], float(left)
    for gap in gaps:
        x += gap
        xs.append(round(x))
        x += step
    rooms = [nxt - x for x, nxt in zip(xs, xs[1:], strict=False)] + [CARD_W + 4]
    return list(zip(xs, cards, rooms, strict=True))


def _fit(draw: Any, text: str, font: Any, room: float) -> str:
    """``text`` cut (with ``..``) to fit ``room`` pixels."""
    if draw.textlength(text, font=font) <= room:
        return text
    while text and draw.textlength(text + "..", font=font) > room:
        text = text[:-1]
    return text + ".." if text else ""


def _paste(image: Any, sprite: Any, x: float, y: float) -> None:
    image.paste(sprite, (round(x), round(y)), sprite)


# -- card sprites (drawn large once, scaled down, cached) ------------------------------------------------

def _sprite_canvas() -> tuple[Any, Any, int]:
    image_module, draw_module, _ = _pillow()
    s = SUPERSAMPLE
    sprite = image_module.new("RGBA", (CARD_W * s, CARD_H * s), (0, 0, 0, 0))
    return sprite, draw_module.Draw(sprite), s


def _finish(sprite: Any) -> Any:
    image_module, _, _ = _pillow()
    return sprite.resize((CARD_W, CARD_H), image_module.Resampling.LANCZOS)


@lru_cache(maxsize=256)
def _face(code: str, highlight: bool = False) -> Any:
    """A face-up card: rank and a small suit top left, a large suit in the middle."""
    sprite, draw, s = _sprite_canvas()
    _card_outline(draw, s, CARD_FACE, GOLD if highlight else CARD_EDGE, 3 if highlight else 1)
    rank, suit = code[:-1], code[-1]
    if rank == "X":  # a joker: its code (X1, X2) and a star
        draw.text((3 * s, 2 * s), code, font=_font(14 * s, bold=True), fill=JOKER)
        _star(draw, CARD_W * s * 0.55, CARD_H * s * 0.6, 14 * s, JOKER)
        return _finish(sprite)
    color = RED if suit in "HD" else BLACK
    narrow = len(rank) > 1  # "10" in a smaller size: its corner stays readable when cards overlap
    draw.text((2 * s if narrow else 3 * s, (3 if narrow else 2) * s), rank, font=_font((13 if narrow else 15) * s,
              bold=True), fill=color)
    _pip(draw, SUIT_OF_LETTER[suit], 9 * s, 25 * s, 10 * s, color)
    _pip(draw, SUIT_OF_LETTER[suit], CARD_W * s * 0.6, CARD_H * s * 0.62, 20 * s, color)
    return _finish(sprite)


@lru_cache(maxsize=4)
def _back(highlight: bool = False) -> Any:
    """A face-down card: blue, a white frame, a lattice."""
    sprite, draw, s = _sprite_canvas()
    _card_outline(draw, s, BACK, GOLD if highlight else (230, 234, 244), 3 if highlight else 2)
    inset = 4 * s
    left, top, right, bottom = inset, inset, CARD_W * s - inset, CARD_H * s - inset
    draw.rounded_rectangle((left, top, right, bottom), radius=3 * s, outline=BACK_LINE, width=s)
    for k in range(-CARD_H * s, CARD_W * s, 7 * s):
        for direction in (1, -1):
            a, b = _clip_diagonal(k, direction, left + s, top + s, right - s, bottom - s)
            if a is not None:
                draw.line((a, b), fill=BACK_LINE, width=s)
    return _finish(sprite)


def _clip_diagonal(k: int, direction: int, left: int, top: int, right: int, bottom: int
                   ) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """The part inside the rectangle of the 45-degree line through (left + k, top) going right-down
    (``direction=1``) or (right - k, top) going left-down (``-1``)."""
    start = max(0, -k)
    stop = min(bottom - top, right - left - k)
    if stop <= start:
        return None, None
    x0 = left + k if direction == 1 else right - k
    return (x0 + direction * start, top + start), (x0 + direction * stop, top + stop)


def _card_outline(draw: Any, s: int, fill: tuple[int, int, int], edge: tuple[int, int, int], width: int) -> None:
    draw.rounded_rectangle((0, 0, CARD_W * s - 1, CARD_H * s - 1), radius=5 * s, fill=fill, outline=edge,
                           width=width * s)


def _pip(draw: Any, suit: int, cx: float, cy: float, size: float, color: tuple[int, int, int]) -> None:
    """A suit shape of height ``size`` centered at (cx, cy): 0 clubs, 1 diamonds, 2 hearts, 3 spades."""
    h = size / 2
    if suit == 1:
        draw.polygon([(cx, cy - h), (cx + 0.75 * h, cy), (cx, cy + h), (cx - 0.75 * h, cy)], fill=color)
    elif suit == 2:
        r = 0.52 * h
        for side in (-1, 1):
            _disc(draw, cx + side * r * 0.95, cy - 0.45 * h, r, color)
        draw.polygon([(cx - 1.45 * r, cy - 0.3 * h), (cx + 1.45 * r, cy - 0.3 * h), (cx, cy + h)], fill=color)
    elif suit == 3:
        r = 0.5 * h
        for side in (-1, 1):
            _disc(draw, cx + side * r * 0.95, cy + 0.2 * h, r, color)
        draw.polygon([(cx - 1.42 * r, cy + 0.1 * h), (cx + 1.42 * r, cy + 0.1 * h), (cx, cy - h)], fill=color)
        _stem(draw, cx, cy, h, color)
    else:
        r = 0.42 * h
        _disc(draw, cx, cy - 0.5 * h, r, color)
        for side in (-1, 1):
            _disc(draw, cx + side * r, cy + 0.12 * h, r, color)
        _stem(draw, cx, cy, h, color)


def _disc(draw: Any, cx: float, cy: float, r: float, color: tuple[int, int, int]) -> None:
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=color)


def _stem(draw: Any, cx: float, cy: float, h: float, color: tuple[int, int, int]) -> None:
    draw.polygon([(cx, cy), (cx - 0.4 * h, cy + h), (cx + 0.4 * h, cy + h)], fill=color)


def _star(draw: Any, cx: float, cy: float, radius: float, color: tuple[int, int, int]) -> None:
    points = []
    for k in range(10):
        r = radius if k % 2 == 0 else radius * 0.45
        angle = np.pi / 2 + k * np.pi / 5
        points.append((cx + r * np.cos(angle), cy - r * np.sin(angle)))
    draw.polygon(points, fill=color)


# -- Pillow, fonts --------------------------------------------------------------------------------------

FONT_FILES = {False: ("DejaVuSans.ttf", "LiberationSans-Regular.ttf", "Arial.ttf"),
              True: ("DejaVuSans-Bold.ttf", "LiberationSans-Bold.ttf", "Arial Bold.ttf")}


@lru_cache(maxsize=64)
def _font(size: int, bold: bool = False) -> Any:
    """A TrueType font of the system (DejaVu Sans or alike), else Pillow's own scalable default."""
    _, _, font_module = _pillow()
    for name in FONT_FILES[bold]:
        try:
            return font_module.truetype(name, size)
        except OSError:
            continue
    return font_module.load_default(size)


def require_pillow() -> None:
    """Raise ``DependencyNotInstalled`` (naming ``pip install card-envs[render]``) unless Pillow is installed."""
    _pillow()


def _pillow() -> tuple[Any, Any, Any]:
    """Pillow's ``Image``, ``ImageDraw`` and ``ImageFont`` modules (extra ``render``)."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as error:
        raise _not_installed("PIL") from error
    return Image, ImageDraw, ImageFont


def _imageio() -> Any:
    """imageio's v3 API (extra ``render``)."""
    try:
        import imageio.v3
    except ImportError as error:
        raise _not_installed("imageio") from error
    return imageio.v3


def _not_installed(name: str) -> Exception:
    from gymnasium.error import DependencyNotInstalled

    return DependencyNotInstalled(f"render_mode='rgb_array' and GIFs need {name} (Pillow and imageio): "
                                  f"{INSTALL_HINT}")
