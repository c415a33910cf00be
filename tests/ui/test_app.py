"""Pilot tests: every key and what it does, on fixed data (the replay clock never moves)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from textual.widgets import Input

from anemon.control.battery import SIMULATED_OPERATOR
from anemon.events import (
    AlertEvent,
    CooldownEvent,
    MarkerEvent,
    PhaseEvent,
    StartEvent,
    TextEvent,
    TrialEvent,
)
from anemon.feeds.runs import Runs
from anemon.recording.writer import Recorder, make_header
from anemon.ui import scheduler
from anemon.ui.app import Dashboard
from anemon.ui.arms_table import ArmsTable
from anemon.ui.charts.chart import Chart
from anemon.ui.charts.strips import Strip
from anemon.ui.log_panel import ErrorHighlighter, LogPanel
from anemon.ui.pane import is_shown
from anemon.ui.status import StatusLine
from anemon.ui.timeline import Timeline

from .helpers import DEFAULT_CHARTS, CallLog, MakeApp, live_feed, settle
from .sample import MARKUP_LINE, replay_feed

SIZE = (120, 40)


async def test_the_default_layout_shows_arms_charts_and_log(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        table = app.query_one("#arms", ArmsTable)
        assert table.row_count == 2
        row = [cell.plain for cell in table.get_row("minicpm5_1b_ane_pal8")]
        assert row[:3] == ["minicpm5_1b_ane_pal8", "30", "7,680"]
        assert "fair → serious" in row
        charts = [c for c in app.query(Chart) if c.drawn is not None]
        assert {c.id for c in charts} == DEFAULT_CHARTS
        assert "── phase done" in app.query_one(LogPanel).lines


async def test_space_pauses_and_resumes(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space")
        assert app.feed.replay.paused
        assert "paused" in app.query_one(Timeline).shown
        await pilot.press("space")
        assert not app.feed.replay.paused


async def test_plus_and_minus_change_the_speed_shown(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("plus")
        assert app.feed.replay.speed == 2.0
        assert " 2× " in app.query_one(Timeline).shown
        await pilot.press("minus", "minus")
        assert app.feed.replay.speed == 0.5


async def test_the_timeline_moving_asks_no_layout_of_the_screen(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space", "home")  # paused: only the keys below move it
        timeline = app.query_one(Timeline)
        await pilot.pause()
        region = timeline.region  # the status line above it has taken its most lines
        layouts: list[bool] = []
        update = timeline.update
        monkeypatch.setattr(timeline, "update", lambda text, layout=True: layouts.append(layout)
                            or update(text, layout=layout))  # fmt: skip
        for key in ("end", "home", "plus"):
            shown = timeline.shown
            await pilot.press(key)
            await pilot.pause()
            assert timeline.shown != shown
            assert timeline.render_line(0).text.strip() == timeline.shown.strip()
        # one row as wide as the screen, whatever it says: a replay playing moved it every
        # round, and each move laid the whole screen out again
        assert layouts == [False, False, False]
        assert timeline.region == region


async def test_a_speed_key_leaves_the_charts_their_turns_and_a_seek_draws_them_all(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        drawn: list[str | None] = []
        for chart in app.pane.panels.charts:
            draw = chart.draw
            chart.draw = lambda s, c=chart, d=draw: drawn.append(c.id) or d(s)  # type: ignore
        monkeypatch.setattr("anemon.ui.scheduler.ROUND_BUDGET_S", 0.0)  # a round draws one chart
        app.action_faster()  # the keys' actions, called: no timer's round comes in between
        assert " 2× " in app.query_one(Timeline).shown and len(drawn) == 1
        drawn.clear()
        app.action_seek_by(-10)
        assert len(drawn) == len([c for c in app.pane.panels.charts if is_shown(c)]) > 1


SEEKS = {
    # key: (where the replay starts, its position after the key, from "start" or "end")
    "left": ("end", ("end", -10)),
    "shift+left": ("end", ("end", -60)),
    "comma": ("end", ("end", -60)),
    "right": ("start", ("start", 10)),
    "shift+right": ("start", ("start", 60)),
    "full_stop": ("start", ("start", 60)),
    "home": ("end", ("start", 0)),
    "end": ("start", ("end", 0)),
}


@pytest.mark.parametrize("key", list(SEEKS))
async def test_a_seek_key_moves_the_replay(make_app: MakeApp, key: str) -> None:
    app = make_app()
    replay = app.feed.replay
    ends = {"start": 0.0, "end": replay.duration}
    before, (base, offset) = SEEKS[key]
    replay.seek(ends[before])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(key)
        assert replay.position == pytest.approx(ends[base] + offset)


async def test_seeking_to_the_start_empties_the_panels_and_to_the_end_fills_them(
    make_app: MakeApp,
) -> None:
    app = make_app()
    replay = app.feed.replay
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("home")
        assert app.feed.session.counts["trial"] <= 1
        assert app.query_one("#arms", ArmsTable).row_count == 0
        await pilot.press("end")
        assert replay.finished
        assert app.query_one("#arms", ArmsTable).row_count == 2


async def test_a_seek_summarizes_a_big_arm_at_once_whatever_its_gap(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Arms summarized in a thread wait SUMMARY_GAP_S between two summaries, but not after a
    seek: the arm's new trials show at once."""
    from anemon.ui import arms_table

    monkeypatch.setattr(arms_table, "OFF_LOOP_TRIALS", 0)  # every arm in a worker
    monkeypatch.setattr(arms_table, "SUMMARY_GAP_S", 3600.0)
    app = make_app()
    replay = app.feed.replay
    trials = [e for e in replay.events if isinstance(e, TrialEvent)]
    replay.seek(trials[5].t - replay.start)  # the first arm's sixth trial
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space")  # paused: only the key moves it
        table = app.query_one("#arms", ArmsTable)
        await app.workers.wait_for_complete()
        await pilot.pause()
        arm = "minicpm5_1b_ane_pal8"
        before = table.get_row(arm)[1].plain
        session = app.feed.session
        await pilot.press("shift+right")  # +60 s
        assert app.feed.session is session  # a seek forward: the same session, more trials
        for _ in range(20):  # the workers the seek started, then their rows
            await app.workers.wait_for_complete()
            await pilot.pause()
        after = table.get_row(arm)[1].plain  # timed trials
        assert before == "5" and int(after) > 5


async def test_end_after_home_shows_the_screen_end_showed(make_app: MakeApp) -> None:
    """The second End takes up the session Home left (`Replayer.seek`): nothing on the screen
    may tell the two apart."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        # Home's cooldown line first: the status line keeps the rows it has taken
        await pilot.press("space", "home", "end")
        await settle(pilot)
        whole, first = app.feed.session, app.export_screenshot()
        await pilot.press("home")
        await settle(pilot)
        assert app.query_one("#arms", ArmsTable).row_count == 0
        await pilot.press("end")
        await settle(pilot)
        assert app.feed.session is whole and app.export_screenshot() == first


async def test_marker_key_adds_an_operator_note(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        assert isinstance(app.focused, Input)
        await pilot.press(*"hot room", "enter")
        assert app.feed.session.markers[-1].note == "hot room"
        assert "── marker: hot room" in app.query_one(LogPanel).lines
        await pilot.press("m", "x", "escape")
        assert app.feed.session.markers[-1].note == "hot room"


async def test_the_marker_bar_takes_every_key_while_open_and_moves_no_panel(
    make_app: MakeApp,
) -> None:
    """Typed over the footer: `l` and `q` are text there, not a layout switch or a quit; the
    panels keep their places, and the focus goes back where it was."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space")  # paused: the status line no longer changes
        await settle(pilot)
        panels = {w: w.region for w in app.screen.children if w.id != "marker"}
        await pilot.press("m")
        assert {w: w.region for w in panels} == panels
        await pilot.press(*"l q", "enter")
        assert app.layout_path.stem == "default" and app.is_running
        assert app.feed.session.markers[-1].note == "l q"
        assert app.focused is None and not app.query_one("#marker").display


async def test_layout_key_cycles_layouts_live(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert app.query_one("#charts").display
        await pilot.press("l")
        assert app.layout_path.stem == "compact"
        assert not app.query_one("#charts").display
        assert app.query_one("#strips").display
        assert app.query_one("#arms-brief").display
        await pilot.press("l", "l")
        assert app.layout_path.stem == "ab"
        assert app.query_one("#pair").display
        await pilot.press("l")
        assert app.layout_path.stem == "default"


async def test_export_writes_markdown_and_copies_it(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        text = (tmp_path / "anemon-summary.md").read_text()
        title, blank, header = text.splitlines()[:3]
        assert title.startswith("### sample.jsonl") and not blank  # its source, device, date
        assert header.startswith("| arm | trials | tokens |")
        assert "| minicpm5_1b_gpu_int8 | 30 | 7,680 |" in text
        assert app.clipboard == text
        await pilot.press("e")
        assert (tmp_path / "anemon-summary-2.md").exists()


async def test_screenshot_key_saves_an_svg(make_app: MakeApp, tmp_path: Path) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        [svg] = tmp_path.glob("*.svg")
        assert svg.read_text().startswith("<svg")


async def test_export_and_screenshot_go_into_anemon_exports_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from anemon.ui import layouts

    monkeypatch.chdir(tmp_path)
    app = Dashboard(Runs.one(replay_feed()), layouts.resolve("default"))
    async with app.run_test(size=SIZE) as pilot:
        assert not (tmp_path / "anemon-exports").exists()  # made on demand
        await pilot.press("e", "s")
    assert {p.suffix for p in (tmp_path / "anemon-exports").iterdir()} == {".md", ".svg"}
    assert {p.name for p in tmp_path.iterdir()} == {"anemon-exports"}
    ignored = (Path(__file__).parents[2] / ".gitignore").read_text().splitlines()
    assert "anemon-exports/" in ignored


async def test_q_quits(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0


async def test_a_log_line_with_markup_and_escapes_is_shown_literally(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        log = app.query_one(LogPanel)
        shown = MARKUP_LINE.replace("\x1b", "\\x1b")
        assert shown in log.lines
        assert "[bold]not bold[/bold] [link=https://example.com]x[/link]" in shown
        log.scroll_to(y=log.lines.index(shown), animate=False)
        await pilot.pause()
        first_row = "".join(segment.text for segment in log.render_line(0))
        assert first_row.startswith(shown)


async def test_a_flood_of_lines_shows_the_newest_and_says_what_it_skipped(
    make_app: MakeApp,
) -> None:
    from anemon.ui.log_panel import PER_ROUND

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        session = app.feed.session
        for i in range(PER_ROUND + 50):
            session.add(TextEvent(t=1e6 + i, wall=0.0, line=f"flood {i}"))
        app.redraw(force=True)
        await pilot.pause()
        lines = app.query_one(LogPanel).lines
        assert lines[-PER_ROUND - 1] == "── … 50 lines skipped at this speed"
        assert lines[-PER_ROUND:] == [f"flood {i}" for i in range(50, PER_ROUND + 50)]


def test_error_lines_are_highlighted_and_nothing_else_is() -> None:
    from rich.text import Text

    highlight = ErrorHighlighter()
    error = Text("[bench] ERROR: Metal GPU Timeout")
    highlight.highlight(error)
    assert error.spans
    plain = Text("TRIAL arm=[red]x decode_tps=1")
    highlight.highlight(plain)
    assert not plain.spans


async def test_arm_names_are_data_in_the_table(make_app: MakeApp) -> None:
    events = [
        StartEvent(t=0, wall=0, arm="[red]x", line="START arm=[red]x"),
        TrialEvent(t=1, wall=1, arm="[red]x", trial=1, decode_tps=10.0, gen=256, thermal=1),
    ]
    app = make_app(feed=replay_feed(events))
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        row = app.query_one("#arms", ArmsTable).get_row("[red]x")
        assert row[0].plain == "[red]x"


async def test_table_columns_widen_as_figures_grow(make_app: MakeApp) -> None:
    events = [TrialEvent(t=1, wall=1, arm="a", trial=1, decode_tps=1.0, gen=256, thermal=1)]
    app = make_app(feed=replay_feed(events))
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()  # the row is laid out at its first, shorter figures
        app.feed.session.add(
            TrialEvent(t=2, wall=2, arm="a", trial=2, decode_tps=1234.5, gen=256, thermal=2)
        )
        app.redraw(force=True)
        await pilot.pause()
        table = app.query_one("#arms", ArmsTable)
        thermal = table.columns["thermal"]
        assert thermal.content_width >= len("fair → serious")


async def test_run_control_keys_call_the_controls(make_app: MakeApp) -> None:
    controls = CallLog()
    app = make_app(feed=live_feed(controls))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "X", "X", "k", "w", "p", "p")  # X asks first
    assert controls.calls == [
        "abort_arm",
        "abort_session",
        "skip_cooldown",
        "extend_cooldown 60",
        "pause_queue",
        "resume_queue",
    ]


REPLAY_ACTIONS = ("toggle_pause", "faster", "slower", "seek_by", "seek_start", "seek_end")
RUN_ACTIONS = ("abort_arm", "abort_session", "skip_cooldown", "extend_cooldown", "toggle_queue")
ALWAYS = ("quit", "keys_help", "marker", "next_layout", "export", "screenshot")
FEEDS = {
    "replay": (replay_feed, {*REPLAY_ACTIONS, *ALWAYS}),
    "live": (live_feed, set(ALWAYS)),
    "plan run": (lambda: live_feed(CallLog()), {*RUN_ACTIONS, *ALWAYS}),
}


@pytest.mark.parametrize("kind", list(FEEDS))
@pytest.mark.parametrize("action", [*REPLAY_ACTIONS, *RUN_ACTIONS, *ALWAYS])
def test_an_action_is_offered_only_when_the_feed_has_what_it_needs(
    make_app: MakeApp, kind: str, action: str
) -> None:
    make_feed, offered = FEEDS[kind]
    assert make_app(feed=make_feed()).check_action(action, ()) is (action in offered)


async def test_keys_a_live_feed_cannot_serve_do_nothing(make_app: MakeApp) -> None:
    feed = live_feed()
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space", "plus", "left", "end", "a", "X", "k", "w", "p")
        await pilot.pause()
        assert app.is_running and not app.query_one(Timeline).display
    assert feed.session.version == 0  # not even a marker: no action ran


async def test_the_command_palette_offers_a_replays_actions(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE):
        titles = [c.title for c in app.get_system_commands(app.screen)]
    for title in ("Quit", "Pause", "Faster", "Marker", "Layout", "Export", "Screenshot"):
        assert titles.count(title) == 1, title
    assert "Abort arm" not in titles


async def test_the_command_palette_offers_a_plan_runs_actions(make_app: MakeApp) -> None:
    app = make_app(feed=live_feed(CallLog()))
    async with app.run_test(size=SIZE):
        titles = [c.title for c in app.get_system_commands(app.screen)]
    assert "Abort arm" in titles and "Pause" not in titles


async def test_palette_command_runs_its_action(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        [pause] = [c for c in app.get_system_commands(app.screen) if c.title == "Pause"]
        await pause.callback()
        await pilot.pause()
        assert app.feed.replay.paused


async def test_a_live_session_updates_on_the_redraw_timer(make_app: MakeApp) -> None:
    feed = live_feed()
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        add = feed.pipeline.emit
        add(StartEvent(t=0, wall=0, arm="a1", line="START arm=a1"))
        for i in range(1, 6):
            add(TrialEvent(t=i, wall=i, arm="a1", trial=i, decode_tps=50.0 + i, thermal=1))
        add(TextEvent(t=6, wall=6, line="ERROR: boom"))
        app.redraw(force=True)
        await pilot.pause()
        assert app.query_one("#arms", ArmsTable).row_count == 1
        assert app.query_one(LogPanel).lines[-1] == "ERROR: boom"
        await pilot.press("m", *"n1", "enter")
        assert [(m.source, m.note) for m in feed.session.markers] == [("operator", "n1")]


async def test_the_charts_stay_where_they_are_when_the_first_records_come(
    make_app: MakeApp,
) -> None:
    """The status line's second line and the arms table's first row are there before the
    data that fills them: the first trial moves no chart (a move paints every chart again)."""
    feed = live_feed()
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = {chart.id: chart.region for chart in app.query(Chart) if is_shown(chart)}
        arm = "minicpm5_1b_ane_pal8"  # a real arm's name: the status takes two lines
        feed.pipeline.emit(StartEvent(t=0, wall=0, arm=arm, line=f"START arm={arm}"))
        feed.pipeline.emit(TrialEvent(t=5, wall=5, arm=arm, trial=0, decode_tps=75.0,
                                      thermal=1, battery=95, battery_state="charging"))  # fmt: skip
        app.redraw(force=True)
        await settle(pilot)
        assert app.query_one("#arms", ArmsTable).row_count == 1
        assert app.query_one(StatusLine).content_size.height == 2
        after = {chart.id: chart.region for chart in app.query(Chart) if is_shown(chart)}
    assert after == before and set(before) == DEFAULT_CHARTS


def cooling(t: float, done: bool = False) -> CooldownEvent:
    return CooldownEvent(
        t=t, wall=t, elapsed_s=5, min_s=180, cap_s=600, until="fair", thermal=2, basis="app",
        done=done, reason="cool" if done else "",
    )  # fmt: skip


async def test_a_cooldown_line_moves_the_charts_once_not_at_every_cooldown(
    make_app: MakeApp,
) -> None:
    """The status line keeps the most lines it has taken at its width: the cooldown's line
    (a third at 120 columns) makes room once, and its going and coming back move nothing."""
    feed = live_feed()
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        arm = "minicpm5_1b_ane_pal8"
        feed.pipeline.emit(StartEvent(t=0, wall=0, arm=arm, line=f"START arm={arm}"))
        feed.pipeline.emit(TrialEvent(t=5, wall=5, arm=arm, trial=0, decode_tps=75.0,
                                      thermal=1, battery=95, battery_state="charging"))  # fmt: skip
        status = app.query_one(StatusLine)
        regions = []
        for t, done in ((10, False), (20, True), (30, False), (40, True)):
            feed.pipeline.emit(cooling(t, done))
            app.redraw(force=True)
            await settle(pilot)
            assert ("cooling" in str(status.render())) is not done
            regions.append({chart.id: chart.region for chart in app.query(Chart)
                            if is_shown(chart)})  # fmt: skip
        assert status.content_size.height == 3
        assert regions[1:] == regions[:1] * 3
        await pilot.resize_terminal(200, 60)  # a new width: as few lines as the parts take
        await settle(pilot)
        assert status.content_size.height == 2


async def test_compact_layout_draws_strips_not_charts(make_app: MakeApp) -> None:
    app = make_app("compact")
    async with app.run_test(size=(80, 24)) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert all(c.drawn is None for c in app.query(Chart))
        assert all(s.drawn is not None for s in app.query(Strip))
        brief = app.query_one("#arms-brief", ArmsTable)
        assert brief.row_count == 2
        assert brief.virtual_size.width <= 80


async def test_compact_shows_the_watts_as_text_not_as_a_chart(make_app: MakeApp) -> None:
    app = make_app("compact")
    async with app.run_test(size=(80, 24)) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert app.query_one("#power", Chart).drawn is None
        status = app.query_one(StatusLine)
        assert "power 4.7 W · on battery" in str(status.render()).split("\n")[-1]
        assert status.region.bottom <= 4  # three lines at 80 columns, then the timeline


async def test_redraw_rounds_stop_once_every_panel_has_drawn_the_latest_data(
    make_app: MakeApp,
) -> None:
    from anemon.ui.scheduler import SETTLE_ROUNDS

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.feed.replay.toggle_pause()
        await pilot.pause()
        for _ in range(SETTLE_ROUNDS + 2):
            app.redraw()
        settled = app.rounds
        app.redraw()
        assert app.rounds == settled  # nothing new: the round is skipped
        app.feed.session.add(TextEvent(t=1e6, wall=0.0, line="new"))
        app.redraw()
        assert app.rounds == settled + 1


def shown_rows(log: LogPanel) -> list[str]:
    """The rows the log panel shows on screen, as text (a row under a scrollbar is blank)."""
    rows = ("".join(s.text for s in log.render_line(y)) for y in range(log.size.height))
    return [row.rstrip() for row in rows]


async def test_the_log_keeps_following_the_tail_after_every_layout(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        for _ in app.layouts:  # all of them (`wall` hides the log), back to the first
            await pilot.press("l")
            await pilot.pause()
            for i in range(3):
                app.feed.session.add(TextEvent(t=1e6, wall=0.0, line=f"{app.layout_path.stem} {i}"))
            app.redraw(force=True)
            await pilot.pause()
        log = app.query_one(LogPanel)
        assert app.layout_path.stem == "default" and log.size.height > 0
        assert log.scroll_offset.y == log.max_scroll_y
        assert [row for row in shown_rows(log) if row][-1] == "default 2"


def footer_keys(app: Dashboard) -> set[str]:
    """The keys the footer offers."""
    return {binding.key for (_, binding, enabled, _) in app.active_bindings.values() if enabled}


@pytest.mark.parametrize("recorded", [True, False])
async def test_the_end_of_a_run_says_where_the_recording_is_and_drops_the_run_keys(
    make_app: MakeApp, tmp_path: Path, recorded: bool
) -> None:
    controls = CallLog()
    feed = live_feed(controls)
    path = tmp_path / "run.anemon.jsonl"
    if recorded:
        feed.pipeline.recorder = Recorder(path, make_header(source="test"))
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert {"a", "X", "k", "w", "p"} <= footer_keys(app)
        feed.pipeline.emit(PhaseEvent(t=1.0, wall=0.0, arm="a1", phase="done"))  # an arm's end
        app.redraw()
        await pilot.pause()
        assert not app.pane.run_over and "a" in footer_keys(app)
        feed.pipeline.emit(PhaseEvent(t=2.0, wall=0.0, arm=None, phase="done", reason="1 of 1"))
        app.redraw()
        await pilot.pause()
        said = f"run done, recording at {path}" if recorded else "run done, not recorded"
        assert said in str(app.query_one(StatusLine).render()).replace("\n", " ")
        assert [n.message for n in app._notifications][-1] == said
        assert not {"a", "X", "k", "w", "p"} & footer_keys(app)
        assert not any(app.check_action(a, ()) for a in RUN_ACTIONS)
        await pilot.press("a", "k", "p")
        await pilot.press("q")  # nothing left to end: at once
    assert controls.calls == []
    feed.close()


async def test_a_log_scrolled_back_by_the_operator_stays_there(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        log = app.query_one(LogPanel)
        log.scroll_to(y=0, animate=False)
        await pilot.pause()
        app.feed.session.add(TextEvent(t=1e6, wall=0.0, line="newer"))
        app.redraw(force=True)
        await pilot.pause()
        assert log.scroll_offset.y == 0 and log.lines[-1] == "newer"
        log.scroll_end(animate=False, immediate=True)  # back at the end: following again
        await pilot.pause()
        app.feed.session.add(TextEvent(t=1e6, wall=0.0, line="newest"))
        app.redraw(force=True)
        await pilot.pause()
        assert log.scroll_offset.y == log.max_scroll_y


async def test_an_alert_is_a_toast_a_bell_a_timeline_mark_and_a_log_line(make_app: MakeApp) -> None:
    feed = live_feed()
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        rings: list[None] = []
        app.bell = lambda: rings.append(None)  # type: ignore[method-assign]
        add = feed.pipeline.emit
        add(StartEvent(t=0, wall=0, arm="a1", line="START arm=a1"))
        add(AlertEvent(t=5, wall=5, arm="a1", alert="thermal", value="serious",
                       threshold="serious", note="thermal serious\x1b[2J"))  # fmt: skip
        app.redraw(force=True)
        await pilot.pause()
        said = [n.message for n in app._notifications]
        assert "alert: a1: thermal serious\\x1b[2J" in said  # the log's text, escaped
        assert len(rings) == 1
        assert app.pane.alerts.times == [5] and app.query_one(Timeline).display
        assert app.query_one(LogPanel).lines[-1] == "── ALERT thermal: thermal serious\\x1b[2J"
        app.redraw(force=True)
        await pilot.pause()
        assert len(rings) == 1  # once: a toast is taken when shown


async def test_what_the_simulated_operator_does_is_a_toast(make_app: MakeApp) -> None:
    """At the demo's speed its battery prompts are answered before anyone reads them: the
    toast says the simulator answers them, nothing to do."""
    feed = live_feed()
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        note = "simulated operator: unplugs the phone in 5 s"
        feed.pipeline.emit(MarkerEvent(t=0, wall=0, source=SIMULATED_OPERATOR, note=note))
        feed.pipeline.emit(MarkerEvent(t=1, wall=1, source="operator", note="a typed note"))
        app.redraw(force=True)
        await pilot.pause()
        said = [n.message for n in app._notifications]
        assert said == [
            f"{note}: the simulator answers the battery protocol's prompts, nothing to do"
        ]


async def test_the_redraw_timer_slows_when_idle_and_speeds_up_on_a_change(
    make_app: MakeApp,
) -> None:
    from anemon.ui.scheduler import IDLE_AFTER_S, IDLE_REDRAW_S

    feed = live_feed()
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert app.scheduler.period_s == app.redraw_s
        app.scheduler.quiet_since -= IDLE_AFTER_S  # as if nothing had changed for that long
        app.scheduler.left = False
        app.redraw()
        assert app.scheduler.period_s == IDLE_REDRAW_S
        rounds = app.rounds
        feed.pipeline.emit(TextEvent(t=1.0, wall=0.0, line="new"))
        app.redraw()
        assert app.rounds == rounds + 1 and app.scheduler.period_s == app.redraw_s
        app.scheduler.quiet_since -= IDLE_AFTER_S
        app.redraw(force=True)  # a key's redraw: the normal pace again too
        assert app.scheduler.period_s == app.redraw_s


async def test_an_event_while_the_redraw_timer_idles_is_drawn_at_once(make_app: MakeApp) -> None:
    """Not up to an idle period later: the event asks a round; at the timer's own pace, none."""
    from anemon.ui.scheduler import IDLE_AFTER_S, IDLE_REDRAW_S

    feed = live_feed()
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert app._redraw_timer is not None
        app._redraw_timer.pause()  # only an event's round draws from here
        rounds = app.rounds
        feed.pipeline.emit(TextEvent(t=1.0, wall=0.0, line="at the timer's pace"))
        await pilot.pause()
        assert app.rounds == rounds
        app.redraw()  # drawn at the timer's pace
        app.scheduler.quiet_since -= IDLE_AFTER_S
        app.scheduler.left = False
        app.redraw()  # nothing new for that long: the idle pace
        rounds = app.rounds
        assert app._timer_s == IDLE_REDRAW_S
        app._redraw_timer.pause()
        feed.pipeline.emit(TextEvent(t=2.0, wall=0.0, line="while idle"))
        feed.pipeline.emit(TextEvent(t=3.0, wall=0.0, line="in the same batch"))
        await pilot.pause()
        assert app.rounds == rounds + 1 and app._timer_s == app.redraw_s
        assert "in the same batch" in app.query_one(LogPanel).lines


async def test_a_replay_ticks_on_once_over_when_the_redraw_pace_changes(
    make_app: MakeApp,
) -> None:
    from anemon.ui.scheduler import IDLE_REDRAW_S

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        ticks: list[None] = []
        tick = app.tick
        app.tick = lambda: ticks.append(tick())  # type: ignore[method-assign,func-returns-value]
        app._pace(IDLE_REDRAW_S)  # the ticks restart with the redraws, half a tick after them
        app._pace(app.redraw_s)
        for _ in range(100):  # they go on (a slow machine may take a while)
            if ticks:
                break
            await pilot.pause(0.05)
        assert ticks
        ticks.clear()
        start = time.monotonic()
        await pilot.pause(0.5)
        elapsed = time.monotonic() - start  # two timers would tick twice as often
        assert len(ticks) <= elapsed / app.tick_s + 2  # one timer's ticks: the old ones stopped


async def test_a_change_with_nothing_left_over_takes_one_round(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A round that drew every panel (the table due, every chart within the budget) is the
    last: the next tick without new data redraws nothing."""
    monkeypatch.setattr(scheduler, "ROUND_BUDGET_S", float("inf"))  # a loaded machine's
    # slow draws leave no chart to the next round: every round here draws them all
    feed = live_feed()
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        app.scheduler.table_at = float("-inf")  # the table is due
        feed.pipeline.emit(TextEvent(t=1.0, wall=0.0, line="new"))
        rounds = app.rounds
        app.redraw()
        app.redraw()
        assert app.rounds == rounds + 1
        app.scheduler.table_at = float("inf")  # the table not due: owed, not polled for
        feed.pipeline.emit(TextEvent(t=2.0, wall=0.0, line="newer"))
        app.redraw()
        app.redraw()
        assert app.rounds == rounds + 2
        app.scheduler.table_at = float("-inf")  # its second is up: one round for it, then none
        app.redraw()
        app.redraw()
        assert app.rounds == rounds + 3


async def test_a_summary_worker_that_raises_is_said_once_and_recorded_and_the_dashboard_stays(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers are named, exclusive and `exit_on_error=False`: a failure is one toast and a
    marker in the session, never the end of the dashboard."""
    from anemon.ui import arms_table

    def broken(*_: object) -> object:
        raise ZeroDivisionError("no trials")

    monkeypatch.setattr(arms_table, "OFF_LOOP_TRIALS", 0)  # every arm in a worker
    monkeypatch.setattr(arms_table, "summarize", broken)
    feed = live_feed()
    app = make_app(feed=feed)
    async with app.run_test(size=(120, 40)) as pilot:
        for event in (
            StartEvent(t=0.0, wall=0.0, arm="a"),
            TrialEvent(t=1.0, wall=1.0, arm="a", trial=1, decode_tps=9.0),
        ):
            feed.pipeline.emit(event)  # fmt: skip
        for _ in range(3):  # the table due again: the arm is not retried
            app.scheduler.table_at = float("-inf")
            app.redraw(force=True)
            # every worker ended (a failed one's `wait` raises what it failed with)
            await asyncio.gather(*(w.wait() for w in app.workers), return_exceptions=True)
            await pilot.pause()
        assert app.is_running
        said = [n.message for n in app._notifications if "failed" in n.message]
        assert said == ["summary of a failed: ZeroDivisionError: no trials"]
        notes = [(m.source, m.note) for m in feed.session.markers]
        assert notes == [("dashboard", f"dashboard: {said[0]}")]
    feed.close()
