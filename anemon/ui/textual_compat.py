"""The one adapter to Textual's internals: each thing the dashboard needs of Textual that its
public API does not offer, a small function saying what it relies on.

tests/ui/test_adapters.py fails, naming Textual's version and the name, when one moves;
tests/test_library_internals.py, when a module but this one names a private of Textual.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich.cells import cell_len
from textual.widgets import Log

if TYPE_CHECKING:
    from rich.style import Style
    from textual.app import App
    from textual.cache import LRUCache
    from textual.css.model import RuleSet
    from textual.css.stylesheet import Stylesheet
    from textual.dom import DOMNode
    from textual.drivers.linux_driver import LinuxDriver
    from textual.geometry import Size
    from textual.screen import Screen
    from textual.strip import Strip
    from textual.widget import Widget
    from textual.widgets import DataTable


def lay_out_now(screen: Screen[Any], size: Size) -> None:
    """Place the screen's widgets now, not at the next idle (`refresh(layout=True)`): what
    draws next sees the new sizes. What `App.refresh_css` does, through the screen's private
    `_refresh_layout(size)`."""
    screen._refresh_layout(size)


def clear_render_caches(table: DataTable[Any]) -> None:
    """Drop the table's cached renders of rows and cells (`DataTable._clear_caches`): an
    `update_cell` makes them stale (their keys hold the update count), yet they stay until
    the LRU caches are full."""
    table._clear_caches()


def put_row_cells(table: DataTable[Any], row: str, values: Mapping[str, object]) -> None:
    """Put `values` (by column key) in row `row` and draw that row alone again, the other
    rows' cached renders left standing; the caller knows the columns' widths hold. Textual's
    `update_cell` counts an update (`_update_count`), which is part of every render cache's
    key (`_row_render_cache`, `_cell_render_cache`, `_row_renderable_cache`, `_line_cache`):
    one cell's change re-rendered every row. Here the values go into `_data`, the row's own
    entries leave those caches (keyed by its row key, its index, its lines' y), and its
    region is refreshed (`_get_row_region`, `refresh_row`)."""
    from textual.widgets.data_table import ColumnKey, RowKey

    key = RowKey(row)
    cells = table._data[key]
    for column, value in values.items():
        cells[ColumnKey(column)] = value
    index = table.get_row_index(key)
    region = table._get_row_region(index)
    table._row_renderable_cache.discard((table._update_count, index))
    caches: tuple[LRUCache[Any, Any], ...] = (table._row_render_cache, table._cell_render_cache)
    for cache in caches:
        for cached in [k for k in cache.keys() if k[0] == key]:  # noqa: SIM118 (no __iter__)
            cache.discard(cached)
    lines = range(region.y, region.bottom)
    for cached_line in [k for k in table._line_cache.keys() if k[0] in lines]:  # noqa: SIM118
        table._line_cache.discard(cached_line)
    table.refresh_row(index)


def log_line(log: Log, y: int, style: Style) -> Strip | None:
    """Line `y` of the log as Textual renders it, whole (not cropped to the widget), from the
    log's own cache; None past its last line (`Log._lines`, `Log._render_line_strip`: its
    public `render_line` crops)."""
    if y >= len(log._lines):
        return None
    return log._render_line_strip(y, style)


class LogMeasuredOnTheLoop(Log):
    """A `Log` that measures its new lines' width on the event loop. Textual's `write_lines`
    measures them in a thread worker each write (`Log._update_size`, `@work(thread=True)`,
    calling back `_update_maximum_width` through `call_from_thread`): the thread, its state
    messages and the call back cost milliseconds of CPU per trial in `anemon watch`, for the
    cell lengths of the few lines a redraw writes."""

    def _update_size(self, updates: int, lines: list[str]) -> None:  # type: ignore[override]
        if lines:
            width = max(cell_len(self._process_line(line)) for line in lines)
            self._update_maximum_width(updates, width)

    def _render_line_strip(self, y: int, rich_style: Style) -> Strip:
        """Textual's line, kept in its cache when no text is selected: Textual 8.2 reads
        `_render_line_cache` only then, but stores a line in it only under a selection, so
        every line on screen was made again (parsed, highlighted, rendered) at every render
        of the log: each new line in a live run, each seek of a replay (~6 ms). The cache's
        lines are let go where Textual lets them go (cleared, pruned, restyled, selected)."""
        line = super()._render_line_strip(y, rich_style)
        if self.text_selection is None:
            self._render_line_cache[y] = line
        return line


def update_scrollbars(widget: Widget, virtual_size: Size) -> None:
    """Show, hide and size the widget's scrollbars for `virtual_size`, with no layout of the
    screen: what Textual's own change of `virtual_size` does before asking for one
    (`Widget._refresh_scrollbars`, then `Widget._scroll_update`), less its redraw of both
    bars on any change. A bar's sizes are reactives that redraw it when they change, so a log
    growing a line per trial redraws its vertical bar, not its horizontal one each line."""
    widget._refresh_scrollbars()
    width, height = widget.container_size
    if widget.show_vertical_scrollbar and widget.styles.scrollbar_size_vertical:
        vertical = widget.vertical_scrollbar
        vertical.window_virtual_size = virtual_size.height
        vertical.window_size = height - widget.scrollbar_size_horizontal
    if widget.show_horizontal_scrollbar and widget.styles.scrollbar_size_horizontal:
        horizontal = widget.horizontal_scrollbar
        horizontal.window_virtual_size = virtual_size.width
        horizontal.window_size = width - widget.scrollbar_size_vertical
    widget.scroll_x = widget.validate_scroll_x(widget.scroll_x)
    widget.scroll_y = widget.validate_scroll_y(widget.scroll_y)


def wrap_output(driver: LinuxDriver, wrap: Callable[[IO[str]], object]) -> None:
    """Have the driver write to the terminal through `wrap(its file)`: `LinuxDriver` holds
    the file (`sys.__stderr__`; None only without a console) in `_file`, which its writer
    thread takes when the application starts, and offers no way to give it another."""
    if driver._file is not None:
        driver._file = wrap(driver._file)  # type: ignore[assignment]


INPUT_TICK_S = 0.1
"""The pace of Textual's own input thread (`LinuxDriver.run_input_thread`: `select(0.1)`
and a parser `tick` after each), kept while an escape may be pending."""


def read_input(driver: LinuxDriver, wake: int) -> None:
    """Textual's input thread (`LinuxDriver.run_input_thread`) asleep between keys: it waits
    on the terminal and on `wake` (readable while the driver's `exit_event` is set), where
    Textual's wakes every 0.1 s, ten times a second (a third of an idle dashboard's CPU), to
    tick its parser and look at `exit_event`. The parser's one timeout is the escape delay
    (`constants.ESCAPE_DELAY`, an ESC alone becomes the Escape key): it is ticked at Textual's
    pace for that long after a key, as Textual does. Relies on what Textual's loop uses: the
    driver's `fileno`, `exit_event`, `_debug` and `process_message`, and its parser
    (`textual._xterm_parser.XTermParser`: `feed`, `tick`, `feed("")` at the end)."""
    import selectors
    import time
    from codecs import getincrementaldecoder

    from textual import constants
    from textual._parser import ParseError
    from textual._xterm_parser import XTermParser

    parser = XTermParser(driver._debug)
    decode = getincrementaldecoder("utf-8")().decode
    pending_until = 0.0  # an escape may be pending until then
    with selectors.SelectSelector() as selector:  # as Textual's: macOS polls no terminal
        selector.register(driver.fileno, selectors.EVENT_READ)
        selector.register(wake, selectors.EVENT_READ)
        try:
            while not driver.exit_event.is_set():
                wait = INPUT_TICK_S if time.monotonic() < pending_until else None
                for key, _ in selector.select(wait):
                    if key.fd == wake:
                        continue  # left unread: every thread waiting on it wakes
                    data = os.read(key.fd, 4096)
                    if not data:  # the end of a piped input: nothing more will come
                        selector.unregister(driver.fileno)
                    pending_until = time.monotonic() + constants.ESCAPE_DELAY + INPUT_TICK_S
                    # "" is the parser's end: a character cut by the read is not yet text
                    for event in parser.feed(text) if (text := decode(data)) else ():
                        driver.process_message(event)
                for event in parser.tick():
                    driver.process_message(event)
        finally:
            try:
                for _ in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass


def parse_css(css: str, path: Path) -> None:
    """Parse `css` (read from `path`) as the app's stylesheet would, with the default theme's
    variables; raises Textual's errors (they have no common public base)."""
    from textual.app import App
    from textual.css.stylesheet import Stylesheet

    sheet = Stylesheet(variables=App().get_css_variables())
    sheet.add_source(css, read_from=(str(path), ""))
    sheet.parse()


def replace_source(sheet: Stylesheet, old: Path, new: Path) -> list[RuleSet]:
    """Read the CSS file `new` into `sheet` in place of `old`, parse, and return the rules that
    changed. Textual keeps a read file's CSS in `Stylesheet.source` under (absolute path, "")
    and has no way to drop one; its parse cache gives back the other sources' rules as the
    same objects, so the rules that are not the same before and after are the two files'
    (after a change of theme, which clears that cache: every rule). Raises Textual's errors
    for a file that does not parse, with `old` back in place."""
    before = {id(rule): rule for rule in sheet.rules}
    old_key = (os.path.abspath(old), "")
    old_source = sheet.source.pop(old_key, None)
    try:
        sheet.read(new)
        sheet.parse()
    except Exception:  # textual's stylesheet errors have no common public base
        sheet.source.pop((os.path.abspath(new), ""), None)
        if old_source is not None:
            sheet.source[old_key] = old_source
        sheet.parse()
        raise
    after = {id(rule): rule for rule in sheet.rules}
    return [rule for key, rule in (before | after).items() if (key in before) != (key in after)]


def matching(rules: Iterable[RuleSet], node: DOMNode) -> list[RuleSet]:
    """The rules whose selectors match the node (`textual.css.match`), each tried only if the
    last part of one of its selectors names the node (its type, id or a class: the rule's
    `selector_names` and the node's private `_selector_names`, Textual's own first cut in
    `Stylesheet.apply`): a layout names a few panels, and a switch tried every rule on every
    node of the screen (~2,300 matches at 200x60)."""
    from textual.css.match import match

    names = node._selector_names
    named = [rule for rule in rules if not rule.selector_names.isdisjoint(names)]
    return [rule for rule in named if match(rule.selector_set, node)]


def properties(rule: RuleSet) -> set[str]:
    """The style properties the rule sets (`Styles.get_rules`: their names, as in
    `Styles`)."""
    return set(rule.styles.get_rules())


def restyle(app: App[Any], nodes: Iterable[DOMNode]) -> None:
    """Apply the stylesheet to `nodes` alone (`Stylesheet.update_nodes`, what `refresh_css`
    does to every node), and draw each again: a node whose own rules stayed the same is not
    told by Textual, yet its drawing colours come from its ancestors too (cached)."""
    nodes = list(nodes)
    app.stylesheet.update_nodes(nodes, animate=True)
    for node in nodes:
        node.notify_style_update()
        node.refresh()
