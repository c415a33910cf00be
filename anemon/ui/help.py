"""The keys help (`?`): every key the dashboard answers now and what it does."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static


class KeysHelp(ModalScreen[None]):
    """`rows` are (keys as shown, what they do); `note` a line under them. Escape or `?`
    closes it. No toast covers it: one that comes while it is open is shown once it closes
    (the dashboard's screen shows every toast not timed out), as it covers most of a small
    terminal (at 80x24, 72x19 of it) and a toast would cover the keys it lists. Opaque: a
    translucent screen renders the whole dashboard beneath it again, tinted, at each of its
    changes (~50 ms at 120x40), so `?` took 60-140 ms to reach the screen in a terminal."""

    DEFAULT_CSS = """
    KeysHelp { align: center middle; background: $background; }
    KeysHelp Toast { visibility: hidden; }
    KeysHelp > VerticalScroll {
        width: 72; max-width: 100%; height: auto; max-height: 90%; border: round $accent;
        background: $surface; padding: 0 1;
    }
    KeysHelp #note { color: $text-muted; margin-top: 1; }
    """
    BINDINGS: ClassVar = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
    ]

    def __init__(self, rows: Iterable[tuple[str, str]], note: str = "") -> None:
        super().__init__()
        self.rows = list(rows)
        self.note = note

    def compose(self) -> ComposeResult:
        width = max((len(keys) for keys, _ in self.rows), default=0) + 2
        text = Text("\n").join(
            Text.assemble((keys.ljust(width), "bold"), what) for keys, what in self.rows
        )
        with VerticalScroll():  # a small terminal scrolls it (↓, PgDn)
            yield Label("Keys (Escape to close)")
            yield Static(text, id="keys")
            if self.note:
                yield Static(Text(self.note), id="note")

    def action_close(self) -> None:
        self.dismiss(None)
