"""Incremental decimation: `Decimator` fed in any chunks equals `decimate` over all the points,
and `StepFollower` what stepping the whole series gives."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.ui.series import Decimator, StepFollower, decimate, grid_step, steps

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
value = st.one_of(finite, st.just(math.nan))


@st.composite
def series_in_chunks(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, list[int], int]:
    """Points (x ascending or not, NaNs in x or y), where the chunks end, and the bins."""
    n = draw(st.integers(0, 400))
    x = np.array(draw(st.lists(value, min_size=n, max_size=n)), dtype=float)
    if draw(st.booleans()):
        x = np.sort(x)  # the usual case: time ascending (NaNs sort last)
    y = np.array(draw(st.lists(value, min_size=n, max_size=n)), dtype=float)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=12)))
    return x, y, cuts, draw(st.integers(1, 40))


@settings(max_examples=200, deadline=None)
@given(series_in_chunks())
def test_incremental_equals_one_shot(case: tuple[np.ndarray, np.ndarray, list[int], int]) -> None:
    x, y, cuts, bins = case
    incremental = Decimator(bins)
    for a, b in zip([0, *cuts], [*cuts, len(x)], strict=True):
        incremental.extend(x[a:b], y[a:b])
        # after every chunk, not only at the end: the chart draws between arrivals
        got, want = incremental.points(), decimate(x[:b], y[:b], bins)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


@settings(max_examples=200, deadline=None)
@given(series_in_chunks())
def test_decimate_bounds_and_extremes(case: tuple[np.ndarray, np.ndarray, list[int], int]) -> None:
    """At most two points per bin, no NaN, and every bin's extremes (spikes) kept."""
    x, y, _, bins = case
    dx, dy = decimate(x, y, bins)
    keep = ~(np.isnan(x) | np.isnan(y))
    few = int(keep.sum()) <= 2 * max(2, bins)
    assert len(dx) == keep.sum() if few else len(dx) <= 2 * max(2, bins)
    assert not np.isnan(dx).any() and not np.isnan(dy).any()
    if keep.any():
        assert dy.min() == y[keep].min() and dy.max() == y[keep].max()
        assert dx.min() == x[keep].min() and dx.max() == x[keep].max()


def test_a_long_series_fed_a_point_at_a_time_matches_and_stays_small() -> None:
    """A session's worth, trial by trial: the bins coarsen as the axis grows."""
    rng = np.random.default_rng(7)
    x = np.cumsum(rng.uniform(0.5, 9.0, 5_000))
    y = 50 + rng.normal(0, 5, 5_000)
    y[1234] = 500.0
    incremental = Decimator(150)
    for i in range(len(x)):
        incremental.extend(x[i : i + 1], y[i : i + 1])
    got = incremental.points()
    want = decimate(x, y, 150)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert len(got[0]) <= 300 and got[1].max() == 500.0
    assert np.all(np.diff(got[0]) >= 0)  # ascending, as the lines are drawn


@settings(max_examples=200, deadline=None)
@given(finite, finite, st.integers(2, 400))
def test_grid_step_is_the_finest_that_fits(a: float, b: float, bins: int) -> None:
    low, high = min(a, b), max(a, b)
    j = grid_step(low, high, bins)

    def count(step: int) -> int:
        return math.floor(math.ldexp(high, -step)) - math.floor(math.ldexp(low, -step)) + 1

    assert count(j) <= bins
    assert j == -40 or count(j - 1) > bins


@st.composite
def states_in_chunks(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, list[int], int]:
    """A state series as the session keeps the thermal one: few distinct values, NaNs."""
    x, _, cuts, bins = draw(series_in_chunks())
    states = st.one_of(st.sampled_from([0.0, 1.0, 2.0, 3.0]), st.just(math.nan))
    y = np.array(draw(st.lists(states, min_size=len(x), max_size=len(x))), dtype=float)
    return x, y, cuts, bins


@settings(max_examples=200, deadline=None)
@given(states_in_chunks(), st.one_of(st.none(), finite))
def test_a_step_line_followed_equals_it_stepped_whole(
    case: tuple[np.ndarray, np.ndarray, list[int], int], end: float | None
) -> None:
    x, y, cuts, bins = case
    stepper = StepFollower(bins)
    for b in [*cuts, len(x)]:
        got, want = stepper.update(x[:b], y[:b], end), decimate(*steps(x[:b], y[:b], end), bins)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_a_step_line_that_changed_otherwise_is_stepped_again() -> None:
    """A seek back gives a shorter series; a new session's first point differs."""
    stepper = StepFollower(40)
    x, y = np.arange(10.0), np.array([0, 0, 1, 1, 2, 2, 1, 1, 0, 0], dtype=float)
    stepper.update(x, y, None)
    for cx, cy in ((x[:4], y[:4]), (x + 1, y[::-1].copy())):
        got, want = stepper.update(cx, cy, 20.0), decimate(*steps(cx, cy, 20.0), 40)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
