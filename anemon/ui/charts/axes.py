"""The charts' axes: tick formatters and the limits a chart's points are drawn within."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from textual_plot.axis_formatter import AxisFormatter

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


AXIS_GRAINS = 10
"""The x axis's end is a multiple of the largest `ElapsedFormatter.STEPS` step that fits this
many times into the session's time (`axis_end`)."""


def axis_end(seconds: float) -> float:
    """The x axis's end for a session (or arm) `seconds` long: rounded up to a multiple of a
    step a tenth of it or less (1 s to 10 s, 5 s to 100 s, 5 min to 1 h 40), so the axis
    moves in steps, not with every reading: a chart whose lines did not change is not drawn
    again each second. It depends on the time alone, not on a chart's width, so every chart
    keeps one time axis; its steps nest (each grain's tenfold is a multiple of the grain
    before), so it never shrinks as the time grows."""
    grain = max((s for s in ElapsedFormatter.STEPS if s * AXIS_GRAINS <= seconds), default=1)
    return float(math.ceil(seconds / grain - 1e-9) * grain)


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


STEPS = (1.0, 2.0, 2.5, 5.0)
"""A numeric axis's tick step is one of these times a power of ten."""
ROWS_APART = 2
"""Rows from one tick label to the next, at least: a blank row between two labels, never two
on one row or on rows next to each other."""
MIN_TICK_ROWS = 2 * ROWS_APART
"""Rows a numeric axis needs to start and end on a tick, whatever its range (`on_ticks`)."""


def tick_step(span: float, rows: int) -> float:
    """The smallest round step whose ticks, over `span` drawn `rows` rows from its top label
    to its bottom one, are `ROWS_APART` rows apart or more."""
    least = max(span, 1e-12) * ROWS_APART / max(rows, 1)
    scale = 10 ** math.floor(math.log10(least))
    return next(m * scale for m in (*STEPS, 10.0) if m * scale >= least * (1 - 1e-9))


def on_ticks(lo: float, hi: float, rows: int) -> tuple[float, float, float | None]:
    """`lo`..`hi` widened to the nearest ticks outside them, so that the axis starts on a label,
    with the step between its ticks. A wider span can need a larger step, so until the step
    holds: on 4 rows or more it does once the step is as wide as the data, whose range then
    touches two steps at most. The top is then raised by the rows a whole number of rows per
    step leaves over (19 rows for 6 steps: 3 a step, and one row above the top tick), so that
    every step is drawn as the same rows. On fewer, `lo`..`hi` as they are and no step (a
    chart that short shows its values in words)."""
    if rows < MIN_TICK_ROWS:
        return lo, hi, None
    step = tick_step(hi - lo, rows)
    while True:
        low, high = math.floor(lo / step) * step, math.ceil(hi / step) * step
        if high - low < step:  # lo == hi on a tick
            high = low + step
        wider = tick_step(high - low, rows)
        if wider <= step:
            break
        step = wider
    steps = round((high - low) / step)
    per_step = rows // steps
    return low, high + (rows - steps * per_step) * step / per_step, step


class FittedFormatter(AxisFormatter):
    """A numeric y axis whose ticks are the multiples of one round step (`tick_step`) in its
    range, `ROWS_APART` rows apart on its `rows`; labels too long for the axis are given
    `compact`ly."""

    def __init__(self) -> None:
        self.rows = 8
        self.step: float | None = None
        """The step `on_ticks` chose for the limits set, else one found for the range."""

    def get_ticks(self, min_: float, max_: float, max_ticks: int = 8) -> list[float]:
        step = self.step or tick_step(max_ - min_, self.rows)
        first, last = math.ceil(min_ / step - 1e-9), math.floor(max_ / step + 1e-9)
        return [round(n * step, 12) for n in range(first, last + 1)]

    def get_labels_for_ticks(self, ticks: Sequence[float]) -> list[str]:
        """Each tick with the decimals its step needs (52.5, never a rounded 52)."""
        step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
        places = next((d for d in range(7) if abs(round(step, d) - step) < step * 1e-6), 6)
        labels = [f"{tick:.{places}f}" for tick in ticks]
        if all(len(label) <= LABEL_WIDTH for label in labels):
            return labels
        return [compact(tick) for tick in ticks]


MARGIN = 0.05
"""Of the data's span, above and below an autoscaled range: extremes clear the axis lines."""


@dataclass(frozen=True, slots=True)
class Least:
    """The least span of an autoscaled value axis: `share` of the median of its values, and
    never less than `floor` (in their unit), so that a dip of a few % is not drawn from the
    top of the chart to its bottom (docs/ARCHITECTURE.md, "Charts' scales")."""

    share: float = 0.02
    floor: float = 1.0


ANY_LEAST = Least()
"""Every autoscaled axis (free disk GB): 2 % of its values, 1 at least."""


def widened(lo: float, hi: float, median: float, least: Least) -> tuple[float, float]:
    """`lo`..`hi`, or the least span (`least`) around their middle, whichever is wider; not
    below 0 for values that are not."""
    span = max(least.floor, least.share * abs(median))
    if hi - lo >= span:
        return lo, hi
    low = (lo + hi - span) / 2
    if low < 0 <= lo:
        low = 0.0
    return low, low + span


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
    ys: list[np.ndarray],
    fixed: tuple[float | None, float | None],
    least: Least,
    rows: int,
) -> tuple[float | None, float | None, float | None]:
    """A chart's fixed limits widened to its data, or the data's range widened to its least
    span (`least`) with a margin; either way out to the ticks outside (`on_ticks`, for an
    axis of `rows` rows), with their step (None: no data, the fixed limits as they are)."""
    span = extent(ys)
    if span is None:
        return (*fixed, None)
    lo, hi = span
    if fixed != (None, None):
        lo = lo if fixed[0] is None else min(fixed[0], lo)
        hi = hi if fixed[1] is None else max(fixed[1], hi)
    else:
        lo, hi = widened(lo, hi, float(np.median(np.concatenate(ys))), least)
        margin = (hi - lo) * MARGIN
        low, hi = lo - margin, hi + margin
        lo = 0.0 if low < 0 <= lo else low  # tok/s, watts: never a negative tick
    return on_ticks(lo, hi, rows)
