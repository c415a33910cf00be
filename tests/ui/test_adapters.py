"""What each adapter relies on of its library's internals is there: the private names it uses
exist on objects made as it makes them, take the arguments it passes and do what it says they
do. A failure names the library, its version, what moved and the adapter to change; the last
test says when an adapter uses a private name this file does not check."""

from __future__ import annotations

import inspect
import os
import queue
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
from rich.style import Style
from textual.app import App, ComposeResult
from textual.geometry import Region, Size
from textual.reactive import Reactive
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widgets import DataTable, Log
from textual_hires_canvas import Canvas
from textual_plot import PlotWidget
from textual_plot.plot_widget import LinePlot

from anemon.ui import serve, textual_compat
from anemon.ui.charts import plotlib
from tests.library_internals import ADAPTERS, REPO, uses

PLOTLIB = "anemon/ui/charts/plotlib.py"
COMPAT = "anemon/ui/textual_compat.py"
SERVE = "anemon/ui/serve.py"
RAW_TAP = "anemon/devices/pmd3/raw_tap.py"


@dataclass
class Relied:
    """What one adapter relies on of one library, checked one name at a time."""

    library: str
    """Its distribution's name."""
    adapter: str
    problems: list[str] = field(default_factory=list)

    def has(self, obj: object, *names: str) -> None:
        """`obj` (made as the adapter makes it) has each of `names`."""
        owner = type(obj).__qualname__ if not isinstance(obj, type) else obj.__qualname__
        self.problems += [f"{owner}.{name} is gone" for name in names if not hasattr(obj, name)]

    def takes(self, owner: object, name: str, *parameters: str) -> None:
        """`owner`'s function `name` takes `parameters` in this order, as the adapter passes
        them (and no others that have no default)."""
        where = f"{getattr(owner, '__qualname__', getattr(owner, '__name__', owner))}.{name}"
        function = getattr(owner, name, None)
        if not callable(function):
            self.problems.append(f"{where} is gone")
            return
        found = [p for p in inspect.signature(function).parameters.values() if p.name != "self"]
        names = [p.name for p in found]
        required = [p.name for p in found[len(parameters) :] if p.default is p.empty]
        if names[: len(parameters)] != list(parameters) or required:
            self.problems.append(
                f"{where} takes ({', '.join(names)}), not ({', '.join(parameters)})"
            )

    def holds(self, true: bool, what: str) -> None:
        """What the adapter says of the library is still so."""
        if not true:
            self.problems.append(f"no longer so: {what}")

    def verdict(self) -> None:
        assert not self.problems, (
            f"{self.library} {version(self.library)} changed what {self.adapter} relies on "
            f"(adapt it, then this test): {'; '.join(self.problems)}"
        )


@contextmanager
def relied(library: str, adapter: str) -> Iterator[Relied]:
    checks = Relied(library, adapter)
    yield checks
    checks.verdict()


# -- textual-plot and textual-hires-canvas: anemon/ui/charts/plotlib.py ----------------------


class Drawn(plotlib.PlotBase):
    """A PlotBase that notes the datasets textual-plot hands `draw_line`."""

    def __init__(self) -> None:
        super().__init__(id="plot-under-test")
        self.handed: list[LinePlot] = []

    def draw_line(self, dataset: LinePlot) -> bool:
        self.handed.append(dataset)
        return True

    def y_axis_drawn(self, margin: Canvas) -> None:
        margin.write_text(0, 0, "unit")


class OnePlot(App[None]):
    def compose(self) -> ComposeResult:
        yield Drawn()


async def test_what_plotlib_relies_on_of_textual_plot_is_there() -> None:
    app = OnePlot()
    async with app.run_test(size=(60, 20)) as pilot:
        plot = app.query_one(Drawn)
        await pilot.pause()
        with relied("textual-plot", PLOTLIB) as it:
            it.has(plot, "_x_min", "_x_max", "_y_min", "_y_max", "_scale_rectangle")
            it.has(plot, "_labels", "_datasets", "_needs_canvas_resize", "_needs_rerender")
            it.takes(PlotWidget, "_rerender")
            it.takes(PlotWidget, "_render_line_plot", "dataset")
            it.takes(PlotWidget, "_render_y_ticks")
            it.takes(PlotWidget, "_update_legend")
            with plot.deferred():
                plot.plot([0.0, 1.0], [2.0, 3.0], label="a")
                it.holds(plot.legend_owed, "a labelled `plot` calls `_update_legend`")
                plot.set_xlimits(0.0, 10.0)
                plot.set_ylimits(-1.0, 5.0)
                it.holds(plot._needs_rerender, "a change calls `_rerender`")
            plot.resize_canvases()
            plot.refresh()
            await pilot.pause()
            it.holds(plot.limits == (0.0, 10.0, -1.0, 5.0), "set_xlimits/set_ylimits set `_x_min`…")
            (label, dataset), *_ = plot.labelled or [(None, None)]
            it.holds(label == "a" and isinstance(dataset, LinePlot), "`plot` fills `_labels`…")
            it.holds(plot.handed == [dataset], "a render hands each line to `_render_line_plot`")
            canvas = plot.query_one("#plot", Canvas)
            inside = Region(1, 1, canvas.size.width - 2, canvas.size.height - 2)
            it.holds(plot.scale_box == inside, "`_scale_rectangle` is the plot canvas's inside")
            it.holds(plot.canvases_sized, "a render clears `_needs_canvas_resize`")
            margin = plot.query_one("#margin-left", Canvas)
            top = "".join(margin.get_pixel(x, 0)[0] for x in range(4))
            it.holds(top == "unit", "`_render_y_ticks` draws the left margin, reset first")


async def test_what_plotlib_relies_on_of_textual_hires_canvas_is_there() -> None:
    canvas = Canvas(7, 3)
    with relied("textual-hires-canvas", PLOTLIB) as it:
        it.has(canvas, "_buffer", "_styles", "_canvas_size", "_refreshes_pending")
        buffer, styles = plotlib.canvas_rows(canvas)
        rows = [len(buffer), *map(len, buffer)], [len(styles), *map(len, styles)]
        it.holds(rows == ([3, 7, 7, 7],) * 2, "`_buffer`, `_styles`: the rows, of its size")
        it.holds(plotlib.canvas_size(canvas) == Size(7, 3), "`_canvas_size` is its rows' size")
        canvas.set_pixel(2, 1, "x", "red")
        it.holds(buffer[1][2] == "x" and styles[1][2] == "red", "`_buffer` is what it draws")
        plotlib.hold_refreshes(canvas)
        with canvas.batch_refresh():
            it.holds(canvas._refreshes_pending == 2, "`_refreshes_pending` is batch_refresh's")
        plotlib.hold_refreshes(canvas)
        it.holds(not plotlib.release_refreshes(canvas), "`_refreshes_pending` counts holds")
        it.holds(plotlib.release_refreshes(canvas), "`_refreshes_pending` back to 0")


def test_our_braille_drawing_sets_the_characters_textual_hires_canvas_does() -> None:
    """The drawing is ours (anemon/ui/charts/drawing.py); its dots must stay the library's."""
    from textual_hires_canvas.hires import HiResMode, pixels

    from anemon.ui.charts.drawing import BRAILLE_CHARS, line_dots, paint_braille

    theirs = [pixels[HiResMode.BRAILLE][tuple(m >> b & 1 for b in range(8))] for m in range(256)]
    assert list(BRAILLE_CHARS) == theirs
    drawn, ours = Canvas(20, 6), Canvas(20, 6)
    drawn.draw_hires_lines([(-3.0, 7.5, 25.0, -2.0), (25.0, -2.0, 4.2, 3.3)], HiResMode.BRAILLE)
    x, y = np.array([-3.0, 25.0, 4.2]), np.array([7.5, -2.0, 3.3])
    paint_braille(ours, *line_dots(ours, x, y), "white")
    assert plotlib.canvas_rows(ours) == plotlib.canvas_rows(drawn)


# -- Textual: anemon/ui/textual_compat.py -----------------------------------------------------


class Widgets(App[None]):
    def compose(self) -> ComposeResult:
        yield textual_compat.LogMeasuredOnTheLoop()
        yield DataTable()


async def test_what_textual_compat_relies_on_of_textuals_widgets_is_there() -> None:
    app = Widgets()
    async with app.run_test(size=(40, 12)) as pilot:
        log, table = app.query_one(Log), app.query_one(DataTable)
        log.write_line("one line")
        await pilot.pause()
        with relied("textual", COMPAT) as it:
            it.has(app.screen, "_refresh_layout")
            it.takes(type(app.screen), "_refresh_layout", "size")
            it.has(table, "_clear_caches")
            it.takes(DataTable, "_clear_caches")
            it.has(log, "_lines", "_render_line_strip", "_refresh_scrollbars",
                   "_render_line_cache")  # fmt: skip
            it.takes(Log, "_render_line_strip", "y", "rich_style")
            it.takes(Log, "_refresh_scrollbars")
            it.has(log, "_update_size", "_process_line", "_update_maximum_width")
            it.takes(Log, "_update_size", "updates", "lines")
            it.takes(Log, "_update_maximum_width", "updates", "size")
            it.takes(Log, "_process_line", "line")
            measured = "self._update_size(self._updates, new_lines)" in inspect.getsource(Log)
            it.holds(measured, "`write_lines` measures its new lines through `_update_size`")
            sizes = (ScrollBar.window_virtual_size, ScrollBar.window_size)
            it.holds(all(isinstance(size, Reactive) for size in sizes),
                     "a scrollbar's sizes are reactives (a change redraws it)")  # fmt: skip
            line = textual_compat.log_line(log, 0, Style())
            whole = isinstance(line, Strip) and line.cell_length == len("one line")
            it.holds(whole, "`_render_line_strip` renders `_lines[y]` whole")
            it.holds(textual_compat.log_line(log, 1, Style()) is None, "`_lines` holds the lines")
            again = textual_compat.log_line(log, 0, Style())
            it.holds(again is line, "`_render_line_strip` reads `_render_line_cache` by y")
            log.clear()
            log.write_line("another line")
            it.holds(textual_compat.log_line(log, 0, Style()) is not line,
                     "`clear` empties `_render_line_cache`")  # fmt: skip
            textual_compat.update_scrollbars(log, log.virtual_size)
            textual_compat.clear_render_caches(table)
            it.has(table, "_data", "_update_count", "_get_row_region", "_row_render_cache",
                   "_cell_render_cache", "_row_renderable_cache", "_line_cache")  # fmt: skip
            table.add_column("c", key="c")
            table.add_row("old", key="r")
            await pilot.pause()
            y = table.header_height  # the row's line
            table._render_line(y, 0, table.size.width, Style())
            keyed = any(key[0] == y for key in table._line_cache.keys())  # noqa: SIM118
            it.holds(keyed, "`_line_cache` is keyed by the line's y first")
            textual_compat.put_row_cells(table, "r", {"c": "new"})
            it.holds(table.get_cell("r", "c") == "new", "`_data` holds the cells")
            line = table._render_line(y, 0, table.size.width, Style())
            it.holds("new" in line.text, "the row's lines leave `_line_cache` by their y")
            textual_compat.lay_out_now(app.screen, app.size)


async def test_what_textual_compat_relies_on_of_textuals_driver_is_there() -> None:
    from textual.drivers.linux_driver import LinuxDriver

    driver = LinuxDriver(App())  # made, not started: the terminal is left alone
    with relied("textual", COMPAT) as it:
        it.has(driver, "_file")
        source = inspect.getsource(LinuxDriver)
        it.holds("WriterThread(self._file)" in source, "its writer thread writes to `_file`")
        wrapped: list[object] = []
        textual_compat.wrap_output(driver, lambda file: wrapped.append(file) or file)
        it.holds(wrapped == [driver._file], "`_file` is the terminal's file")


async def test_what_textual_compat_relies_on_of_textuals_input_thread_is_there() -> None:
    from textual._parser import ParseError
    from textual._xterm_parser import XTermParser
    from textual.drivers.linux_driver import LinuxDriver

    driver = LinuxDriver(App())  # made, not started
    with relied("textual", COMPAT) as it:
        it.has(driver, "fileno", "exit_event", "_debug", "process_message", "run_input_thread")
        it.has(XTermParser(False), "feed", "tick")
        it.holds(issubclass(ParseError, Exception), "`ParseError` is what its parser raises")
        source = inspect.getsource(LinuxDriver)
        it.holds("self.run_input_thread()" in source, "its input thread runs `run_input_thread`")
        it.holds("select(0.1)" in source, "its own input thread wakes every 0.1 s")
        it.holds(
            source.find("self.exit_event.set()") < source.find("self._key_thread.join()"),
            "the input thread is ended by setting `exit_event`, then joined",
        )
        timeouts = re.findall(r"(?:read1|peek1)\(([^)]+)\)", inspect.getsource(XTermParser))
        it.holds(set(timeouts) == {"constants.ESCAPE_DELAY"}, "the parser's one timeout is ESC's")


def test_the_quiet_input_thread_reads_keys_an_escape_alone_and_ends_when_told() -> None:
    """`read_input` on a pipe for a terminal: keys as Textual's parser reads them, an ESC
    alone becoming the Escape key once the escape delay is out, and the thread ending when
    the exit event is set, though no key comes to wake it."""
    from anemon.ui.terminal import WakingEvent

    keys: queue.Queue[object] = queue.Queue()
    read_end, write_end = os.pipe()

    class Terminal:
        fileno = read_end
        exit_event = WakingEvent()
        _debug = False

        def process_message(self, message: object) -> None:
            keys.put(getattr(message, "key", None))

    terminal = Terminal()
    thread = threading.Thread(
        target=textual_compat.read_input, args=(terminal, terminal.exit_event.read_end)
    )
    thread.start()
    try:
        os.write(write_end, b"q")
        assert keys.get(timeout=10) == "q"
        os.write(write_end, b"\x1b")
        assert keys.get(timeout=10) == "escape"
        terminal.exit_event.set()
        thread.join(timeout=10)
        assert not thread.is_alive()
    finally:
        terminal.exit_event.set()
        thread.join(timeout=10)
        terminal.exit_event.close()
        os.close(read_end)
        os.close(write_end)


def test_what_textual_compat_relies_on_of_textuals_stylesheet_is_there(tmp_path: Path) -> None:
    from textual.css import match as css_match
    from textual.css.stylesheet import Stylesheet

    first, second, other = (tmp_path / f"{name}.tcss" for name in ("first", "second", "other"))
    first.write_text("Log { width: 10; }\n")
    second.write_text("Log { height: 3; }\n")
    other.write_text("DataTable { color: red; }\n")
    sheet = Stylesheet()
    with relied("textual", COMPAT) as it:
        it.has(sheet, "source", "rules", "read", "parse", "update_nodes")
        it.takes(Stylesheet, "update_nodes", "nodes", "animate")
        it.takes(css_match, "match", "selector_sets", "node")
        sheet.read(other)
        sheet.read(first)
        sheet.parse()
        it.holds((os.path.abspath(first), "") in sheet.source, "`read` keys by (path, '')")
        kept = {id(rule) for rule in sheet.rules if "DataTable" in str(rule.selector_set)}
        changed = textual_compat.replace_source(sheet, first, second)
        same = {id(rule) for rule in sheet.rules} & kept == kept
        it.holds(same, "parsing again gives an unchanged source's rules as the same objects")
        it.holds(len(changed) == 2, "the rules that changed are the two files'")
        it.holds(
            {name for rule in changed for name in textual_compat.properties(rule)}
            == {"width", "height"},
            "`Styles.get_rules` names what a rule sets",
        )


async def test_what_textual_compat_matches_rules_by_is_there() -> None:
    from textual.css.stylesheet import Stylesheet

    sheet = Stylesheet()
    css = "Log { width: 10; } .odd { height: 3; } Screen Log { height: 2; } #none { color: red; }"
    sheet.add_source(css, read_from=("test", ""))
    sheet.parse()
    app = Widgets()
    async with app.run_test(size=(40, 12)):
        log, table = app.query_one(Log), app.query_one(DataTable)
        table.add_class("odd")
        with relied("textual", COMPAT) as it:
            it.has(log, "_selector_names")
            it.has(sheet.rules[0], "selector_names")
            hits = {n: [str(r.selector_set) for r in textual_compat.matching(sheet.rules, n)]
                    for n in (log, table)}  # fmt: skip
            it.holds(len(hits[log]) == 2 and all("Log" in h for h in hits[log]),
                     "a rule whose last selector names a node's type matches it")  # fmt: skip
            it.holds(hits[table] == [str(sheet.rules[1].selector_set)],
                     "a rule naming a node's class matches it, no other")  # fmt: skip


def test_a_layout_that_does_not_parse_leaves_the_old_one_in_place(tmp_path: Path) -> None:
    from textual.css.stylesheet import Stylesheet

    good, bad = tmp_path / "good.tcss", tmp_path / "bad.tcss"
    good.write_text("Log { width: 10; }\n")
    bad.write_text("Log { width: ; }\n")
    sheet = Stylesheet()
    sheet.read(good)
    sheet.parse()
    with pytest.raises(Exception):  # noqa: B017 (Textual's errors share no base)
        textual_compat.replace_source(sheet, good, bad)
    assert list(sheet.source) == [(os.path.abspath(good), "")]


# -- textual-serve: anemon/ui/serve.py ------------------------------------------------------


def test_what_the_serve_adapter_relies_on_of_textual_serve_is_there() -> None:
    from textual_serve.app_service import AppService
    from textual_serve.download_manager import DownloadManager
    from textual_serve.server import Server

    async def nothing(*_: object) -> None:
        pass

    service = AppService("true", write_bytes=nothing, write_str=nothing, close=nothing,
                         download_manager=DownloadManager())  # fmt: skip
    with relied("textual-serve", SERVE) as it:
        it.has(service, "_process", "_task", "_build_environment")
        it.takes(AppService, "_build_environment", "width", "height")
        environment = getattr(service, "_build_environment", dict)()
        it.holds("TEXTUAL_DRIVER" in environment, "`_build_environment` sets TEXTUAL_DRIVER")
        it.has(Server, "_process_messages")
        it.takes(Server, "_process_messages", "websocket", "app_service")
        server = Server("true")
        page = Path(server.templates_path) / serve.PAGE
        it.holds(page.is_file() and "</body>" in page.read_text(), f"{serve.PAGE} has a body")
        script = (Path(server.statics_path) / "js" / "textual.js").read_text()
        marks = "-first-byte" in script and "xterm-helper-textarea" in script
        it.holds(marks, "textual.js marks a drawn page `-first-byte`; `.xterm-helper-textarea`")


def test_what_the_serve_adapter_relies_on_of_textuals_web_driver_is_there() -> None:
    from textual.drivers.web_driver import WebDriver

    with relied("textual", SERVE) as it:
        it.has(WebDriver, "run_input_thread", "start_application_mode")
        it.holds("self.exit_event = " in inspect.getsource(WebDriver), "it has an exit_event")
        start = inspect.getsource(WebDriver.start_application_mode)
        queued = "call_later(self._app.post_message, events.AppBlur())" in start
        it.holds(queued, "`start_application_mode` queues the app's blur (the focus goes after)")


# -- pymobiledevice3: anemon/devices/pmd3/raw_tap.py -----------------------------------------


def test_what_raw_tap_relies_on_of_pymobiledevice3s_dtx_is_there() -> None:
    from pymobiledevice3.dtx import DTXService
    from pymobiledevice3.dtx.channel import DTXChannel
    from pymobiledevice3.dtx.message import DTXMessage
    from pymobiledevice3.services.dvt.instruments.tap import TapService

    with relied("pymobiledevice3", RAW_TAP) as it:
        it.takes(DTXChannel, "_handle_notification", "message")
        handled = inspect.getsource(DTXChannel._handle_message)
        it.holds("await self._handle_notification(message)" in handled,
                 "a notification goes through `_handle_notification(message)`")  # fmt: skip
        it.holds("self._channel" in inspect.getsource(DTXService.__init__),
                 "a service holds its channel as `_channel`")  # fmt: skip
        it.holds("payload_data" in inspect.getsource(DTXMessage),
                 "a message's undecoded payload is `payload_data`")  # fmt: skip
        it.has(TapService, "set_config_", "start", "stop")
        it.holds("self.messages" in inspect.getsource(TapService.__init__),
                 "a tap service queues its messages in `messages`")  # fmt: skip


# -- every private name an adapter uses is checked above -----------------------------------

CHECKED = {
    PLOTLIB: {
        "_x_min", "_x_max", "_y_min", "_y_max", "_scale_rectangle", "_labels", "_datasets",
        "_needs_canvas_resize", "_needs_rerender", "_rerender", "_render_line_plot",
        "_render_y_ticks", "_update_legend", "_buffer", "_styles", "_canvas_size",
        "_refreshes_pending",
    },
    COMPAT: {
        "_refresh_layout", "_clear_caches", "_lines", "_render_line_strip",
        "_refresh_scrollbars", "_file", "_data", "_update_count", "_get_row_region",
        "_row_render_cache", "_cell_render_cache", "_row_renderable_cache", "_line_cache",
        "_update_size", "_process_line", "_update_maximum_width", "_render_line_cache",
        "_debug", "XTermParser",
        "ParseError", "_selector_names",
    },
    SERVE: {"_process", "_task", "_build_environment", "_process_messages"},
    RAW_TAP: {"_channel", "_handle_notification"},
}  # fmt: skip
"""The private names each adapter's tests above check."""


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_every_private_name_an_adapter_uses_is_checked_here(adapter: str) -> None:
    used = {use.name for use in uses(REPO / adapter)}
    unchecked = sorted(used - CHECKED[adapter])
    assert not unchecked, f"{adapter} uses {unchecked}: check them in {__file__}"
