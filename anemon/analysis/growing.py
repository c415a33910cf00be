"""Readings kept in numpy buffers that grow in place, for the live arms table's energy figures.

A 12-hour session reads power and the app's process every second: 86,400 readings. Copied
into fresh arrays and sorted each second, the figures cost ~9 ms a copy at hour 12 against
nothing at minute 1. Here each reading is put once into a buffer that doubles when full (an
amortised append), and the arrays handed out are views of the buffers' filled part: an entry
once filled is never written again (an out-of-order reading is put into new buffers), so a
view handed to a worker thread stays as it was while the loop goes on appending.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from anemon.analysis.sustained import median

_FIRST = 64
"""A buffer's first capacity (it doubles from there)."""
_SPREAD = 1 << 15
"""From this capacity (256 KiB of float64) a buffer's copy into the next is spread over
additions (`Column`); below it the copy is under a tenth of a millisecond."""
_BULK = 64
"""From this many readings at once, in order, `TimeSeries.extend` copies them in one go; the
gaps' median is then taken again from every time (in numpy) when asked for, instead of kept
one gap at a time."""


class Column:
    """Values appended in place (float64 unless `dtype`); `view` is the filled part,
    read-only.

    A buffer doubles when full. From `_SPREAD` entries its copy is spread over the last
    quarter's additions (four entries moved ahead for each added, so the next buffer holds
    them all when this one fills): copied at once into fresh pages it cost ~6 ms a 5 MB
    buffer on a VM, and a replay's series fill in step, so eight such copies landed in one
    redraw round (~50 ms; the replay-at-max probe's worst holds)."""

    __slots__ = ("_ahead", "_buffer", "_early", "_moved", "_n")

    def __init__(self, values: np.ndarray | None = None, dtype: type = float) -> None:
        n = 0 if values is None else len(values)
        self._buffer: np.ndarray = np.empty(max(_FIRST, 2 * n), dtype=dtype)
        if values is not None:
            self._buffer[:n] = values
        self._n = n
        self._reset_ahead()

    def __len__(self) -> int:
        return self._n

    @property
    def capacity(self) -> int:
        return len(self._buffer)

    def append(self, value: float) -> None:
        n = self._n
        if n == len(self._buffer):
            self._grow(n + 1)
        self._buffer[n] = value
        self._n = n + 1
        if n >= self._early:
            self._move_ahead()

    def extend(self, values: np.ndarray) -> None:
        n, more = self._n, len(values)
        if n + more > len(self._buffer):
            self._grow(n + more)
        self._buffer[n : n + more] = values
        self._n = n + more
        if self._n > self._early:
            self._move_ahead()

    def replace_last(self, value: float) -> None:
        """The last value, changed in a new buffer (views of the old one keep theirs)."""
        self._buffer = self._buffer.copy()
        self._buffer[self._n - 1] = value
        self._reset_ahead()

    @property
    def view(self) -> np.ndarray:
        view = self._buffer[: self._n]
        view.flags.writeable = False
        return view

    def _grow(self, needed: int) -> None:
        """A new buffer with room for `needed`, holding every value so far: the one filled
        ahead when it is big enough (the rest of its copy done), else a fresh one. Views of
        the old buffer keep their values."""
        ahead, moved = self._ahead, self._moved
        if ahead is None or len(ahead) < needed:
            ahead = np.empty(max(2 * len(self._buffer), needed), dtype=self._buffer.dtype)
            moved = 0
        ahead[moved : self._n] = self._buffer[moved : self._n]
        self._buffer = ahead
        self._reset_ahead()

    def _reset_ahead(self) -> None:
        capacity = len(self._buffer)
        self._ahead: np.ndarray | None = None
        self._moved = 0
        """How many entries `_ahead`, the next buffer, holds."""
        self._early = capacity - capacity // 4 if capacity >= _SPREAD else capacity
        """Past this many entries each addition moves entries ahead (none below `_SPREAD`)."""

    def _move_ahead(self) -> None:
        """Four entries into the next buffer for each past `_early`: all when this one is full."""
        if self._ahead is None:
            self._ahead = np.empty(2 * len(self._buffer), dtype=self._buffer.dtype)
        moved, target = self._moved, min(self._n, 4 * (self._n - self._early))
        self._ahead[moved:target] = self._buffer[moved:target]
        self._moved = target


class GapMedian:
    """The median of the gaps between sorted times, kept as they come (two heaps): the same
    float as `sustained.median(np.diff(t))`, the mean of the middle one or two."""

    __slots__ = ("_high", "_low")

    def __init__(self, t: np.ndarray | None = None) -> None:
        gaps = np.sort(np.diff(t)) if t is not None else np.empty(0)
        low = (len(gaps) + 1) // 2  # the smaller half, one more when odd
        # sorted lists are heaps already: made in numpy, not pushed one by one
        self._low: list[float] = (-gaps[:low][::-1]).tolist()  # negated (a max-heap)
        self._high: list[float] = gaps[low:].tolist()

    def add(self, gap: float) -> None:
        if self._low and gap > -self._low[0]:
            heapq.heappush(self._high, gap)
        else:
            heapq.heappush(self._low, -gap)
        if len(self._low) > len(self._high) + 1:
            heapq.heappush(self._high, -heapq.heappop(self._low))
        elif len(self._high) > len(self._low):
            heapq.heappush(self._low, -heapq.heappop(self._high))

    def median(self) -> float | None:
        """None before any gap."""
        if not self._low:
            return None
        if len(self._low) > len(self._high):
            return -self._low[0]
        return (-self._low[0] + self._high[0]) / 2


class TimeSeries:
    """Values by time, in stable time order (as `np.argsort(kind="stable")` puts them: a
    later reading at an equal time after the earlier; NaN times last), and with `gaps` their
    gaps' median. A reading in order is an append; one out of order makes new buffers (a
    trial's battery reading may come after a host reading of a later time: a copy in numpy,
    ~0.1 ms at 86,400 readings).

    The median is kept gap by gap (`GapMedian`: two heaps, ~32 bytes a gap) only while
    readings come one at a time (the live arms table); after a bulk copy (a whole file read
    by chunks) it is taken from the times when asked for, and the heaps are made again from
    them at the next reading that comes alone."""

    __slots__ = ("_gaps", "_keeps_gaps", "_median", "_t", "_value")

    def __init__(self, gaps: bool = True) -> None:
        self._t = Column()
        self._value = Column()
        self._keeps_gaps = gaps
        self._gaps = GapMedian() if gaps else None
        """None with `gaps` false, or since a bulk copy (`_median` then says it)."""
        self._median: tuple[int, float | None] | None = None
        """After a bulk copy: the median last taken from the times, and of how many."""

    def __len__(self) -> int:
        return len(self._t)

    def add(self, t: float, value: float) -> None:
        n = len(self._t)
        if n:
            last = float(self._t.view[-1])
            if not t >= last:  # out of order (or after a NaN time): put it in its place
                self._insert(t, value)
                return
            if self._keeps_gaps:
                self._gaps_kept().add(t - last)
        self._t.append(t)
        self._value.append(value)

    def extend(self, t: np.ndarray, value: np.ndarray) -> None:
        """`add` of each (t, value) in turn, to the same buffers and median: a whole file's
        readings, in order after the last, are copied at once."""
        last = float(self._t.view[-1]) if len(self._t) else -math.inf
        if len(t) < _BULK or not (t[0] >= last and bool((np.diff(t) >= 0).all())):
            for one, v in zip(t.tolist(), value.tolist(), strict=True):
                self.add(one, v)
            return
        self._t.extend(t)
        self._value.extend(value)
        self._gaps = None  # taken from the times when asked for (`hold_s`)

    def _insert(self, t: float, value: float) -> None:
        times = self._t.view
        at = int(times.searchsorted(t, "right"))
        times = np.insert(times, at, t)
        self._t, self._value = Column(times), Column(np.insert(self._value.view, at, value))
        self._gaps = None  # taken from the times when asked for (`hold_s`)

    def _gaps_kept(self) -> GapMedian:
        """The heaps of every gap so far, made again from the times after a bulk copy: what
        the adds one by one would hold."""
        if self._gaps is None:
            self._gaps = GapMedian(self._t.view)
        return self._gaps

    @property
    def t(self) -> np.ndarray:
        return self._t.view

    @property
    def value(self) -> np.ndarray:
        return self._value.view

    @property
    def hold_s(self) -> float:
        """2 x the median gap; 0 with fewer than two readings (or without `gaps`)."""
        median = self._gap_median() if self._keeps_gaps else None
        return 0.0 if median is None else 2 * median

    def _gap_median(self) -> float | None:
        if self._gaps is not None:
            return self._gaps.median()
        n = len(self._t)
        if self._median is None or self._median[0] != n:
            self._median = (n, median(np.diff(self._t.view)) if n > 1 else None)
        return self._median[1]
