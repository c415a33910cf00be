"""A new text in a Static whose size it does not change, set without a layout of the screen.

Textual's `Static.update` lays the whole screen out again by default (~3–7 ms at 120x40 to
200x60), and the dashboard's texts change every second or every trial: a replay's timeline,
the status line's watts, a strip's figure, the overview, a short chart's latest values.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


def rows(widget: Static, text: Text) -> int:
    """The lines `text` takes in `widget` at its width (wrapped as Textual wraps it)."""
    return len(text.wrap(widget.app.console, widget.content_size.width))


def update(widget: Static, text: Text) -> None:
    """`text` in `widget`, whose width its CSS or container sets (never `width: auto`, whose
    width is its text's): laid out again only when the text's height there changes (above the
    widget's `min-height`), or before it has a width."""
    before = widget.content
    floor = least_rows(widget)
    same = (
        widget.content_size.width > 0
        and isinstance(before, Text)
        and max(rows(widget, before), floor) == max(rows(widget, text), floor)
    )
    widget.update(text, layout=not same)


def least_rows(widget: Static) -> int:
    """The lines of text `widget`'s `min-height` (in cells, border and padding within it)
    holds: fewer lines leave its height as it is."""
    least = widget.styles.min_height
    cells = least.cells if least is not None else None
    return 0 if cells is None else max(0, cells - widget.styles.gutter.height)
