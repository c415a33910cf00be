"""The pure drawing helpers (no Textual): decimation, steps, literal log text, the timeline."""

from __future__ import annotations

import numpy as np

from anemon.events import GapEvent, MarkerEvent, PhaseEvent, TextEvent
from anemon.ui.series import bar, clock, decimate, literal, log_text, speed_text, steps


def test_decimate_keeps_at_most_two_points_per_column_and_the_spikes() -> None:
    x = np.arange(100_000, dtype=float)
    y = np.full_like(x, 50.0)
    y[12_345] = 500.0
    y[77_777] = -5.0
    dx, dy = decimate(x, y, 100)
    assert len(dx) <= 200
    assert dy.max() == 500.0 and dy.min() == -5.0
    assert np.all(np.diff(dx) >= 0)


def test_decimate_passes_small_series_through_without_nans() -> None:
    x = np.array([0.0, 1.0, 2.0, 3.0])
    y = np.array([1.0, np.nan, 3.0, 4.0])
    dx, dy = decimate(x, y, 10)
    assert dx.tolist() == [0.0, 2.0, 3.0] and dy.tolist() == [1.0, 3.0, 4.0]


def test_decimate_empty() -> None:
    dx, dy = decimate(np.empty(0), np.empty(0), 10)
    assert len(dx) == len(dy) == 0


def test_steps_hold_each_state_until_the_next_change() -> None:
    x = np.array([0.0, 10.0, 20.0, 30.0])
    y = np.array([1.0, 1.0, 2.0, 2.0])
    sx, sy = steps(x, y, end=40.0)
    assert sx.tolist() == [0.0, 20.0, 20.0, 40.0]
    assert sy.tolist() == [1.0, 1.0, 2.0, 2.0]


def test_literal_shows_escapes_and_keeps_markup_as_text() -> None:
    line = "[bold]x[/bold] \x1b[31mred\x1b[0m\ttab\x07"
    assert literal(line) == "[bold]x[/bold] \\x1b[31mred\\x1b[0m\ttab\\x07"


def test_log_text_for_lines_and_controller_events() -> None:
    assert log_text(TextEvent(t=0, wall=0, line="a\x1bb")) == "a\\x1bb"
    assert log_text(PhaseEvent(t=0, wall=0, phase="cooling", reason="v2")) == "── phase cooling: v2"
    assert log_text(MarkerEvent(t=0, wall=0, note="fan on")) == "── marker: fan on"
    assert log_text(GapEvent(t=0, wall=0, state="begin")) == "── gap begin"


def test_clock_and_speed() -> None:
    assert clock(0) == "0:00" and clock(701.9) == "11:41" and clock(3725) == "1:02:05"
    assert clock(None) == "—"
    assert speed_text(2.0) == "2×" and speed_text(float("inf")) == "max"


def test_bar_places_the_head_and_marks() -> None:
    assert bar(11, 5, 10, {}) == "━━━━━●─────"
    assert bar(11, 0, 10, {10.0: "✗"}) == "●─────────✗"
    assert bar(5, 0, 0, {}) == "●────"


def test_a_flat_series_gets_a_readable_range() -> None:
    from anemon.ui.charts import readable_range

    assert readable_range([np.array([38.0, 38.0])]) == (37.5, 38.5)
    assert readable_range([np.array([1.0, 50.0])]) == (None, None)
    assert readable_range([]) == (None, None)


def test_y_limits_cover_every_series_with_a_margin() -> None:
    from anemon.ui.charts import y_limits

    fast, slow = np.array([2200.0, 4100.0]), np.array([1000.0, 1250.0])
    lo, hi = y_limits([fast, slow], (None, None))
    assert lo == 1000.0 - 0.05 * 3100 and hi == 4100.0 + 0.05 * 3100
    # the flat rule still holds, and fixed limits widen to data beyond them
    assert y_limits([np.array([38.0, 38.0]), np.empty(0)], (None, None)) == (37.5, 38.5)
    assert y_limits([np.array([95.0])], (0, 100)) == (0, 100)
    assert y_limits([np.array([-0.5, 101.0])], (0, 100)) == (-0.5, 101.0)
    assert y_limits([], (None, None)) == (None, None)
    assert y_limits([np.empty(0)], (-0.1, 3.1)) == (-0.1, 3.1)


def test_x_limits_run_from_zero_to_the_end_or_the_last_point() -> None:
    from anemon.ui.charts import x_limits

    assert x_limits([np.array([4.0, 1499.0])], 1499.0) == (0.0, 1499.0)
    assert x_limits([np.array([-2.0, 1510.0])], 1499.0) == (-2.0, 1510.0)
    assert x_limits([], 60.0) == (0.0, 60.0)


def test_points_map_inside_the_axes_even_at_the_limits() -> None:
    from textual.geometry import Region

    from anemon.ui.charts import to_cells

    box = Region(1, 1, 19, 6)  # a 21×8 plot canvas, its axes along the edges
    limits = (0.0, 100.0, 0.0, 10.0)
    corners = [to_cells(x, y, limits, box) for x in (0.0, 100.0) for y in (0.0, 10.0)]
    cells = {(int(np.floor(x)), int(np.floor(y))) for x, y in corners}
    assert cells == {(1, 6), (1, 1), (19, 6), (19, 1)}
