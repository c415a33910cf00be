"""One run on the dashboard: its panels and what the dashboard knows of it (`RunPane`).

The dashboard holds a pane per run (several: a tab each) and draws the one shown; the keys act
on its run. What a pane shows of its run's controller (the queue held, the operator asked) it
reads from the run's controls each time, never a copy.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.dom import DOMNode
from textual.widget import Widget

from anemon.feeds import Feed
from anemon.feeds.runs import Run
from anemon.ui.arms_table import BRIEF, ArmsTable, rows_version
from anemon.ui.charts.chart import Chart, Charts
from anemon.ui.charts.strips import Strip, Strips
from anemon.ui.log_panel import LogPanel
from anemon.ui.overlay import Overlay
from anemon.ui.scheduler import RedrawScheduler
from anemon.ui.status import StatusLine, run_end
from anemon.ui.timeline import AlertMarks, Timeline

MAIN_CHARTS = ("decode", "power", "memory", "prefill", "thermal", "battery", "free", "gpu")
PAIR_CHARTS = ("arm-a", "arm-b")


def is_shown(widget: Widget) -> bool:
    """Displayed, and so is every container around it (a layout may hide either)."""
    return all(node.display for node in widget.ancestors_with_self if isinstance(node, Widget))


@dataclass(frozen=True)
class Panels:
    """One run's panels, held: not queried per tick (a modal on top, the marker prompt, is
    another screen)."""

    status: StatusLine
    timeline: Timeline
    log_panel: LogPanel
    tables: list[ArmsTable]
    strips: list[Strip]
    charts: list[Chart]

    @classmethod
    def under(cls, root: DOMNode) -> Panels:
        return cls(
            root.query_one(StatusLine), root.query_one(Timeline), root.query_one(LogPanel),
            list(root.query(ArmsTable)), list(root.query(Strip)), list(root.query(Chart)),
        )  # fmt: skip


class RunPane:
    """One run's panels (composed by `compose`, held by `bind` once mounted), its alerts, and
    whether its plan is through. `prefix`: what its toasts start with (its device, when
    several runs are shown)."""

    def __init__(
        self,
        run: Run,
        prefix: str | None = None,
        *,
        log_lines: int = 2000,
        overlay: Overlay | None = None,
    ) -> None:
        self.run = run
        self.prefix = prefix
        self.log_lines = log_lines
        self.overlay = overlay
        self.alerts = AlertMarks()
        """Alerts and the pre-flight as they come: toasts (redraw), marks on the timeline."""
        run.feed.subscribe(self.alerts.add)
        self.run_over = False
        """A plan run's queue is through: its run-only keys are no longer offered."""
        self._panels: Panels | None = None

    @property
    def feed(self) -> Feed:
        return self.run.feed

    @property
    def label(self) -> str:
        return self.run.label

    @property
    def panels(self) -> Panels:
        assert self._panels is not None, "a pane's panels are bound on mount"
        return self._panels

    def compose(self) -> ComposeResult:
        """The status line, the timeline and the body (the layouts style them)."""
        feed = self.feed
        yield StatusLine(feed.title, tag=feed.tag, reads_power=feed.reads_power,
                         status_note=lambda: feed.status_note, held=self.held,
                         id="status")  # fmt: skip
        yield Timeline(feed.replay, alerts=self.alerts, session=feed.session, id="timeline")
        with Vertical(id="body"):
            yield Charts(MAIN_CHARTS, id="charts")
            yield Charts(PAIR_CHARTS, id="pair")
            yield Strips(id="strips")
            yield ArmsTable(reference=self.overlay, id="arms")
            yield ArmsTable(BRIEF, reference=self.overlay, id="arms-brief")
            yield LogPanel(self.log_lines, id="log")

    def bind(self, root: DOMNode) -> None:
        """Hold the panels composed under `root`, the charts drawing the overlay."""
        self._panels = Panels.under(root)
        self.show_reference(True)

    def show_reference(self, shown: bool) -> None:
        for chart in self.panels.charts:
            chart.reference = self.overlay if shown else None

    def said(self, message: str) -> str:
        """A toast about this run: with its device first when several are shown."""
        return f"{self.prefix}: {message}" if self.prefix else message

    def held(self) -> bool:
        """The run's queue is held, as its controller says (said until the run is over)."""
        controls = self.feed.controls
        return controls is not None and controls.paused and not self.run_over

    def running(self) -> bool:
        """A plan run is in progress: quitting asks first."""
        return self.feed.controls is not None and not self.run_over

    def check_over(self) -> str | None:
        """Once a plan run's feed has finished: how it ended (done or aborted) and where the
        recording is, said in its status line; returned once, for a toast. None otherwise."""
        if not self.running() or not self.feed.finished:
            return None
        self.run_over = True
        done = run_end(self.feed.session, self.feed.record)
        self.panels.status.note = done
        return done

    def seen(self) -> Hashable:
        """What the panels show but the host's readings (`readings`): news, or a moving
        replay, draws again."""
        session, replay = self.feed.session, self.feed.replay
        news = session.version - session.counts["telemetry"]
        return (id(session), news, replay and (replay.position, replay.speed,
                                               replay.paused))  # fmt: skip

    def readings(self) -> Hashable:
        """The host's readings the panels show (power, telemetry, process samples): drawn
        at the scheduler's pace for readings (READINGS_EVERY_S), not each as it comes."""
        session = self.feed.session
        return id(session), session.counts["telemetry"]

    def draw(self, scheduler: RedrawScheduler, force: bool) -> None:
        """Every panel checks for itself whether its data changed; the costly ones take turns:
        the table at most every TABLE_EVERY_S, the charts within the round's budget."""
        session, panels = self.feed.session, self.panels
        panels.status.show(session)
        panels.timeline.show()
        panels.log_panel.show(session)
        if scheduler.table_due(force, rows_version(session)):
            for table in panels.tables:
                if is_shown(table):  # a big arm's summary in a thread: the keys answer
                    table.show(session, off_loop=True, hurry=force)
        for strip in panels.strips:
            if is_shown(strip):
                strip.draw(session)
        shown = [c for c in panels.charts if is_shown(c)]
        scheduler.draw_charts(shown, lambda chart: chart.draw(session), force)
