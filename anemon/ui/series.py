"""What the panels draw, as plain functions over numpy arrays and events (no Textual here).

Charts never get more than ~4 points per column: `decimate` keeps the minimum and maximum of
each bin (half a column to a column wide), so a spike survives where an average would hide
it; `Decimator` keeps that result up to date as points arrive.
"""

from __future__ import annotations

import itertools
import math
from array import array

import numpy as np

from anemon.analysis.describe import describe
from anemon.analysis.growing import Column
from anemon.events import Event, RecordEvent
from anemon.store import Session
from anemon.text import printable


def column(values: array) -> np.ndarray:
    """A zero-copy numpy view of a Session column (it may grow later: copy before keeping)."""
    return np.frombuffer(values, dtype=np.float64) if len(values) else np.empty(0)


SHOWN_ARMS = 50
"""The arms a chart draws and the arms table lists: the latest this many first seen
(`Session.recent_arms`). A log normally has 2 to 8 arms and a sweep a few dozen; one of
thousands (an arm per trial) would hold the event loop for minutes, drawn whole."""


def left_out(session: Session) -> int:
    """How many (earlier) arms the charts and the arms table leave out (`SHOWN_ARMS`)."""
    return max(len(session.arms) - SHOWN_ARMS, 0)


def left_out_text(count: int) -> str:
    """What a panel says of the arms it leaves out ("" for none)."""
    return f"{count:,} earlier arm{'' if count == 1 else 's'} not shown" if count else ""


LOWEST_STEP = -40
"""The finest bin width is 2**LOWEST_STEP (about a picosecond of x): a series whose points
all share one x still gets a grid."""


def grid_step(low: float, high: float, bins: int) -> int:
    """The exponent j of the bin width 2**j: the smallest (from LOWEST_STEP) whose grid,
    anchored at 0, puts [low, high] in at most `bins` bins. It only grows as the range
    does, which is what lets `Decimator` coarsen its bins instead of starting again."""
    bins = max(2, bins)  # one bin cannot hold a range that crosses a multiple of any width
    span = high - low
    j = LOWEST_STEP if span <= 0 else max(LOWEST_STEP, math.floor(math.log2(span / bins)) - 1)
    while math.floor(math.ldexp(high, -j)) - math.floor(math.ldexp(low, -j)) + 1 > bins:
        j += 1
    return j


def _bin_extremes(
    keys: np.ndarray, *values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct key (ascending): the min of values[0] and [2], the max of [1] and [3]."""
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    x_lo, x_hi, y_lo, y_hi = (v[order] for v in values)
    return (
        keys[starts],
        np.minimum.reduceat(x_lo, starts),
        np.maximum.reduceat(x_hi, starts),
        np.minimum.reduceat(y_lo, starts),
        np.maximum.reduceat(y_hi, starts),
    )


def decimate(x: np.ndarray, y: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """At most two points per bin, NaNs dropped; up to 2 × `bins` points pass as they are.

    The bins are a grid of width 2**j anchored at 0 (`grid_step`: between `bins` / 2 and
    `bins` of them over the data), so the same points always fall in the same bins however
    they arrived: `Decimator` gets exactly this result by adding points as they come. Each
    bin gives (its smallest x, its smallest y) and (its largest x, its largest y): a spike
    survives where an average would hide it.
    """
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) <= 2 * max(2, bins):
        return x.copy(), y.copy()
    j = grid_step(float(x.min()), float(x.max()), bins)
    keys = np.floor(np.ldexp(x, -j))
    _, *extremes = _bin_extremes(keys, x, x, y, y)  # keys: floats, exact (a power-of-2 scale)
    return _interleave((extremes[0], extremes[1], extremes[2], extremes[3]))


def _interleave(
    extremes: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    x_lo, x_hi, y_lo, y_hi = extremes
    out_x = np.empty(2 * len(x_lo))
    out_y = np.empty(2 * len(x_lo))
    out_x[0::2], out_x[1::2] = x_lo, x_hi
    out_y[0::2], out_y[1::2] = y_lo, y_hi
    return out_x, out_y


class Decimator:
    """`decimate` kept up to date as points arrive: each `extend` costs the new points and
    the bins (at most `bins`), never the points already seen; `points()` equals
    `decimate(all the points so far, bins)`."""

    def __init__(self, bins: int) -> None:
        self.bins = bins
        self.count = 0
        """Points kept so far (NaNs dropped)."""
        self._step = LOWEST_STEP
        self._range: tuple[float, float] | None = None
        self._raw: list[tuple[np.ndarray, np.ndarray]] | None = []
        """The points themselves while they are few enough to pass as they are."""
        empty = np.empty(0)
        self._keys = np.empty(0)
        self._extremes: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] = (
            empty, empty, empty, empty,
        )  # fmt: skip

    def extend(self, x: np.ndarray, y: np.ndarray) -> None:
        keep = ~(np.isnan(x) | np.isnan(y))
        x, y = x[keep], y[keep]
        if not len(x):
            return
        self.count += len(x)
        if self._raw is not None:
            self._raw.append((x.copy(), y.copy()))
            if self.count <= 2 * max(2, self.bins):
                self._track(x)  # the bins are built at once when the raw points overflow
                return
            x = np.concatenate([part[0] for part in self._raw])
            y = np.concatenate([part[1] for part in self._raw])
            self._raw = None
        self._track(x)
        keys = np.floor(np.ldexp(x, -self._step))
        old = self._extremes
        self._keys, *extremes = _bin_extremes(
            np.r_[self._keys, keys], np.r_[old[0], x], np.r_[old[1], x], np.r_[old[2], y],
            np.r_[old[3], y],
        )  # fmt: skip
        self._extremes = (extremes[0], extremes[1], extremes[2], extremes[3])

    def _track(self, x: np.ndarray) -> None:
        """Widen the range to `x`; if the grid must coarsen, merge the bins into the new one."""
        low, high = float(x.min()), float(x.max())
        if self._range is not None:
            low, high = min(low, self._range[0]), max(high, self._range[1])
        self._range = (low, high)
        step = grid_step(low, high, self.bins)
        if step > self._step and len(self._keys):
            # floor(floor(v / w) / 2**d) == floor(v / (w * 2**d)): the coarser bin of each bin
            coarser = np.floor(np.ldexp(self._keys, self._step - step))
            self._keys, *merged = _bin_extremes(coarser, *self._extremes)
            self._extremes = (merged[0], merged[1], merged[2], merged[3])
        self._step = max(step, self._step)

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        if self._raw is not None:
            if not self._raw:
                return np.empty(0), np.empty(0)
            return (
                np.concatenate([part[0] for part in self._raw]),
                np.concatenate([part[1] for part in self._raw]),
            )
        return _interleave(self._extremes)


def steps(x: np.ndarray, y: np.ndarray, end: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A state series as a step line: each value holds until the next change (or `end`)."""
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if not len(x):
        return x, y
    change = np.r_[True, y[1:] != y[:-1]]
    return held(x[change], y[change], end)


def held(x: np.ndarray, y: np.ndarray, end: float | None) -> tuple[np.ndarray, np.ndarray]:
    """The step line of a state's changes (`x` where it changed to `y`): each value held
    until the next change, the last until `end` (if later than it)."""
    if not len(x):
        return x, y
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
    """One log-panel line: a raw line as it came, or the controller's/operator's event in the
    words headless prints it in (`describe`)."""
    if isinstance(event, RecordEvent):
        return literal(event.line)
    words = describe(event)
    return f"── {words.text if words is not None else literal(event.kind)}"


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


class Follower:
    """The decimation of a series that grows at its end (a Session column, a line built from
    one): each `update` hands the Decimator only the points added since the last. A series
    that changed otherwise (shorter, or its first or last seen point differs: a seek back, a
    power line's arm recoloured) is decimated again from the start."""

    def __init__(self, bins: int) -> None:
        self.decimator = Decimator(bins)
        self.fed = 0
        self._ends = b""
        """The first and the last fed point, as bytes (NaN-safe): what a continuation keeps."""

    def update(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not _continues(x, y, self.fed, self._ends):
            self.decimator = Decimator(self.decimator.bins)
            self.fed = 0
        self.decimator.extend(x[self.fed :], y[self.fed :])
        self.fed, self._ends = len(x), _ends(x, y, len(x))
        return self.decimator.points()


class StepFollower:
    """The decimated `steps` of a state series that grows at its end (the session's thermal
    states: a value a trial): the changes are found among the points added since the last
    `update` and kept, so a draw costs the new points and the changes (a handful), not every
    point (at 500,000 trials, stepping them all took ~10 ms a draw). A series that changed
    otherwise is stepped again from the start, as `Follower` does."""

    def __init__(self, bins: int) -> None:
        self.bins = bins
        self.fed = 0
        self._ends = b""
        self._x, self._y = Column(), Column()
        """Where the value changed, and to what."""
        self._last = math.nan

    def update(
        self, x: np.ndarray, y: np.ndarray, end: float | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """`decimate(*steps(x, y, end), bins)`."""
        if not _continues(x, y, self.fed, self._ends):
            self.fed, self._x, self._y, self._last = 0, Column(), Column(), math.nan
        new_x, new_y = x[self.fed :], y[self.fed :]
        keep = ~(np.isnan(new_x) | np.isnan(new_y))
        new_x, new_y = new_x[keep], new_y[keep]
        if len(new_y):
            change = new_y != np.r_[self._last, new_y[:-1]]  # NaN: the first is a change
            self._x.extend(new_x[change])
            self._y.extend(new_y[change])
            self._last = float(new_y[-1])
        self.fed, self._ends = len(x), _ends(x, y, len(x))
        return decimate(*held(self._x.view, self._y.view, end), self.bins)


def _continues(x: np.ndarray, y: np.ndarray, fed: int, ends: bytes) -> bool:
    """Whether (x, y) is the series a follower was fed `fed` points of (its `_ends` then),
    grown at its end: not shorter, its first and `fed`-th points the same."""
    return len(x) >= fed and (not fed or _ends(x, y, fed) == ends)


def _ends(x: np.ndarray, y: np.ndarray, upto: int) -> bytes:
    """The first and the `upto`-th points, as bytes (NaN-safe); none before any."""
    if not upto:
        return b""
    return np.array([x[0], y[0], x[upto - 1], y[upto - 1]], dtype=np.float64).tobytes()
