"""The chart widget: a textual-plot PlotWidget fed decimated series on demand, and the
container of the large charts a layout arranges."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Sequence

import numpy as np
from rich.text import Text
from textual.app import ComposeResult, RenderResult
from textual.containers import Vertical
from textual.geometry import Region, Size
from textual.message import Message
from textual.widgets import Static
from textual_hires_canvas import Canvas, TextAlign
from textual_plot import HiResMode, LegendLocation
from textual_plot.plot_widget import FloatScalar, LinePlot

from anemon.events import THERMAL_NAMES
from anemon.store import Session
from anemon.ui import steady
from anemon.ui.charts.axes import (
    LABEL_WIDTH,
    MIN_TICK_ROWS,
    ElapsedFormatter,
    FittedFormatter,
    ThermalFormatter,
    axis_end,
    x_limits,
    y_limits,
)
from anemon.ui.charts.drawing import (
    LineCells,
    Segments,
    along,
    legend_box,
    paint_cells,
    refresh_changed_rows,
    to_cells,
)
from anemon.ui.charts.plotlib import (
    PlotBase,
    canvas_rows,
    canvas_stale,
    hold_refreshes,
    release_refreshes,
)
from anemon.ui.charts.specs import CHARTS, REF, ChartSpec, Line, dimmed, elapsed, trials
from anemon.ui.overlay import Overlay
from anemon.ui.series import Follower, StepFollower

MIN_ROWS = MIN_TICK_ROWS + 1
"""Rows inside the axes a numeric chart needs: two ticks (`FittedFormatter`) a blank row
apart or more, at its ends (`label_rows` apart), so a reader can tell the scale. Fewer, and
the chart shows its latest values as text."""


Latest = tuple[str, str | None, str]
"""The text form's entry for one line: its colour, its label (None: unlabelled), its value."""


def latest_values(lines: Sequence[Line], value: Callable[[float], str]) -> list[Latest]:
    """The newest finite value of each label (each arm; the unlabelled lines as one): what a
    chart too short to plot says instead, in the order the labels first come. A chart's lines
    come in the order of time (an arm's launches, a power line's stretches), so of two lines
    with one label the later's."""
    newest: dict[str | None, tuple[float, str]] = {}
    for line in reversed(lines):  # the later line of a label first: its earlier ones unread
        if line.label in newest:
            continue
        at = last_finite(line.x, line.y)
        if at is not None:
            newest[line.label] = (float(line.y[at]), line.colour)
    order = list(dict.fromkeys(line.label for line in lines))  # each label where it first came
    return [(newest[k][1], k, value(newest[k][0])) for k in order if k in newest]


def last_finite(x: np.ndarray, y: np.ndarray) -> int | None:
    """The index of the last point with both x and y, read from the end a growing tail at a
    time: a line's newest point is nearly always whole, and a 12-hour line has ~40k."""
    end, tail = len(x), 8
    while end > 0:
        start = max(0, end - tail)
        whole = np.flatnonzero(~(np.isnan(x[start:end]) | np.isnan(y[start:end])))
        if len(whole):
            return start + int(whole[-1])
        end, tail = start, tail * 4
    return None


def cut(
    x: np.ndarray, y: np.ndarray, breaks: np.ndarray | None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The points (x ascending) as one part per launch: cut before each of `breaks`."""
    if breaks is None or not len(breaks):
        return [(x, y)]
    bounds = [0, *np.searchsorted(x, breaks).tolist(), len(x)]
    return [(x[a:b], y[a:b]) for a, b in itertools.pairwise(bounds) if b > a]


def latest_text(
    entries: Sequence[Latest], width: int, height: int, empty: str = "no data yet"
) -> Text:
    """The entries on one line, each after a stroke of its line's colour, if they fit
    `width`; else one a line if `height` allows and each fits; else the values alone (the
    colours name the arms, as in every chart), as many as fit in `height` lines. Never an
    entry cut in two."""
    if not entries:
        return Text(empty, style="italic")  # dim: < 4.5:1

    def entry(colour: str, label: str | None, value: str, named: bool = True) -> Text:
        name = f"{label} " if label and named else ""
        return Text.assemble(("━ ", colour), name, (value, "bold"))

    named = [entry(*e) for e in entries]
    line = Text("  ").join(named)
    if line.cell_len <= width:
        return line
    if len(named) <= height and all(text.cell_len <= width for text in named):
        return Text("\n").join(named)
    rows: list[list[Text]] = [[]]
    for text in (entry(*e, named=False) for e in entries):
        if rows[-1] and Text("  ").join([*rows[-1], text]).cell_len > width:
            if len(rows) >= height:
                break
            rows.append([])
        rows[-1].append(text)
    return Text("\n").join(Text("  ").join(row) for row in rows)


REF_STYLE = dimmed("#d0d0d0")
"""The stroke of the one "ref" entry of a legend too narrow to name each reference."""


def legend_line(entries: Sequence[tuple[str, str]]) -> Text:
    """(label, style) entries on one line, each name after a stroke of its line's style."""
    return Text("  ").join(Text.assemble(("━ ", style), label) for label, style in entries)


class Chart(PlotBase, can_focus=False):
    """A PlotWidget fed decimated series on demand; not focusable, so app keys stay the app's.

    Too short to label its values correctly (fewer rows inside the axes than `min_rows`), it
    shows its latest value per arm as text instead of the plot: a chart never lies."""

    # the titles, tick labels and unit at >= 4.5:1 against the background (WCAG AA): Textual
    # draws a title in its border's colour and textual-plot its labels in $secondary, both
    # navy on near-black (tests/ui/test_contrast.py)
    DEFAULT_CSS = """
    Chart {
        border: round $secondary-darken-2;
        border-title-color: $foreground;
        border-subtitle-color: $foreground;
        & > .plot--tick { color: $foreground-muted; }
        & > .plot--label { color: $foreground; text-style: bold; }
    }
    Chart > .latest { display: none; layer: plot; padding: 0 1; }
    Chart.short > Grid { display: none; }
    Chart.short > .latest { display: block; }
    """

    def __init__(self, spec: ChartSpec, *, id: str | None = None) -> None:  # noqa: A002 (Textual)
        super().__init__(id=id, allow_pan_and_zoom=False)
        self.spec = spec
        self.elapsed_axis = ElapsedFormatter()
        self.drawn: tuple[int, object, Size, object] | None = None
        """(session id, data signature, size, reference) of the last draw: nothing new,
        nothing to do."""
        self.reference: Overlay | None = None
        """The overlay drawn under the lines (`replay --overlay`, shown); None: none."""
        self.drawn_end = 0.0
        """Where the x axis ended at the last draw (`axis_end`)."""
        self.y_axis = FittedFormatter()
        self.latest: list[Latest] = []
        """The text form's values, from the last draw."""
        self.followers: dict[tuple[object, ...], Follower] = {}
        self.steppers: dict[tuple[object, ...], StepFollower] = {}
        """Each line's decimation, kept up to date as its points arrive (`follow`)."""
        self._title = ""
        self._subtitle: Text | None = None
        self.segments: Segments = {}
        """The braille dots of the segments drawn lately (`line_dots`)."""
        self.line_cells = LineCells()
        self._short_text: tuple[object, ...] | None = None
        """The text form's values and the size they were put in, at its last update."""
        self.plotted = False
        """The last draw had points (an empty chart's axes are textual-plot's own 0-1)."""
        self._picture: Hashable | None = None
        """What the last draw painted (`picture`); None: unknown, the next draw paints."""

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Static(classes="latest")

    @property
    def min_rows(self) -> int:
        """Rows inside the axes needed to label the values correctly: the thermal chart one
        per state it names, a numeric one two ticks a row apart."""
        return len(THERMAL_NAMES) if self.spec.thermal_axis else MIN_ROWS

    @property
    def short(self) -> bool:
        """Too few rows to plot: the text form is shown."""
        return self.plot_size[1] < self.min_rows

    def on_mount(self) -> None:
        self.border_title = Text(self.spec.title(Session()))  # before the first draw's turn
        self.margin_top = 0
        self.margin_bottom = 1
        self.margin_left = 10 if self.spec.thermal_axis else LABEL_WIDTH + 1
        self.set_x_formatter(self.elapsed_axis)
        self.set_y_formatter(ThermalFormatter() if self.spec.thermal_axis else self.y_axis)

    def y_axis_drawn(self, margin: Canvas) -> None:
        """The unit beside the value axis, on the row of its top line (no tick lands there:
        the top of the range is drawn a row below it), right-aligned as the labels are."""
        if self.spec.unit and self.plotted:  # empty axes' ticks are textual-plot's, on its row
            style = self.get_component_rich_style("plot--label")
            margin.write_text(
                self.margin_left - 2, 0, f"[{style}]{self.spec.unit}", TextAlign.RIGHT
            )

    def render(self) -> RenderResult:
        """textual-plot's drawing, its canvases repainted only where a row changed: it draws
        every canvas afresh (each pixel asking for a refresh), where a new trial changes a
        few rows of the plot and often none of the axes' labels."""
        canvases = self.canvases
        if any(map(canvas_stale, canvases)):  # laid out at a new size: shown again (`short`)
            self.resize_canvases()
        # copies: a drawing may write into a row in place
        before = [[[*map(list.copy, rows)] for rows in canvas_rows(c)] for c in canvases]
        for canvas in canvases:
            hold_refreshes(canvas)
        try:
            return super().render()
        finally:
            for canvas, (buffer, styles) in zip(canvases, before, strict=True):
                if release_refreshes(canvas):
                    refresh_changed_rows(canvas, buffer, styles)

    @property
    def plot_size(self) -> tuple[int, int]:
        """Cells inside the axis lines: the widget minus the y-axis margin, the x-axis margin
        and the two axis lines (the border is outside `content_size`)."""
        width = self.content_size.width - self.margin_left - 2
        height = self.content_size.height - self.margin_top - self.margin_bottom - 2
        return width, height

    @property
    def label_rows(self) -> int:
        """Rows from the y axis's top label to its bottom one: the top of the range is drawn
        on the first row inside the axes, its bottom on the last."""
        return self.plot_size[1] - 1

    @property
    def columns(self) -> int:
        """Plot columns: what the series are decimated to."""
        return max(10, self.plot_size[0])

    def follow(
        self, session: Session, lines: Sequence[Line]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each line decimated to two bins a column, by its `Follower`: only the points new
        since the last draw are binned (a step line's new points are looked at for changes,
        its `StepFollower`, and its steps decimated whole, as its last point moves with the
        clock)."""
        bins = 2 * self.columns
        known, self.followers = self.followers, {}
        known_steps, self.steppers = self.steppers, {}
        out = []
        for index, line in enumerate(lines):
            key = (id(session), bins, index, line.label, line.colour, line.ref)
            if line.step:
                stepper = known_steps.get(key) or StepFollower(bins)
                self.steppers[key] = stepper
                out.append(stepper.update(line.x, line.y, end=elapsed(session)))
                continue
            follower = known.get(key) or Follower(bins)
            self.followers[key] = follower
            out.append(follower.update(line.x, line.y))
        return out

    def draw(self, session: Session) -> bool:
        """Bring the chart up to date with `session` if what it shows changed since the last
        draw (its lines, or its x axis's end: `axis_end`'s steps); returns whether it did. It draws
        its canvases at once (not the whole chart at the next render) and repaints only
        their changed rows."""
        reference = self.reference if self.spec.reference is not None else None
        # a SOURCE arm's first trial places its reference: trials change what is drawn
        ref_key = (id(reference), trials(session)) if reference is not None else None
        key = (id(session), self.spec.data(session), self.content_size, ref_key)
        end = axis_end(max(self.spec.xmax(session), 1.0))
        if key == self.drawn and end == self.drawn_end:
            return False
        self.drawn, self.drawn_end = key, end
        title = self.spec.title(session)
        lines = self.spec.lines(session)
        self.latest = latest_values(lines, self.spec.value)  # the replayed session's alone
        if reference is not None and self.spec.reference is not None:
            title = f"{title} · ref: {reference.label}"
            lines = self.spec.reference(reference, session) + lines  # under the replayed lines
        if title != self._title:  # Textual repaints the chart on every title set
            self._title = title
            self.border_title = Text(title)
        if self.show_short():
            self._picture = None  # the text form is shown: the plot is painted when it comes back
            return True
        self.elapsed_axis.fit = max(2, self.columns // 7)
        self.y_axis.rows = self.label_rows
        points = []  # (x, y, line, labelled): a line cut at its breaks, labelled once
        for line, (x, y) in zip(lines, self.follow(session, lines), strict=True):
            for n, (x_part, y_part) in enumerate(cut(x, y, line.breaks)):
                if len(x_part) == 1:  # a line needs two ends: a lone point would not show
                    x_part, y_part = np.repeat(x_part, 2), np.repeat(y_part, 2)
                points.append((x_part, y_part, line, n == 0))
        # explicit limits from exactly the points handed over: none falls outside the axes
        xlim = x_limits([x for x, *_ in points], end)
        self.plotted = bool(points)
        ylim = self.spec.ylimits(session)
        if not self.spec.thermal_axis:  # the thermal axis names its four states
            ys = [y for _, y, *_ in points]
            low, high, self.y_axis.step = y_limits(ys, ylim, self.spec.least, self.label_rows)
            ylim = low, high
        picture = self.picture(points, (*xlim, *ylim))
        if picture is not None and picture == self._picture:
            return False  # the same dots on the same axes: nothing to paint (a flat footprint)
        with self.deferred():  # drawn below, once
            self.line_cells.turn()
            self.clear()
            for x, y, line, labelled in points:
                label = line.label if labelled else None
                self.plot(x, y, line_style=line.colour, hires_mode=HiResMode.BRAILLE, label=label)
            self.set_xlimits(*xlim)
            self.set_ylimits(*ylim)
            self.place_legend()
        if self.canvases_ready():
            self.render()  # its canvases drawn now: only their changed rows are repainted
            self._picture = picture
        else:
            self.refresh()  # drawn when Textual renders the chart, at its size by then
            self._picture = None
        return True

    def picture(
        self,
        points: Sequence[tuple[np.ndarray, np.ndarray, Line, bool]],
        limits: Sequence[float | None],
    ) -> Hashable | None:
        """What a draw of `points` within `limits` paints, as `draw_line` finds it: each line's
        braille dots at its points (the dots between follow from them), its colour and its
        label, and the axes (their limits, the y step, the box): two draws with the same
        picture paint the same cells. A new reading often moves no dot (a second on a
        10-minute axis is a tenth of a dot). None when it cannot be told before drawing."""
        x_min, x_max, y_min, y_max = limits
        if x_min is None or x_max is None or y_min is None or y_max is None:
            return None  # an empty chart: textual-plot's own axes
        if x_min == x_max or y_min == y_max or not self.canvases_ready():
            return None
        box = self.scale_box
        parts = []
        for x, y, line, labelled in points:
            cells_x, cells_y = to_cells(x, y, (x_min, x_max, y_min, y_max), box)
            dots = np.floor(np.stack([cells_x * 2, cells_y * 4])).astype(np.int64)
            parts.append((dots.tobytes(), line.colour, line.label if labelled else None))
        return (box, tuple(limits), self.y_axis.step, tuple(parts))

    def canvases_ready(self) -> bool:
        """Whether the canvases are laid out at the chart's present size, so drawing them
        now is what a render would draw (textual-plot sizes them in `render` otherwise)."""
        if not self.canvases_sized or any(map(canvas_stale, self.canvases)):
            return False
        plot = self.plot_canvas
        inside = Region(1, 1, plot.size.width - 2, plot.size.height - 2)
        return bool(plot.size) and self.scale_box == inside

    def on_hide(self) -> None:
        # hidden by a layout: not short either (shown again, its size says, `show_short`), so
        # a layout switched to looks as one chosen at start
        self.set_class(False, "short")
        self._picture = None

    class Resized(Message):
        """Laid out at a size it has not drawn at (shown by a new layout, a resized terminal):
        it needs a draw even if no new data comes (an ended replay sends none)."""

    def on_resize(self) -> None:
        if self.drawn is None or self.drawn[2] != self.content_size:
            self.post_message(self.Resized())
        # the points stay until the next draw, but a legend placed for the old size may hide them
        self.place_legend()
        self.y_axis.rows = self.label_rows  # the ticks are placed again at the new height
        self.y_axis.step = None  # the limits' step was for the old height, until the next draw
        self.show_short()

    def show_short(self) -> bool:
        """The text form if the chart is too short to plot (now: a resize redraws nothing),
        else the plot; returns whether it is short."""
        short = self.short
        self.set_class(short, "short")
        if short:
            width, height = self.content_size.width - 2, self.content_size.height  # padding
            shown = (tuple(self.latest), width, height)
            if shown != self._short_text:  # the same words again: nothing to repaint
                self._short_text = shown
                # a relayout per new value was most of a 13-arm session's redraw
                # (bench/long_session.py)
                steady.update(self.query_one(".latest", Static), latest_text(
                    self.latest, width, height, self.spec.empty))  # fmt: skip
        return short

    def place_legend(self) -> None:
        """In the first left corner (bottom first) where it hides no line; else in the bottom
        border, if it fits there whole; else not at all.

        The legend floats over the plot: on a small chart it would cover the lines it names,
        and the arms keep their colours in every chart, so another chart's legend serves.
        """
        if not self.spec.legend:
            return
        labels = [label for label, _ in self.labelled if label is not None]
        width, height = self.plot_size
        size = Size(4 + max(map(len, labels), default=0) + 2, len(labels) + 2)  # "⠒⠒⠒ name", border
        if labels and size.width <= width and size.height <= height:
            drawn = self.drawn_cells(Region(1, 1, width, height))
            for corner in LEGEND_CORNERS:
                box = legend_box(corner, size, width, height)
                if not drawn[box.y : box.bottom, box.x : box.right].any():
                    self.show_legend(corner)
                    self.set_subtitle(None)
                    return
        self.show_legend(is_visible=False)
        room = self.size.width - SUBTITLE_ROOM
        fitting = (t for t in self.inline_legends() if len(t) and t.cell_len <= room)
        self.set_subtitle(next(fitting, None))

    def set_subtitle(self, subtitle: Text | None) -> None:
        """The bottom border's text, set only when it changes: Textual repaints the whole
        chart on every set."""
        if subtitle != self._subtitle:
            self._subtitle = subtitle
            self.border_subtitle = subtitle

    def inline_legends(self) -> list[Text]:
        """The legend on one line, each name after a stroke of its line's colour; then, for
        a narrower border, the references (the overlay) as one "ref" entry; then without
        them (the title names the reference)."""
        named = [(label, data.line_style) for label, data in self.labelled
                 if label is not None and isinstance(data, LinePlot)]  # fmt: skip
        arms = [(label, style) for label, style in named if not label.startswith(REF)]
        refs = [(REF.strip(), REF_STYLE)] if len(arms) < len(named) else []
        return [legend_line(entries) for entries in (named, arms + refs, arms)]

    def inline_legend(self) -> Text:
        """The legend on one line, every line named (the widest of `inline_legends`)."""
        return self.inline_legends()[0]

    def drawn_cells(self, box: Region) -> np.ndarray:
        """Which cells (row, column) of the plot canvas the lines pass through, were the
        axes drawn around `box`."""
        cells = np.zeros((box.bottom + 1, box.right + 1), dtype=bool)
        limits = self.limits
        if limits[0] == limits[1] or limits[2] == limits[3]:
            return cells
        for _, data in self.labelled:
            if len(data.x):
                x, y = along(*to_cells(data.x, data.y, limits, box))
                cells[np.floor(y).astype(int), np.floor(x).astype(int)] = True
        return cells

    def draw_line(self, dataset: LinePlot) -> bool:
        """textual-plot's braille line drawing, the same dots in the same cells, but the
        points mapped and the dots set with numpy: its own loop per dot and per cell was
        most of a chart's render. Other lines are left to it."""
        if dataset.hires_mode != HiResMode.BRAILLE or len(dataset.x) < 2:
            return False
        canvas = self.plot_canvas
        x, y = to_cells(dataset.x, dataset.y, self.limits, self.scale_box)  # as one point's
        paint_cells(canvas, self.line_cells.cells(canvas, x, y, self.segments), dataset.line_style)
        return True

    def get_hires_pixel_from_coordinate(
        self, x: FloatScalar, y: FloatScalar
    ) -> tuple[FloatScalar, FloatScalar]:
        """Data → canvas position, onto the cells inside the axes.

        textual-plot maps [min, max] onto the closed span [left, right] of its box and the
        canvas floors positions to cells, so x = max lands on the right axis line and
        y = min on the bottom one, and the axes drawn next hide them (the end of a step
        line, an arm's lowest trials). Here the span is half-open: the extremes fall in the
        last cells inside the axes, the same ones `scale_box` frames.
        """
        return to_cells(x, y, self.limits, self.scale_box)

    def get_pixel_from_coordinate(self, x: FloatScalar, y: FloatScalar) -> tuple[int, int]:
        """Data → canvas cell, as the lines are drawn: a tick labels the row its value's
        points land on (textual-plot's own mapping differs by up to a row, so on a short
        thermal chart a state's line could lie on the row of the next state's name).

        textual-plot moves a tick at y = min down a row (its mapping puts y = min on the
        axis line, ours in the row above it): one row up here, so it stays on the points.
        """
        cx, cy = self.get_hires_pixel_from_coordinate(x, y)
        row = math.floor(cy)
        return math.floor(cx), row - 1 if y == self.limits[2] else row


SUBTITLE_ROOM = 6
"""Cells of the bottom border a subtitle leaves: its corners and the space around it."""


LEGEND_CORNERS = (LegendLocation.BOTTOMLEFT, LegendLocation.TOPLEFT)
"""Where a legend may float: the left, the oldest points; the newest come in on the right,
where a legend would cover them as they come."""


class Charts(Vertical):
    """The large charts, by id; a layout arranges (or hides) them."""

    def __init__(self, ids: Sequence[str], *, id: str | None = None) -> None:  # noqa: A002 (Textual)
        super().__init__(id=id)
        self.ids = tuple(ids)

    def compose(self) -> ComposeResult:
        for name in self.ids:
            yield Chart(CHARTS[name], id=name)
