"""Headless progress: one plain line per event worth a line, then the summary table (rich).

For SSH, scripts and CI. Log text is data: everything goes out as rich `Text`, never markup,
with its control characters escaped (anemon.text.printable): a log line's ESC never reaches the
terminal.
`run_headless` runs a feed this way, through the one lifecycle (anemon/feeds/lifecycle.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from anemon.analysis.render import fmt, rich_table
from anemon.analysis.summary import summarize
from anemon.events import (
    AlertEvent,
    CooldownEvent,
    EndEvent,
    ErrorEvent,
    Event,
    GapEvent,
    LoadEvent,
    MarkerEvent,
    PhaseEvent,
    PreflightEvent,
    RecordingFailedEvent,
    ResetEvent,
    StartEvent,
    TextEvent,
    TrialEvent,
    thermal_name,
)
from anemon.store import Session
from anemon.text import printable

if TYPE_CHECKING:
    from anemon.feeds.lifecycle import Ending
    from anemon.feeds.runs import Runs

PIPE_WIDTH = 160
"""Console width when output is not a terminal (rich's 80 would fold the summary table)."""
COOLDOWN_EVERY_S = 30.0
"""Print cooldown progress at most this often (session seconds)."""


def make_console(stderr: bool = False) -> Console:
    """A console that never reads markup from data and keeps tables whole in a pipe, whose
    closed pipe is a BrokenPipeError (main() ends quietly with its own status) rather than
    rich's own exit 1, which in a feed's task also printed a traceback."""
    console = Console(highlight=False, stderr=stderr)
    if not console.is_terminal:
        console.width = PIPE_WIDTH
    console.on_broken_pipe = _pipe_closed  # type: ignore[method-assign]
    return console


def _pipe_closed() -> None:
    raise BrokenPipeError


def _trial(e: TrialEvent) -> str:
    kind = "warm-up" if e.warmup else f"trial {e.trial if e.trial is not None else '?'}"
    return (
        f"{kind:>9}  decode {fmt(e.decode_tps)} tok/s  prefill {fmt(e.prompt_tps, 0)} tok/s  "
        f"{thermal_name(e.thermal) or '—'}  battery {fmt(e.battery, 0)} %"
    )


def _cooldown(e: CooldownEvent) -> str:
    state = f"done ({e.reason})" if e.done else "waiting"
    return (
        f"cooldown {state}: {e.elapsed_s:.0f} s (min {e.min_s:.0f}, cap {e.cap_s:.0f}), "
        f"thermal {thermal_name(e.thermal) or '?'} from {e.basis}, until {e.until}"
    )


_LINES: dict[type, tuple[str, Callable]] = {
    StartEvent: ("bold", lambda e: f"launched ({e.compute or '?'}, free {fmt(e.free_gb)} GB)"),
    LoadEvent: ("", lambda e: f"loaded in {fmt(e.load_s, 2)} s{' (cold)' if e.cold else ''}"),
    TrialEvent: ("", _trial),
    EndEvent: ("bold", lambda e: f"ended: {e.reason or '?'} after {e.trials} trials"),
    ErrorEvent: ("bold red", lambda e: f"ERROR: {e.message}"),
    TextEvent: ("dim", lambda e: e.line),
    PhaseEvent: ("cyan", lambda e: f"phase {e.phase}" + (f": {e.reason}" if e.reason else "")),
    MarkerEvent: ("magenta", lambda e: f"marker: {e.note}"),
    RecordingFailedEvent: ("magenta", lambda e: f"marker: {e.note}"),  # a marker to a person
    GapEvent: ("yellow", lambda e: f"gap {e.state}: {e.reason}"),
    ResetEvent: ("yellow", lambda e: f"new log: {e.reason}"),
    CooldownEvent: ("cyan", _cooldown),
    AlertEvent: ("bold yellow", lambda e: f"ALERT {e.alert}: {e.note}"),
}

_VERDICT_STYLES = {"pass": "green", "warn": "yellow", "fail": "bold red"}


def preflight_table(checks: Iterable[Mapping[str, str]], title: str | Text = "pre-flight") -> Table:
    """The checks as a table: check, verdict, reading, note. Every cell is Text (data, never
    markup), its control characters escaped."""
    table = Table(title=title, title_justify="left")
    for name in ("check", "result", "reading", "note"):
        table.add_column(name, overflow="fold")
    for check in checks:
        status = str(check.get("status", "?"))
        table.add_row(
            Text(printable(str(check.get("check", "?")))),
            Text(status, style=_VERDICT_STYLES.get(status, "")),
            Text(printable(str(check.get("reading", "")))),
            Text(printable(str(check.get("note", "")))),
        )
    return table


def preflight_checks(event: PreflightEvent) -> list[Mapping[str, str]]:
    """The event's checks, only those that are objects (a damaged recording may hold others)."""
    checks = event.checks if isinstance(event.checks, tuple | list) else ()
    return [c for c in checks if isinstance(c, Mapping)]


class HeadlessView:
    """Prints events as they come; `finish` prints the per-arm summary."""

    def __init__(self, console: Console | None = None, *, device: str | None = None) -> None:
        self.console = console or make_console()
        self.device = device
        """Which device's run this prints (several at once): each line starts with it."""
        self._last_cooldown = float("-inf")

    def handle(self, event: Event) -> None:
        if isinstance(event, PreflightEvent):
            self._preflight(event)
            return
        if isinstance(event, AlertEvent) and self.console.is_terminal:
            self.console.file.write("\a")  # the terminal bell; never into a pipe or a file
        entry = _LINES.get(type(event))
        if entry is None or not self._due(event):
            return
        style, describe = entry
        line = Text()
        if self.device is not None:
            line.append(f"[{printable(self.device)}] ", style="bold blue")
        line.append(f"{event.t:8.1f}s ", style="dim")
        if event.arm:
            line.append(f"{printable(event.arm)}  ", style="bold")
        line.append(printable(describe(event)), style=style)
        self.console.print(line, soft_wrap=True)

    def _preflight(self, event: PreflightEvent) -> None:
        forced = " (a check failed: going on, --force)" if event.forced else ""
        title = f"pre-flight at {event.t:.1f}s: {printable(str(event.status))}{forced}"
        if self.device is not None:
            title = f"[{printable(self.device)}] {title}"
        # a Text title: the device's name is data, never markup
        self.console.print(preflight_table(preflight_checks(event), title=Text(title)))

    def _due(self, event: Event) -> bool:
        if not isinstance(event, CooldownEvent) or event.done:
            return True
        if event.t - self._last_cooldown < COOLDOWN_EVERY_S:
            return False
        self._last_cooldown = event.t
        return True

    def finish(self, session: Session, title: str | None = None) -> None:
        self.console.print(rich_table(summarize(session), title=title))
        if session.warnings:
            self.console.print(Text(f"{session.warnings} value(s) did not parse", style="yellow"))


def run_headless(runs: Runs, console: Console | None = None) -> Ending:
    """Run `runs` to their end (or SIGINT/SIGTERM), printing each run's events as they come
    on one console (each line prefixed with its device when there are several); the summary
    is the caller's (`HeadlessView.finish`), as not every ending wants one."""
    from anemon.feeds.lifecycle import run_feeds_sync  # here: `summary` needs no feed (asyncio)

    console = console or make_console()
    for run in runs:
        run.feed.subscribe(HeadlessView(console, device=runs.prefix(run)).handle)
    with _reader_gone_stops(console, runs):
        return run_feeds_sync(runs)


@contextmanager
def _reader_gone_stops(console: Console, runs: Runs) -> Iterator[None]:
    """stdout's reader gone mid-run (`anemon demo --headless | head -1`): printing stops and
    the runs are stopped as a signal stops them (the recordings closed), then BrokenPipeError
    for main() (exit 141). Raised from a listener instead, it ended whichever task emitted
    the event, and the run could wait for that task forever."""
    gone: list[bool] = []

    def closed() -> None:
        if not gone:
            gone.append(True)
            console.quiet = True
            runs.stop("stdout closed")

    console.on_broken_pipe = closed  # type: ignore[method-assign]
    yield
    if gone:
        raise BrokenPipeError
