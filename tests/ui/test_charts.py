"""Charts draw every series inside their axes, readable, at any size (pilot, fixed data).

What is checked is what lands on the plot canvas: the cell each series' first and last point
maps to, every braille cell drawn, and the legend that floats over the plot.
"""

from __future__ import annotations

import itertools
import math
from math import floor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.text import Text
from textual.geometry import Region, Size
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Static
from textual_hires_canvas import Canvas
from textual_hires_canvas.hires import HiResMode

from anemon.events import THERMAL_NAMES, EndEvent, StartEvent, TelemetryEvent, TrialEvent
from anemon.feeds.runs import Runs
from anemon.store import Session
from anemon.ui import layouts
from anemon.ui.app import Dashboard
from anemon.ui.charts.axes import LABEL_WIDTH, FittedFormatter, axis_end
from anemon.ui.charts.chart import Chart, last_finite, latest_text, latest_values
from anemon.ui.charts.drawing import line_dots, paint_braille
from anemon.ui.charts.plotlib import canvas_rows
from anemon.ui.charts.specs import (
    NO_ARM,
    NO_PROCESS,
    Line,
    arm_colour,
    arm_spans,
    power_lines,
    power_title,
)
from anemon.ui.charts.strips import Strip
from anemon.ui.pane import is_shown
from anemon.ui.series import column

from .helpers import DEFAULT_CHARTS, MakeApp, live_feed
from .sample import replay_feed, sustained

SIZE = (120, 40)


def is_braille(char: str) -> bool:
    return "\u2800" < char <= "\u28ff"


def inside_axes(canvas: Canvas) -> Region:
    """The cells framed by the axis lines, which run along the canvas edges."""
    return Region(1, 1, canvas.size.width - 2, canvas.size.height - 2)


def problems(chart: Chart) -> list[str]:
    """Everything wrong with how `chart` shows its series, as readable lines."""
    canvas = chart.query_one("#plot", Canvas)
    box = inside_axes(canvas)
    found = []
    # textual-plot has no public getter for the limits it draws with
    y_min, y_max = chart._y_min, chart._y_max
    for n, data in enumerate(chart._datasets):  # textual-plot's: what plot() was handed
        if not len(data.y):
            continue
        if not y_min <= data.y.min() <= data.y.max() <= y_max:
            found.append(f"{chart.id}[{n}] y {data.y.min()}..{data.y.max()} not in limits")
        for i in (0, -1):
            x, y = chart.get_hires_pixel_from_coordinate(data.x[i], data.y[i])
            cell = (floor(x), floor(y))
            if not box.contains(*cell):
                found.append(f"{chart.id}[{n}] point {i} at cell {cell}, outside {box}")
            elif not is_braille(canvas.get_pixel(*cell)[0]):
                found.append(f"{chart.id}[{n}] point {i}: nothing drawn at cell {cell}")
    legend = chart.query_one("#legend")
    for y in range(canvas.size.height):
        for x in range(canvas.size.width):
            if not is_braille(canvas.get_pixel(x, y)[0]):
                continue
            if not box.contains(x, y):
                found.append(f"{chart.id}: data drawn at ({x}, {y}), outside {box}")
            on_screen = (canvas.region.x + x, canvas.region.y + y)
            if legend.display and legend.region.contains(*on_screen):
                found.append(f"{chart.id}: data at ({x}, {y}) under the legend")
    return found


def shown_charts(app: Dashboard) -> list[Chart]:
    return [c for c in app.query(Chart) if is_shown(c)]


async def draw_all(pilot: Pilot) -> None:
    pilot.app.redraw(force=True)
    await pilot.pause()


def assert_charts_fit(app: Dashboard, names: set[str]) -> None:
    """Each chart plots its series inside its axes, or is too short to and says its latest
    values in words instead."""
    charts = shown_charts(app)
    assert {c.id for c in charts} == names
    plotted = [c for c in charts if not c.short]
    # a chart with readings plots them (the sample's app gives no process readings: n/a)
    assert plotted and all(c._datasets for c in plotted if c.latest)
    assert [p for c in plotted for p in problems(c)] == []
    for chart in charts:
        assert chart.has_class("short") == chart.short, chart.id
        assert chart.query_one(".latest").display == chart.short, chart.id


async def test_every_series_is_drawn_inside_its_axes(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        assert_charts_fit(app, DEFAULT_CHARTS)


async def test_the_limits_cover_each_series_with_room_to_spare(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        prefill = app.query_one("#prefill", Chart)
        lows = [float(d.y.min()) for d in prefill._datasets]
        highs = [float(d.y.max()) for d in prefill._datasets]
        assert prefill._y_min < min(lows) and max(highs) < prefill._y_max
        # both arms are there: the slower one far below the faster
        assert max(highs[1:]) < min(lows[:1])
        battery = app.query_one("#battery", Chart)
        assert (battery._y_min, battery._y_max) == (0, 100)


async def test_a_small_chart_hides_a_legend_that_would_cover_its_lines(
    make_app: MakeApp,
) -> None:
    app = make_app("wall")
    async with app.run_test(size=(160, 50)) as pilot:
        await draw_all(pilot)
        decode = app.query_one("#decode", Chart)
        assert decode.query_one("#legend").display and not decode.border_subtitle
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        prefill = app.query_one("#prefill", Chart)
        assert not prefill.query_one("#legend").display
        assert not prefill.border_subtitle  # nor the bottom border: the names would not fit


async def test_a_legend_with_no_room_in_the_plot_goes_to_the_bottom_border(
    make_app: MakeApp,
) -> None:
    """Decode beside power (the default layout at 120x40) has no free corner for it."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        decode = app.query_one("#decode", Chart)
        assert not decode.query_one("#legend").display
        legend = decode.inline_legend()
        assert legend.plain == "━ minicpm5_1b_ane_pal8  ━ minicpm5_1b_gpu_int8"
        colours = [str(span.style) for span in legend.spans]
        assert colours == [d.line_style for d in decode._datasets]
        assert Text.from_markup(decode.border_subtitle).plain == legend.plain
        await pilot.resize_terminal(160, 50)  # room again: back over the plot
        await draw_all(pilot)
        assert decode.query_one("#legend").display and not decode.border_subtitle


@pytest.mark.parametrize("size", [(160, 50), (100, 34)], ids=["larger", "smaller"])
@pytest.mark.parametrize("redrawn", [False, True], ids=["old points", "redrawn"])
async def test_charts_still_fit_after_the_terminal_is_resized(
    make_app: MakeApp, size: tuple[int, int], redrawn: bool
) -> None:
    """Before the next draw, the points drawn for the old size are mapped onto the new axes."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        await pilot.resize_terminal(*size)
        await pilot.pause()
        if redrawn:
            await draw_all(pilot)
        assert_charts_fit(app, DEFAULT_CHARTS)


@pytest.mark.parametrize("redrawn", [False, True], ids=["old points", "redrawn"])
async def test_charts_too_short_to_plot_plot_again_once_the_terminal_grows(
    make_app: MakeApp, redrawn: bool
) -> None:
    """A chart that showed its values in words (its canvases hidden, so never resized) plots
    them again at its new size, with or without a new draw."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        await pilot.resize_terminal(120, 26)
        await draw_all(pilot)
        assert any(c.short for c in shown_charts(app))
        await pilot.resize_terminal(*SIZE)
        await pilot.pause()
        if redrawn:
            await draw_all(pilot)
        for chart in shown_charts(app):
            for canvas in chart.query(Canvas):  # (the top margin's is empty: left as it is)
                assert not canvas.size or canvas._canvas_size == canvas.size, chart.id
        assert_charts_fit(app, DEFAULT_CHARTS)


async def test_charts_fit_after_the_layout_changes_their_size(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        app.use_layout(layouts.resolve("ab"))
        await draw_all(pilot)
        assert_charts_fit(app, {"power", "memory", "prefill", "thermal", "arm-a", "arm-b"})
        app.use_layout(layouts.resolve("default"))
        await draw_all(pilot)
        assert_charts_fit(app, DEFAULT_CHARTS)


async def test_charts_fit_from_the_first_points_on(make_app: MakeApp) -> None:
    """One telemetry point, then the first arm's trials: limits and mapping follow the data."""
    feed = replay_feed(at_end=False)
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        for position in (0.0, 200.0, 300.0):
            feed.replay.seek(position)
            await draw_all(pilot)
            assert [p for c in shown_charts(app) for p in problems(c)] == []
        prefill = app.query_one("#prefill", Chart)._datasets
        assert prefill and all(len(d.x) for d in prefill)


async def test_the_power_chart_colours_each_reading_by_the_arm_running(make_app: MakeApp) -> None:
    """Grey while cooling, each arm's colour while it runs (as in decode): one line each."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        power = app.query_one("#power", Chart)
        session = app.feed.session
        decode = [d.line_style for d in app.query_one("#decode", Chart)._datasets]
        colours = [d.line_style for d in power._datasets]
        # grey between the arms and after the last one's last trial (where the app ran it:
        # the sample's t= counts from the first trial, 5.5 s after the START)
        assert colours == [NO_ARM, decode[0], NO_ARM, decode[1], NO_ARM]
        assert "on battery" in str(power.border_title)
        for data, arm in zip(power._datasets[1::2], session.arms.values(), strict=True):
            # from its START to its last trial; the first point joins the grey line before
            assert arm.start is not None
            first = session.first_t or 0.0
            began = arm.start.t - first
            last = float(column(arm.columns["placed_t"]).max()) - first
            assert began <= data.x[1:].min() and data.x.max() <= last, arm.name
        ane, gpu = (float(d.y.max()) for d in power._datasets[1::2])
        assert (ane, gpu) == (pytest.approx(4.5), pytest.approx(6.2))  # each arm's burst
        lines = power_lines(session)  # before decimation: every reading once, joins apart
        assert sum(len(line.x) for line in lines) - 4 == len(session.power_w.t)


def test_power_readings_after_a_running_arms_last_trial_are_still_its_own() -> None:
    """Live, readings come every second and trials every few: the running arm's span stays
    open until its END, so its newest readings do not flicker grey."""
    events = sustained(trials=4)
    end = next(i for i, e in enumerate(events) if isinstance(e, EndEvent))
    session = Session.from_events(events[:end])  # the first arm still running
    last_trial = max(column(session.arms["minicpm5_1b_ane_pal8"].columns["t"]))
    session.add(TelemetryEvent(t=last_trial + 1, wall=0.0, power_w=3.3, plugged=True))
    lines = power_lines(session)
    assert [line.colour for line in lines] == [NO_ARM, arm_colour(session, lines[-1].label)]
    assert lines[-1].y[-1] == 3.3
    session.add(events[end])  # END: the span closes at the last trial
    session.add(TelemetryEvent(t=last_trial + 2, wall=0.0, power_w=1.1, plugged=True))
    assert [line.colour for line in power_lines(session)][-1] == NO_ARM
    starts, ends, names = arm_spans(session)
    placed = max(column(session.arms["minicpm5_1b_ane_pal8"].columns["placed_t"]))
    assert names == ["minicpm5_1b_ane_pal8"] and ends[0] == placed  # where the app ran it
    assert starts[0] == session.arms[names[0]].start.t  # loading counts as the arm's


def test_an_arm_launched_twice_has_a_span_per_launch() -> None:
    def trial(t: float, arm: str) -> TrialEvent:
        return TrialEvent(t=t, wall=t, arm=arm, trial=1, decode_tps=10.0)

    def start(t: float, arm: str) -> StartEvent:
        return StartEvent(t=t, wall=t, arm=arm, line="START")

    session = Session.from_events([
        start(0, "a"), trial(1, "a"), trial(2, "a"),
        start(3, "b"), trial(4, "b"),
        start(5, "a"), trial(6, "a"), trial(7, "a"),
    ])  # fmt: skip
    starts, ends, names = arm_spans(session)
    assert names == ["a", "b", "a"]
    assert starts.tolist() == [1, 3, 5] and ends.tolist() == [2, 4, math.inf]


async def test_an_arm_launched_twice_is_not_drawn_across_the_time_between(
    make_app: MakeApp,
) -> None:
    """Decode over the session: one line per launch, the arm named once; the A/B chart
    (time since launch): each launch from its own start, none joined back to the last."""
    feed = live_feed()
    for t0, arm in ((0, "a"), (300, "b"), (600, "a")):
        feed.pipeline.emit(StartEvent(t=t0, wall=t0, arm=arm, line=f"START arm={arm}"))
        for i in range(1, 31):
            t = t0 + 5.0 * i
            feed.pipeline.emit(
                TrialEvent(t=t, wall=t, arm=arm, trial=i, app_t=5.0 * i, decode_tps=60.0 - i)
            )
    app = make_app("ab", feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        arm_a = app.query_one("#arm-a", Chart)
        assert len(arm_a._datasets) == 2
        assert [float(d.x.min()) for d in arm_a._datasets] == [5.0, 5.0]
        app.use_layout(layouts.resolve("default"))
        await draw_all(pilot)
        decode = app.query_one("#decode", Chart)
        assert [d.line_style for d in decode._datasets].count(arm_colour(feed.session, "a")) == 2
        assert [label for label in decode._labels if label] == ["a", "b"]
        first, second = (
            d for d in decode._datasets if d.line_style == decode._datasets[0].line_style
        )
        assert first.x.max() <= 150 and second.x.min() >= 600
        assert [p for p in problems(decode)] == []


def test_no_power_readings_no_lines_and_the_title_says_so() -> None:
    session = Session.from_events(sustained(power=False))
    assert power_lines(session) == []
    assert power_title(session) == "power W (no readings)"


ALL_CHARTS = ("decode", "prefill", "thermal", "power", "battery", "free", "memory", "gpu")


def redrawn(app: Dashboard, session: Session) -> set[str]:
    """The charts a redraw round would draw now (each asked, as the pane does)."""
    return {n for n in ALL_CHARTS if app.query_one(f"#{n}", Chart).draw(session)}


async def test_a_reading_redraws_only_the_charts_that_show_it(make_app: MakeApp) -> None:
    """A session a minute old, readings every second: a process reading draws the memory and
    GPU charts, a power reading power, battery and free disk (the same values again: the
    lines reach the new reading), neither decode, prefill nor thermal; a trial draws those."""
    feed = live_feed()
    add = feed.pipeline.emit
    add(StartEvent(t=0.0, wall=0.0, arm="a", line="START arm=a"))
    add(TrialEvent(t=1.0, wall=1.0, arm="a", trial=1, decode_tps=50.0, thermal=1))
    for t in range(2, 61):
        add(TelemetryEvent(t=t, wall=0.0, power_w=3.0, battery=90.0, free_gb=50.0))
        add(TelemetryEvent(t=t + 0.5, wall=0.0, arm="a", pid=7, mem_gb=1.9, gpu_pct=80.0))
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        session = feed.session
        redrawn(app, session)  # every chart up to date
        add(TelemetryEvent(t=61.5, wall=0.0, arm="a", pid=7, mem_gb=1.9, gpu_pct=80.0))
        assert redrawn(app, session) == {"memory", "gpu"}
        add(TelemetryEvent(t=62.0, wall=0.0, power_w=3.0, battery=90.0, free_gb=50.0))
        assert redrawn(app, session) == {"power", "battery", "free"}
        power = app.query_one("#power", Chart)
        assert power._datasets[-1].x[-1] == 62.0  # the newest reading is drawn
        add(TrialEvent(t=62.5, wall=0.0, arm="a", trial=2, decode_tps=40.0, thermal=1))
        assert {"decode", "prefill", "thermal"} <= redrawn(app, session)
        assert redrawn(app, session) == set()  # nothing new: nothing drawn


def layouts_asked(widget: Widget, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each of `widget`'s refreshes from now on asks for a layout of the screen."""
    laid_out: list[bool] = []
    refresh = widget.refresh
    monkeypatch.setattr(
        widget,
        "refresh",
        lambda *a, **k: laid_out.append(k.get("layout", False)) or refresh(*a, **k),
    )
    return laid_out


async def test_a_trial_sets_no_legend_whose_text_it_does_not_change(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A legend's text set again is a layout of the whole screen (Textual's Static): a trial
    that adds a point to two named lines redraws decode with its floating legend, and leaves
    the legend as it was; a new arm names itself in it."""
    feed = live_feed()
    add = feed.pipeline.emit
    for n, arm in enumerate(("a", "b")):
        add(StartEvent(t=100.0 * n, wall=0.0, arm=arm, line=f"START arm={arm}"))
        for t in range(1, 30):
            add(TrialEvent(t=100.0 * n + t, wall=0.0, arm=arm, trial=t, decode_tps=50.0 - n))
    app = make_app("wall", feed=feed)
    async with app.run_test(size=(160, 50)) as pilot:
        await draw_all(pilot)
        decode = app.query_one("#decode", Chart)
        legend = decode.query_one("#legend")
        assert legend.display
        laid_out = layouts_asked(legend, monkeypatch)
        add(TrialEvent(t=130.0, wall=0.0, arm="b", trial=30, decode_tps=49.0))
        assert decode.draw(feed.session)
        assert True not in laid_out
        before = str(legend.render())
        add(StartEvent(t=200.0, wall=0.0, arm="c", line="START arm=c"))
        add(TrialEvent(t=201.0, wall=0.0, arm="c", trial=1, decode_tps=30.0))
        assert decode.draw(feed.session)
        assert True in laid_out
        assert "c" in str(legend.render()) and before != str(legend.render())


async def test_a_legend_whose_new_text_is_as_wide_is_set_without_a_layout(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory chart's legend says the decode each arm's footprint buys: a new mean as
    wide shows without a layout of the screen; a wider one widens the legend."""
    feed = live_feed()
    add = feed.pipeline.emit
    add(StartEvent(t=0.0, wall=0.0, arm="a", line="START arm=a"))
    for t in range(1, 30):
        add(TelemetryEvent(t=float(t), wall=0.0, arm="a", pid=7, mem_gb=1.0 + t / 100))
        add(TrialEvent(t=t + 0.5, wall=0.0, arm="a", trial=t, decode_tps=52.0))
    app = make_app("wall", feed=feed)
    async with app.run_test(size=(160, 50)) as pilot:
        await draw_all(pilot)
        memory = app.query_one("#memory", Chart)
        legend = memory.query_one("#legend")
        assert legend.display and "a 52.0 tok/s" in str(legend.render())
        width = legend.outer_size.width
        laid_out = layouts_asked(legend, monkeypatch)
        add(TrialEvent(t=30.5, wall=0.0, arm="a", trial=30, decode_tps=55.0))
        await draw_all(pilot)
        assert "a 52.1 tok/s" in str(legend.render())
        assert laid_out and True not in laid_out
        for t in range(31, 200):  # the mean past 100: a character more
            add(TrialEvent(t=t + 0.5, wall=0.0, arm="a", trial=t, decode_tps=150.0))
        await draw_all(pilot)
        assert "tok/s" in str(legend.render()) and True in laid_out
        assert legend.outer_size.width == width + 1


@given(st.floats(1.0, 1e6), st.floats(0.0, 1e5))
def test_the_x_axis_end_holds_the_newest_point_and_never_moves_back(t: float, later: float) -> None:
    """At or past the session's time, by less than a tenth of it (or a second); never less
    for a later time."""
    end = axis_end(t)
    assert t <= end < t + max(1.0, t / 10) + 1e-9
    assert axis_end(t + later) >= end


async def test_the_x_axis_ends_on_a_step_not_on_the_newest_second(make_app: MakeApp) -> None:
    """In a session a minute old a chart whose lines did not change is not drawn again each
    second: the x axis's end moves in 5 s steps, the same for every chart."""
    feed = live_feed()
    add = feed.pipeline.emit
    add(StartEvent(t=0.0, wall=0.0, arm="a", line="START arm=a"))
    add(TrialEvent(t=1.0, wall=1.0, arm="a", trial=1, decode_tps=50.0, thermal=1))
    add(TelemetryEvent(t=60.5, wall=0.0, arm="a", pid=7, mem_gb=1.9))
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        decode, memory = (app.query_one(f"#{n}", Chart) for n in ("decode", "memory"))
        session = feed.session
        decode.draw(session)
        drawn = []
        for t in range(61, 71):
            add(TelemetryEvent(t=t + 0.5, wall=0.0, arm="a", pid=7, mem_gb=1.9))
            drawn.append(decode.draw(session))
            assert memory.draw(session)
            assert memory.drawn_end == decode.drawn_end >= t + 0.5  # one axis, the newest on it
        assert drawn.count(True) == 2  # at 65.5 s and 70.5 s: the ends 70 and 75
        assert decode.drawn_end == 75.0


def painted(chart: Chart) -> list[list[list[str]]]:
    """What the chart's canvases hold now: each one's characters and styles, row by row."""
    return [[list(map(list, rows)) for rows in canvas_rows(c)] for c in chart.query(Canvas)]


async def test_a_reading_that_moves_no_dot_paints_nothing(make_app: MakeApp) -> None:
    """Ten minutes into an arm a second is a fraction of a dot: the memory chart's readings of
    a flat footprint paint nothing until the line reaches its next dot, or the footprint
    moves; and what it shows then is what a full draw paints."""
    feed = live_feed()
    add = feed.pipeline.emit
    add(StartEvent(t=0.0, wall=0.0, arm="a", line="START arm=a"))
    add(TrialEvent(t=1.0, wall=1.0, arm="a", trial=1, decode_tps=50.0, thermal=1))
    for t in range(2, 600):
        add(TelemetryEvent(t=t + 0.5, wall=0.0, arm="a", pid=7, mem_gb=1.9))
    app = make_app(feed=feed)
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        memory = app.query_one("#memory", Chart)
        session = feed.session
        memory.draw(session)
        drawn = []
        for t in range(600, 630):
            add(TelemetryEvent(t=t + 0.5, wall=0.0, arm="a", pid=7, mem_gb=1.9))
            drawn.append(memory.draw(session))
            shown = painted(memory)
            memory._picture = None  # the next draw paints, whatever it would paint
            memory.drawn = None
            assert memory.draw(session)
            assert painted(memory) == shown, f"at {t + 0.5} s"
        assert 0 < drawn.count(True) < len(drawn) // 2
        add(TelemetryEvent(t=630.5, wall=0.0, arm="a", pid=7, mem_gb=2.6))
        assert memory.draw(session)  # the footprint moved: painted at once


async def test_the_canvases_kept_are_the_ones_laid_out(make_app: MakeApp) -> None:
    """A chart keeps its canvases from compose (no DOM query at each draw): they must be the
    ones Textual lays out, the plot's the one named so, whatever textual-plot composes."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        for chart in app.query(Chart):
            assert chart.canvases == tuple(chart.query(Canvas))
            assert chart.plot_canvas is chart.query_one("#plot", Canvas)
            assert chart.canvases[1] is chart.query_one("#margin-left", Canvas)


async def test_a_strip_is_redrawn_only_when_what_it_shows_changed(make_app: MakeApp) -> None:
    feed = live_feed()
    feed.pipeline.emit(TrialEvent(t=1.0, wall=1.0, arm="a", trial=1, decode_tps=50.0))
    app = make_app("compact", feed=feed)
    async with app.run_test(size=(80, 24)) as pilot:
        await draw_all(pilot)
        decode = app.query_one("#strip-decode-0", Strip)
        feed.pipeline.emit(TelemetryEvent(t=2.0, wall=0.0, power_w=3.0))
        assert not decode.draw(feed.session)
        feed.pipeline.emit(TrialEvent(t=3.0, wall=3.0, arm="a", trial=2, decode_tps=49.0))
        assert decode.draw(feed.session)


def braille_past_the_right_axis(app: Dashboard, chart: Chart) -> list[str]:
    """Braille cells on screen, in `chart`'s region, at or right of its right axis line."""
    strips = app.screen._compositor.render_strips()  # what the terminal shows
    region = chart.content_region
    rows = ["".join(seg.text for seg in strips[y])[region.x : region.right] for y in
            range(region.y, region.bottom)]  # fmt: skip
    axis = max(row.rfind(c) for row in rows for c in "┓┛┫┣┳┻╋")
    assert axis > 0, f"{chart.id}: no right axis in {rows}"
    return [f"{chart.id} row {y}: {row[axis:]!r}" for y, row in enumerate(rows)
            if any(is_braille(c) for c in row[axis:])]  # fmt: skip


@pytest.mark.parametrize("size", [(120, 40), (100, 30), (137, 43), (90, 32)])
async def test_a_point_at_the_x_limit_is_drawn_left_of_the_right_axis(
    make_app: MakeApp, size: tuple[int, int]
) -> None:
    """The last points land exactly on the x limit (thermal steps to the session's end; a
    trial is the session's last event): drawn in the last column inside the axes."""
    feed = live_feed()
    add = feed.pipeline.emit
    add(StartEvent(t=0.0, wall=0.0, arm="a", line="START arm=a"))
    for t in range(1, 601):
        add(TelemetryEvent(t=float(t), wall=0.0, power_w=3.0 + t % 7, battery=90.0 - t / 60,
                           free_gb=30.0 - t / 100, plugged=False))  # fmt: skip
    for n, t in enumerate(range(5, 601, 5), start=1):
        add(TrialEvent(t=float(t), wall=0.0, arm="a", trial=n, decode_tps=50.0 + n % 9,
                       prompt_tps=900.0 + n % 5, thermal=min(3, n // 30)))  # fmt: skip
    app = make_app(feed=feed)
    async with app.run_test(size=size) as pilot:
        await draw_all(pilot)
        # the short ones plot nothing, nor do the process charts here (no readings)
        charts = [c for c in shown_charts(app) if not c.short and c.latest]
        assert charts
        for chart in charts:
            ends = [float(d.x.max()) for d in chart._datasets if len(d.x)]
            assert ends and max(ends) == chart._x_max, chart.id
        assert [p for c in charts for p in braille_past_the_right_axis(app, c)] == []
        assert [p for c in charts for p in problems(c)] == []


@pytest.mark.parametrize("height", [36, 38, 40, 46])  # 4+ rows inside the axes
async def test_a_thermal_state_is_drawn_on_the_row_of_its_name(
    make_app: MakeApp, height: int
) -> None:
    """Tick labels use the mapping the lines are drawn with: at small heights too."""
    feed = live_feed()
    add = feed.pipeline.emit
    add(StartEvent(t=0.0, wall=0.0, arm="a", line="START arm=a"))
    for n in range(1, 41):
        add(TrialEvent(t=float(5 * n), wall=0.0, arm="a", trial=n, decode_tps=50.0,
                       thermal=(n // 10) % 4))  # fmt: skip
    app = make_app(feed=feed)
    async with app.run_test(size=(120, height)) as pilot:
        await draw_all(pilot)
        thermal = app.query_one("#thermal", Chart)
        margin = thermal.query_one("#margin-left", Canvas)
        width = margin.size.width
        for state, name in enumerate(THERMAL_NAMES):
            _, y = thermal.get_hires_pixel_from_coordinate(0.0, float(state))
            row = floor(y)
            label = "".join(margin.get_pixel(x, row)[0] for x in range(width)).strip()
            assert label == name, (state, row)
        assert problems(thermal) == []


def axis_rows(chart: Chart) -> list[str]:
    """What the y axis's margin says, row by row: the unit on the first (the top axis
    line's), the tick labels below it."""
    margin = chart.query_one("#margin-left", Canvas)
    return ["".join(margin.get_pixel(x, y)[0] for x in range(margin.size.width)).strip()
            for y in range(margin.size.height)]  # fmt: skip


def tick_labels(chart: Chart) -> list[str]:
    """The y axis's tick labels, top to bottom (blank rows left out)."""
    return [row for row in axis_rows(chart)[1:] if row]


@pytest.mark.parametrize("layout", ["default", "wall", "ab"])
@pytest.mark.parametrize("height", [26, 28, 30, 31, 32, 33, 36, 40])
async def test_a_chart_too_short_to_label_its_values_says_them_in_words(
    make_app: MakeApp, layout: str, height: int
) -> None:
    """Every chart either labels each y tick on a row of its own (the thermal chart every
    state), or shows its latest value per arm as one line of text instead of the plot."""
    app = make_app(layout)
    async with app.run_test(size=(120, height)) as pilot:
        await draw_all(pilot)
        charts = shown_charts(app)
        assert charts
        for chart in charts:
            latest = chart.query_one(".latest")
            if chart.short:
                assert chart.plot_size[1] < chart.min_rows
                assert latest.display and not chart.query_one("Grid").display
                text = str(latest.render())
                if not chart.latest:  # the app's process charts: the sample has no readings
                    assert text == NO_PROCESS and chart.id in ("memory", "gpu"), chart.id
                    continue
                assert text.startswith("━ ") and "no data" not in text, (chart.id, text)
                continue
            assert not latest.display
            labels = tick_labels(chart)
            if chart.spec.thermal_axis:
                assert labels == list(reversed(THERMAL_NAMES)), (chart.id, labels)
            else:  # at least two ticks, each label a number of its own
                assert len(labels) >= 2, (chart.id, labels)
                values = [float(label) for label in labels]
                assert values == sorted(values, reverse=True), (chart.id, labels)
                assert len(set(values)) == len(values)
        screen = app.export_screenshot()
        assert "nomfair" not in screen and "nominalfair" not in screen


@pytest.mark.parametrize("layout", ["default", "wall", "ab", "compact"])
async def test_every_chart_of_a_layout_says_something_in_a_small_terminal(
    make_app: MakeApp, layout: str
) -> None:
    """80x24, the layout chosen: each chart shown has a row at least, for its plot or its
    latest values in words."""
    app = make_app(layout)
    async with app.run_test(size=(80, 24)) as pilot:
        await draw_all(pilot)
        for chart in shown_charts(app):
            assert chart.content_size.height >= 1, chart.id
            if chart.short:
                said = str(chart.query_one(".latest").render())
                assert said.startswith("━ ") or (said == NO_PROCESS and not chart.latest), chart.id


async def test_the_text_form_names_each_arm_and_its_newest_value(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(120, 26)) as pilot:
        await draw_all(pilot)
        session = app.feed.session
        decode, thermal = app.query_one("#decode", Chart), app.query_one("#thermal", Chart)
        assert decode.short and thermal.short
        words = str(decode.query_one(".latest").render())
        for arm in session.arms.values():
            values = column(arm.columns["decode_tps"])[column(arm.columns["warmup"]) == 0]
            assert f"{arm.name} {values[-1]:,.1f}" in words
        newest = THERMAL_NAMES[int(session.thermal.last())]
        assert str(thermal.query_one(".latest").render()) == f"━ {newest}"
        await pilot.resize_terminal(120, 40)  # room again: the plot is back, without a redraw
        await pilot.pause()
        assert not decode.short and decode.query_one("Grid").display
        assert not decode.query_one(".latest").display


def test_y_labels_too_long_for_the_axis_are_given_short() -> None:
    axis = FittedFormatter()
    assert axis.get_labels_for_ticks([0, 2000, 4000]) == ["0", "2000", "4000"]
    assert axis.get_labels_for_ticks([0.0, 0.04, 0.08]) == ["0.00", "0.04", "0.08"]
    assert axis.get_labels_for_ticks([0, 4e6, 8e6, 12e6]) == ["0", "4M", "8M", "12M"]
    assert axis.get_labels_for_ticks([1.2e9, 1.25e9]) == ["1.2G", "1.25G"]
    assert axis.get_labels_for_ticks([-2e-05, 0, 2e-05]) == ["-2e-05", "0", "2e-05"]
    assert all(len(label) <= LABEL_WIDTH for label in axis.get_labels_for_ticks([999_950_000]))


def test_the_text_form_is_one_line_when_it_fits_else_one_value_a_line() -> None:
    entries = [("#fff", "a", "1.0"), ("#000", "bb", "22.0"), ("#111", None, "3")]
    assert latest_text(entries, 40, 1).plain == "━ a 1.0  ━ bb 22.0  ━ 3"
    assert latest_text(entries, 12, 3).plain == "━ a 1.0\n━ bb 22.0\n━ 3"
    assert latest_text(entries, 12, 2).plain == "━ 1.0\n━ 22.0  ━ 3"  # the colours name them
    assert latest_text(entries, 12, 1).plain == "━ 1.0"  # whole entries, as many as fit
    assert latest_text([], 12, 2).plain == "no data yet"
    # a name too long for the width: the value alone, not a value wrapped out of sight
    assert latest_text([("#fff", "minicpm5_1b_ane_pal8", "2,339")], 16, 1).plain == "━ 2,339"
    assert latest_text(entries, 7, 3).plain == "━ 1.0\n━ 22.0\n━ 3"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), max_size=300), st.lists(st.booleans(), max_size=300))
def test_the_last_whole_point_is_the_one_a_full_scan_finds(
    x_nan: list[bool], y_nan: list[bool]
) -> None:
    n = min(len(x_nan), len(y_nan))
    x = np.where(x_nan[:n], np.nan, np.arange(n, dtype=float))
    y = np.where(y_nan[:n], np.nan, np.arange(n, dtype=float) * 2)
    whole = np.flatnonzero(~(np.isnan(x) | np.isnan(y)))
    assert last_finite(x, y) == (int(whole[-1]) if len(whole) else None)


def test_the_text_form_says_each_labels_newest_value_in_the_order_the_labels_came() -> None:
    nan = math.nan

    def line(label: str | None, *y: float) -> Line:
        return Line(np.arange(len(y), dtype=float), np.array(y), f"#{label}", label)

    lines = [
        line("a", 1, 2),
        line("b", 5, nan),
        line("a", 3, nan, nan),
        line("c", nan),
        line(None, 7),
    ]
    assert latest_values(lines, str) == [
        ("#a", "a", "3.0"),
        ("#b", "b", "5.0"),
        ("#None", None, "7.0"),
    ]
    # a label whose first line has no value yet still comes first
    later = [line("a", nan), line("b", 1), line("a", 2)]
    assert [label for _, label, _ in latest_values(later, str)] == ["a", "b"]


coordinate = st.floats(min_value=-20, max_value=60, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(coordinate, coordinate), min_size=2, max_size=60),
    st.integers(1, 40),
    st.integers(1, 12),
)
def test_line_drawing_sets_the_cells_textual_hires_canvas_would(
    points: list[tuple[float, float]], width: int, height: int
) -> None:
    """The numpy line drawing (Chart.draw_line) puts the same braille characters in
    the same cells as the library's own `draw_hires_lines`, lines leaving the canvas too."""
    theirs, ours = Canvas(), Canvas()
    for canvas in (theirs, ours):
        canvas.reset(size=Size(width, height))
    segments = [(*a, *b) for a, b in itertools.pairwise(points)]
    theirs.draw_hires_lines(segments, hires_mode=HiResMode.BRAILLE, style="red")
    x, y = (np.array(v, dtype=float) for v in zip(*points, strict=True))
    paint_braille(ours, *line_dots(ours, x, y), "red")
    assert ours._buffer == theirs._buffer  # the canvas has no public getter for its cells
    assert ours._styles == theirs._styles


def dipping(decode: list[float]) -> Dashboard:
    """A live dashboard on one arm whose decode runs through `decode` (a trial every 5 s)."""
    feed = live_feed()
    add = feed.pipeline.emit
    add(StartEvent(t=0.0, wall=0.0, arm="a", line="START arm=a"))
    for n, tps in enumerate(decode, 1):
        add(TrialEvent(t=5.0 * n, wall=0.0, arm="a", trial=n, decode_tps=tps, thermal=1))
    return Dashboard(Runs.one(feed), layouts.resolve("default"))


@pytest.mark.parametrize("height", [30, 31, 33, 34, 36, 38, 40, 46, 53, 60])
async def test_a_small_dip_in_decode_is_drawn_as_small_on_even_ticks(height: int) -> None:
    """A 3 % dip (56 → 54.3 tok/s) on an axis of ±10 % of the median at least, whose labels
    are one step apart, a blank row between any two."""
    app = dipping([56.0 - 1.7 * (n > 20) + 0.1 * (n % 3) for n in range(40)])
    async with app.run_test(size=(120, height)) as pilot:
        await draw_all(pilot)
        decode = app.query_one("#decode", Chart)
        if decode.short:
            return
        assert decode._y_max - decode._y_min >= 0.2 * 55.0
        rows = axis_rows(decode)
        labelled = [y for y, row in enumerate(rows) if row and y > 0]
        assert len(labelled) >= 2 and all(b - a >= 2 for a, b in itertools.pairwise(labelled)), (
            rows,
            decode._y_min,
            decode._y_max,
            decode.plot_size,
        )
        values = np.array([float(rows[y]) for y in labelled])
        assert np.allclose(np.diff(values), values[1] - values[0]), rows
        # the same rows between any two labels: an even step is drawn evenly (issue 24)
        assert len(set(np.diff(labelled))) == 1, (labelled, rows)


async def test_a_legend_never_floats_over_where_the_newest_points_come() -> None:
    """Early spikes fill both left corners, the right ones are free: the legend goes to the
    bottom border rather than over the right of the plot, where the next trials are drawn."""
    app = dipping([80.0 if n % 2 else 20.0 for n in range(8)] + [50.0] * 40)
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        decode = app.query_one("#decode", Chart)
        legend = decode.query_one("#legend")
        plot = decode.query_one("#plot", Canvas).region
        assert not legend.display or legend.region.right <= plot.x + plot.width // 2
        assert decode._subtitle is not None and decode._subtitle.plain == "━ a"


async def test_the_text_form_keeps_its_height_with_its_rows(make_app: MakeApp) -> None:
    """A short chart's words: a new value on as many rows shows at once in the same place;
    an arm more that needs a row more gets it (the screen laid out again only then)."""
    feed = live_feed()
    feed.pipeline.emit(StartEvent(t=0, wall=0, arm="a", line="START arm=a"))
    app = make_app(feed=feed)

    def trial(t: float, arm: str, decode: float) -> None:
        feed.pipeline.emit(
            TrialEvent(t=t, wall=t, arm=arm, trial=int(t), app_t=t, decode_tps=decode)
        )

    async with app.run_test(size=(80, 24)) as pilot:
        trial(1, "a", 51.0)
        await draw_all(pilot)
        decode = app.query_one("#decode", Chart)
        words = decode.query_one(".latest", Static)
        assert decode.short and str(words.render()) == "━ a 51.0"
        before = words.region
        trial(2, "a", 123.4)
        await draw_all(pilot)
        assert str(words.render()) == "━ a 123.4" and words.region == before
        width = decode.content_size.width - 2
        names = [f"arm-{n}-{'x' * (width // 3)}" for n in range(2)]
        for n, arm in enumerate(names):
            feed.pipeline.emit(StartEvent(t=3 + n, wall=3 + n, arm=arm, line=f"START arm={arm}"))
            trial(3.5 + n, arm, 60.0)
        await draw_all(pilot)
        rows = str(words.render()).count("\n") + 1
        assert rows > 1 and words.region.height == rows
        assert "123.4" in app.export_screenshot()
