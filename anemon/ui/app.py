"""The dashboard: wiring for 1..N runs (`RunPane`s), their keys and timers. Panels live in
their own modules; the feeds are polled, not pushed.

A replay is driven by a timer calling `replay.tick()` (a fast replay coalesces by
construction); live feeds run outside the app (see `launch`). Panels redraw on a slower
timer, each only when its data changed, charts staggered and only the visible ones (when and
what: `scheduler.RedrawScheduler`).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable
from functools import partial
from pathlib import Path

from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.content import Content
from textual.css.errors import StylesheetError
from textual.driver import Driver
from textual.geometry import Size
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, TabbedContent, TabPane

from anemon.events import Event
from anemon.feeds import Feed, ReplayControls, RunControls
from anemon.feeds.replay import EXPORTS_DIR
from anemon.feeds.runs import Run, Runs
from anemon.text import printable
from anemon.ui import keys, layouts, overview
from anemon.ui.arms_table import ArmsTable
from anemon.ui.charts.chart import Chart
from anemon.ui.confirm import Confirm, quit_what
from anemon.ui.export import export_summary
from anemon.ui.help import KeysHelp
from anemon.ui.marker import MarkerBar
from anemon.ui.overlay import Overlay
from anemon.ui.overview import Overview
from anemon.ui.pane import RunPane
from anemon.ui.scheduler import RedrawScheduler
from anemon.ui.status import cooling

BASE_CSS = Path(__file__).with_name("dashboard.tcss")
# EXPORTS_DIR: where `e` and `s` write when not told (`save_dir`), under the cwd, made on
# demand (git ignores it); a replay's markers go there too (`feeds.replay`)
DASHBOARD = "dashboard"
"""The source of the markers the dashboard records itself (a worker that failed)."""


class Dashboard(App[None]):
    """The same screens live and in replay, for one run or several (a tab each under an
    overview strip; one run has neither); each run's session is read fresh on every draw. The
    keys act on the run shown (`pane`)."""

    BINDINGS = keys.BINDINGS
    CSS = overview.CSS

    def __init__(
        self,
        runs: Runs,
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
        self.runs = runs
        self.layout_path = layout
        self.chosen = chosen
        """The operator chose the layout (--layout, or `l` pressed): it is kept whatever the
        terminal's size; else the layout follows it (`fit_terminal`)."""
        self._small: bool | None = None
        """Whether the terminal was too small for the default layout when last fitted."""
        self.layouts = layouts.choices(layout)
        self.save_dir = save_dir or Path.cwd() / EXPORTS_DIR
        self.tick_s = tick_s
        self.redraw_s = redraw_s
        self.overlay = overlay
        """The reference session under the charts (`replay --overlay`); `o` hides it."""
        self.overlay_shown = overlay is not None
        self.title = runs.title
        self.panes = [RunPane(run, runs.prefix(run), log_lines=log_lines, overlay=overlay)
                      for run in runs]  # fmt: skip
        for run in runs:
            run.feed.subscribe(self._event_came)
        self._round_asked = False
        self.pane = self.panes[0]
        """The run shown, which the keys act on."""
        self.quit_question = quit_what(len(self.panes))
        """What the quit confirmation says quitting does."""
        self.scheduler = RedrawScheduler(redraw_s)
        self.rounds = 0
        self._redraw_timer: Timer | None = None
        self._timer_s = redraw_s
        """The redraw timer's period (the scheduler's `period_s` when it was last paced)."""
        self._tick_timer: Timer | None = None
        self.confirm = Confirm()
        """During a run, `q`, `X` and ctrl+c act only when pressed again within its window."""
        self.mounted = False
        self._leave_when_mounted = False
        self.overview: Overview | None = None
        self._failures: set[tuple[Run, str]] = set()
        """The workers whose failure was said (by run and name)."""
        self._resized_charts = False
        """A forced redraw is queued for the charts laid out at a new size."""

    @property
    def feed(self) -> Feed:
        """The run shown's."""
        return self.pane.feed

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
        if not self.runs.several:
            yield from self.pane.compose()
        else:
            yield Overview(self.runs.runs, id="overview")
            with TabbedContent(id="tabs"):
                for i, pane in enumerate(self.panes):
                    with TabPane(Content(printable(pane.label)), id=f"run-{i}"):  # literal text
                        yield from pane.compose()
        yield Footer()
        yield MarkerBar()

    def get_driver_class(self) -> type[Driver]:
        driver = super().get_driver_class()
        if os.name != "posix":
            return driver
        from anemon.ui.terminal import hang_up_safe  # termios: POSIX only

        return hang_up_safe(driver)

    def on_mount(self) -> None:
        if self.runs.several:
            self.overview = self.query_one(Overview)
            for i, pane in enumerate(self.panes):
                pane.bind(self.query_one(f"#run-{i}", TabPane))
        else:
            self.pane.bind(self)
        # What is alive now lives as long as the app: a replay's recording (a million event
        # objects), the modules, the widgets. A full collection walking all of it held the
        # event loop for up to ~0.5 s in a replay at `max` (bench/dashboard.py counts the
        # collections); frozen, the collector walks only what is made from here on. Undone
        # on unmount, so what dies with the app (the tests run many) is collected.
        gc.freeze()
        self._pace(self.redraw_s)
        self.fit_terminal(self.size)
        self.call_after_refresh(self.redraw, True)
        self.mounted = True
        if self._leave_when_mounted:
            self.exit()

    def on_unmount(self) -> None:
        gc.unfreeze()

    def leave(self) -> None:
        """Exit now, or once mounted: a signal or a failed recording in the first moments
        must not tear the widgets down under `on_mount`."""
        if self.mounted:
            self.exit()
        else:
            self._leave_when_mounted = True

    def run_failed(self, run: Run, error: BaseException) -> None:
        """A run's feed stopped with an error (the others go on): said on screen."""
        if self.is_running:
            pane = next(p for p in self.panes if p.run is run)  # the runs it was made with
            self.notify(pane.said(f"feed stopped: {error}"), severity="error", timeout=30)

    def on_arms_table_failed(self, message: ArmsTable.Failed) -> None:
        """Every worker's failure, in one place: one toast, and a marker in its run's session
        (recorded where the run records), once per worker name; the dashboard goes on."""
        pane = next((p for p in self.panes if message.table in p.panels.tables), self.pane)
        if (pane.run, message.what) in self._failures:
            return  # said once (each table of a run summarizes the same arm)
        self._failures.add((pane.run, message.what))
        said = f"{message.what} failed: {type(message.error).__name__}: {message.error}"
        self.notify(pane.said(said), severity="error", timeout=10)
        try:
            pane.feed.marker(f"dashboard: {said}", source=DASHBOARD)
        except OSError as e:  # a replay's markers file
            self.notify(f"marker not saved: {e}", severity="error", timeout=8)

    def fit_terminal(self, size: Size) -> None:
        """Follow the terminal's size: below what the default layout needs, the compact one,
        above it the default, unless the operator chose the layout (`--layout` or `l`: then a
        small terminal is only told how to switch). Acts when `size` crosses the threshold
        (at start, and on a resize), not on every resize event of a drag."""
        small = layouts.too_small(size)
        if small == self._small:
            return
        self._small = small
        shown = f"{size.width}x{size.height}"
        if self.chosen:
            if small and self.layout_path == layouts.DEFAULT:
                self.notify(f"small terminal ({shown}): press l for the compact layout", timeout=8)
            return
        fit = layouts.fitting(size)
        if fit == self.layout_path:
            return
        self.use_layout(fit, say=False)
        what = "small terminal" if small else "terminal"
        self.notify(f"{what} ({shown}): the {fit.stem} layout; l switches layouts", timeout=8)

    def on_resize(self, event: events.Resize) -> None:
        if self.mounted:  # the first fit is on_mount's, once the panels are there
            self.fit_terminal(event.size)

    def on_chart_resized(self, event: Chart.Resized) -> None:
        """A chart laid out at a new size draws at it, once for all that were (a layout
        that showed the charts of an ended replay left them empty: no data came to draw)."""
        event.stop()
        if not self._resized_charts:
            self._resized_charts = True
            self.call_after_refresh(self._draw_resized)

    def _draw_resized(self) -> None:
        self._resized_charts = False
        self.redraw(force=True)

    def select(self, index: int) -> None:
        """Show run `index` (several: its tab) and let the keys act on it."""
        self.query_one(TabbedContent).active = f"run-{index}"

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane_id = event.pane.id or ""
        index = int(pane_id.removeprefix("run-")) if pane_id.startswith("run-") else 0
        if self.panes[index] is not self.pane:
            self.pane = self.panes[index]
            self.scheduler.shown()
            self.refresh_bindings()
            self.redraw(force=True)

    def tick(self) -> None:
        """Replay: add what came due (bounded per tick), move the timeline."""
        self.replay.tick()
        self.pane.panels.timeline.show()

    def redraw(self, force: bool = False) -> None:
        """Every run's news (its end, its toasts) and the overview; then the run shown's
        panels, when the scheduler says this round draws."""
        if not self.mounted:
            return
        self._news()
        if self.overview is not None:
            self.overview.show()
        drawing = self.scheduler.round(self.pane.seen(), force, self.pane.readings())
        self._pace(self.scheduler.period_s)
        if not drawing:
            return  # a live session between two trials costs (almost) nothing
        self.rounds += 1
        with self.batch_update():
            self.pane.draw(self.scheduler, force)

    def _event_came(self, _event: Event) -> None:
        """An event while the redraw timer idles (`scheduler.IDLE_REDRAW_S`): a round now, so
        what it brings shows at once, not up to an idle period later (at the timer's own pace
        the next round is soon anyway)."""
        if self._timer_s != self.redraw_s and not self._round_asked and self.mounted:
            self._round_asked = True
            self.call_later(self._asked_round)

    def _asked_round(self) -> None:
        self._round_asked = False
        self.redraw()

    def _news(self) -> None:
        """Each run's alerts as toasts; once a plan run is through, how it ended (and its
        run-only keys leave the footer, the palette and the keys help)."""
        over = False
        for pane in self.panes:
            for toast in pane.alerts.take():  # log text is data: never markup
                self.notify(pane.said(toast.message), severity=toast.severity, timeout=10)
                if toast.bell:
                    self.bell()
            done = pane.check_over()
            if done is not None:
                over = True
                self.notify(pane.said(done), timeout=10)
        if over:
            self.refresh_bindings()

    def _pace(self, period_s: float) -> None:
        """Run the redraw timer every `period_s` (restarted only when the period changes)."""
        if self._redraw_timer is not None:
            if self._timer_s == period_s:
                return
            self._redraw_timer.stop()
        self._timer_s = period_s
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

    # ---- actions -------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        needs = keys.NEEDS.get(action)
        if needs == "replay":
            return self.feed.replay is not None
        if needs == "controls":
            return self.pane.running()
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
        """A plan run is in progress (several: any of them): quitting asks first."""
        return any(pane.running() for pane in self.panes)

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
        if self.runs.several:  # the tab bar's own keys (Textual's `Tabs`, focused at start)
            rows.append(("←, →", overview.TAB_KEYS_HELP))
        rows.append(("^p", "Command palette"))
        return rows

    def _replayed(self, moved: bool = True) -> None:
        """After a replay key: show its effect now, not at the next timer. A seek (`moved`)
        redraws every chart at once; a pause or a speed shows in the timeline, and the
        charts take their turns (all at once held a replay at `max` for ~50 ms a key)."""
        self.pane.panels.timeline.show()
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
        for pane in self.panes:
            pane.show_reference(self.overlay_shown)
        self.redraw(force=True)

    def action_no_overlay(self) -> None:
        """`o` in a replay without a reference: say how to get one."""
        self.notify("no reference: replay SOURCE --overlay OTHER", timeout=4)

    def action_marker(self) -> None:
        self.query_one(MarkerBar).open()

    def on_marker_bar_noted(self, message: MarkerBar.Noted) -> None:
        note = message.note
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
        self.chosen = True  # the operator's choice holds from now on, whatever the size
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
        text, path = export_summary(
            self.feed.session, self.save_dir, self.feed.title, self.pane.label or None
        )
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
        waiting = cooling(self.feed.session) or self.controls.prompt is not None
        await self.controls.skip_cooldown()
        if not waiting:
            self.notify("no cooldown or wait to skip", timeout=3)

    async def action_extend_cooldown(self, seconds: float) -> None:
        waiting = cooling(self.feed.session)
        await self.controls.extend_cooldown(seconds)
        if not waiting:
            self.notify("no cooldown to extend", timeout=3)

    async def action_toggle_queue(self) -> None:
        controls = self.controls
        await (controls.resume_queue() if controls.paused else controls.pause_queue())
        self.pane.panels.status.show(self.feed.session)
        self.notify("queue held" if controls.paused else "queue resumed", timeout=3)
