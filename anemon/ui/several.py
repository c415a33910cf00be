"""The dashboard of several runs at once (`anemon run A.toml B.toml`).

An overview strip (one line per device: phase, arm, decode, thermal state, watts) above a
tab per device, each tab the dashboard's usual body for that run. The dashboard's panels,
keys and state are those of the selected tab (`select`): the keys act on that run. Quitting
asks first while any run is in progress, and ends them all (the lifecycle stops the
`SeveralRuns` feed, which stops every run).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Footer, Static, TabbedContent, TabPane

from anemon.feeds import Feed
from anemon.feeds.several import SeveralRuns
from anemon.store import Session
from anemon.text import printable
from anemon.ui.app import Dashboard, Panels
from anemon.ui.confirm import quit_what
from anemon.ui.status import SEPARATOR, phase_text, power_text, run_end, thermal_text
from anemon.ui.timeline import AlertMarks

TAB_KEYS_HELP = "Previous or next phone (when the tab bar has focus)"
"""The keys help's line on the tabs (Textual's `Tabs`: the keys act on the selected tab's run;
a click on a tab selects it too)."""
SEVERAL_CSS = """
#overview { height: auto; padding: 0 1; background: $panel; }
#tabs { height: 1fr; }
#tabs > ContentSwitcher { height: 1fr; }
#tabs TabPane { height: 1fr; padding: 0; layout: vertical; }
"""


@dataclass(eq=False)
class Pane:
    """One run's tab: its feed, its panels, and the app's state about that run."""

    feed: Feed
    label: str
    alerts: AlertMarks
    panels: Panels | None = None
    run_over: bool = False
    queue_paused: bool = False


def last_decode(session: Session) -> float | None:
    """The current arm's latest decode rate (tok/s), warm-ups included."""
    arm = session.arms.get(session.current_arm or "")
    if arm is None or not len(arm):
        return None
    value = float(arm.columns["decode_tps"][-1])
    return None if np.isnan(value) else value


def overview_line(label: str, session: Session, reads_power: bool | None) -> Text:
    """One device in the overview: its label, phase, arm, decode, thermal state and watts."""
    decode = last_decode(session)
    return Text(SEPARATOR).join(
        [
            Text(printable(label), style="bold"),
            Text(printable(phase_text(session))),
            Text.assemble("arm ", (printable(session.current_arm or "—"), "bold")),
            Text(f"decode {'—' if decode is None else f'{decode:.1f} tok/s'}"),
            Text.assemble("thermal ", thermal_text(session.thermal.last())),
            power_text(session, reads_power),
        ]
    )


class Overview(Static):
    """Every run at a glance, one line each; redrawn when any session changed."""

    def __init__(self, panes: list[Pane], *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.panes = panes
        self.drawn: tuple[object, ...] | None = None

    def show(self) -> None:
        key = tuple((id(p.feed.session), p.feed.session.version) for p in self.panes)
        if key == self.drawn:
            return
        self.drawn = key
        lines = [overview_line(p.label, p.feed.session, p.feed.reads_power) for p in self.panes]
        self.update(Text("\n").join(lines))


class SeveralDashboard(Dashboard):
    """The dashboard with a tab per run of `several`; `feed` is the selected run's."""

    CSS = SEVERAL_CSS

    def __init__(self, several: SeveralRuns, layout: Path, **options: object) -> None:
        super().__init__(several.feeds[0], layout, **options)  # type: ignore[arg-type]
        self.several = several
        self.title = several.title
        self.panes = [Pane(several.feeds[0], several.labels[0], self.alert_marks)]
        for feed, label in several.pairs[1:]:
            alerts = AlertMarks()
            feed.subscribe(alerts.add)
            self.panes.append(Pane(feed, label, alerts))
        self.pane = self.panes[0]
        self.quit_question = quit_what(len(self.panes))

    def compose(self) -> ComposeResult:
        yield Overview(self.panes, id="overview")
        with TabbedContent(id="tabs"):
            for i, pane in enumerate(self.panes):
                with TabPane(Content(printable(pane.label)), id=f"run-{i}"):  # literal text
                    yield from self.panels(pane.feed, pane.alerts)
        yield Footer()

    def bind_panels(self) -> None:
        self.overview = self.query_one(Overview)
        for i, pane in enumerate(self.panes):
            pane.panels = Panels.under(self.query_one(f"#run-{i}", TabPane))
        self._use(self.panes[0])

    def _use(self, pane: Pane) -> None:
        """The dashboard's panels, keys and state become `pane`'s."""
        self.pane.queue_paused = self.queue_paused
        self.pane = pane
        self.feed = pane.feed
        self.alert_marks = pane.alerts
        assert pane.panels is not None, "panes are bound on mount"
        self.hold(pane.panels)
        self.run_over, self.queue_paused = pane.run_over, pane.queue_paused
        self._seen, self._next_chart = None, 0

    def select(self, index: int) -> None:
        """Show run `index` and let the keys act on it."""
        self.query_one(TabbedContent).active = f"run-{index}"

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane_id = event.pane.id or ""
        index = int(pane_id.removeprefix("run-")) if pane_id.startswith("run-") else 0
        if self.panes[index] is not self.pane:
            self._use(self.panes[index])
            self.refresh_bindings()
            self.redraw(force=True)

    def redraw(self, force: bool = False) -> None:
        """The overview and every run's toasts (each said with its device), then the
        selected run's panels as the one-run dashboard draws them."""
        if not self.mounted:
            return
        for pane in self.panes:
            for toast in pane.alerts.take():
                message = f"{pane.label}: {toast.message}"
                self.notify(message, severity=toast.severity, timeout=10)
                if toast.bell:
                    self.bell()
        self.overview.show()
        super().redraw(force)

    def _check_run_over(self) -> None:
        """Each run, once finished: its status line says how it ended and where its
        recording is."""
        changed = False
        for pane in self.panes:
            if pane.run_over or not pane.feed.finished:
                continue
            pane.run_over = changed = True
            done = run_end(pane.feed.session, pane.feed.record)
            pane.queue_paused = False
            assert pane.panels is not None
            pane.panels.status.held = False
            pane.panels.status.note = done
            self.notify(f"{pane.label}: {done}", timeout=10)
        if changed:
            self.run_over, self.queue_paused = self.pane.run_over, self.pane.queue_paused
            self.refresh_bindings()

    def running(self) -> bool:
        """Any run in progress: quitting ends them all, so it asks first."""
        return not all(pane.run_over for pane in self.panes)

    def help_rows(self) -> list[tuple[str, str]]:
        """The tab bar's own keys too (Textual's `Tabs`, which has the focus at start)."""
        rows = super().help_rows()
        rows.insert(-1, ("←, →", TAB_KEYS_HELP))
        return rows
