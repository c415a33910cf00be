"""The sustained figures of an arm's summary (line-protocol.md "Sustained and energy figures
(summary version 2)"): burst vs sustained tok/s, retained %, how fast the burst fades, and
the share of trials at serious or above. numpy on the Session's columns, no pandas: the live
arms table recomputes them for arms of 100k trials.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

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
_CHUNK = 512
"""Fade windows examined at a time: a fade is usually found early, so most arms stop after
the first chunk instead of taking the median of every window."""


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


def elapsed(app_t: np.ndarray, session_t: np.ndarray) -> np.ndarray:
    """`el` of each trial of one round: its own `t=` (the session time where it has none)
    minus that of the round's first trial."""
    own = np.where(np.isnan(app_t), session_t, app_t)
    return own - own[0] if len(own) else own


def sustained_figures(el: np.ndarray, decode: np.ndarray, thermal: np.ndarray) -> Sustained:
    """The figures of one round's timed trials, in order: `el` of each (see `elapsed`), its
    `decode_tps` and thermal state (NaN where missing)."""
    serious_frac = _serious_frac(thermal)
    present = ~np.isnan(decode)
    el_d, tps = el[present], decode[present]
    if not len(tps):
        return Sustained(serious_frac=serious_frac)
    burst_set = tps[el_d <= BURST_S]
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


def _sustained(el: np.ndarray, el_d: np.ndarray, tps: np.ndarray) -> float | None:
    """The median over the last PLATEAU_S of the round. Its length is the largest `el` of any
    timed trial (one whose decode did not parse still says how long the arm ran)."""
    longest = float(np.nanmax(el))
    if longest < SHORTEST_S:
        return None
    plateau = tps[el_d >= longest - PLATEAU_S]
    return median(plateau) if len(plateau) else None


def fade_times(el: np.ndarray, tps: np.ndarray, burst: float) -> tuple[float | None, ...]:
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


def _first_at_or_under(tps: np.ndarray, limit: float, start: int) -> int | None:
    """The first i >= start whose window median is <= limit."""
    n = len(tps)
    full = n - FADE_WINDOW + 1  # windows with all FADE_WINDOW trials: i < full
    i = start
    while i < full:
        stop = min(i + _CHUNK, full)
        windows = sliding_window_view(tps[i : stop + FADE_WINDOW - 1], FADE_WINDOW)
        # the middle of each window (FADE_WINDOW is odd): its median, at half np.median's cost
        middle = np.partition(windows, FADE_WINDOW // 2, axis=1)[:, FADE_WINDOW // 2]
        hits = np.flatnonzero(middle <= limit)
        if len(hits):
            return i + int(hits[0])
        i = stop
    for j in range(max(i, 0), n):  # the last windows, shorter
        if median(tps[j:]) <= limit:
            return j
    return None


def median(values: np.ndarray) -> float:
    """np.median of values without NaN, computed as it computes it (the mean of the middle
    one or two of a partition), without importing numpy.ma as it does (~5 ms of a small
    command's start)."""
    half = len(values) // 2
    middle = slice(half, half + 1) if len(values) % 2 else slice(half - 1, half + 1)
    kth = [half] if len(values) % 2 else [half - 1, half]
    picked = np.partition(values, kth)[middle]
    return float(picked.sum() / len(picked))  # .mean(), without its per-call setup


def _serious_frac(thermal: np.ndarray) -> float | None:
    known = thermal[~np.isnan(thermal)]
    if not len(known):
        return None
    return round(float((known >= SERIOUS).sum()) / len(known), 3)
