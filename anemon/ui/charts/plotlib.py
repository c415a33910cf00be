"""The one adapter to textual-plot's and textual-hires-canvas's internals.

The charts draw their lines on textual-plot's canvas themselves (with numpy: its loop per dot
was most of a chart's render) and repaint only the canvas rows a draw changed. Neither library
offers what that needs publicly: a plot's limits and the box its axes frame, its datasets with
their labels, its render hooks, a canvas's rows. Each is one named member here, saying what it
relies on. tests/ui/test_adapters.py fails, naming the library and the name, when one moves;
tests/test_library_internals.py, when a module but this one names a private of either.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Grid
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.visual import VisualType
from textual_hires_canvas import Canvas, TextAlign
from textual_plot import PlotWidget
from textual_plot.plot_widget import DataSet, Legend, LinePlot


@lru_cache(maxsize=1024)
def parsed(markup: str) -> tuple[str, tuple[str, ...]]:
    """The text and each character's style (as the canvas keeps it) of `markup`, as
    textual-hires-canvas's `write_text` reads it: a style per character, the sum of the
    spans over it. Kept: an axis's labels are mostly the same from one draw to the next."""
    text = Text.from_markup(markup)
    styles = []
    for char in text.divide(range(1, len(text.plain))):
        style = Style()
        for span in char.spans:
            style += Style.parse(str(span.style))
        styles.append(str(style))
    return text.plain, tuple(styles)


class LabelCanvas(Canvas):
    """A canvas whose `write_text` parses each text once (`parsed`): textual-hires-canvas
    parses the markup and styles every character on every write (~0.2 ms a label), and a
    live trial redraws some 70 axis labels, nearly all of them the same as before. Its base
    style is worked out once a render (`render_lines`), not once a line."""

    _render_style: Style | None = None
    """`rich_style` while the lines of one render are drawn (None: outside one)."""

    @property
    def rich_style(self) -> Style:
        """Textual's (every ancestor's styles folded, nothing kept): textual-hires-canvas
        asks it for every line it renders, a fifth of a chart's repaint; within one
        `render_lines` the styles cannot change."""
        return self._render_style if self._render_style is not None else super().rich_style

    def render_lines(self, crop: Region) -> list[Strip]:
        self._render_style = super().rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._render_style = None

    def write_text(self, x: int, y: int, text: str, align: TextAlign = TextAlign.LEFT) -> None:
        """The same cells as textual-hires-canvas's `write_text` (aligned at `x` alike, cut
        at the canvas's edges), written to its rows (`canvas_rows`)."""
        size = canvas_size(self)
        plain, styles = parsed(text)
        if not 0 <= y < size.height or not plain:
            return
        if align == TextAlign.RIGHT:
            x -= len(plain) - 1
        elif align == TextAlign.CENTER:
            x -= len(plain) // 2 - (len(plain) % 2 == 0)  # an even text one cell right
        first, last = max(0, -x), min(len(plain), size.width - x)
        if first >= last:
            return
        chars, cell_styles = canvas_rows(self)
        chars[y][x + first : x + last] = plain[first:last]
        cell_styles[y][x + first : x + last] = styles[first:last]
        self.refresh()


def text_widths(text: Text) -> tuple[int, ...]:
    """Each line's width in cells: a Static sized by its text (`auto`) keeps its size for
    another text of the same widths, so its update needs no layout of the screen."""
    return tuple(line.cell_len for line in text.split(allow_blank=True))


class SteadyLegend(Legend):
    """textual-plot's legend, set again only when its text changes: a Static's `update` asks
    for a layout of the whole screen, and textual-plot sets the legend on every `plot`,
    `clear` and `show_legend`, so a live trial laid out every panel again (~2 ms). A text of
    the same size (a new value in a label: "52.8 tok/s" → "52.9 tok/s") is set without one."""

    shown: object = None

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        if content != self.shown:
            resized = not (
                isinstance(content, Text)
                and isinstance(self.shown, Text)
                and text_widths(content) == text_widths(self.shown)
            )
            self.shown = content
            super().update(content, layout=layout and resized)


class PlotBase(PlotWidget):
    """textual-plot's PlotWidget, with the internals the charts use by name."""

    deferring = False
    """Inside `deferred`: textual-plot's rerenders and legend updates are only noted."""
    legend_owed = False

    canvases: tuple[LabelCanvas, ...] = ()
    """The four canvases, in compose order, the plot's third: kept, as a DOM query for them
    at every draw (a selector matched over the chart's nodes) was a fifth of a draw's cost."""

    def compose(self) -> ComposeResult:
        """textual-plot's widgets (`PlotWidget.compose`), the canvases `LabelCanvas`es."""
        names = ("margin-top", "margin-left", "plot", "margin-bottom")
        self.canvases = tuple(LabelCanvas(1, 1, id=name) for name in names)
        with Grid():
            yield from self.canvases
        yield SteadyLegend(id="legend")

    @property
    def margin_left_canvas(self) -> LabelCanvas:
        return self.canvases[1]

    @property
    def plot_canvas(self) -> LabelCanvas:
        return self.canvases[2]

    @property
    def limits(self) -> tuple[float, float, float, float]:
        """x min, x max, y min, y max as the last render mapped them onto the axes
        (textual-plot keeps them in `_x_min`… and has no getter)."""
        return self._x_min, self._x_max, self._y_min, self._y_max

    @property
    def scale_box(self) -> Region:
        """The plot canvas's cells inside the axis lines: textual-plot draws the axes around
        its `_scale_rectangle`, set when it sizes its canvases."""
        return self._scale_rectangle

    @property
    def labelled(self) -> list[tuple[str | None, DataSet]]:
        """Each dataset handed to `plot`, with its label (textual-plot's `_labels` and
        `_datasets`, kept in step)."""
        return list(zip(self._labels, self._datasets, strict=True))

    @property
    def canvases_sized(self) -> bool:
        """No resize of the canvases is pending (textual-plot's `_needs_canvas_resize`)."""
        return not self._needs_canvas_resize

    def resize_canvases(self) -> None:
        """Have the next render size the canvases to their widgets and draw everything:
        textual-plot does it only after a layout refresh of the plot itself
        (`refresh(layout=True)` sets its `_needs_canvas_resize` and `_needs_rerender`), not
        when its canvases are laid out at a new size without one (shown again)."""
        self._needs_canvas_resize = self._needs_rerender = True

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """While inside, each change (`clear`, `plot`, `set_xlimits`, …) only notes that the
        next render draws, where textual-plot's `_rerender` refreshes the whole chart on every
        one: the caller renders once, at the end. The legend is set once, at the end: a draw
        clears it and adds its lines one by one, each a text it did not have."""
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False
            if self.legend_owed:
                self.legend_owed = False
                self._update_legend()

    def _rerender(self) -> None:
        """textual-plot's, called by every change: only noted while `deferred`."""
        if self.deferring:
            self._needs_rerender = True
        else:
            super()._rerender()

    def _update_legend(self) -> None:
        """textual-plot's, called by every labelled `plot`, `clear` and `show_legend` (it
        sets the legend's text and places it): only noted while `deferred`."""
        if self.deferring:
            self.legend_owed = True
        else:
            super()._update_legend()

    def _render_line_plot(self, dataset: LinePlot) -> None:
        """textual-plot draws each line dataset here (from its private `_render_plot`, between
        clearing the plot canvas and drawing the axes): `draw_line`'s, or else its own."""
        if not self.draw_line(dataset):
            super()._render_line_plot(dataset)

    def draw_line(self, dataset: LinePlot) -> bool:
        """Draw `dataset` on the plot canvas, within `limits` onto `scale_box`; False leaves
        it to textual-plot."""
        return False

    def _render_y_ticks(self) -> None:
        """textual-plot draws the y axis's ticks and labels here (from `_render_plot`), on its
        left margin canvas, reset first: then `y_axis_drawn`."""
        super()._render_y_ticks()
        self.y_axis_drawn(self.margin_left_canvas)

    def y_axis_drawn(self, margin: Canvas) -> None:
        """Add to the y axis's margin, its labels drawn."""


def canvas_rows(canvas: Canvas) -> tuple[list[list[str]], list[list[str]]]:
    """The canvas's characters and styles, row by row, live: a change shows at the canvas's
    next refresh (textual-hires-canvas's `_buffer` and `_styles`: its `get_pixel` and
    `set_pixel` go a cell and a call at a time, and `set_pixel` refreshes)."""
    return canvas._buffer, canvas._styles


def canvas_size(canvas: Canvas) -> Size:
    """The size the canvas's rows were made for (`_canvas_size`), which is not its widget's
    size until textual-plot resets it (`PlotBase.resize_canvases`)."""
    return canvas._canvas_size


def canvas_stale(canvas: Canvas) -> bool:
    """Laid out at a size its rows were not made for (a canvas of no size, the top margin,
    is left as it is, by textual-plot too)."""
    return bool(canvas.size) and canvas_size(canvas) != canvas.size


def hold_refreshes(canvas: Canvas) -> None:
    """The canvas's refreshes dropped until `release_refreshes`: the count that its
    `batch_refresh` keeps (`_refreshes_pending`), without that context's full refresh at the
    end (the caller repaints only the rows that changed)."""
    canvas._refreshes_pending += 1


def release_refreshes(canvas: Canvas) -> bool:
    """Undo one `hold_refreshes`; whether none is held any more."""
    canvas._refreshes_pending -= 1
    return not canvas._refreshes_pending
