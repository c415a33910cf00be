"""The log panel: raw lines as they came, literal (log text is data), ERROR: lines highlighted."""

from __future__ import annotations

from rich.highlighter import Highlighter
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.reactive import Reactive
from textual.strip import Strip

from anemon.store import Session
from anemon.ui.series import log_text
from anemon.ui.textual_compat import LogMeasuredOnTheLoop, log_line, update_scrollbars


class ErrorHighlighter(Highlighter):
    """Marks a whole line containing `ERROR:`; nothing else is styled or interpreted."""

    def highlight(self, text: Text) -> None:
        if "ERROR:" in text.plain:
            text.stylize("bold white on dark_red")
        elif text.plain.startswith("── "):
            text.stylize("italic cyan")


PER_ROUND = 200
"""Most lines written per redraw: a fast replay shows its newest lines and says what it skipped
(writing thousands of lines per redraw would hold the keys up; the recording has them all)."""


class LogPanel(LogMeasuredOnTheLoop, can_focus=False):
    """Appends what is new in `session.log` (by `log_total`), bounded to `max_lines`.

    It follows the tail unless the operator scrolled back while it was shown: a layout that
    hides it (`wall`) or resizes it does not stop it following (a hidden log has no size, and
    Textual's own "at the end?" check goes stale across it)."""

    DEFAULT_CSS = "LogPanel { border: round $secondary-darken-2; border-title-color: $foreground; }"

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)
    """Widget's own asks for a layout of the whole screen on every change, so a log growing a
    line per trial re-laid out every panel each time. The panel's place does not depend on
    its lines unless its height is `auto`: `watch_virtual_size` updates the scrollbars (a
    layout only when one comes or goes)."""

    def __init__(self, max_lines: int = 2000, *, id: str | None = None) -> None:  # noqa: A002 (Textual)
        super().__init__(highlight=True, max_lines=max_lines, id=id)
        self.highlighter = ErrorHighlighter()
        self.border_title = "log"
        self.session_id: int | None = None
        self.seen = 0
        self.following = True
        """Scrolled to the newest line on every write and every resize."""
        self._ellipsis: dict[Style, Strip] = {}
        self._shape: tuple[int, int] | None = None
        """(height, max scroll) when last shown: a change since is the layout's, not a scroll."""

    def show(self, session: Session) -> None:
        shape = (self.size.height, self.max_scroll_y)
        if self.size.height and shape == self._shape:  # shown as before: did the operator scroll?
            self.following = self.is_vertical_scroll_end
        if id(session) != self.session_id or session.log_total < self.seen:
            self.session_id = id(session)
            self.seen = 0
            self.clear()
        arrived = session.log_total - self.seen
        new = min(arrived, len(session.log), PER_ROUND)
        if arrived > new:
            self.write_line(f"── … {arrived - new:,} lines skipped at this speed", False)
        if new > 0:
            items = list(session.log)[-new:]
            self.write_lines((log_text(event) for event in items), False)
        self.seen = session.log_total
        self.follow()
        self._shape = (self.size.height, self.max_scroll_y)

    def watch_virtual_size(self, size: Size) -> None:
        if self.styles.height is not None and self.styles.height.is_auto:
            self.refresh(layout=True)  # a user layout sized it by its lines
            return
        update_scrollbars(self, size)  # one coming or going asks for the layout itself

    def follow(self) -> None:
        """To the newest line, if following."""
        if self.following:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def on_resize(self) -> None:
        self.follow()

    def render_line(self, y: int) -> Strip:
        """Textual's row, with `…` in its last visible cell where the line goes on past it:
        a line cut at `gen=25` would read as a value (the rest is a scroll away). One strip
        more than Textual's per cut row and redraw: the cut is cached by the line's strip,
        the `…` made once; a replay at max redraws the log many times a second, and full
        collections walk what each redraw makes."""
        scroll_x, scroll_y = self.scroll_offset
        visible = self.scrollable_content_region.width  # not under the scrollbar
        style = self.rich_style
        line = log_line(self, scroll_y + y, style) if visible >= 2 else None
        if line is None or line.cell_length <= scroll_x + visible:
            return super().render_line(y)
        ellipsis = self._ellipsis.get(style)
        if ellipsis is None:
            ellipsis = self._ellipsis[style] = Strip([Segment("…", style)], 1)
        cut = line.crop(scroll_x, scroll_x + visible - 1)
        return Strip.join([cut, ellipsis]).apply_offsets(scroll_x, scroll_y + y)
