"""Charts draw every series inside their axes, readable, at any size (pilot, fixed data).

What is checked is what lands on the plot canvas: the cell each series' first and last point
maps to, every braille cell drawn, and the legend that floats over the plot.
"""

from __future__ import annotations

from math import floor

import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from textual_hires_canvas import Canvas

from anemon.ui import layouts
from anemon.ui.app import Dashboard, is_shown
from anemon.ui.charts import Chart

from .helpers import MakeApp
from .sample import replay_feed

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
    charts = shown_charts(app)
    assert {c.id for c in charts} == names
    assert all(c._datasets for c in charts)
    assert [p for c in charts for p in problems(c)] == []


async def test_every_series_is_drawn_inside_its_axes(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        assert_charts_fit(app, {"decode", "prefill", "thermal", "battery", "free"})


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
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        assert app.query_one("#decode", Chart).query_one("#legend").display
        assert not app.query_one("#prefill", Chart).query_one("#legend").display


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
        assert_charts_fit(app, {"decode", "prefill", "thermal", "battery", "free"})


async def test_charts_fit_after_the_layout_changes_their_size(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await draw_all(pilot)
        app.use_layout(layouts.resolve("ab"))
        await draw_all(pilot)
        assert_charts_fit(app, {"prefill", "thermal", "arm-a", "arm-b"})
        app.use_layout(layouts.resolve("default"))
        await draw_all(pilot)
        assert_charts_fit(app, {"decode", "prefill", "thermal", "battery", "free"})


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
