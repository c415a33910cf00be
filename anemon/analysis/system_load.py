"""The phone's own system load (telemetry `load_w`, PowerTelemetryData SystemLoad) as the
energy figures read it while the phone charges (line-protocol.md, "Sustained and energy
figures").

The phone refreshes the value only every 10-60 s and holds it in between; each reading says
when it last changed (`load_changed_t`). So the load is a step at each change, held until the
next: a held value is a step, never a ramp toward the next reading, and never a new sample at
each reading of it. A value held for an hour or more is stale: it gives no figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from anemon.analysis.growing import Column, GapMedian, TimeSeries
from anemon.analysis.sustained import median

STALE_S = 3600.0
"""A value the phone has not changed for this long is not taken for a reading."""
STALE_NOTE = "system load unchanged for an hour (stale)"


@dataclass(frozen=True, slots=True)
class LoadSteps:
    """The load's changes in session time, and the readings that carried it."""

    t: np.ndarray
    """Where the phone changed it (sorted, distinct)."""
    w: np.ndarray
    """The value from each change until the next."""
    seen_t: np.ndarray
    """Every reading with a load (sorted)."""
    hold_s: float
    """How far from a span's end its nearest reading may be, and the longest gap between
    readings inside a span: 2 x their median gap (0 with fewer than two)."""
    refresh_s: float | None
    """The median time between changes, after the first (the first reading's time, not a
    change the host saw); None before two changes."""

    @classmethod
    def of(cls, t: np.ndarray, load_w: np.ndarray, changed_t: np.ndarray) -> LoadSteps:
        """From every telemetry reading's t, load_w and load_changed_t (NaN: none); a reading
        without its change time changed at its own time."""
        has = ~np.isnan(load_w) & ~np.isnan(t)
        seen = np.sort(t[has])
        changed = np.where(np.isnan(changed_t[has]), t[has], changed_t[has])
        order = np.argsort(changed, kind="stable")
        changed, values = changed[order], load_w[has][order]
        last = np.ones(len(changed), dtype=bool)  # a change's last reading: its value
        last[:-1] = changed[1:] != changed[:-1]
        gaps, refreshes = np.diff(seen), np.diff(changed[last][1:])
        return cls(changed[last], values[last], seen, 2 * median(gaps) if len(gaps) else 0.0,
                   median(refreshes) if len(refreshes) else None)  # fmt: skip

    @property
    def note(self) -> str:
        """The `energy_note` of figures from the load."""
        refresh = self.refresh_s
        every = "refresh not seen" if refresh is None else f"refreshed every {_seconds(refresh)} s"
        return f"from the phone's system load (plugged in; {every})"

    def through(self, lo: float, hi: float) -> bool:
        """Readings with a load from the span's start to its end, none more than `hold_s`
        apart, and a value known at its start."""
        # searched, not masked: a log of thousands of arms has a span each
        first = np.searchsorted(self.seen_t, lo - self.hold_s, side="left")
        last = np.searchsorted(self.seen_t, hi + self.hold_s, side="right")
        inside = self.seen_t[first:last]
        if not len(inside) or inside[0] > lo + self.hold_s or inside[-1] < hi - self.hold_s:
            return False
        return bool(np.diff(inside).max(initial=0.0) <= self.hold_s) and self._start(lo) >= 0

    def stale(self, lo: float, hi: float) -> bool:
        """A value in the span had not changed for STALE_S or more when it was read."""
        start, end = self._start(lo), self._end(hi)
        edges = np.concatenate((self.t[start:end], [hi]))
        return bool(np.diff(edges).max(initial=0.0) >= STALE_S)

    def joules(self, lo: float, hi: float) -> float:
        """The steps' integral over the span (`through` it)."""
        start = self._start(lo)
        end = max(self._end(hi), start + 1)  # the value at `lo`, even one changed just after
        edges = np.concatenate(([lo], self.t[start + 1 : end], [hi]))
        return float((self.w[start:end] * np.diff(edges)).sum())

    def _end(self, hi: float) -> int:
        """Past the last change before `hi`."""
        return int(np.searchsorted(self.t, hi, side="left"))

    def _start(self, lo: float) -> int:
        """The change whose value holds at `lo`: the last at or before it, else the first
        within `hold_s` after it (the readings began just after the span); -1: none."""
        at = int(np.searchsorted(self.t, lo, side="right")) - 1
        if at < 0 and len(self.t) and self.t[0] <= lo + self.hold_s:
            return 0
        return at


class LoadReadings:
    """The readings with a load as they come, their `steps` grown in place (as
    `analysis.growing`'s buffers are): a 12-hour plugged-in session's load read every second
    costs what its first minute's did. A reading whose change came before the last step's is
    out of order: the steps are made again from every reading (`LoadSteps.of`)."""

    __slots__ = ("_changed", "_readings", "_refresh", "_seen", "_w")

    def __init__(self) -> None:
        self._readings = {name: Column() for name in ("t", "load_w", "changed")}
        """Every reading as it came (what `LoadSteps.of` makes the steps again from)."""
        self._seen = TimeSeries()
        self._changed = Column()
        self._w = Column()
        self._refresh = GapMedian()
        """The gaps between the changes after the first (`LoadSteps.refresh_s`)."""

    def __len__(self) -> int:
        return len(self._seen)

    def add(self, t: float, load_w: float, changed_t: float) -> None:
        """A reading with a load (neither `t` nor `load_w` NaN; `changed_t` NaN: none)."""
        for column, value in zip(self._readings.values(), (t, load_w, changed_t), strict=True):
            column.append(value)
        self._seen.add(t, load_w)
        changed = t if math.isnan(changed_t) else changed_t
        steps = len(self._changed)
        last = float(self._changed.view[-1]) if steps else -math.inf
        if changed == last:  # the change's latest reading carries its value
            if not _same(load_w, float(self._w.view[-1])):
                self._w.replace_last(load_w)
        elif changed > last:
            if steps >= 2:
                self._refresh.add(changed - last)
            self._changed.append(changed)
            self._w.append(load_w)
        else:
            self._again()

    def _again(self) -> None:
        readings = self._readings
        steps = LoadSteps.of(readings["t"].view, readings["load_w"].view, readings["changed"].view)
        self._changed, self._w = Column(steps.t), Column(steps.w)
        self._refresh = GapMedian(steps.t[1:])

    @property
    def steps(self) -> LoadSteps:
        """The steps so far: views of buffers whose filled parts never change."""
        return LoadSteps(self._changed.view, self._w.view, self._seen.t, self._seen.hold_s,
                         self._refresh.median())  # fmt: skip


def _same(a: float, b: float) -> bool:
    """The same float, up to the sign of a zero (which `LoadSteps.of` would keep)."""
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _seconds(value: float) -> str:
    """20 (whole seconds, as a phone refreshes), 0.2 under 10 s (a simulated phone, sped up)."""
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"
