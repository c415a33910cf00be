"""The log panel: raw lines as they came, literal (log text is data), ERROR: lines highlighted."""

from __future__ import annotations

from rich.highlighter import Highlighter
from rich.text import Text
from textual.widgets import Log

from anemon.store import Session
from anemon.ui.series import log_text


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


class LogPanel(Log, can_focus=False):
    """Appends what is new in `session.log` (by `log_total`), bounded to `max_lines`."""

    DEFAULT_CSS = "LogPanel { border: round $secondary-darken-2; }"

    def __init__(self, max_lines: int = 2000, *, id: str | None = None) -> None:  # noqa: A002 (Textual)
        super().__init__(highlight=True, max_lines=max_lines, id=id)
        self.highlighter = ErrorHighlighter()
        self.border_title = "log"
        self.session_id: int | None = None
        self.seen = 0

    def show(self, session: Session) -> None:
        if id(session) != self.session_id or session.log_total < self.seen:
            self.session_id = id(session)
            self.seen = 0
            self.clear()
        arrived = session.log_total - self.seen
        new = min(arrived, len(session.log), PER_ROUND)
        if arrived > new:
            self.write_line(f"── … {arrived - new:,} lines skipped at this speed")
        if new > 0:
            items = list(session.log)[-new:]
            self.write_lines(log_text(event) for event in items)
        self.seen = session.log_total
