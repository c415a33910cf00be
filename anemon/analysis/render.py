"""The per-arm summary as a rich table, a Markdown lab-note table, CSV and JSON."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast

from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from anemon.analysis.summary import NO_END, ArmSummary, RoundSummary
from anemon.analysis.sustained import burst_to_sustained, retained_cell
from anemon.events import thermal_name
from anemon.store import Session
from anemon.text import printable

COLUMNS = (
    "arm",
    "trials",
    "tokens",
    "decode tok/s",
    "first 3 → last 3",
    "burst → sust",
    "retained",
    "fade −10/25/50 %",
    "min / max",
    "prefill tok/s",
    "thermal",
    "serious at",
    "serious share",
    "cooldown",
    "battery",
    "errors",
    "power W",
    "J/token",
    "mem peak",
    "CPU / GPU",
)
PROCESS_COLUMNS = COLUMNS[-2:]
"""The app's process figures (v3): shown when some arm has one (a recording made without DVT
has none: the columns would say n/a for every arm)."""
DROP_ORDER = (
    "fade −10/25/50 %",
    "CPU / GPU",
    "min / max",
    "serious share",
    "cooldown",
    "serious at",
    "prefill tok/s",
    "battery",
    "first 3 → last 3",
    "tokens",
    "errors",
    "power W",
    "mem peak",
    "trials",
    "retained",
    "thermal",
    "burst → sust",
    "decode tok/s",
    "J/token",
)
"""The columns a narrow terminal loses first (the arm's name is never dropped)."""


def fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


Figures = ArmSummary | RoundSummary
"""What a per-round cell is made from: the arm's figures, or one round's."""


def per_round(summary: ArmSummary, cell: Callable[[Figures], str], between: str = " / ") -> str:
    """One cell, or one per launch written "a / b" (A/B runs report every round, each from
    its own trials: line-protocol.md "Sustained and energy figures")."""
    if len(summary.rounds) > 1:
        return between.join(cell(r) for r in summary.rounds)
    return cell(summary)


def thermal_cell(s: Figures) -> str:
    """Thermal start → end: "fair → serious"; an arm's peak between them when it passed both
    ("nominal → critical → serious")."""
    ends = (thermal_name(s.thermal_start) or "—", thermal_name(s.thermal_end) or "—")
    peak = s.thermal_peak if isinstance(s, ArmSummary) else None
    if peak is not None and all(
        end is None or peak > end for end in (s.thermal_start, s.thermal_end)
    ):
        return f"{ends[0]} → {thermal_name(peak)} → {ends[1]}"
    return f"{ends[0]} → {ends[1]}"


def serious_share(s: Figures) -> str:
    """The share of trials at serious or above: "60 %"."""
    return "—" if s.serious_frac is None else f"{100 * s.serious_frac:.0f} %"


SHORT_NOTES = {"no power samples": "no power", "span too short": "too short"}
"""The energy notes as a narrow live table words them ("charging" stays as it is)."""


def j_per_token(s: ArmSummary, short: bool = False) -> str:
    """The figure, marked where it is not the battery's: "(load)" after one from the phone's
    system load, "†" after another tool's (see `footnotes`); or why it is withheld
    ("charging", "no power samples", "span too short")."""
    if s.j_per_token is not None:
        mark = {"system load": " (load)", "reported": " †"}.get(s.energy_source or "", "")
        return f"{s.j_per_token:,.4f}" + mark
    if s.energy_note is None:
        return "—"
    return SHORT_NOTES.get(s.energy_note, s.energy_note) if short else s.energy_note


def cells(s: ArmSummary, short: bool = False) -> tuple[str, ...]:
    """The table's cells for one arm; thermal stands beside every figure (`short`: the
    energy notes in fewer words, for the live table). The figures of a round's course are
    per round (`per_round`); the others are over every timed trial."""
    return (
        printable(s.arm),  # the log's text: its control characters escaped
        str(s.trials),
        f"{s.tokens:,}",
        per_round(s, lambda x: fmt(x.decode_mean)),
        f"{fmt(s.decode_first3)} → {fmt(s.decode_last3)}",
        per_round(s, lambda x: burst_to_sustained(x.burst_tps, x.sustained_tps)),
        per_round(s, lambda x: retained_cell(x.retained_pct)),
        per_round(s, fade_cell, between="; "),  # its own cell has slashes
        f"{fmt(s.decode_min)} / {fmt(s.decode_max)}",
        per_round(s, lambda x: fmt(x.prefill_mean, 0)),
        per_round(s, thermal_cell),
        per_round(s, lambda x: "—" if x.serious_at_s is None else f"{x.serious_at_s:.0f} s"),
        per_round(s, serious_share),
        "—" if s.cooldown_s is None else f"{s.cooldown_s:.0f} s",
        f"{fmt(s.battery_start, 0)} → {fmt(s.battery_end, 0)} %",
        str(s.errors),
        fmt(s.power_w_mean, 2),
        j_per_token(s, short),
        mem_peak(s),
        cpu_gpu(s),
    )


NA = "n/a"
"""A process figure no reading gave (a backend without DVT, a recording made before v3)."""


def mem_peak(s: ArmSummary) -> str:
    """The app's largest footprint: "1.93 GB"."""
    return NA if s.mem_peak_gb is None else f"{s.mem_peak_gb:.2f} GB"


def cpu_gpu(s: ArmSummary) -> str:
    """The app's CPU (% of one core) and the GPU's utilization, means: "85 / 40 %"."""
    cpu, gpu = s.cpu_mean_pct, s.gpu_mean_pct
    if cpu is None and gpu is None:
        return NA
    return f"{NA if cpu is None else f'{cpu:.0f}'} / {NA if gpu is None else f'{gpu:.0f}'} %"


def has_process(s: ArmSummary) -> bool:
    """Some process figure of the arm was read."""
    return not (s.mem_peak_gb is None and s.cpu_mean_pct is None and s.gpu_mean_pct is None)


def fade_cell(s: Figures) -> str:
    """When decode fell 10, 25 and 50 % below the burst: "93 / 170 / — s"."""
    times = (s.fade_10_s, s.fade_25_s, s.fade_50_s)
    if all(t is None for t in times):
        return "—"
    return " / ".join("—" if t is None else f"{t:.0f}" for t in times) + " s"


STATUS = "status"
"""The column a table gains, after the arm's name, when some arm is not done."""


def status_cell(s: ArmSummary) -> str:
    """How the arm's last round ended, briefly: "done", "aborted after 42 trials", "failed
    before any trial" (the reason is a footnote: see `status_notes`)."""
    if s.status == "done":
        return "done"
    trials = s.rounds[-1].trials if s.rounds else s.trials
    if trials == 0:
        return f"{s.status} before any trial"
    return f"{s.status} after {trials} trial{'' if trials == 1 else 's'}"


def status_notes(summaries: Sequence[ArmSummary]) -> list[str]:
    """One line per arm that is not done: its name, its status, and the reason in words
    (none for a plain "incomplete": its status cell says it all)."""
    return [
        printable(f"{s.arm} {s.status}" + (f": {s.status_reason}" if s.status_reason else ""))
        for s in summaries
        if s.status != "done" and not (s.status == "incomplete" and s.status_reason == NO_END)
    ]


def _shown(summaries: Sequence[ArmSummary]) -> tuple[str, ...]:
    """COLUMNS, without PROCESS_COLUMNS when no arm has a process figure."""
    if any(map(has_process, summaries)):
        return COLUMNS
    return COLUMNS[: -len(PROCESS_COLUMNS)]


def table_columns(summaries: Sequence[ArmSummary]) -> tuple[str, ...]:
    """The columns shown (`_shown`), with STATUS after the arm's name when some arm is not
    done."""
    names = _shown(summaries)
    if all(s.status == "done" for s in summaries):
        return names
    return (names[0], STATUS, *names[1:])


def table_rows(summaries: Sequence[ArmSummary]) -> list[tuple[str, ...]]:
    """The cells of `table_columns`, one row per arm."""
    count = len(_shown(summaries))
    rows = [cells(s)[:count] for s in summaries]
    if all(s.status == "done" for s in summaries):
        return rows
    return [(row[0], status_cell(s), *row[1:]) for row, s in zip(rows, summaries, strict=True)]


def footnotes(summaries: Sequence[ArmSummary], device: str | None = None) -> list[str]:
    """What a reader of the table needs to know: why an arm is not done, why a figure is
    withheld, where a figure came from when it is not the battery's."""
    notes = status_notes(summaries) + _load_notes(summaries) + given_notes(summaries)
    if device is None:  # a raw log: no backend to ask (nor its package to import)
        return notes
    from anemon.devices import reads_power

    if reads_power(device) is False and any(s.energy_note == "no power samples" for s in summaries):
        notes.append(f"no power samples: {device} reads no power (pymobiledevice3 does)")
    return notes


def _load_notes(summaries: Sequence[ArmSummary], shown: int = 3) -> list[str]:
    """What a "(load)" J/token means, once per note (a log of thousands of arms, all plugged
    in, has one), naming its first arms."""
    loaded: dict[str, list[str]] = {}
    for s in summaries:
        if s.energy_source == "system load" and s.energy_note:
            loaded.setdefault(s.energy_note, []).append(s.arm)
    return [printable(f"J/token (load): {note}: {', '.join(arms[:shown])}"
                      + (f" and {len(arms) - shown} more" if len(arms) > shown else ""))
            for note, arms in loaded.items()]  # fmt: skip


def given_notes(summaries: Iterable[ArmSummary]) -> list[str]:
    """What a J/token marked "†" is: another tool's figure, and where it came from."""
    notes = (
        printable(f"† {s.arm}: J/token {s.energy_note}, not anemon's host power")
        for s in summaries
        if s.j_per_token is not None and s.energy_source == "reported"
    )
    return list(dict.fromkeys(notes))


@dataclass(frozen=True, slots=True)
class SummaryTable:
    """The rich table, laid out at print time for the console's width: it never cuts an arm
    name or a number. It breaks cells in two at a space, else drops columns (DROP_ORDER);
    when even that fails, or would drop more than half the columns, it folds into one
    key/value block per arm (`arm_blocks`)."""

    summaries: Sequence[ArmSummary]
    title: str | None = None
    device: str | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.layout(options.max_width)

    def layout(self, width: int) -> RenderableType:
        """The table at `width`, or the per-arm blocks if the table would say too little."""
        names = table_columns(self.summaries)
        rows = table_rows(self.summaries)
        fitted = fit_columns(names, rows, width, DROP_ORDER)
        shown, widths = fitted
        if widths is None or len(names) - len(shown) > len(names) / 2:
            return arm_blocks(names, rows, title=self.title, notes=self.notes)
        return self.table(width, rows, fitted)

    def table(
        self,
        width: int,
        rows: Sequence[Sequence[str]] | None = None,
        fitted: Fitted | None = None,
    ) -> LinesTable | Table:
        """The table at `width` (`rows` and their `fit_columns` if they are at hand)."""
        names = table_columns(self.summaries)
        return fit_table(
            names, table_rows(self.summaries) if rows is None else rows, width, DROP_ORDER,
            title=self.title, notes=self.notes, left=(names[0], STATUS), fitted=fitted,
        )  # fmt: skip

    @property
    def notes(self) -> list[str]:
        return footnotes(self.summaries, self.device)


Fitted = tuple[list[int], list[int] | None]
"""`fit_columns`' answer: the columns shown, and their content widths (None: none fit)."""


def fit_columns(
    names: Sequence[str], rows: Sequence[Sequence[str]], width: int, drop_order: Sequence[str]
) -> Fitted:
    """The columns shown (indices into `names`) within `width`, the columns of `drop_order`
    dropped first to last until the rest fit, and their content widths (`_fit`); widths None
    when not even the columns that are never dropped fit. Each column's cells are measured
    once, whatever the tries (a table of 20,000 arms measured them again for each)."""

    @functools.cache
    def distinct(i: int) -> set[str]:  # a column repeats its figures ("—", "0") row after row
        return {names[i], *(row[i] for row in rows)}

    @functools.cache
    def natural(i: int) -> int:
        return max(map(_one_line, distinct(i)))

    @functools.cache
    def least(i: int) -> int:
        return max(map(_two_lines, distinct(i)))

    shown = list(range(len(names)))
    widths = _fit(shown, width, natural, least)
    droppable = [names.index(n) for n in drop_order if n in names]
    while widths is None and any(i in shown for i in droppable):
        shown.remove(next(i for i in droppable if i in shown))
        widths = _fit(shown, width, natural, least)
    return shown, widths


def fit_table(
    names: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    drop_order: Sequence[str],
    *,
    title: str | None = None,
    notes: Sequence[str] = (),
    left: Collection[str] = (),
    fitted: Fitted | None = None,
) -> LinesTable | Table:
    """A table of `rows` within `width` that never cuts a cell's word or number: cells are
    broken in two at a space, else the columns of `drop_order` are dropped, first the first,
    and the caption says which ("not shown (too narrow): ..."), after `notes`. Columns named
    in `left` are left-justified, the others right. Cells and title are text: names and paths
    are data, never markup. `fitted`: `fit_columns`' answer, if it is at hand."""
    shown, widths = fit_columns(names, rows, width, drop_order) if fitted is None else fitted
    captions = list(notes)
    dropped = [names[i] for i in range(len(names)) if i not in shown]
    if dropped:
        captions.append("not shown (too narrow): " + ", ".join(dropped))
    if widths is None:  # not even these fit: rich's table squeezes them, folding cells
        return _squeezed(names, rows, shown, title, captions, left)
    return LinesTable(
        tuple(names[i] for i in shown),
        [[row[i] for i in shown] for row in rows],
        tuple(widths),
        tuple(names[i] not in left for i in shown),
        title=printable(title) if title else None,
        caption="\n".join(captions) if captions else None,
    )


def _squeezed(
    names: Sequence[str],
    rows: Sequence[Sequence[str]],
    shown: Sequence[int],
    title: str | None,
    captions: Sequence[str],
    left: Collection[str],
) -> Table:
    """rich's table of the `shown` columns in a terminal too narrow for them: it folds cells
    to fit (a table that no terminal this narrow holds many rows of)."""
    table = Table(
        title=Text(printable(title)) if title else None,
        caption=Text("\n".join(captions)) if captions else None,
        header_style="bold",
        caption_justify="left",
    )
    for i in shown:
        table.add_column(Text(names[i]), justify="left" if names[i] in left else "right",
                         overflow="fold")  # fmt: skip
    for row in rows:
        table.add_row(*(Text(row[i]) for i in shown))
    return table


@dataclass(frozen=True, slots=True)
class LinesTable:
    """What rich's `Table` prints for cells of plain text in columns of fixed widths (its
    heavy-head box, a bold header set at the bottom, the title above, centred, and the caption
    below), made a line at a time: rich lays out every cell as a renderable of its own,
    ~0.1-0.5 ms each (the table of 20,000 arms took most of a minute)."""

    headers: tuple[str, ...]
    rows: Sequence[Sequence[str]]
    widths: tuple[int, ...]
    """Each column's content width (the cells wrap at a space, else fold, within it)."""
    right: tuple[bool, ...]
    """Whether each column is right-justified (else left)."""
    title: str | None = None
    caption: str | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = sum(self.widths) + _PAD * len(self.widths) + 1
        annotation = options.update(width=width, highlight=False, height=None)
        if self.title:
            yield from console.render(Text(self.title), annotation.update(justify="center"))
        bars = ["━" * (w + 2) for w in self.widths]
        yield from (Segment("┏" + "┳".join(bars) + "┓"), Segment.line())
        bold = console.get_style("bold")
        for line in self._lines(self.headers, bottom=True):
            for cell in line:
                yield from (Segment("┃"), Segment(cell, bold))
            yield from (Segment("┃"), Segment.line())
        yield from (Segment("┡" + "╇".join(bars) + "┩"), Segment.line())
        for row in self.rows:
            for line in self._lines(row):
                yield from (Segment("│" + "│".join(line) + "│"), Segment.line())
        yield from (Segment("└" + "┴".join("─" * (w + 2) for w in self.widths) + "┘"),
                    Segment.line())  # fmt: skip
        if self.caption:
            yield from console.render(Text(self.caption), annotation.update(justify="left"))

    def _lines(self, row: Sequence[str], bottom: bool = False) -> list[list[str]]:
        """The row's lines, each a list of padded cells: a cell of fewer lines is blank below
        (`bottom`: above, as rich sets a header)."""
        cells = list(map(_padded, row, self.widths, self.right))
        height = max(map(len, cells), default=0)
        if height == 1:  # the common row, every cell on one line
            return [[cell[0] for cell in cells]]
        blank = [" " * (w + 2) for w in self.widths]
        if bottom:
            return [
                [cell[k - height + len(cell)] if k >= height - len(cell) else empty
                 for cell, empty in zip(cells, blank, strict=True)]
                for k in range(height)
            ]  # fmt: skip
        return [
            [cell[k] if k < len(cell) else empty for cell, empty in zip(cells, blank, strict=True)]
            for k in range(height)
        ]


@functools.lru_cache(maxsize=4096)
def _padded(text: str, width: int, right: bool) -> tuple[str, ...]:
    """A cell's lines, each justified and with a space either side. Cached: a column repeats
    its figures row after row, and so its padded lines."""
    return tuple(f" {_justify(line, width, right)} " for line in _wrap(text, width))


@functools.lru_cache(maxsize=4096)
def _justify(text: str, width: int, right: bool) -> str:
    pad = " " * max(width - cell_len(text), 0)
    return pad + text if right else text + pad


@functools.lru_cache(maxsize=4096)
def _wrap(text: str, width: int) -> tuple[str, ...]:
    """The lines rich wraps plain text into at `width` (overflow "fold"): at spaces, words as
    long as a line on a line each, longer ones folded; each line of a text's own. Cached: a
    column repeats its figures ("—", "0") row after row."""
    lines: list[str] = []
    for line in text.split("\n"):
        if cell_len(line) <= width:
            lines.append(line)
            continue
        current = ""
        for word in line.split(" "):
            joined = f"{current} {word}" if current else word
            if cell_len(joined) <= width:
                current = joined
                continue
            if current:
                lines.append(current)
            while cell_len(word) > width:
                head = set_cell_size(word, width)
                lines.append(head)
                word = word[len(head) :]
            current = word
        lines.append(current)
    return tuple(lines)


def arm_blocks(
    names: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    notes: Sequence[str] = (),
) -> Group:
    """The folded form, for a terminal too narrow for the table: one two-column block per
    row, titled with its first cell (the arm), every other column as a key and its value.
    Nothing is dropped; a value wider than the terminal wraps at its spaces, else folds onto
    the next line (never cut with an ellipsis)."""
    parts: list[RenderableType] = []
    if title:
        parts.append(Text(printable(title), style="bold", overflow="fold"))
    for row in rows:
        block = Table(box=None, show_header=False, padding=(0, 0, 0, 2))
        block.add_column(no_wrap=True)
        block.add_column(overflow="fold")
        for name, value in zip(names[1:], row[1:], strict=True):
            block.add_row(Text(name, style="bold"), Text(value))
        parts += [Text(""), Text(row[0], style="bold", overflow="fold"), block]
    if notes:
        parts += [Text(""), Text("\n".join(notes), overflow="fold")]
    return Group(*parts)


def rich_table(
    summaries: Sequence[ArmSummary], title: str | None = None, device: str | None = None
) -> SummaryTable:
    """The table for a console (`device`: the recording's backend, for its footnote)."""
    return SummaryTable(summaries, title, device)


def print_table(
    console: Console,
    summaries: Sequence[ArmSummary],
    title: str | None = None,
    device: str | None = None,
) -> None:
    """`rich_table` printed on `console`, the same bytes: a `LinesTable` is laid out within
    the console's width, each line exactly the table's, so it is printed uncropped (rich's crop
    measures every line again, a character at a time for a line holding a "—": most of the
    CPU of printing 20,000 arms); the folded blocks are cropped as rich crops them."""
    layout = rich_table(summaries, title, device).layout(console.width)
    console.print(layout, crop=not isinstance(layout, LinesTable))


_PAD = 3
"""Per column: one space either side and one border (plus one border for the table)."""


def _fit(
    shown: Sequence[int], width: int, widest: Callable[[int], int], least: Callable[[int], int]
) -> list[int] | None:
    """Content widths for the `shown` columns within `width`, each cell in at most two lines
    broken at a space (never inside a word or a number); None if that cannot fit. Each
    column's `widest` cell on one line, and the `least` width that holds each in two."""
    room = width - _PAD * len(shown) - 1
    natural = [widest(i) for i in shown]
    if sum(natural) <= room:
        return natural
    fewest = [least(i) for i in shown]
    spare = room - sum(fewest)
    if spare < 0:
        return None
    widths = list(fewest)
    for k in sorted(range(len(shown)), key=lambda k: natural[k] - fewest[k]):
        grow = min(spare, natural[k] - fewest[k])  # as many cells on one line as there is room
        widths[k] = fewest[k] + grow
        spare -= grow
    return widths


@functools.lru_cache(maxsize=4096)
def _one_line(text: str) -> int:
    """The width of a cell whose lines (a cell may hold several: one per arm) are not broken."""
    return max(cell_len(line) for line in text.split("\n"))


@functools.lru_cache(maxsize=4096)
def _two_lines(text: str) -> int:
    """The narrowest width that holds `text` in two lines broken at one of its spaces (linear
    in its length: a log's text can be long; cached: `fit_columns` asks again per try); a cell
    of several lines is as wide as its widest line."""
    if "\n" in text:
        return _one_line(text)
    total = cell_len(text)
    best, left = total, -1
    for word in text.split(" ")[:-1]:
        left += cell_len(word) + 1  # the line up to this word, without the space after it
        best = min(best, max(left, total - left - 1))
    return best


@dataclass(frozen=True, slots=True)
class SourceSummaries:
    """One SOURCE's arms: what `anemon summary` prints for each path it is given."""

    source: str
    """The path as given on the command line."""
    summaries: Sequence[ArmSummary]
    device: str | None = None
    """The recording's backend (for the "reads no power" footnote)."""
    title: str | None = None
    """Its Markdown title (`title`); None: the source alone."""


def markdown(summaries: Sequence[ArmSummary], device: str | None = None) -> str:
    def row(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    names = table_columns(summaries)
    lines = [row(names), "|" + "---|" * len(names)]
    lines += [row(values) for values in table_rows(summaries)]
    notes = footnotes(summaries, device)
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def title(source: str, session: Session, device: str | None = None) -> str:
    """A lab-note document's title: its source, tag, device and date (UTC, of the first
    launch), those it knows: "run.jsonl · tag sustain-v2 · sim · 2026-12-01"."""
    starts = [arm.start for arm in session.arms.values() if arm.start is not None]
    tag = next((start.tag for start in starts if start.tag), None)
    when = min((start.wall for start in starts if start.wall > 0), default=None)
    day = None if when is None else datetime.fromtimestamp(when, UTC).date().isoformat()
    parts = (source, tag and f"tag {tag}", device, day)
    return printable(" · ".join(part for part in parts if part))


def markdown_of_sources(sources: Sequence[SourceSummaries]) -> str:
    """One table per SOURCE under a `### title` (`title`), a blank line between them."""
    return "\n".join(
        f"### {s.title or printable(s.source)}\n\n" + markdown(s.summaries, s.device)
        for s in sources
    )


_NOT_AS_JSON = re.compile(rb"e-|0\.0000|\x7f")
"""Where orjson's bytes may not be json's: a float under 1e-4 (json writes `1e-05`, orjson
`0.00001` or `1e-9`) and DEL (json escapes it); non-ASCII is checked apart (json escapes it)."""
_JSON_BATCH = 1000
"""List items encoded at a time (`json_list`)."""


def strict_json(value: object) -> str:
    """Strict JSON (no NaN, no Infinity: they become null), indented, one document: the bytes
    of `json.dumps(value, indent=2)`, made by orjson (its encoder in C: json's own is Python
    once it indents) wherever orjson writes those very bytes, else by json."""
    return _encoded(value).decode() + "\n"


def _encoded(value: object) -> bytes:
    import orjson  # JSON only: a table or CSV summary starts without it

    # orjson's form of `json.dumps(indent=2)`; what json cannot encode, orjson refuses too
    options = (
        orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
    )
    try:
        out = orjson.dumps(value, option=options)  # NaN and infinities: null
    except TypeError:  # an int past 64 bits, a key that is not a str, a lone surrogate, ...
        return _json_encoded(value)
    if not out.isascii() or _NOT_AS_JSON.search(out):
        return _json_encoded(value)
    return out


def _json_encoded(value: object) -> bytes:
    try:  # the common case, all finite: no copy of the whole document first
        return json.dumps(value, indent=2, allow_nan=False).encode()
    except (ValueError, TypeError):  # a NaN or an infinity; a Mapping that is not a dict
        from anemon.recording.codec import finite  # the recordings' codec: not for a table

        return json.dumps(finite(value), indent=2, allow_nan=False).encode()


def json_list(items: Iterable[object]) -> Iterator[str]:
    """`strict_json(list(items))` in parts, a batch of items encoded at a time: a list of
    100,000 arms is never one document in memory (nor its items all made at once)."""
    iterator = iter(items)
    opening = "["
    while batch := list(itertools.islice(iterator, _JSON_BATCH)):
        yield opening + _encoded(batch)[1:-2].decode()  # without its "[" and "\n]"
        opening = ","
    yield "[]\n" if opening == "[" else "\n]\n"


DECIMALS = {
    **dict.fromkeys(("decode_mean", "decode_first3", "decode_last3", "decode_min",
                     "decode_max", "burst_tps", "sustained_tps", "retained_pct", "energy_j"), 1),
    **dict.fromkeys(("prefill_mean", "serious_at_s", "battery_start", "battery_end",
                     "fade_10_s", "fade_25_s", "fade_50_s", "cooldown_s",
                     "tokens_per_battery_pct"), 0),
    **dict.fromkeys(("cpu_mean_pct", "gpu_mean_pct"), 0),
    "serious_frac": 2, "power_w_mean": 2, "mem_peak_gb": 2, "j_per_token": 4,
}  # fmt: skip
"""Decimals of each figure in JSON and CSV: as the table shows it (a share as a fraction to
the table's whole %; energy_j and tokens per %, which it does not show, to 0.1 J and whole
tokens); docs/spec/cli.md lists them."""


def _places(cls: type) -> tuple[tuple[str, int], ...]:
    """`DECIMALS` of the figures `cls.to_json()` gives (a round has 10 of the 22)."""
    keys = {f.name for f in dataclasses.fields(cls)}
    return tuple((key, places) for key, places in DECIMALS.items() if key in keys)


_ARM_PLACES = _places(ArmSummary)
_ROUND_PLACES = _places(RoundSummary)


def rounded(data: dict[str, object], places: Iterable[tuple[str, int]]) -> dict[str, object]:
    """`data`'s figures to their `places` (no float noise: 52.699999999999996 is 52.7)."""
    for key, decimals in places:
        value = data[key]
        if isinstance(value, float):
            data[key] = round(value, decimals)
    return data


def arm_json(s: ArmSummary) -> dict[str, object]:
    """The spec's per-arm object as JSON and CSV give it: every figure `rounded`."""
    data = rounded(s.to_json(), _ARM_PLACES)
    for one in cast("list[dict[str, object]]", data["rounds"]):  # to_json's: made once
        rounded(one, _ROUND_PLACES)
    return data


def to_json(summaries: Sequence[ArmSummary]) -> str:
    return strict_json([arm_json(s) for s in summaries])


def with_source(source: str, summaries: Iterable[ArmSummary]) -> Iterator[dict[str, object]]:
    """Each arm's JSON object with its SOURCE first: `anemon summary --format json` writes one
    list of them (`json_list`) however many SOURCEs."""
    return ({"source": source, **arm_json(arm)} for arm in summaries)


def to_json_of_sources(sources: Sequence[SourceSummaries]) -> str:
    """ONE list of per-arm objects, each with its `source` first, however many SOURCEs."""
    return "".join(json_list(o for s in sources for o in with_source(s.source, s.summaries)))


def _csv_row(s: ArmSummary) -> dict[str, object]:
    """Flat: the spec's keys, with `rounds` as the number of launches and their means (no
    thousands separators: a spreadsheet reads "2,741" as text)."""
    data = arm_json(s)
    del data["rounds"]  # re-added last, as a count
    data["rounds"] = len(s.rounds)
    data["round_decode_means"] = " / ".join(_plain(r.decode_mean, 1) for r in s.rounds)
    data["round_prefill_means"] = " / ".join(_plain(r.prefill_mean, 0) for r in s.rounds)
    data["summary_version"] = data.pop("summary_version")  # the last column, as added
    return data


def _plain(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def to_csv(summaries: Sequence[ArmSummary]) -> str:
    """Flat rows: the spec's keys, with `rounds` as the number of launches and their means."""
    return _csv([_csv_row(s) for s in summaries])


def to_csv_of_sources(sources: Sequence[SourceSummaries]) -> str:
    """One header, `source` the first column, then the rows of to_csv for every SOURCE."""
    rows = [{"source": s.source, **_csv_row(arm)} for s in sources for arm in s.summaries]
    return _csv(rows)


def _csv(rows: list[dict[str, object]]) -> str:
    # pandas is imported here, not with the module: a summary table starts without it
    import pandas as pd

    from anemon.analysis.export import csv_safe

    return csv_safe(pd.DataFrame(rows)).to_csv(index=False)
