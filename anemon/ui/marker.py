"""The marker bar (`m`): a one-line note from the operator, typed at the foot of the dashboard.

Not a modal screen: the dashboard stays live and undimmed above the bar while the note is
typed. A translucent modal screen renders the whole dashboard beneath it again at each of
its changes (Textual's BackgroundScreen tints every segment: ~50 ms at 120x40, and before
the prompt first showed), so `m` took 60-130 ms to reach the screen in a terminal.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input

PLACEHOLDER = "marker note: what just happened (Enter adds it, Escape cancels)"


class MarkerBar(Input):
    """Over the footer (its own layer, so opening it moves no panel), hidden until `open`.
    Enter posts `Noted` with the note (None when blank), Escape with None; either hides it."""

    DEFAULT_CSS = """
    MarkerBar {
        dock: bottom; layer: prompt; display: none;
        height: 1; border: none; padding: 0 1; background: $boost;
    }
    MarkerBar:focus { border: none; }
    """
    BINDINGS: ClassVar = [Binding("escape", "cancel", "Cancel")]

    class Noted(Message):
        def __init__(self, note: str | None) -> None:
            super().__init__()
            self.note = note

    def __init__(self) -> None:
        super().__init__(placeholder=PLACEHOLDER, id="marker")
        self._before: Widget | None = None
        self.can_focus = False  # hidden: not the app's first focus (display none does not stop it)

    def open(self) -> None:
        """Shown and focused, empty; what had the focus gets it back when the bar closes."""
        if not self.display:
            self._before = self.screen.focused
            self.value = ""
            self.display = self.can_focus = True
        self.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close(event.value.strip() or None)

    def action_cancel(self) -> None:
        self._close(None)

    def _close(self, note: str | None) -> None:
        self.display = self.can_focus = False
        before, self._before = self._before, None
        self.screen.set_focus(before if before is not None and before.is_attached else None)
        self.post_message(self.Noted(note))
