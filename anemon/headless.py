"""Headless progress: one plain line per event worth a line (worded by
anemon.analysis.describe, as the log panel's), then the summary table (rich).

For SSH, scripts and CI. Log text is data: everything goes out as rich `Text`, never markup,
with its control characters escaped (anemon.text.printable): a log line's ESC never reaches the
terminal.
`run_headless` runs a feed this way, through the one lifecycle (anemon/feeds/lifecycle.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from anemon.analysis.describe import describe
from anemon.analysis.render import rich_table
from anemon.analysis.summary import ArmSummary, EnergyReadings, summarize
from anemon.events import AlertEvent, Check, CooldownEvent, Event, PreflightEvent
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


_VERDICT_STYLES = {"pass": "green", "warn": "yellow", "fail": "bold red"}


def preflight_table(checks: Iterable[Check], title: str | None = None) -> Table:
    """The checks as a table: check, verdict, reading, note. Every cell and the title are Text
    (data, never markup), control characters escaped."""
    table = Table(title=title and Text(printable(title)), title_justify="left")
    for name in ("check", "result", "reading", "note"):
        table.add_column(name, overflow="fold")
    for check in checks:
        table.add_row(
            Text(printable(check.check)),
            Text(printable(check.status), style=_VERDICT_STYLES.get(check.status, "")),
            Text(printable(check.reading)),
            Text(printable(check.note)),
        )
    return table


class HeadlessView:
    """Prints events as they come; `finish` prints the per-arm summary."""

    def __init__(self, console: Console | None = None, *, device: str | None = None) -> None:
        self.console = console or make_console()
        self.device = device
        """Which device's run this prints (several at once): each line starts with it."""
        self._last_cooldown = float("-inf")

    def handle(self, event: Event) -> None:
        if isinstance(event, AlertEvent) and self.console.is_terminal:
            self.console.file.write("\a")  # the terminal bell; never into a pipe or a file
        words = describe(event)
        if words is None or not self._due(event):
            return
        line = Text()
        if self.device is not None:
            line.append(f"[{printable(self.device)}] ", style="bold blue")
        line.append(f"{event.t:8.1f}s ", style="dim")
        if event.arm:
            line.append(f"{printable(event.arm)}  ", style="bold")
        line.append(words.text, style=words.style)
        if isinstance(event, PreflightEvent):  # its table under it, in one write: together
            self.console.print(Group(line, preflight_table(event.checks)))
        else:
            self.console.print(line, soft_wrap=True)

    def _due(self, event: Event) -> bool:
        if not isinstance(event, CooldownEvent) or event.done:
            return True
        if event.t - self._last_cooldown < COOLDOWN_EVERY_S:
            return False
        self._last_cooldown = event.t
        return True

    def finish(
        self, session: Session, title: str | None = None, readings: EnergyReadings | None = None
    ) -> list[ArmSummary]:
        """The summary table, with its footnotes (why an arm is not done); its summaries,
        for what the caller says after it (`anemon run`'s outcome lines). `readings`: the
        session's, read as it was played (`ReplayFeed.readings`)."""
        summaries = summarize(session, readings)
        self.console.print(rich_table(summaries, title=title))
        if session.warnings:
            self.console.print(Text(f"{session.warnings} value(s) did not parse", style="yellow"))
        return summaries


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
