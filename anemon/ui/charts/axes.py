"""The charts' axes: tick formatters and the limits a chart's points are drawn within."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from textual_plot.axis_formatter import AxisFormatter, NumericAxisFormatter

from anemon.events import THERMAL_NAMES


class ElapsedFormatter(AxisFormatter):
    """Session time on the x axis: as many ticks as fit (`fit`), labelled 30s, 2m, 1h."""

    STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800)

    def __init__(self) -> None:
        self.fit = 5

    def get_ticks(self, min_: float, max_: float, max_ticks: int = 8) -> list[float]:
        span = max(max_ - min_, 1e-9)
        step = next((s for s in self.STEPS if span / s <= self.fit), None)
        if step is None:  # past 8 h a step: 1, 2, 5 × 10^k hours, so it still fits
            hours = span / self.fit / 3600
            scale = 10 ** math.floor(math.log10(hours))
            step = 3600 * scale * next(m for m in (1, 2, 5, 10) if m * scale >= hours)
        first = math.ceil(min_ / step) * step
        return [float(first + i * step) for i in range(int((max_ - first) // step) + 1)]

    def get_labels_for_ticks(self, ticks: Sequence[float]) -> list[str]:
        if len(ticks) > 1 and ticks[1] - ticks[0] >= 3600:
            return [f"{t / 3600:g}h" for t in ticks]
        if len(ticks) > 1 and ticks[1] - ticks[0] >= 60:
            return [f"{t / 60:g}m" for t in ticks]
        return [f"{t:g}s" for t in ticks]


class ThermalFormatter(AxisFormatter):
    """The y axis of the thermal chart: the four state names."""

    def get_ticks(self, min_: float, max_: float, max_ticks: int = 8) -> list[float]:
        return [float(v) for v in range(len(THERMAL_NAMES)) if min_ <= v <= max_]

    def get_labels_for_ticks(self, ticks: Sequence[float]) -> list[str]:
        return [THERMAL_NAMES[int(t)] for t in ticks]


LABEL_WIDTH = 6
"""Characters a numeric y axis's labels have: textual-plot cuts a label to its margin, less
the tick (12,000,000 would read 120000)."""
SI = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def compact(value: float) -> str:
    """A tick's value short enough for the axis: 12M, 2.5k, 1e-05 (ticks are round numbers:
    four significant digits are plenty)."""
    for scale, suffix in SI:
        if abs(value) >= scale:
            return f"{value / scale:.4g}{suffix}"
    return f"{value:.4g}"


class FittedFormatter(NumericAxisFormatter):
    """A numeric y axis with no more ticks than its `rows` can hold a row apart (every k-th
    of the nice ticks in range), so no two labels share, and overwrite, a row; labels too
    long for the axis are given `compact`ly."""

    def __init__(self) -> None:
        self.rows = 8

    def get_ticks(self, min_: float, max_: float, max_ticks: int = 8) -> list[float]:
        ticks = [t for t in super().get_ticks(min_, max_, max_ticks) if min_ <= t <= max_]
        room = max(1, (self.rows + 1) // 2)
        return ticks[:: math.ceil(len(ticks) / room)] if ticks else ticks

    def get_labels_for_ticks(self, ticks: Sequence[float]) -> list[str]:
        labels = super().get_labels_for_ticks(ticks)
        if all(len(label) <= LABEL_WIDTH for label in labels):
            return labels
        return [compact(tick) for tick in ticks]


MARGIN = 0.05
"""Of the data's span, above and below an autoscaled range: extremes clear the axis lines."""


def extent(values: list[np.ndarray]) -> tuple[float, float] | None:
    """The smallest and largest value over all the series, or None if all are empty."""
    present = [v for v in values if len(v)]
    if not present:
        return None
    return min(float(np.min(v)) for v in present), max(float(np.max(v)) for v in present)


def x_limits(xs: list[np.ndarray], end: float) -> tuple[float, float]:
    """From 0 to `end` (the session or the longest arm), widened to any point beyond."""
    span = extent(xs)
    return (0.0, end) if span is None else (min(0.0, span[0]), max(end, span[1]))


def y_limits(
    ys: list[np.ndarray], fixed: tuple[float | None, float | None]
) -> tuple[float | None, float | None]:
    """A chart's fixed limits widened to its data, or the data's range and a margin."""
    span = extent(ys)
    if span is None:
        return fixed
    lo, hi = span
    if fixed != (None, None):
        return (
            lo if fixed[0] is None else min(fixed[0], lo),
            hi if fixed[1] is None else max(fixed[1], hi),
        )
    flat = readable_range(ys)
    if flat != (None, None):
        return flat
    margin = (hi - lo) * MARGIN
    return lo - margin, hi + margin


def readable_range(ys: list[np.ndarray]) -> tuple[float | None, float | None]:
    """Autoscale, but a flat series (free disk) gets a span its tick labels can tell apart."""
    values = [y for y in ys if len(y)]
    if not values:
        return (None, None)
    lo = float(min(np.min(y) for y in values))
    hi = float(max(np.max(y) for y in values))
    least = max(1.0, abs(hi) * 0.02)
    if hi - lo >= least:
        return (None, None)
    middle = (hi + lo) / 2
    return (middle - least / 2, middle + least / 2)
