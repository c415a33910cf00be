"""The arms table: the per-arm summary of the line protocol, live, updated in place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import DataTable

from anemon.analysis.compare import (
    delta_pct,
    signed,  # compare's Δ cells: the same words
)
from anemon.analysis.render import COLUMNS, cells, status_cell
from anemon.analysis.summary import ArmSummary, PowerSamples, Spans, summarize_arm, with_energy
from anemon.store import ArmSeries, Session
from anemon.ui.overlay import Overlay, decode_mean

WIDE = tuple(
    name for name in COLUMNS
    if name not in ("battery", "min / max", "W mean", "first 3 → last 3", "prefill mean",
                    "fade −10/25/50 %", "serious share", "cooldown")
)  # fmt: skip
"""What fits 120 columns (the battery, power and prefill have their own charts; the decode
chart shows its range; burst → sustained says what first 3 → last 3 did, by the rules)."""
BRIEF = ("arm", "decode mean", "burst → sust", "thermal", "J/token")
"""What fits 80 columns (the compact layout): the arm, its decode (per round, and burst →
sustained), its thermal, its energy; the status line counts the trials."""


def live_cells(summary: ArmSummary) -> dict[str, str]:
    """Every COLUMNS cell of an arm, by column name (the energy notes in few words)."""
    return dict(zip(COLUMNS, cells(summary, short=True), strict=True))


VS_REF = "vs ref"
"""The column an overlay adds (`replay --overlay`): the arm's decode mean against its
reference arm's over the same arm elapsed time (`overlay.decode_mean`), in %
(`analysis.compare.delta_pct`)."""


MAKES_ROOM = "tokens"
"""The column "vs ref" replaces, so the table keeps its width."""


def vs_ref(summary: ArmSummary, reference: float | None) -> str:
    """The change in words ("+1.9 %", "−3.0 %"); "—" with no reference trial yet or no
    decode mean."""
    return signed(delta_pct(reference, summary.decode_mean))


def header(name: str) -> str:
    """A two-line header for a long name, so the column is as wide as its figures."""
    if len(name) <= 7 or " " not in name:
        return name
    spaces = [i for i, c in enumerate(name) if c == " "]
    cut = min(spaces, key=lambda i: abs(i - len(name) / 2))
    return f"{name[:cut]}\n{name[cut + 1 :]}"


_Key = tuple[int, int, int, int, bool]
STATUS_STYLE = {"failed": "bold red", "aborted": "yellow", "incomplete": "yellow"}


def _arm_key(arm: ArmSeries, session: Session) -> _Key:
    """What changes an arm's row: its trials, its errors, its launches, how its round ended,
    whether it is the arm running now (and, its energy figures only, the host's readings:
    see `ArmsTable.show`)."""
    running = arm.name == session.current_arm
    return (len(arm), arm.errors, arm.rounds, arm.outcome_events, running)


def arm_cell(summary: ArmSummary, running: bool) -> Text:
    """The arm's name, with its status beside it when it is not done: "a (aborted after 42
    trials)". The arm running now has no END yet: it is not called incomplete."""
    if summary.status == "done" or (running and summary.status == "incomplete"):
        return Text(summary.arm, justify="left")
    text = Text(summary.arm + " ", justify="left")
    text.append(f"({status_cell(summary)})", style=STATUS_STYLE.get(summary.status, ""))
    return text


@dataclass(slots=True)
class _Shown:
    """An arm's row as last put: what it was computed from, and its figures."""

    key: _Key
    readings: int
    spans: Spans
    summary: ArmSummary


class ArmsTable(DataTable, can_focus=False):
    """One row per arm; cells are the summary's own formatting (analysis/render.py). With a
    `reference` (the overlay), a last column "vs ref" (in place of `MAKES_ROOM`): the decode
    mean's change against the matched reference arm."""

    DEFAULT_CSS = "ArmsTable { height: auto; }"

    def __init__(
        self,
        columns: Sequence[str] = WIDE,
        *,
        reference: Overlay | None = None,
        id: str | None = None,  # noqa: A002 (Textual)
    ) -> None:
        super().__init__(id=id, cursor_type="none", zebra_stripes=True, header_height=2)
        unknown = [name for name in columns if name not in COLUMNS]
        if unknown:
            raise ValueError(f"not an arms table column: {', '.join(unknown)}")
        self.reference = reference
        if reference is not None:  # "vs ref" takes the place of the token count (the width)
            columns = (*(name for name in columns if name != MAKES_ROOM), VS_REF)
        self.picked = tuple(columns)
        self.shown: dict[str, _Shown] = {}
        self.samples = PowerSamples()
        self.session_id: int | None = None

    def on_mount(self) -> None:
        for name in self.picked:
            label = Text(header(name), justify="left" if name == "arm" else "right")
            self.add_column(label, key=name)

    def show(self, session: Session) -> None:
        """Summarize only the arms that changed (a summary costs milliseconds per 100k trials);
        new host readings alone recompute only the energy figures."""
        if id(session) != self.session_id:
            self.session_id = id(session)
            self.shown.clear()
            self.samples = PowerSamples()
            self.clear()
        self.samples.update(session.telemetry)
        readings = len(self.samples)
        for name, arm in session.arms.items():
            key = _arm_key(arm, session)
            known = self.shown.get(name)
            if known is not None and known.key == key:
                if known.readings == readings:
                    continue
                summary = with_energy(known.summary, known.spans, self.samples)
                spans = known.spans
            else:
                spans = Spans.of(arm)
                summary = summarize_arm(arm, self.samples, spans)
            self.shown[name] = _Shown(key, readings, spans, summary)
            if known is None or summary != known.summary or known.key[-1] != key[-1]:
                self._put(name, summary, new=known is None, running=key[-1], session=session)

    def _put(
        self, name: str, summary: ArmSummary, new: bool, running: bool, session: Session
    ) -> None:
        # Text, not str: a DataTable parses str cells as markup, and arm names are data
        row = live_cells(summary)
        if self.reference is not None:
            row[VS_REF] = vs_ref(summary, decode_mean(self.reference, session, name))
        values = [
            arm_cell(summary, running) if column == "arm" else Text(row[column], justify="right")
            for column in self.picked
        ]
        if new:
            self.add_row(*values, key=name)
            return
        for column, value in zip(self.picked, values, strict=True):
            self.update_cell(name, column, value, update_width=True)
