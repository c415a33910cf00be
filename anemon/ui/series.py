"""What the panels draw, as plain functions over numpy arrays and events (no Textual here).

Charts never get more than ~2 points per column: `decimate` keeps each column's minimum and
maximum, so a spike survives where an average would hide it.
"""

from __future__ import annotations

import itertools
import math
from array import array

import numpy as np

from anemon.events import (
    AlertEvent,
    Event,
    GapEvent,
    MarkerEvent,
    PhaseEvent,
    PreflightEvent,
    RecordEvent,
    ResetEvent,
)
from anemon.text import printable


def column(values: array) -> np.ndarray:
    """A zero-copy numpy view of a Session column (it may grow later: copy before keeping)."""
    return np.frombuffer(values, dtype=np.float64) if len(values) else np.empty(0)


def decimate(x: np.ndarray, y: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """At most two points per column (its min and max), NaNs dropped; `x` ascending."""
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    columns = max(1, columns)
    if len(x) <= 2 * columns:
        return x.copy(), y.copy()
    span = x[-1] - x[0]
    bins = np.minimum(((x - x[0]) / (span or 1.0) * columns).astype(np.int64), columns - 1)
    starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]])
    ends = np.r_[starts[1:], len(x)] - 1
    out_x = np.empty(2 * len(starts))
    out_y = np.empty(2 * len(starts))
    out_x[0::2], out_x[1::2] = x[starts], x[ends]
    out_y[0::2] = np.minimum.reduceat(y, starts)
    out_y[1::2] = np.maximum.reduceat(y, starts)
    return out_x, out_y


def steps(x: np.ndarray, y: np.ndarray, end: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A state series as a step line: each value holds until the next change (or `end`)."""
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if not len(x):
        return x, y
    change = np.r_[True, y[1:] != y[:-1]]
    x, y = x[change], y[change]
    last = max(x[-1], end if end is not None else x[-1])
    step_x = np.repeat(np.r_[x, last], 2)[1:-1]
    step_y = np.repeat(y, 2)
    return step_x, step_y


def owners(t: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For each time in `t`, the index of the span [start, end] it falls in, else -1.

    `starts` ascending; where spans overlap, the one that began last owns the time.
    """
    if not len(starts):
        return np.full(len(t), -1, dtype=np.int64)
    index = np.searchsorted(starts, t, side="right") - 1
    inside = (index >= 0) & (t <= ends[np.maximum(index, 0)])
    return np.where(inside, index, -1)


def runs(values: np.ndarray) -> list[slice]:
    """The stretches of equal consecutive values, in order."""
    if not len(values):
        return []
    edges = np.flatnonzero(values[1:] != values[:-1]) + 1
    bounds = np.r_[0, edges, len(values)].tolist()
    return [slice(a, b) for a, b in itertools.pairwise(bounds)]


def charging_text(charging: bool | None, plugged: bool | None, app_state: str | None) -> str:
    """The charging state in words: the host's (`charging`, `plugged`) first, else the app's
    `battery_state` (charging, unplugged, full), else "—". Only "on battery" readings are
    the phone's own draw: a charging battery's current is the charger's (docs/domain.md)."""
    if plugged is False:
        return "on battery"
    if charging:
        return "charging"
    if plugged:
        return "plugged in"
    if charging is False:
        return "not charging"
    return {"charging": "charging", "unplugged": "on battery", "full": "plugged in"}.get(
        app_state or "", "—"
    )


def literal(line: str) -> str:
    """Log text as data: control characters (ANSI escapes too) become visible `\\xNN`."""
    return printable(line)


def log_text(event: Event) -> str:
    """One log-panel line: a raw line as it came, or the controller's/operator's event."""
    if isinstance(event, RecordEvent):
        return literal(event.line)
    if isinstance(event, PhaseEvent):
        text = f"── phase {event.phase}" + (f": {event.reason}" if event.reason else "")
    elif isinstance(event, MarkerEvent):
        text = f"── marker: {event.note}"
    elif isinstance(event, GapEvent):
        text = f"── gap {event.state}" + (f": {event.reason}" if event.reason else "")
    elif isinstance(event, ResetEvent):
        text = "── log replaced" + (f": {event.reason}" if event.reason else "")
    elif isinstance(event, AlertEvent):
        text = f"── alert {event.alert}: {event.note}"
    elif isinstance(event, PreflightEvent):
        failed = [c.get("check", "?") for c in event.checks if c.get("status") != "pass"]
        text = f"── preflight {event.status}" + (f": {', '.join(failed)}" if failed else "")
        text += " (forced)" if event.forced else ""
    else:
        text = f"── {event.kind}"
    return literal(text)


def clock(seconds: float | None) -> str:
    """Seconds as m:ss, or h:mm:ss past the hour."""
    if seconds is None or math.isnan(seconds):
        return "—"
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def speed_text(speed: float) -> str:
    if math.isinf(speed):
        return "max"
    return f"{speed:g}×"


def bar(width: int, position: float, duration: float, marks: dict[float, str]) -> str:
    """A one-line timeline: played part, the head, the rest; `marks` (position → char) on top."""
    width = max(width, 1)
    done = 0 if duration <= 0 else round(min(1.0, max(0.0, position / duration)) * (width - 1))
    cells = ["━"] * done + ["●"] + ["─"] * (width - done - 1)
    for where, char in sorted(marks.items()):
        if duration > 0:
            cell = round(min(1.0, max(0.0, where / duration)) * (width - 1))
            if cell != done:
                cells[cell] = char
    return "".join(cells)
