"""The arms table: the per-arm summary of the line protocol, live, updated in place."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

from anemon.analysis.render import COLUMNS, cells
from anemon.analysis.summary import ArmSummary, summarize_arm
from anemon.store import ArmSeries, Session

WIDE = tuple(name for name in COLUMNS if name != "battery")
"""What fits 120 columns (the battery has its own chart)."""
BRIEF = ("arm", "trials", "decode mean", "first 3 → last 3", "thermal")
"""What fits 80 columns (the compact layout): the arm, its decode, its thermal."""


def header(name: str) -> str:
    """A two-line header for a long name, so the column is as wide as its figures."""
    if len(name) <= 7 or " " not in name:
        return name
    spaces = [i for i, c in enumerate(name) if c == " "]
    cut = min(spaces, key=lambda i: abs(i - len(name) / 2))
    return f"{name[:cut]}\n{name[cut + 1 :]}"


def _arm_key(arm: ArmSeries) -> tuple[int, int, int]:
    """What changes an arm's summary: its trials, its errors, its launches."""
    return (len(arm), arm.errors, arm.rounds)


class ArmsTable(DataTable, can_focus=False):
    """One row per arm; cells are the summary's own formatting (analysis/render.py)."""

    DEFAULT_CSS = "ArmsTable { height: auto; }"

    def __init__(self, columns: Sequence[str] = WIDE, *, id: str | None = None) -> None:  # noqa: A002 (Textual)
        super().__init__(id=id, cursor_type="none", zebra_stripes=True, header_height=2)
        self.picked = tuple(COLUMNS.index(name) for name in columns)
        self.summaries: dict[str, tuple[tuple[int, int, int], ArmSummary]] = {}
        self.session_id: int | None = None

    def on_mount(self) -> None:
        for i in self.picked:
            label = Text(header(COLUMNS[i]), justify="left" if i == 0 else "right")
            self.add_column(label, key=COLUMNS[i])

    def show(self, session: Session) -> None:
        """Summarize only the arms that changed (a summary costs milliseconds per 100k trials)."""
        if id(session) != self.session_id:
            self.session_id = id(session)
            self.summaries.clear()
            self.clear()
        for name, arm in session.arms.items():
            key = _arm_key(arm)
            known = self.summaries.get(name)
            if known is not None and known[0] == key:
                continue
            summary = summarize_arm(arm)
            self.summaries[name] = (key, summary)
            self._put(name, summary, new=known is None)

    def _put(self, name: str, summary: ArmSummary, new: bool) -> None:
        # Text, not str: a DataTable parses str cells as markup, and arm names are data
        row = cells(summary)
        values = [Text(row[i], justify="left" if i == 0 else "right") for i in self.picked]
        if new:
            self.add_row(*values, key=name)
            return
        for i, value in zip(self.picked, values, strict=True):
            self.update_cell(name, COLUMNS[i], value, update_width=True)
