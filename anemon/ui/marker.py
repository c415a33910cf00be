"""The marker prompt: a one-line note from the operator, returned to the app."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class MarkerPrompt(ModalScreen[str | None]):
    """Enter to add the note (blank adds nothing), Escape to cancel."""

    DEFAULT_CSS = """
    MarkerPrompt { align: center middle; }
    MarkerPrompt > Vertical {
        width: 60; height: auto; border: round $accent; background: $surface; padding: 0 1;
    }
    """
    BINDINGS: ClassVar = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Marker note (Enter to add, Escape to cancel)")
            yield Input(placeholder="what just happened", id="note")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        note = event.value.strip()
        self.dismiss(note or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
