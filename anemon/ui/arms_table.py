"""The arms table: the per-arm summary of the line protocol, live, updated in place."""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey
from textual.worker import Worker, WorkerState

from anemon.analysis.compare import (
    delta_pct,
    signed,  # compare's Δ cells: the same words
)
from anemon.analysis.render import (
    COLUMNS,
    DROP_ORDER,
    PROCESS_COLUMNS,
    cells,
    has_process,
    status_cell,
)
from anemon.analysis.summary import (
    ArmSummary,
    EnergyReadings,
    ReadingsMark,
    Spans,
    summarize_arm,
    with_energy,
)
from anemon.store import ArmSeries, Session
from anemon.ui.overlay import Overlay, decode_mean
from anemon.ui.series import SHOWN_ARMS, left_out, left_out_text
from anemon.ui.textual_compat import clear_render_caches, put_row_cells

WIDE = tuple(
    name for name in COLUMNS
    if name not in ("battery", "min / max", "power W", "first 3 → last 3",
                    "prefill tok/s", "fade −10/25/50 %", "serious share", "cooldown", "CPU / GPU")
)  # fmt: skip
"""What fits 120 columns (the battery, power and prefill have their own charts; the decode
chart shows its range; burst → sustained says what first 3 → last 3 did, by the rules)."""
BRIEF = ("arm", "decode tok/s", "burst → sust", "thermal", "J/token", "mem peak")
"""What fits 80 columns (the compact layout): the arm, its decode (per round, and burst →
sustained), its thermal, its energy, its memory (as text: compact has no chart); the status
line counts the trials. The process columns only once some arm has a process reading."""


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


ROW_KINDS = ("start", "load", "trial", "end", "error", "phase", "marker")
"""The events that can change an arm's row (`_arm_key`): records, verdicts, aborts."""


def rows_version(session: Session) -> tuple[int, int]:
    """What the table's rows show of `session`: a new record (a trial the status line counts)
    changes it, a host reading does not."""
    return id(session), sum(session.counts[kind] for kind in ROW_KINDS)


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


OFF_LOOP_TRIALS = 5_000
"""An arm with more trials than this is summarized in a thread when asked `off_loop` (the
dashboard): its summary takes ~0.2 ms per 1,000 trials, which on the event loop would hold
the keys and the screen (100k trials: ~20-30 ms)."""
SUMMARY_GAP_S = 1.0
"""An arm summarized in a thread is summarized there again at most this often, unless a
draw is forced (a seek, a new layout). A replay at `max` grew its arm at every round, so a
summary always ran beside the loop, which then waited for the GIL: its longest holds were
~50 ms against ~30 without (bench/dashboard.py's probe). Once a second is as often as a
row can be read; a live arm's trials come every few seconds."""


def frozen_copy(arm: ArmSeries, rows: int) -> ArmSeries:
    """What a worker thread reads of an arm: its first `rows` trials, copied (the loop keeps
    appending to the originals, and an array exporting its buffer to numpy cannot grow).

    Made in the worker: rows below `rows` are never written again, and each slice is made
    whole under the GIL, so the loop may append meanwhile. On the loop, copying 500k trials
    held it for ~13 ms each second; in the worker the loop waits a column at a time."""
    return dataclasses.replace(
        arm,
        columns={name: values[:rows] for name, values in arm.columns.items()},
        battery_state=arm.battery_state[:rows],
    )


def frozen_samples(samples: EnergyReadings) -> EnergyReadings:
    """The host's readings as a worker reads them: the arrays copied now, on the loop (a copy
    whose cached arrays never change; the original goes on growing)."""
    samples.arrays  # noqa: B018 (computes and caches the copies on the loop)
    return copy.copy(samples)


def summarize(
    arm: ArmSeries, samples: EnergyReadings, known: _Shown | None, key: _Key
) -> tuple[Spans, ArmSummary]:
    """An arm's spans and summary: only its energy figures when only the readings changed."""
    if known is not None and known.key == key:
        return known.spans, with_energy(known.summary, known.spans, samples)
    spans = Spans.of(arm)
    return spans, summarize_arm(arm, samples, spans)


@dataclass(frozen=True, slots=True)
class _Summarized:
    """A worker's result: for which session (held, so its id is not reused while the worker
    runs), arm and state of it."""

    session: Session
    name: str
    key: _Key
    readings: ReadingsMark
    spans: Spans
    summary: ArmSummary


@dataclass(slots=True)
class _Shown:
    """An arm's row as last put: what it was computed from, and its figures."""

    key: _Key
    readings: ReadingsMark
    """The readings its figures were computed from (`EnergyReadings.settled`)."""
    spans: Spans
    summary: ArmSummary


HEADER_ROWS = 2
"""The header's lines: a column's name over its unit ("decode" over "tok/s")."""


class ArmsTable(DataTable, can_focus=False):
    """One row per arm; cells are the summary's own formatting (analysis/render.py). With a
    `reference` (the overlay), a last column "vs ref" (in place of `MAKES_ROOM`): the decode
    mean's change against the matched reference arm."""

    DEFAULT_CSS = f"ArmsTable {{ height: auto; min-height: {HEADER_ROWS + 1}; }}"
    """Room for the first arm's row before it comes: the charts below do not move (and are not
    all painted again, ~0.1 s) when the session's first record arrives."""

    class Failed(Message):
        """A summary worker raised: the dashboard says it (one toast) and records it; the
        table goes on without that arm's new figures."""

        def __init__(self, table: ArmsTable, what: str, error: BaseException) -> None:
            super().__init__()
            self.table = table
            self.what = what
            """The worker's name ("summary of ARM")."""
            self.error = error

    def __init__(
        self,
        columns: Sequence[str] = WIDE,
        *,
        reference: Overlay | None = None,
        id: str | None = None,  # noqa: A002 (Textual)
    ) -> None:
        super().__init__(id=id, cursor_type="none", zebra_stripes=True, header_height=HEADER_ROWS)
        unknown = [name for name in columns if name not in COLUMNS]
        if unknown:
            raise ValueError(f"not an arms table column: {', '.join(unknown)}")
        self.reference = reference
        if reference is not None:  # "vs ref" takes the place of the token count (the width)
            columns = (*(name for name in columns if name != MAKES_ROOM), VS_REF)
        self.picked = tuple(columns)
        self.fitted = tuple(name for name in self.picked if name not in PROCESS_COLUMNS)
        """The picked columns the table's width holds whole (`fit`)."""
        self.rows_shown: dict[str, dict[str, Text]] = {}
        """Each arm's row as put, every picked column, in the order of the arms: what a refit
        puts again."""
        self.changed: dict[str, bool] = {}
        """The rows to put at the end of `show` (True: a new row), laid out once for all."""
        self.left_out = 0
        """The earlier arms not listed (`SHOWN_ARMS`), said in the first row."""
        self.rebuild = False
        """Rows left the table: `show` lays every row out again."""
        self.shown: dict[str, _Shown] = {}
        self.samples = EnergyReadings()
        self.session_id: int | None = None
        self.session: Session | None = None
        self.pending: set[str] = set()
        """Arms a worker is summarizing (each re-checked when its result is put)."""
        self.summarizing: dict[Worker, str] = {}
        """Each summary worker's arm (one that fails is pending no more)."""
        self.failed: set[str] = set()
        """Arms whose summary raised: their rows stay as they were (said once, not retried
        for this session)."""
        self.summarized_at: dict[str, float] = {}
        """When each arm's last summary in a thread began (`time.monotonic`)."""
        self.look_again: Timer | None = None
        """Set while an arm waits out its SUMMARY_GAP_S: `show` again when it is up."""
        self.with_process = False
        """Some arm has a process figure: the PROCESS_COLUMNS are shown (else all n/a)."""

    def on_mount(self) -> None:
        if not self.columns:  # a `show` before the mount added them
            self._add_columns()

    def _add_columns(self) -> None:
        for name in self.fitted:
            label = Text(header(name), justify="left" if name == "arm" else "right")
            self.add_column(label, key=name)

    def fit(self) -> tuple[str, ...]:
        """The picked columns whose cells all fit the width whole, the columns of the
        summary's DROP_ORDER left out first (never the arm, nor "vs ref"): a figure cut at
        the edge would read as another figure."""
        width = self.scrollable_content_region.width
        if not width:
            return self.fitted  # not laid out yet
        rows = list(self.rows_shown.values())
        note = self.note()

        def needs(name: str) -> int:  # the widest cell or header line, and its padding
            lines = header(name).split("\n")
            widest = max([*map(len, lines), *(row[name].cell_len for row in rows)])
            return max(widest, note.cell_len if name == "arm" else 0) + 2

        shown = [n for n in self.picked if self.with_process or n not in PROCESS_COLUMNS]
        widths = {name: needs(name) for name in shown}  # each once, not once per column left out
        droppable = [name for name in DROP_ORDER if name in shown]
        total = sum(widths.values())
        while total > width and droppable:
            dropped = droppable.pop(0)
            shown.remove(dropped)
            total -= widths[dropped]
        return tuple(shown)

    def note(self) -> Text:
        """The first row's arm cell when arms are left out: how many."""
        return Text(left_out_text(self.left_out), style="italic", justify="left")  # dim: < 4.5:1

    def on_resize(self) -> None:
        self._refit()

    def _refit(self, rebuild: bool = False) -> bool:
        """Lay the table out again if the columns that fit changed (or `rebuild`: the rows
        did); returns whether it did."""
        fitted = self.fit()
        if fitted == self.fitted and not rebuild:
            return False
        self.fitted = fitted
        self.clear(columns=True)
        self._add_columns()
        if self.left_out:
            self.add_row(self.note(), *(Text("") for _ in fitted[1:]))
        for name, row in self.rows_shown.items():
            self.add_row(*(row[column] for column in fitted), key=name)
        return True

    def show(self, session: Session, *, off_loop: bool = False, hurry: bool = False) -> None:
        """Summarize only the arms that changed (a summary costs milliseconds per 100k trials);
        new host readings alone recompute only the energy figures, and not those of an arm
        they cannot change (`EnergyReadings.settled`). `off_loop`: an arm of more
        than OFF_LOOP_TRIALS trials is summarized in a thread worker, its row put when done,
        and again at most every SUMMARY_GAP_S (`hurry`: now, for a forced draw).
        Only the latest SHOWN_ARMS arms are listed, the first row saying how many are not."""
        if id(session) != self.session_id:
            self.session_id = id(session)
            self.shown.clear()
            self.pending.clear()
            self.failed.clear()
            self.summarized_at.clear()
            self.samples = EnergyReadings()
            self.rows_shown.clear()
            self.changed.clear()
            self.left_out = 0
            self.rebuild = False
            self.with_process = False
            self.clear(columns=True)  # a column keeps its width through `clear()` alone
            self._add_columns()
        self.session = session
        self.samples.update(session)
        readings = self.samples.mark()
        arms = session.recent_arms(SHOWN_ARMS)
        self._leave_out(left_out(session), {arm.name for arm in arms})
        for arm in arms:
            name = arm.name
            key = _arm_key(arm, session)
            known = self.shown.get(name)
            if (
                name in self.pending
                or name in self.failed
                or (known is not None and known.key == key and known.readings == readings)
            ):
                continue  # unchanged, or a worker has it (re-checked when it is done)
            if (
                known is not None
                and known.key[:-1] == key[:-1]
                and self.samples.settled(known.readings, known.spans)
            ):  # only whether it runs, or readings that cannot change its figures: they hold
                result = _Summarized(session, name, key, readings, known.spans, known.summary)
                self._keep(session, result)
                continue
            if off_loop and len(arm) > OFF_LOOP_TRIALS:
                if hurry or not self._too_soon(name):
                    self._summarize_off_loop(session, name, arm, key, readings, known)
                continue
            spans, summary = summarize(arm, self.samples, known, key)
            self._keep(session, _Summarized(session, name, key, readings, spans, summary))
        self._put_changed()

    def _leave_out(self, count: int, names: set[str]) -> None:
        """Forget the arms no longer listed (earlier arms the latest ones pushed out); the
        rows are laid out again when `show` puts the changes."""
        if count == self.left_out:
            return
        self.left_out = count
        for name in [name for name in self.rows_shown if name not in names]:
            del self.rows_shown[name]
            self.shown.pop(name, None)
            self.pending.discard(name)
        self.rebuild = True

    def _too_soon(self, name: str) -> bool:
        """The arm was summarized in a thread less than SUMMARY_GAP_S ago: `show` is called
        again when the gap is up (no new data may come: a replay that just ended)."""
        wait = self.summarized_at.get(name, -math.inf) + SUMMARY_GAP_S - time.monotonic()
        if wait <= 0:
            return False
        if self.look_again is None:
            self.look_again = self.set_timer(wait, self._look_again)
        return True

    def _look_again(self) -> None:
        self.look_again = None
        if self.session is not None:
            self.show(self.session, off_loop=True)

    def _summarize_off_loop(
        self, session: Session, name: str, arm: ArmSeries, key: _Key, readings: ReadingsMark,
        known: _Shown | None,
    ) -> None:  # fmt: skip
        self.pending.add(name)
        self.summarized_at[name] = time.monotonic()
        energy_only = known is not None and known.key == key
        rows = len(arm)
        samples = frozen_samples(self.samples)

        def work() -> _Summarized:
            frozen = arm if energy_only else frozen_copy(arm, rows)  # energy reads no column
            spans, summary = summarize(frozen, samples, known, key)
            return _Summarized(session, name, key, readings, spans, summary)

        # Begun once the round is drawn and painted: begun at once, it ran beside the charts
        # drawn after the table, whose numpy calls let it take the GIL, and the loop then
        # waited for it at each (rounds of 70-150 ms in a replay at max, the loop's own CPU
        # 7-16 ms of them: bench/dashboard.py's probe).
        self.call_after_refresh(self._start_worker, work, name)

    def _start_worker(self, work: Callable[[], _Summarized], name: str) -> None:
        what = f"summary of {name}"  # one worker per arm at a time (`pending`)
        worker = self.run_worker(work, name=what, group=f"arm-summary {name}", description=what,
                                 thread=True, exclusive=True, exit_on_error=False)  # fmt: skip
        self.summarizing[worker] = name

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A summary done in a thread: put its row, then look again (the arm may have moved on
        while it ran)."""
        if event.state == WorkerState.ERROR:
            name = self.summarizing.pop(event.worker, "")
            self.pending.discard(name)
            self.failed.add(name)
            error = event.worker.error
            assert error is not None, "a worker in error has its exception"
            self.post_message(self.Failed(self, event.worker.name, error))
            return
        result = event.worker.result
        if event.state != WorkerState.SUCCESS or not isinstance(result, _Summarized):
            return
        self.summarizing.pop(event.worker, None)
        event.stop()
        if result.session is not self.session or result.name not in self.pending:
            return  # a worker of a session, or an arm, no longer shown
        self.pending.discard(result.name)
        self._keep(result.session, result)
        self.show(result.session, off_loop=True)

    def _keep(self, session: Session, result: _Summarized) -> None:
        """Hold an arm's new figures; put its row if they (or whether it runs) changed."""
        known = self.shown.get(result.name)
        key, summary = result.key, result.summary
        self.shown[result.name] = _Shown(key, result.readings, result.spans, summary)
        self.with_process = self.with_process or has_process(summary)
        if known is None or summary != known.summary or known.key[-1] != key[-1]:
            self._cells(result.name, summary, running=key[-1], session=session)
            self.changed.setdefault(result.name, known is None)

    def _cells(self, name: str, summary: ArmSummary, running: bool, session: Session) -> None:
        """An arm's row as it will be put (`rows_shown`)."""
        # Text, not str: a DataTable parses str cells as markup, and arm names are data
        row = live_cells(summary)
        if self.reference is not None:
            row[VS_REF] = vs_ref(summary, decode_mean(self.reference, session, name))
        self.rows_shown[name] = {
            column: arm_cell(summary, running)
            if column == "arm"
            else Text(row[column], justify="right")
            for column in self.picked
        }

    def _put_changed(self) -> None:
        """Put the rows `show` changed, laid out once (fitting the columns reads every row:
        once per row, a first show of 5,000 arms held the event loop for minutes)."""
        changed, self.changed = self.changed, {}
        rebuild, self.rebuild = self.rebuild, False
        if not (changed or rebuild) or self._refit(rebuild):
            return
        stale = False
        for name, new in changed.items():
            values = self.rows_shown[name]
            if new:
                self.add_row(*(values[column] for column in self.fitted), key=name)
                stale = True
                continue
            cells = {c: values[c] for c in self.fitted if self.get_cell(name, c) != values[c]}
            if all(self._width_holds(name, column, text) for column, text in cells.items()):
                put_row_cells(self, name, cells)  # the other rows' renders stay cached
                continue
            for column, text in cells.items():
                self.update_cell(name, column, text, update_width=True)
            stale = True
        # Each add_row and update_cell leaves every cached render of the table stale (their
        # keys hold its update count), yet they stay until the LRU caches are full: thousands
        # of strips and cells that every full garbage collection walked (a replay's longest
        # collections).
        if stale:
            clear_render_caches(self)

    def _width_holds(self, name: str, column: str, text: Text) -> bool:
        """Whether `column` keeps its width with `text` in row `name`: its width is its widest
        cell or header line (Textual's `content_width`), so it holds if the new cell is no
        wider and the old one was not the widest alone, or both are as wide."""
        width = self.columns[ColumnKey(column)].content_width
        old = self.get_cell(name, column).cell_len
        return text.cell_len == old or (text.cell_len <= width and old < width)
