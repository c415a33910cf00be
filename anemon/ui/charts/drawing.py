"""Drawing on a chart's canvas with numpy: data to cells, the braille dots of a polyline, and
the rows to repaint. The clipping, Bresenham and braille table are the ones
textual-hires-canvas's `draw_hires_lines` uses, written here (its own are private), so the
dots are exactly the ones it would draw."""

from __future__ import annotations

import itertools
import math
from typing import overload

import numpy as np
from textual.geometry import Region, Size
from textual_hires_canvas import Canvas
from textual_plot import LegendLocation
from textual_plot.plot_widget import FloatScalar

from anemon.ui.charts.plotlib import canvas_rows, canvas_size

INSIDE = 1e-6
"""A millionth of a cell short of the far edge: the floor keeps it inside the axes."""


Limits = tuple[float, float, float, float]
"""x min, x max, y min, y max."""


@overload
def to_cells(
    x: np.ndarray, y: np.ndarray, limits: Limits, box: Region
) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def to_cells(
    x: FloatScalar, y: FloatScalar, limits: Limits, box: Region
) -> tuple[FloatScalar, FloatScalar]: ...
def to_cells(
    x: np.ndarray | FloatScalar, y: np.ndarray | FloatScalar, limits: Limits, box: Region
) -> tuple[np.ndarray | FloatScalar, np.ndarray | FloatScalar]:
    """Data → plot canvas position (in cells, fractional), onto the cells inside `box`."""
    x_min, x_max, y_min, y_max = limits
    fx = (x - x_min) / (x_max - x_min)
    fy = (y - y_min) / (y_max - y_min)
    return box.x + fx * (box.width - INSIDE), box.bottom - INSIDE - fy * (box.height - INSIDE)


def along(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points along a polyline, closer than a braille dot: one in every cell it crosses."""
    lengths = np.maximum(np.abs(np.diff(x)), np.abs(np.diff(y)))
    at = np.r_[0.0, np.cumsum(np.ceil(lengths * 4) + 1)]
    t = np.arange(at[-1] + 1)
    return np.interp(t, at, x), np.interp(t, at, y)


Segments = dict[tuple[int, int, int, int], list[tuple[int, int]]]
"""Bresenham's dots of a segment, by its integer ends (a chart's memo: `line_dots`)."""
SEGMENTS_KEPT = 20_000
"""A chart's memo of segments is emptied past this many (a few MB at most)."""


def line_dots(
    canvas: Canvas, x: np.ndarray, y: np.ndarray, memo: Segments | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The braille dots (canvas cells × (2, 4)) of the polyline through (x, y) in canvas
    cells, as textual-hires-canvas's `draw_hires_lines` finds them: each segment clipped to
    the canvas, then the dots between its ends."""
    width, height = canvas_size(canvas)
    x0, y0, x1, y1 = x[:-1], y[:-1], x[1:], y[1:]
    inside = (np.minimum(x0, x1) >= 0) & (np.maximum(x0, x1) <= width - 1)
    inside &= (np.minimum(y0, y1) >= 0) & (np.maximum(y0, y1) <= height - 1)
    dot_x, dot_y = np.floor(x * 2).astype(np.int64), np.floor(y * 4).astype(np.int64)
    memo = {} if memo is None else memo
    if len(memo) > SEGMENTS_KEPT:
        memo.clear()
    ends = np.stack([dot_x[:-1], dot_y[:-1], dot_x[1:], dot_y[1:]], axis=1).tolist()
    found: list[list[tuple[int, int]]] = []
    for i, whole in enumerate(inside.tolist()):
        if whole:  # the clip would hand the segment back as it is
            key = tuple(ends[i])  # most segments stay put from one trial to the next
            dots = memo.get(key)
            if dots is None:
                dots = memo[key] = bresenham(*ends[i])
            found.append(dots)
            continue
        clipped = clip(float(x0[i]), float(y0[i]), float(x1[i]), float(y1[i]), width, height)
        if clipped is not None:
            a, b, c, d = clipped
            found.append(
                bresenham(
                    math.floor(a * 2), math.floor(b * 4), math.floor(c * 2), math.floor(d * 4)
                )
            )
    flat = np.fromiter(
        itertools.chain.from_iterable(itertools.chain.from_iterable(found)), dtype=np.int64
    )
    return flat[0::2], flat[1::2]


def bresenham(x0: int, y0: int, x1: int, y1: int) -> list[tuple[int, int]]:
    """The dots of the segment between two dots, both ends included: Bresenham's line, in
    every octant, as textual-hires-canvas draws it."""
    dx, sx = abs(x1 - x0), 1 if x0 < x1 else -1
    dy, sy = -abs(y1 - y0), 1 if y0 < y1 else -1
    error = dx + dy
    dots = [(x0, y0)]
    while True:
        e2 = 2 * error
        if e2 >= dy:
            if x0 == x1:
                return dots
            error, x0 = error + dy, x0 + sx
        if e2 <= dx:
            if y0 == y1:
                return dots
            error, y0 = error + dx, y0 + sy
        dots.append((x0, y0))


LEFT, RIGHT, BELOW, ABOVE = 1, 2, 4, 8
"""Cohen-Sutherland's outcodes: where a point lies outside the cells (y grows downwards)."""


def outcode(x: float, y: float, x_max: int, y_max: int) -> int:
    """Where (x, y) lies outside [0, x_max] × [0, y_max]; 0 inside."""
    horizontal = LEFT if x < 0 else RIGHT if x > x_max else 0
    return horizontal | (BELOW if y < 0 else ABOVE if y > y_max else 0)


def clip(
    x0: float, y0: float, x1: float, y1: float, width: int, height: int
) -> tuple[float, float, float, float] | None:
    """The part of the segment inside the centres of a `width`×`height` canvas's cells
    ([0, width - 1] × [0, height - 1]), or None: Cohen-Sutherland, with the arithmetic
    textual-hires-canvas clips with, so the clipped ends fall in the same dots."""
    x_max, y_max = width - 1, height - 1
    code0, code1 = outcode(x0, y0, x_max, y_max), outcode(x1, y1, x_max, y_max)
    while code0 or code1:
        if code0 & code1:
            return None
        out = code0 or code1
        x: float
        y: float
        if out & ABOVE:
            x, y = (x0 + (x1 - x0) * (y_max - y0) / (y1 - y0) if y1 != y0 else x0), y_max
        elif out & BELOW:
            x, y = (x0 + (x1 - x0) * (0 - y0) / (y1 - y0) if y1 != y0 else x0), 0
        elif out & RIGHT:
            x, y = x_max, (y0 + (y1 - y0) * (x_max - x0) / (x1 - x0) if x1 != x0 else y0)
        else:
            x, y = 0, (y0 + (y1 - y0) * (0 - x0) / (x1 - x0) if x1 != x0 else y0)
        if out == code0:
            x0, y0, code0 = x, y, outcode(x, y, x_max, y_max)
        else:
            x1, y1, code1 = x, y, outcode(x, y, x_max, y_max)
    return x0, y0, x1, y1


BRAILLE_BITS = (0x01, 0x08, 0x02, 0x10, 0x04, 0x20, 0x40, 0x80)
"""Unicode's bit for each dot of a braille cell, its 4×2 grid read row by row."""
BRAILLE_CHARS: tuple[str | None, ...] = (
    None,
    *(
        chr(0x2800 + sum(bit for k, bit in enumerate(BRAILLE_BITS) if mask >> k & 1))
        for mask in range(1, 256)
    ),
)
"""The braille character of each dot pattern (bit k: dot k of the cell's grid read row by
row; none for no dot)."""


Cells = tuple[list[int], list[int], list[str]]
"""The cells a line paints on a canvas: their rows, columns and braille characters."""


def braille_cells(size: tuple[int, int], dot_x: np.ndarray, dot_y: np.ndarray) -> Cells:
    """The cells the dots fall in on a canvas of `size` (width, height), each with the
    braille character of its dots, as `Canvas.set_hires_pixels` finds them."""
    width, height = size
    cell_x, cell_y = dot_x // 2, dot_y // 4
    keep = (cell_x >= 0) & (cell_x < width) & (cell_y >= 0) & (cell_y < height)
    masks = np.zeros(width * height, dtype=np.int64)
    bits = np.left_shift(1, (dot_y[keep] % 4) * 2 + dot_x[keep] % 2)
    np.bitwise_or.at(masks, cell_y[keep] * width + cell_x[keep], bits)
    cells = np.flatnonzero(masks)
    rows, columns = np.divmod(cells, width)
    chars = [BRAILLE_CHARS[mask] or "" for mask in masks[cells].tolist()]  # no mask is 0
    return rows.tolist(), columns.tolist(), chars


def paint_cells(canvas: Canvas, cells: Cells, style: str) -> None:
    """Set `cells` on `canvas` in `style` (a cell takes this line's dots alone), one refresh."""
    buffer, styles = canvas_rows(canvas)
    for row, column, char in zip(*cells, strict=True):
        buffer[row][column] = char
        styles[row][column] = style
    canvas.refresh()


def paint_braille(canvas: Canvas, dot_x: np.ndarray, dot_y: np.ndarray, style: str) -> None:
    """Set the cells the dots fall in to the braille character of their dots, in `style`,
    as `Canvas.set_hires_pixels` does."""
    paint_cells(canvas, braille_cells(canvas_size(canvas), dot_x, dot_y), style)


class LineCells:
    """A chart's memo of the cells each line painted at its last draw and this one, by the
    line's points on the canvas: a line that did not move (an arm that has ended, until the
    axes change) paints them again without working out its dots. A session of 13 arms
    redrew 13 lines a chart for each new trial (bench/long_session.py)."""

    def __init__(self) -> None:
        self.last: dict[object, Cells] = {}
        self.now: dict[object, Cells] = {}

    def turn(self) -> None:
        """A new draw: what the one before it painted stays at hand, nothing older."""
        self.last, self.now = self.now, {}

    def cells(self, canvas: Canvas, x: np.ndarray, y: np.ndarray, segments: Segments) -> Cells:
        """The cells of the polyline through (x, y) (canvas cells): remembered, or found."""
        size = canvas_size(canvas)
        key = (x.tobytes(), y.tobytes(), size)
        cells = self.now.get(key) or self.last.get(key)
        if cells is None:
            cells = braille_cells(size, *line_dots(canvas, x, y, segments))
        self.now[key] = cells
        return cells


def refresh_changed_rows(canvas: Canvas, buffer: list[list[str]], styles: list[list[str]]) -> None:
    """Refresh the rows of `canvas` that differ from `buffer` and `styles` (copies of its
    rows before a drawing); all of it if its size changed."""
    now, now_styles = canvas_rows(canvas)
    if len(now) != len(buffer) or (now and len(now[0]) != len(buffer[0])):
        canvas.refresh()
        return
    width = len(now[0]) if now else 0
    changed = [y for y in range(len(now)) if now[y] != buffer[y] or now_styles[y] != styles[y]]
    for run in runs_of(changed):
        canvas.refresh(Region(0, run[0], width, len(run)))


def runs_of(rows: list[int]) -> list[list[int]]:
    """Ascending numbers grouped into runs of consecutive ones."""
    out: list[list[int]] = []
    for row in rows:
        if out and out[-1][-1] + 1 == row:
            out[-1].append(row)
        else:
            out.append([row])
    return out


def legend_box(corner: LegendLocation, size: Size, width: int, height: int) -> Region:
    """Where textual-plot puts a legend of `size` in `corner` of a `width`×`height` plot
    (canvas cells, the axes at 0)."""
    left = corner in (LegendLocation.TOPLEFT, LegendLocation.BOTTOMLEFT)
    top = corner in (LegendLocation.TOPLEFT, LegendLocation.TOPRIGHT)
    x = 1 if left else width + 1 - size.width
    y = 1 if top else height + 1 - size.height
    return Region(x, y, size.width, size.height)
