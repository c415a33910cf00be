"""A chart draws its canvases at once and repaints only their changed rows: the screen is then
exactly what a fresh draw of the same data shows; the memos of segments and lines change no
dot."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.geometry import Size
from textual.pilot import Pilot
from textual_hires_canvas import Canvas

from anemon.events import Event, StartEvent, TelemetryEvent, TrialEvent
from anemon.feeds.live import LiveFeed
from anemon.ui.app import Dashboard
from anemon.ui.charts.chart import Chart
from anemon.ui.charts.drawing import LineCells, Segments, braille_cells, line_dots
from anemon.ui.charts.plotlib import canvas_size

from .helpers import MakeApp, live_feed, settle

SIZE = (120, 40)


def readings(feed: LiveFeed, count: int = 300, into: list[Event] | None = None) -> None:
    """An arm's trial, then a reading a second: power, battery, free disk."""

    def add(event: Event) -> None:
        feed.pipeline.emit(event)
        if into is not None:
            into.append(event)

    add(StartEvent(t=0.0, wall=0.0, arm="a", line="START arm=a"))
    add(TrialEvent(t=1.0, wall=1.0, arm="a", trial=1, decode_tps=50.0, thermal=1))
    for t in range(2, count):
        add(TelemetryEvent(t=float(t), wall=0.0, power_w=3.0, battery=90.0 - t / 100,
                           free_gb=30.0, plugged=False))  # fmt: skip


async def drawn(pilot: Pilot[object]) -> None:
    """Laid out, then drawn at its size (every chart), and settled."""
    await pilot.pause()
    pilot.app.redraw(force=True)  # type: ignore[attr-defined]
    await settle(pilot)


def chart_rows(app: Dashboard, chart: Chart) -> list[str]:
    """What the terminal shows of `chart`: its rows of text."""
    strips = app.screen._compositor.render_strips()
    region = chart.region
    return ["".join(seg.text for seg in strips[y])[region.x : region.right]
            for y in range(region.y, region.bottom)]  # fmt: skip


async def test_after_many_updates_the_screen_is_a_fresh_draw_of_the_same_data(
    make_app: MakeApp,
) -> None:
    """Trials and readings drawn one by one (canvases repainted only where a row changed)
    end on the screen a dashboard started on all of them shows."""
    live, sent = live_feed(), list[Event]()
    readings(live, 120, sent)
    app = make_app(feed=live)

    def add(event: Event) -> None:
        live.pipeline.emit(event)
        sent.append(event)

    async with app.run_test(size=SIZE) as pilot:
        await drawn(pilot)
        for n in range(2, 40):
            t = 120.0 + n * 3
            arm = "a" if n < 20 else "b"  # a's lines, ended, are painted from the memo
            if n == 20:
                add(StartEvent(t=t - 2, wall=0.0, arm=arm, line=f"START arm={arm}"))
            add(TelemetryEvent(t=t - 1, wall=0.0, power_w=3.0 + n % 4, battery=88.0 - n / 50,
                               free_gb=30.0 - n / 1000, plugged=False))  # fmt: skip
            add(TrialEvent(t=t, wall=t, arm=arm, trial=n, decode_tps=50.0 - n % 5,
                           prompt_tps=900.0 + n, thermal=1 + n // 30))  # fmt: skip
            app.redraw()
            await pilot.pause()
        # last, a new value for every chart: each is brought up to this moment (a chart whose
        # data is unchanged is redrawn only once its axis's end moves a step, `axis_end`)
        add(TelemetryEvent(t=300.0, wall=0.0, power_w=2.5, battery=80.0, free_gb=29.0))
        add(TrialEvent(t=301.0, wall=301.0, arm="b", trial=40, decode_tps=47.0, thermal=3))
        app.redraw(force=True)  # every chart this round: the round's time budget not asked
        await settle(pilot)
        seen = {c.id: chart_rows(app, c) for c in app.query(Chart) if c.region.area}
    fresh = live_feed()
    for event in sent:
        fresh.pipeline.emit(event)
    again = make_app(feed=fresh)
    async with again.run_test(size=SIZE) as pilot:
        await drawn(pilot)
        for name, rows in seen.items():
            assert chart_rows(again, again.query_one(f"#{name}", Chart)) == rows, name


coordinate = st.floats(-5, 105, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(
        st.lists(st.tuples(coordinate, coordinate), min_size=2, max_size=12), min_size=1, max_size=4
    ),
    width=st.integers(4, 30),
    height=st.integers(4, 12),
)
def test_the_memo_of_segments_gives_the_dots_drawn_without_it(
    lines: list[list[tuple[float, float]]], width: int, height: int
) -> None:
    """Segments remembered from earlier lines (a chart's memo across redraws) give the same
    dots as working each one out afresh."""
    canvas = Canvas()
    canvas.reset(size=Size(width, height))
    memo: Segments = {}
    for points in lines:
        x, y = (np.array(v, dtype=float) / 100 * (width - 1) for v in zip(*points, strict=True))
        fresh = line_dots(canvas, x, y)
        remembered = line_dots(canvas, x, y, memo)
        assert all(np.array_equal(a, b) for a, b in zip(fresh, remembered, strict=True))


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(
        st.lists(st.tuples(coordinate, coordinate), min_size=2, max_size=12), min_size=1, max_size=4
    ),
    draws=st.lists(st.lists(st.integers(0, 3), max_size=5), min_size=1, max_size=4),
    width=st.integers(4, 30),
    height=st.integers(4, 12),
)
def test_the_memo_of_lines_gives_the_cells_found_without_it(
    lines: list[list[tuple[float, float]]], draws: list[list[int]], width: int, height: int
) -> None:
    """Draws of some of the same lines again, each draw a turn of the memo: every line's cells
    are the ones found afresh; a line of the draw before is not worked out again, one of an
    older draw is (the memo holds two draws)."""
    canvas = Canvas()
    canvas.reset(size=Size(width, height))
    memo = LineCells()
    segments: Segments = {}
    polylines = [
        tuple(np.array(v, dtype=float) / 100 * (width - 1) for v in zip(*points, strict=True))
        for points in lines
    ]
    for draw in draws:
        memo.turn()
        for x, y in (polylines[i % len(polylines)] for i in draw):
            kept = memo.last.get((x.tobytes(), y.tobytes(), canvas_size(canvas)))
            cells = memo.cells(canvas, x, y, segments)
            assert cells == braille_cells(canvas_size(canvas), *line_dots(canvas, x, y))
            assert kept is None or cells is kept
    memo.turn()
    memo.turn()
    assert not memo.last and not memo.now
