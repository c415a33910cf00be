"""The sustained figures of an arm's summary (line-protocol.md "Sustained and energy figures
(summary version 2)"): burst vs sustained tok/s, retained %, how fast the burst fades, and
the share of trials at serious or above. numpy on the Session's columns, no pandas: the live
arms table recomputes them for arms of 100k trials. A round of fewer than `SMALL` trials comes
as Python lists instead (`Values`): numpy's cost per call was most of a small round's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np

BURST_S = 60.0
"""The burst: trials with `el` <= this."""
PLATEAU_S = 120.0
"""The sustained plateau: trials with `el` >= (largest `el`) - this."""
SHORTEST_S = 180.0
"""An arm whose largest `el` is under this has no plateau: sustained is null."""
FADE_WINDOW = 5
"""Trials i..i+4: the window whose median decides a fade."""
FADES = (10, 25, 50)
"""The fade thresholds, in % below the burst."""
SERIOUS = 2
SMALL = 8
"""Rounds of fewer trials are figured on Python lists. Under 8 values numpy's sum is a plain
left-to-right loop from 0.0 (its pairwise summation starts at 8), so a list's sum from 0.0 is
the very same float: the figures are the same bytes either way."""
Values = np.ndarray | list[float]
"""A round's column: a numpy array, or a list for a round under `SMALL` trials."""
_CHUNK = 512
"""Fade windows examined first: a fade is usually found early, so most arms stop after the
first chunk instead of taking the median of every window. Each further chunk is twice the
last: an arm that never fades (200k trials) is a dozen numpy passes, not ~400 Python rounds
holding the GIL between them (the arms table summarizes in a thread beside the loop)."""


@dataclass(frozen=True, slots=True)
class Sustained:
    """The sustained keys of an arm's summary (null where the rules say so)."""

    burst_tps: float | None = None
    sustained_tps: float | None = None
    retained_pct: float | None = None
    fade_10_s: float | None = None
    fade_25_s: float | None = None
    fade_50_s: float | None = None
    serious_frac: float | None = None


def burst_to_sustained(burst: float | None, sustained: float | None) -> str:
    """The cell "33.0 → 22.1" (a dash for a figure that is null)."""
    return f"{_fmt(burst)} → {_fmt(sustained)}"


def retained_cell(retained_pct: float | None) -> str:
    """The cell "67.0 %" (a dash when null)."""
    return "—" if retained_pct is None else f"{retained_pct:.1f} %"


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}"


def elapsed(app_t: Values, session_t: Values) -> Values:
    """`el` of each trial of one round: its own `t=` (the session time where it has none)
    minus that of the round's first trial."""
    if isinstance(app_t, list):
        mine = [s if math.isnan(a) else a for a, s in zip(app_t, session_t, strict=True)]
        return [x - mine[0] for x in mine]
    own = np.where(np.isnan(app_t), session_t, app_t)
    return own - own[0] if len(own) else own


def present(values: Values) -> Values:
    """The values that are not NaN, in order."""
    if isinstance(values, list):
        return [x for x in values if x == x]  # NaN is not equal to itself
    return values[~np.isnan(values)]


def where(values: Values, keep: Values) -> Values:
    """The values where `keep` (as long, of bools) holds, in order."""
    if isinstance(values, list):
        return [x for x, kept in zip(values, keep, strict=True) if kept]
    return values[cast("np.ndarray", keep)]


def total(values: Values) -> float:
    """values.sum(), as numpy sums them (a list's: see `SMALL`)."""
    return sum(values, 0.0) if isinstance(values, list) else float(values.sum())


def sustained_figures(el: Values, decode: Values, thermal: Values) -> Sustained:
    """The figures of one round's timed trials, in order: `el` of each (see `elapsed`), its
    `decode_tps` and thermal state (NaN where missing)."""
    serious_frac = _serious_frac(thermal)
    decoded = _known(decode)
    el_d, tps = where(el, decoded), where(decode, decoded)
    if not len(tps):
        return Sustained(serious_frac=serious_frac)
    burst_set = where(tps, _at_most(el_d, BURST_S))
    burst = median(burst_set) if len(burst_set) else None
    sustained = _sustained(el, el_d, tps)
    retained = (
        round(100.0 * sustained / burst, 1)
        if sustained is not None and burst is not None and burst != 0
        else None
    )
    fades = fade_times(el_d, tps, burst) if burst is not None else (None,) * len(FADES)
    fade_10, fade_25, fade_50 = fades
    return Sustained(burst, sustained, retained, fade_10, fade_25, fade_50, serious_frac)


def _sustained(el: Values, el_d: Values, tps: Values) -> float | None:
    """The median over the last PLATEAU_S of the round. Its length is the largest `el` of any
    timed trial (one whose decode did not parse still says how long the arm ran)."""
    longest = max(present(el), default=math.nan) if isinstance(el, list) else float(np.nanmax(el))
    if longest < SHORTEST_S:
        return None
    plateau = where(tps, at_least(el_d, longest - PLATEAU_S))
    return median(plateau) if len(plateau) else None


def _known(values: Values) -> Values:
    """Where a value is not NaN."""
    return [x == x for x in values] if isinstance(values, list) else ~np.isnan(values)


def _at_most(values: Values, limit: float) -> Values:
    """Where a value is <= limit (not at a NaN)."""
    return [x <= limit for x in values] if isinstance(values, list) else values <= limit


def at_least(values: Values, limit: float) -> Values:
    """Where a value is >= limit (not at a NaN)."""
    return [x >= limit for x in values] if isinstance(values, list) else values >= limit


def fade_times(el: Values, tps: Values, burst: float) -> tuple[float | None, ...]:
    """For each of FADES: the `el` (one decimal) of the first trial i whose window median
    (trials i..i+4, fewer at the end) is <= (1 - X/100) x burst; None if none is.

    One pass: a window at or under a lower threshold is under every higher one, so each
    threshold's first trial is at or after the previous one's."""
    found: list[float | None] = []
    start = 0
    for percent in FADES:
        at = _first_at_or_under(tps, (1 - percent / 100) * burst, start)
        if at is None:
            found += [None] * (len(FADES) - len(found))
            break
        found.append(round(float(el[at]), 1))
        start = at
    return tuple(found)


def _first_at_or_under(tps: Values, limit: float, start: int) -> int | None:
    """The first i >= start whose window median is <= limit (a median decides here only by
    how it compares, so a list's windows need not be numpy's)."""
    n = len(tps)
    full = n - FADE_WINDOW + 1  # windows with all FADE_WINDOW trials: i < full
    i = start
    if isinstance(tps, list):  # a short round: each window, full or shorter, sorted
        shorter = (tps[j : j + FADE_WINDOW] for j in range(start, n))
        return next((j for j, w in enumerate(shorter, start) if _sorted_median(w) <= limit), None)
    chunk = _CHUNK
    while i < full:
        stop = min(i + chunk, full)
        hits = np.flatnonzero(window_medians(tps[i : stop + FADE_WINDOW - 1]) <= limit)
        if len(hits):
            return i + int(hits[0])
        i, chunk = stop, chunk * 2
    for j in range(max(i, 0), n):  # the last windows, shorter
        if median(tps[j:]) <= limit:
            return j
    return None


def window_medians(values: np.ndarray) -> np.ndarray:
    """The median of each full window of FADE_WINDOW (5) values, in order: the median of three
    (e, the larger of the two pairs' smaller, the smaller of their larger), elementwise over
    the whole array (the same value as np.median's: a median of five is one of them)."""
    a, b, c, d, e = (values[k : len(values) - FADE_WINDOW + 1 + k] for k in range(FADE_WINDOW))
    low = np.maximum(np.minimum(a, b), np.minimum(c, d))
    high = np.minimum(np.maximum(a, b), np.maximum(c, d))
    return np.maximum(np.minimum(low, high), np.minimum(np.maximum(low, high), e))


def median(values: Values) -> float:
    """np.median of values without NaN, computed as it computes it (the mean of the middle
    one or two of a partition), without importing numpy.ma as it does (~5 ms of a small
    command's start). A list of one or two is figured in Python: the same float."""
    if isinstance(values, list) and len(values) <= 2:
        return total(values) / len(values)  # no order among equal values to differ by
    values = np.asarray(values)
    half = len(values) // 2
    middle = slice(half, half + 1) if len(values) % 2 else slice(half - 1, half + 1)
    kth = [half] if len(values) % 2 else [half - 1, half]
    picked = np.partition(values, kth)[middle]
    return float(picked.sum() / len(picked))  # .mean(), without its per-call setup


def _sorted_median(values: list[float]) -> float:
    """`median` of a short list by sorting it: the same number, up to the sign of a zero
    (which of two equal values is picked), so for comparisons only."""
    ordered = sorted(values)
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


def _serious_frac(thermal: Values) -> float | None:
    known = present(thermal)
    if not len(known):
        return None
    serious = (
        sum(1 for k in known if k >= SERIOUS)
        if isinstance(known, list)
        else (int((known >= SERIOUS).sum()))
    )
    return round(float(serious) / len(known), 3)
