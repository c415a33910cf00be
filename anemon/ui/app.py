"""The dashboard: wiring only. Panels live in their own modules; the feed is polled, not pushed.

A replay is driven by a timer calling `replay.tick()` (a fast replay coalesces by
construction); a live feed runs outside the app (see `launch`). Panels redraw on a slower
timer, each only when its data changed, charts staggered and only the visible ones.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.errors import StylesheetError
from textual.dom import DOMNode
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer

from anemon.feeds import Feed, ReplayControls, RunControls
from anemon.feeds.replay import EXPORTS_DIR
from anemon.store import Session
from anemon.text import printable
from anemon.ui import keys, layouts
from anemon.ui.arms_table import BRIEF, ArmsTable
from anemon.ui.charts.chart import Chart, Charts
from anemon.ui.charts.strips import Strip, Strips
from anemon.ui.confirm import END_THE_RUN, Confirm
from anemon.ui.export import export_summary
from anemon.ui.help import KeysHelp
from anemon.ui.log_panel import LogPanel
from anemon.ui.marker import MarkerPrompt
from anemon.ui.overlay import Overlay
from anemon.ui.status import StatusLine, asking, cooling, run_end
from anemon.ui.timeline import AlertMarks, Timeline

BASE_CSS = Path(__file__).with_name("dashboard.tcss")
# EXPORTS_DIR: where `e` and `s` write when not told (`save_dir`), under the cwd, made on
# demand (git ignores it); a replay's markers go there too (`feeds.replay`)
MAIN_CHARTS = ("decode", "power", "prefill", "thermal", "battery", "free")
PAIR_CHARTS = ("arm-a", "arm-b")


def is_shown(widget: Widget) -> bool:
    """Displayed, and so is every container around it (a layout may hide either)."""
    return all(node.display for node in widget.ancestors_with_self if isinstance(node, Widget))


TABLE_EVERY_S = 1.0
"""At most one arms-table update a second (the per-arm summary is the costliest panel)."""
SETTLE_ROUNDS = 10
"""At most this many rounds after a change for the charts a round left past its budget;
none when nothing was left."""
ROUND_BUDGET_S = 0.03
"""Charts drawn in one round stop once it has taken this long (the rest go next round)."""
IDLE_AFTER_S = 2.0
"""Nothing changed for this long: the redraw timer slows to IDLE_REDRAW_S (a live session
between two trials wakes the process a few times a second for nothing otherwise)."""
IDLE_REDRAW_S = 0.5
"""The redraw timer's period while idle: the first change after a quiet spell shows within
this; any change, or a key that redraws, brings the normal period back."""


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


class Dashboard(App[None]):
    """The same screens live and in replay; `feed.session` is read fresh on every draw."""

    BINDINGS = keys.BINDINGS

    quit_question = END_THE_RUN
    """What the quit confirmation says quitting does."""

    def __init__(
        self,
        feed: Feed,
        layout: Path,
        *,
        save_dir: Path | None = None,
        chosen: bool = True,
        tick_s: float = 0.1,
        redraw_s: float = 0.2,
        log_lines: int = 2000,
        overlay: Overlay | None = None,
    ) -> None:
        super().__init__(css_path=[BASE_CSS, layout])
        self.feed = feed
        self.layout_path = layout
        self.chosen = chosen
        """The operator named the layout (--layout): it is kept in a small terminal too."""
        self.layouts = layouts.choices(layout)
        self.save_dir = save_dir or Path.cwd() / EXPORTS_DIR
        self.tick_s = tick_s
        self.redraw_s = redraw_s
        self.log_lines = log_lines
        self.overlay = overlay
        """The reference session under the charts (`replay --overlay`); `o` hides it."""
        self.overlay_shown = overlay is not None
        self.title = feed.title
        self.alert_marks = AlertMarks()
        """Alerts and the pre-flight as they come: toasts (redraw), marks on the timeline."""
        feed.subscribe(self.alert_marks.add)
        self.rounds = 0
        self.queue_paused = False
        self.run_over = False
        """A plan run's queue is through: its run-only keys are no longer offered."""
        self._seen: tuple[object, ...] | None = None
        self._next_chart = 0
        self._chart_cost: dict[Chart, float] = {}
        """Each chart's last draw that drew, in seconds: whether it fits a round's budget."""
        self._table_at = float("-inf")
        self._settling = 0
        self._left = False
        """The last round left charts past its budget for the next."""
        self._table_owed = False
        """A change came while the table waited for its second: one round when it is up."""
        self._redraw_timer: Timer | None = None
        self._tick_timer: Timer | None = None
        self.redraw_period_s = redraw_s
        """The redraw timer's period now: `redraw_s`, or IDLE_REDRAW_S while nothing changes."""
        self._quiet_since = time.monotonic()
        self.confirm = Confirm()
        self.mounted = False
        self._leave_when_mounted = False
        """During a run, `q`, `X` and ctrl+c act only when pressed again within its window."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every toast is literal text: paths, arm names, typed notes and log text are data,
        so they are never parsed as markup (a `[/x]` in a path would end the dashboard) and
        their control characters are shown escaped (`printable`). `markup` is ignored."""
        super().notify(
            printable(message),
            title=printable(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def compose(self) -> ComposeResult:
        yield from self.panels(self.feed, self.alert_marks)
        yield Footer()

    def panels(self, feed: Feed, alerts: AlertMarks) -> ComposeResult:
        """One run's panels: the status line, the timeline and the body (the layouts style
        them; a dashboard of several runs has them once per tab)."""
        yield StatusLine(feed.title, tag=feed.tag, reads_power=feed.reads_power,
                         status_note=lambda: feed.status_note, id="status")  # fmt: skip
        yield Timeline(feed.replay, alerts=alerts, session=feed.session, id="timeline")
        with Vertical(id="body"):
            yield Charts(MAIN_CHARTS, id="charts")
            yield Charts(PAIR_CHARTS, id="pair")
            yield Strips(id="strips")
            yield ArmsTable(reference=self.overlay, id="arms")
            yield ArmsTable(BRIEF, reference=self.overlay, id="arms-brief")
            yield LogPanel(self.log_lines, id="log")

    def get_driver_class(self) -> type[Driver]:
        driver = super().get_driver_class()
        if os.name != "posix":
            return driver
        from anemon.ui.terminal import hang_up_safe  # termios: POSIX only

        return hang_up_safe(driver)

    def on_mount(self) -> None:
        self.bind_panels()
        # What is alive now lives as long as the app: a replay's recording (a million event
        # objects), the modules, the widgets. A full collection walking all of it held the
        # event loop for up to ~0.5 s in a replay at `max` (bench/dashboard.py counts the
        # collections); frozen, the collector walks only what is made from here on. Undone
        # on unmount, so what dies with the app (the tests run many) is collected.
        gc.freeze()
        self._pace(self.redraw_s)
        self.fit_terminal()
        self.call_after_refresh(self.redraw, True)
        self.mounted = True
        if self._leave_when_mounted:
            self.exit()

    def on_unmount(self) -> None:
        gc.unfreeze()

    def bind_panels(self) -> None:
        """Hold the panels the timers and keys act on (a dashboard of several: each tab's)."""
        self.hold(Panels.under(self))
        for chart in self.charts:
            chart.reference = self.overlay

    def leave(self) -> None:
        """Exit now, or once mounted: a signal or a failed recording in the first moments
        must not tear the widgets down under `on_mount`."""
        if self.mounted:
            self.exit()
        else:
            self._leave_when_mounted = True

    def hold(self, panels: Panels) -> None:
        """The panels the timers and keys act on (a run's, in a dashboard of several)."""
        self.status, self.timeline, self.log_panel = (
            panels.status,
            panels.timeline,
            panels.log_panel,
        )
        self.tables, self.strips, self.charts = panels.tables, panels.strips, panels.charts

    def fit_terminal(self) -> None:
        """In a terminal smaller than the default layout needs, use the compact one if the
        operator did not choose the layout, else say how to; once, at start."""
        if self.layout_path != layouts.DEFAULT or not layouts.too_small(self.size):
            return
        size = f"{self.size.width}x{self.size.height}"
        if self.chosen:
            self.notify(f"small terminal ({size}): press l for the compact layout", timeout=8)
            return
        self.use_layout(layouts.COMPACT, say=False)
        self.notify(f"small terminal ({size}): the compact layout; l switches layouts", timeout=8)

    def tick(self) -> None:
        """Replay: add what came due (bounded per tick), move the timeline."""
        self.replay.tick()
        self.timeline.show()

    def redraw(self, force: bool = False) -> None:
        """Every panel checks for itself whether its data changed; the costly ones take turns,
        charts within a time budget, the table at most every TABLE_EVERY_S."""
        session = self.feed.session
        self._check_run_over()
        for toast in self.alert_marks.take():  # log text is data: never markup
            self.notify(toast.message, severity=toast.severity, timeout=10)
            if toast.bell:
                self.bell()
        changed = self._changed(session)  # asked even when forced: what is drawn is seen
        if not (force or changed):
            if time.monotonic() - self._quiet_since >= IDLE_AFTER_S:
                self._pace(max(self.redraw_s, IDLE_REDRAW_S))
            return  # a live session between two trials costs (almost) nothing
        self._quiet_since = time.monotonic()
        self._pace(self.redraw_s)
        self.rounds += 1
        began = time.perf_counter()
        with self.batch_update():
            self.status.show(session)
            self.timeline.show()
            self.log_panel.show(session)
            table_due = force or time.monotonic() - self._table_at >= TABLE_EVERY_S
            if table_due:
                self._table_at = time.monotonic()
                for table in self.tables:
                    if is_shown(table):  # a big arm's summary in a thread: the keys answer
                        table.show(session, off_loop=True)
            for strip in self.strips:
                if is_shown(strip):
                    strip.draw(session)
            self._table_owed = not table_due
            self._left = self._draw_charts(session, force, began)

    def _pace(self, period_s: float) -> None:
        """Run the redraw timer every `period_s` (restarted only when the period changes)."""
        if self._redraw_timer is not None:
            if self.redraw_period_s == period_s:
                return
            self._redraw_timer.stop()
        self.redraw_period_s = period_s
        self._redraw_timer = self.set_interval(period_s, self.redraw)
        if self.feed.replay is not None:
            self._offset_ticks()

    def _offset_ticks(self) -> None:
        """(Re)start a replay's ticks half a tick after the redraws: a tick and a round never
        fall in one turn of the event loop, which held it for both (~60 ms at max speed)."""
        if self._tick_timer is not None:
            self._tick_timer.stop()
        self._tick_timer = self.set_interval(self.tick_s, self.tick, pause=True)
        self.set_timer(self.tick_s / 2, self._tick_timer.resume)

    def _check_run_over(self) -> None:
        """Once a plan run's feed has finished: say how it ended (done or aborted) and where
        the recording is, and take the run-only keys out of the footer, the palette and the
        keys help."""
        if self.run_over or self.feed.controls is None or not self.feed.finished:
            return
        self.run_over = True
        done = run_end(self.feed.session, self.feed.record)
        self.queue_paused = self.status.held = False
        self.status.note = done
        self.notify(done, timeout=10)
        self.refresh_bindings()

    def _draw_charts(self, session: Session, force: bool, began: float) -> bool:
        """Charts whose data changed, starting where the last round stopped, until the round's
        budget is spent: a slow live session redraws them all at once (one screen update),
        a fast replay spreads them over rounds (the keys keep answering). True: some were
        left for the next round. The budget counts from `began`, the round's start: the table
        and the other panels drawn before the charts spend it too. A chart is started only if
        its last draw would still fit (a chart draws its canvases too: ~10-25 ms with 100k
        points); the round's first always is, so every chart comes round."""
        shown = [c for c in self.charts if is_shown(c)]
        for k in range(len(shown)):
            chart = shown[(self._next_chart + k) % len(shown)]
            start = time.perf_counter()
            if (
                k
                and not force
                and start - began + self._chart_cost.get(chart, 0.0) > ROUND_BUDGET_S
            ):
                self._next_chart = (self._next_chart + k) % len(shown)
                return True
            if chart.draw(session):
                self._chart_cost[chart] = time.perf_counter() - start
        self._next_chart = 0
        return False

    def _changed(self, session: Session) -> bool:
        """New data or a moving replay; or work the last round left (for a few rounds at
        most). A live session between two trials, or one whose panels are all up to date,
        costs a comparison per tick."""
        replay = self.feed.replay
        seen = (id(session), session.version, replay and (replay.position, replay.speed,
                                                          replay.paused))  # fmt: skip
        if seen != self._seen:
            self._seen = seen
            self._settling = SETTLE_ROUNDS
            return True
        if self._table_owed and time.monotonic() - self._table_at >= TABLE_EVERY_S:
            return True  # one round when the table's second is up, not a round per tick
        self._settling -= 1
        return self._left and self._settling >= 0

    # ---- actions -------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        needs = keys.NEEDS.get(action)
        if needs == "replay":
            return self.feed.replay is not None
        if needs == "controls":
            return self.feed.controls is not None and not self.run_over
        if needs == "overlay":
            return self.overlay is not None
        if needs == "no overlay":
            return self.overlay is None and self.feed.replay is not None
        return True

    @property
    def replay(self) -> ReplayControls:
        """What the replay keys drive: `check_action` offers them only when there is one."""
        replay = self.feed.replay
        assert replay is not None, "a replay action without a replay"
        return replay

    @property
    def controls(self) -> RunControls:
        """What the run-control keys call: `check_action` offers them only when there are."""
        controls = self.feed.controls
        assert controls is not None, "a run-control action without a plan run"
        return controls

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        ours = {a.title for a in keys.ACTIONS}
        for command in super().get_system_commands(screen):
            if command.title not in ours:
                yield command
        for a in keys.ACTIONS:
            if self.check_action(a.name, ()):
                yield SystemCommand(a.title, a.help, partial(self.run_action, a.action))

    def running(self) -> bool:
        """A plan run is in progress: quitting asks first (several runs: any of them)."""
        return self.feed.controls is not None and not self.run_over

    def _confirmed(self, key: str, what: str) -> bool:
        """During a run, a key that ends something (`key`; "" from the palette: at once) acts
        only when pressed again within the window; the first press says so."""
        if not key or not self.running():
            return True
        if self.confirm.press(key):
            return True
        shown = self.get_key_display(Binding(key, ""))
        window = f"{self.confirm.window_s:g} s"
        self.notify(f"press {shown} again within {window} to {what}", timeout=self.confirm.window_s)
        return False

    async def action_quit(self, key: str = "") -> None:
        """`q`, ctrl+c, ctrl+q: at once in a watch, a replay or a run that is done; during a run,
        when confirmed."""
        if self._confirmed(key, self.quit_question):
            await super().action_quit()

    def action_keys_help(self) -> None:
        if isinstance(self.screen, KeysHelp):
            return
        note = ""
        if self.running():
            note = (
                f"During a run, q, X, ^c and ^q ask first: press the same key again within "
                f"{self.confirm.window_s:g} s."
            )
        self.push_screen(KeysHelp(self.help_rows(), note))

    def help_rows(self) -> list[tuple[str, str]]:
        """The keys help: every key the dashboard answers now (as shown) and what it does."""
        rows = [
            (", ".join(self.get_key_display(Binding(k, "")) for k in keys.help_keys(a)), a.help)
            for a in keys.ACTIONS
            if self.check_action(a.name, ())
        ]
        rows.append(("^p", "Command palette"))
        return rows

    def _replayed(self, moved: bool = True) -> None:
        """After a replay key: show its effect now, not at the next timer. A seek (`moved`)
        redraws every chart at once; a pause or a speed shows in the timeline, and the
        charts take their turns (all at once held a replay at `max` for ~50 ms a key)."""
        self.timeline.show()
        self.redraw(force=moved)

    def action_toggle_pause(self) -> None:
        self.replay.toggle_pause()
        self._replayed(moved=False)

    def action_faster(self) -> None:
        self.replay.faster()
        self._replayed(moved=False)

    def action_slower(self) -> None:
        self.replay.slower()
        self._replayed(moved=False)

    def action_seek_by(self, seconds: float) -> None:
        self.replay.seek_by(seconds)
        self._replayed()

    def action_seek_start(self) -> None:
        self.replay.seek(0.0)
        self._replayed()

    def action_seek_end(self) -> None:
        self.replay.seek(self.replay.duration)
        self._replayed()

    def action_toggle_overlay(self) -> None:
        """Show or hide the reference curves (the arms table keeps its "vs ref" column)."""
        self.overlay_shown = not self.overlay_shown
        for chart in self.charts:
            chart.reference = self.overlay if self.overlay_shown else None
        self.redraw(force=True)

    def action_no_overlay(self) -> None:
        """`o` in a replay without a reference: say how to get one."""
        self.notify("no reference: replay SOURCE --overlay OTHER", timeout=4)

    def action_marker(self) -> None:
        self.push_screen(MarkerPrompt(), self._add_marker)

    def _add_marker(self, note: str | None) -> None:
        if not note:
            return
        try:
            self.feed.marker(note)
        except OSError as e:
            self.notify(f"marker not saved: {e}", severity="error", timeout=8)
            return
        finally:
            self.redraw()
        record = self.feed.record
        self.notify(f"marker saved to {record}" if record else "marker added", timeout=4)

    def action_next_layout(self) -> None:
        i = self.layouts.index(self.layout_path) if self.layout_path in self.layouts else -1
        self.use_layout(self.layouts[(i + 1) % len(self.layouts)])

    def use_layout(self, path: Path, say: bool = True) -> None:
        """Swap the layout file in the stylesheet, live, restyling only the panels its rules
        match (`layouts.swap`; `say`: notify). A file in the layouts folder that does not
        parse (only --layout is checked at start) is said, and left out of the cycle."""
        try:
            layouts.swap(self, self.layout_path, path)
        except StylesheetError as e:
            if path in self.layouts and path != self.layout_path:
                self.layouts.remove(path)
            self.notify(f"layout {path.name} not used: {layouts.first_line(e)}",
                        severity="error", timeout=8, markup=False)  # fmt: skip
            return
        self.layout_path = path
        self.call_after_refresh(self.redraw, True)
        if say:
            self.notify(f"layout {path.stem}", timeout=2)

    def action_export(self) -> None:
        self.save_dir.mkdir(parents=True, exist_ok=True)
        text, path = export_summary(self.feed.session, self.save_dir)
        self.copy_to_clipboard(text)
        self.notify(f"summary copied and saved to {path}", timeout=4)

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        if path is None:
            self.save_dir.mkdir(parents=True, exist_ok=True)
        saved = self.save_screenshot(filename, path or str(self.save_dir))
        self.notify(f"screenshot saved to {saved}", timeout=4)

    async def action_abort_arm(self) -> None:
        await self.controls.abort_arm()

    async def action_abort_session(self, key: str = "") -> None:
        if self._confirmed(key, "abort the session"):
            await self.controls.abort_session()

    async def action_skip_cooldown(self) -> None:
        """`k`: the controller is asked in any case (it records the key); nothing to skip
        is said."""
        session = self.feed.session
        waiting = cooling(session) or asking(session)
        await self.controls.skip_cooldown()
        if not waiting:
            self.notify("no cooldown or wait to skip", timeout=3)

    async def action_extend_cooldown(self, seconds: float) -> None:
        waiting = cooling(self.feed.session)
        await self.controls.extend_cooldown(seconds)
        if not waiting:
            self.notify("no cooldown to extend", timeout=3)

    async def action_toggle_queue(self) -> None:
        if self.queue_paused:
            await self.controls.resume_queue()
        else:
            await self.controls.pause_queue()
        self.queue_paused = not self.queue_paused
        self.status.held = self.queue_paused
        self.status.show(self.feed.session)
        self.notify("queue held" if self.queue_paused else "queue resumed", timeout=3)
