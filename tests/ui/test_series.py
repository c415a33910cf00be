"""The pure drawing helpers (no app): decimation, steps, literal log text, the timeline."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual.geometry import Region

from anemon.events import (
    AlertEvent,
    Check,
    Event,
    GapEvent,
    MarkerEvent,
    PhaseEvent,
    PreflightEvent,
    TextEvent,
)
from anemon.ui.charts.axes import (
    MIN_TICK_ROWS,
    ROWS_APART,
    FittedFormatter,
    Least,
    on_ticks,
    x_limits,
    y_limits,
)
from anemon.ui.charts.drawing import to_cells
from anemon.ui.series import (
    bar,
    charging_text,
    clock,
    decimate,
    literal,
    log_text,
    owners,
    runs,
    speed_text,
    steps,
)


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
    """The one escaping helper (anemon.text.printable): tabs and bidi overrides too."""
    line = "[bold]x[/bold] \x1b[31mred\x1b[0m\ttab\x07 \u202eevil"
    assert literal(line) == "[bold]x[/bold] \\x1b[31mred\\x1b[0m\\x09tab\\x07 \\u202eevil"


@pytest.mark.parametrize(
    ("event", "text"),
    [
        (TextEvent(t=0, wall=0, line="a\x1bb"), "a\\x1bb"),
        (PhaseEvent(t=0, wall=0, phase="cooling", reason="v2"), "── phase cooling: v2"),
        (MarkerEvent(t=0, wall=0, note="fan on"), "── marker: fan on"),
        (GapEvent(t=0, wall=0, state="begin"), "── gap begin"),
        (AlertEvent(t=0, wall=0, alert="thermal", note="serious\x1b[2J"),
         "── ALERT thermal: serious\\x1b[2J"),
        (PreflightEvent(t=0, wall=0, status="fail", forced=True, checks=(
            Check("disk", "fail", ""), Check("device", "pass", ""), Check("thermal", "warn", ""))),
         "── pre-flight fail: disk, thermal (going on: --force)"),
    ],
    ids=["line", "phase", "marker", "gap", "alert", "preflight"],
)  # fmt: skip
def test_log_text_for_lines_and_controller_events(event: Event, text: str) -> None:
    assert log_text(event) == text


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0:00"), (701.9, "11:41"), (3725, "1:02:05"), (None, "—")]
)
def test_clock(seconds: float | None, text: str) -> None:
    assert clock(seconds) == text


@pytest.mark.parametrize(("speed", "text"), [(2.0, "2×"), (0.5, "0.5×"), (math.inf, "max")])
def test_speed_text(speed: float, text: str) -> None:
    assert speed_text(speed) == text


@pytest.mark.parametrize(
    ("args", "drawn"),
    [
        ((11, 5, 10, {}), "━━━━━●─────"),
        ((11, 0, 10, {10.0: "✗"}), "●─────────✗"),
        ((5, 0, 0, {}), "●────"),
    ],
    ids=["halfway", "a mark at the end", "no duration"],
)
def test_bar_places_the_head_and_marks(args: tuple, drawn: str) -> None:
    assert bar(*args) == drawn


@pytest.mark.parametrize(
    ("ys", "fixed", "least", "limits"),
    [
        ([np.array([2200.0, 4100.0]), np.array([1000.0, 1250.0])], (None, None), Least(),
         (0.0, 8000.0, 2000.0)),
        ([np.array([38.0, 38.0]), np.empty(0)], (None, None), Least(), (37.0, 39.0, 0.5)),
        ([np.array([54.0, 55.0, 56.0])], (None, None), Least(share=0.2), (45.0, 65.0, 5.0)),
        ([np.array([0.2, 0.4])], (None, None), Least(share=0.2), (0.0, 2.0, 0.5)),
        ([np.array([95.0])], (0, 100), Least(), (0, 100, 25.0)),
        ([np.array([-0.5, 101.0])], (0, 100), Least(), (-50.0, 150.0, 50.0)),
        ([], (None, None), Least(), (None, None, None)),
    ],
    ids=["two series, a margin, out to ticks, a row per step over", "flat",
         "tok/s: +/-10 % of the median", "from 0, not below", "within fixed", "beyond fixed",
         "none"],
)  # fmt: skip
def test_y_limits_cover_every_series_on_ticks(
    ys: list[np.ndarray], fixed: tuple, least: Least, limits: tuple
) -> None:
    assert y_limits(ys, fixed, least, rows=8) == pytest.approx(limits)


@given(
    st.floats(-1e6, 1e6).map(lambda v: round(v, 3)),
    st.floats(1e-2, 1e6),
    st.integers(MIN_TICK_ROWS, 60),
)
def test_ticks_are_evenly_spaced_rows_apart_from_end_to_end(
    lo: float, span: float, rows: int
) -> None:
    """Every step the same and drawn as the same whole rows, two labels never on one row or
    on rows next to each other, and the axis starts on a tick, its top less than a step above
    the last one."""
    low, high, step = on_ticks(lo, lo + span, rows)
    assert low <= lo and lo + span <= high
    axis = FittedFormatter()
    axis.rows, axis.step = rows, step
    ticks = axis.get_ticks(low, high)
    assert ticks[0] == pytest.approx(low) and high - ticks[-1] < step * (1 + 1e-9)
    steps = np.diff(ticks)
    assert len(steps) and np.allclose(steps, step)
    per_step = step / (high - low) * rows
    assert per_step >= ROWS_APART * (1 - 1e-9) and per_step == pytest.approx(round(per_step))


@pytest.mark.parametrize(
    ("xs", "end", "limits"),
    [
        ([np.array([4.0, 1499.0])], 1499.0, (0.0, 1499.0)),
        ([np.array([-2.0, 1510.0])], 1499.0, (-2.0, 1510.0)),
        ([], 60.0, (0.0, 60.0)),
    ],
    ids=["to the end", "to the points beyond", "no points"],
)
def test_x_limits_run_from_zero_to_the_end_or_the_last_point(
    xs: list[np.ndarray], end: float, limits: tuple
) -> None:
    assert x_limits(xs, end) == limits


def test_points_map_inside_the_axes_even_at_the_limits() -> None:
    box = Region(1, 1, 19, 6)  # a 21×8 plot canvas, its axes along the edges
    limits = (0.0, 100.0, 0.0, 10.0)
    corners = [to_cells(x, y, limits, box) for x in (0.0, 100.0) for y in (0.0, 10.0)]
    cells = {(int(np.floor(x)), int(np.floor(y))) for x, y in corners}
    assert cells == {(1, 6), (1, 1), (19, 6), (19, 1)}


def test_owners_name_the_span_each_time_falls_in() -> None:
    starts, ends = np.array([10.0, 30.0]), np.array([20.0, math.inf])
    t = np.array([0.0, 10.0, 15.0, 20.0, 25.0, 30.0, 1e9])
    assert owners(t, starts, ends).tolist() == [-1, 0, 0, 0, -1, 1, 1]
    assert owners(t, np.empty(0), np.empty(0)).tolist() == [-1] * len(t)


def test_runs_are_the_stretches_of_equal_values() -> None:
    assert runs(np.array([-1, -1, 0, 0, 0, -1, 1])) == [
        slice(0, 2),
        slice(2, 5),
        slice(5, 6),
        slice(6, 7),
    ]
    assert runs(np.empty(0)) == []


@pytest.mark.parametrize(
    ("charging", "plugged", "app", "shown"),
    [
        (True, True, None, "charging"),
        (False, False, "charging", "on battery"),  # the host's word first
        (None, False, None, "on battery"),
        (False, True, None, "plugged in"),
        (False, None, None, "not charging"),
        (None, None, "unplugged", "on battery"),
        (None, None, "full", "plugged in"),
        (None, None, None, "—"),
    ],
)
def test_the_charging_state_in_words(
    charging: bool | None, plugged: bool | None, app: str | None, shown: str
) -> None:
    assert charging_text(charging, plugged, app) == shown


SAFE_GLYPHS = ((0x20, 0x7E), (0xA0, 0xFF), (0x2010, 0x2027), (0x2190, 0x21FF),
               (0x2500, 0x25FF))  # fmt: skip
"""Latin, punctuation, arrows, box drawing, blocks and shapes: what the browser view's fonts
(xterm.js in textual-serve) and every terminal font have; not U+23F8 ⏸ (Misc Technical)."""


@pytest.mark.parametrize(("paused", "finished"), [(True, False), (False, True), (False, False)])
def test_the_timeline_says_its_state_in_glyphs_every_font_has(paused: bool, finished: bool) -> None:
    from types import SimpleNamespace

    from anemon.store import Session
    from anemon.ui.timeline import timeline_text

    replay = SimpleNamespace(paused=paused, finished=finished, position=5.0, duration=60.0,
                             speed=1.0, session=Session(), start=0.0)  # fmt: skip
    text = timeline_text(replay, 60).plain  # type: ignore[arg-type]
    assert all(any(a <= ord(c) <= b for a, b in SAFE_GLYPHS) for c in text), text
