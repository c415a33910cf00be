"""Replay: recorded events fed into a Session through a clock (pause, speed, seek).

The driver (the dashboard's timer, or the headless loop) calls `tick()`; whatever came due
since the last call is added in one batch, so a fast replay coalesces by construction.
A replay has no Pipeline: its events were stamped and recorded when they happened, and the
Replayer is the one way into the replayed Session (docs/ARCHITECTURE.md).

A big recording is not read whole before it plays: the Replayer starts on what was read first
and takes the rest as it comes (`rest`): from a thread reading ahead (`Background`, the
dashboard's, which keeps every event for seeks) or read when due (`Inline`, the headless
replay's, which lets played events go, so its memory does not grow with the file).
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import gc
import itertools
import math
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

from anemon.events import Event
from anemon.store import Session

MAX_BATCH = 5_000
"""Events added per tick at `max` speed, so a view stays responsive between ticks."""
TICK_BUDGET_S = 0.02
"""A tick stops adding events after this long (seeks excepted), so keys still get answered."""
SPEEDS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 100.0, 1000.0, math.inf)
CHUNK = 4_096
"""Events taken from the rest of a source at a time."""
AHEAD = 4
"""Chunks read ahead of the replay: a headless replay holds about this many unplayed; the
background reader, this many between two ticks before it waits for the replay to take them."""
KEPT_AHEAD_MAX = 250_000
"""A seek back keeps the Session it leaves (`Replayer.seek`) only up to this many events: a
10,000-trial recording's is ~3 MB; one of a million events would hold ~140 MB more."""
START_AFTER_S = 1.0
"""How long the dashboard's replay plays its head alone before a thread reads the rest."""
WAIT_S = 0.01
"""How long `play` waits when it has played all there is and the rest is still being read."""
E = TypeVar("E", bound=Event)


class Rest(Protocol):
    """The events of a source after those a Replayer was given, in the source's order."""

    def take(self) -> list[Event] | None:
        """The events read since (perhaps none yet); None once there are no more."""

    def close(self) -> None:
        """Stop reading (the replay ended or was left)."""


class Replayer:
    """Plays `events`, then those of `rest` as they come, in time order into `self.session`;
    a seek back rebuilds the Session (`keep`: played events are kept for it; without, they
    are let go and a seek back is not possible, as in a headless replay, whose Session then
    keeps no chart series only the host readings feed: `Session.charts`).

    Events out of time order (a damaged or hand-edited recording) are sorted stably by `t`
    first, and counted in `reordered`; an event whose `t` is not finite takes the previous
    event's. So every replay reaches its end. One that comes in `rest` before events already
    played rebuilds the Session there (`keep`), else is played next."""

    def __init__(
        self,
        events: Iterable[Event],
        speed: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
        listener: Callable[[Event], None] | None = None,
        rest: Rest | None = None,
        keep: bool = True,
    ) -> None:
        self.events: list[Event] = []
        self.times: list[float] = []
        self.reordered = 0
        self.start = 0.0
        self.duration = 0.0
        self.speed = speed
        self.paused = False
        self.session = Session(charts=keep)
        self._monotonic = monotonic
        self._listener = listener
        """Sees every event as it is played (the headless printer); not on a seek."""
        self._rest = rest
        self._keep = keep
        self._wall = 0.0
        """The first event's wall time less its `t`: the recorded wall time at any `t`."""
        self._latest = -math.inf
        self._previous = 0.0
        """The largest `t` so far and the last event's (both in the source's order)."""
        self.clock = ReplayClock(self)
        """Where the replay has got to, as a Clock (what its feed's views and waits go by)."""
        self._index = 0
        self._ahead: tuple[Session, int] | None = None
        """The Session a seek back left, and how many events it holds (`seek`)."""
        self._position = 0.0
        self._last = monotonic()
        self._extend(list(events))

    @property
    def position(self) -> float:
        """Seconds into the recording."""
        return self._position

    @property
    def loading(self) -> bool:
        """More of the source is still to come."""
        return self._rest is not None

    @property
    def finished(self) -> bool:
        return self._index >= len(self.events) and self._rest is None

    def tick(self) -> int:
        """Advance by the real time elapsed × speed; add what came due. Returns how many."""
        now = self._monotonic()
        elapsed, self._last = now - self._last, now
        self._take()
        if self.paused or self.finished:
            return 0
        if math.isinf(self.speed):
            return self._add_until(len(self.events), limit=MAX_BATCH)
        self._position = min(self.duration, self._position + elapsed * self.speed)
        return self._add_until(bisect.bisect_right(self.times, self.start + self._position))

    def _take(self) -> None:
        """What the rest has read since; without `keep`, only while few are left to play."""
        while self._rest is not None and (self._keep or len(self.events) - self._index < CHUNK):
            more = self._rest.take()
            if more is None:
                self._rest.close()
                self._rest = None
            elif more:
                self._extend(more)
            else:
                return

    def _extend(self, more: list[Event]) -> None:
        if not more:
            return
        if not self._keep and self._index:  # what was played goes: memory stays flat
            del self.events[: self._index], self.times[: self._index]
            self._index = 0
        first = self._latest == -math.inf
        late = self._placed(more)
        self.reordered += late
        if not late:
            self.events.extend(more)
            self.times.extend(e.t for e in more)
        else:
            self._merge(more)
        if self._keep or first:
            self.start = self.times[0]
            self._wall = self.events[0].wall - self.start
        self.duration = self.times[-1] - self.start

    def _placed(self, more: list[Event]) -> int:
        """`more` with each non-finite `t` made the previous event's (in place); how many come
        before an earlier event's time."""
        late = 0
        for index, event in enumerate(more):
            if not math.isfinite(event.t):
                more[index] = event = dataclasses.replace(event, t=self._previous)
            if event.t < self._latest:
                late += 1
            self._latest = max(self._latest, event.t)
            self._previous = event.t
        return late

    def _merge(self, more: list[Event]) -> None:
        """`more` into the events, stably by time (the source's order among equal times); one
        before an event already played rebuilds the Session up to where the replay is."""
        lowest = min(e.t for e in more)
        self._ahead = None  # events now come in among those it holds
        missed = self._keep and self._index > 0 and lowest < self.times[self._index - 1]
        played = 0 if self._keep else self._index
        merged = sorted([*self.events[played:], *more], key=_time)
        self.events[played:] = merged
        self.times[played:] = [e.t for e in merged]
        if missed:
            self._replay_to(self._position)

    def _add_until(self, end: int, limit: int | None = None) -> int:
        if limit is not None:
            end = min(end, self._index + limit)
        add = self.session.add
        listener = self._listener
        deadline = self._monotonic() + TICK_BUDGET_S if limit is not None else math.inf
        start = index = self._index
        while index < end:
            event = self.events[index]
            add(event)
            if listener is not None:
                listener(event)
            index += 1
            if index % 256 == 0 and self._monotonic() > deadline:
                break
        self._index = index
        if self._ahead is not None and index >= self._ahead[1]:
            self._ahead = None  # played past it: a seek forward starts from here
        if index > start and limit is not None:
            self._position = self.times[index - 1] - self.start
        return index - start

    def emit_now(self, make: Callable[..., E], /, **fields: Any) -> E:
        """An event happening during the replay (an operator's marker): `make(t=..., wall=...,
        **fields)` stamped by the replay's clock, into the Session and to the listener, as
        `Pipeline.emit_now` does live. Not recorded (a replay's feed keeps its markers)."""
        event = make(t=self.clock.now(), wall=self.clock.wall(), **fields)
        self._ahead = None  # it would not show this one
        self.session.add(event)
        if self._listener is not None:
            self._listener(event)
        return event

    def toggle_pause(self) -> None:
        self.paused = not self.paused

    def faster(self) -> None:
        self.speed = next((s for s in SPEEDS if s > self.speed), math.inf)

    def slower(self) -> None:
        self.speed = next((s for s in reversed(SPEEDS) if s < self.speed), SPEEDS[0])

    def seek(self, position: float) -> None:
        """Jump to `position` seconds (clamped); backwards rebuilds the Session from the start
        (none without `keep`: the played events are gone). The Session a seek back leaves is
        kept (up to KEPT_AHEAD_MAX events), and a seek forward to or past where it was takes it
        up again: Home then End, or `,` then `.`, do not add the same events twice."""
        self._take()
        position = max(0.0, min(self.duration, position))
        end = bisect.bisect_right(self.times, self.start + position)
        if end < self._index and not self._keep:
            return
        if end < self._index:
            self._keep_ahead()
            self._replay_to(position)
        else:
            self._catch_up(end)
        self._position = position

    def _keep_ahead(self) -> None:
        """Before a seek back: the Session it leaves, if it is further on than one kept."""
        kept = 0 if self._ahead is None else self._ahead[1]
        if kept < self._index <= KEPT_AHEAD_MAX:
            self._ahead = (self.session, self._index)

    def _replay_to(self, position: float) -> None:
        """A new Session with every event up to `position` (none to the listener)."""
        self.session = Session()
        self._index = 0
        self._catch_up(bisect.bisect_right(self.times, self.start + position))

    def _catch_up(self, end: int) -> None:
        """The events up to `end` into the Session at once (a seek: none to the listener, no
        time budget), trials and readings a column at a time (`Session.extend`); from the
        Session a seek back left where it holds no more than that."""
        if self._ahead is not None and self._index < self._ahead[1] <= end:
            self.session, self._index = self._ahead
            self._ahead = None
        if end > self._index:
            self.session.extend(self.events[self._index : end])
            self._index = end

    def seek_by(self, seconds: float) -> None:
        self.seek(self._position + seconds)

    def close(self) -> None:
        """Stop reading the rest of the source."""
        if self._rest is not None:
            self._rest.close()
            self._rest = None

    async def play(
        self, interval: float = 0.05, on_tick: Callable[[int], None] | None = None
    ) -> None:
        """Tick until finished (the headless replay); `on_tick` sees each batch size."""
        while not self.finished:
            added = self.tick()
            if on_tick is not None and added:
                on_tick(added)
            waiting = not added and self._index >= len(self.events)  # for the rest to come
            await asyncio.sleep(interval if not math.isinf(self.speed) else WAIT_S * waiting)


def _time(event: Event) -> float:
    return event.t


class Inline:
    """The rest of a source read when the replay asks, a chunk at a time (headless)."""

    def __init__(self, events: Iterator[Event]) -> None:
        self._events = events

    def take(self) -> list[Event] | None:
        return list(itertools.islice(self._events, CHUNK)) or None

    def close(self) -> None:
        pass


class Background:
    """The rest of a source read by a thread, `AHEAD` chunks at most between two takes, from
    the first take `after_s` after the first (the dashboard's first screen is drawn in the
    meantime: the reader's Python shares the interpreter lock with the event loop and would
    slow it by half). The thread gives the lock up every few ms (`sys.getswitchinterval`):
    the loop answers keys while the file loads."""

    def __init__(self, events: Iterator[Event], after_s: float = START_AFTER_S) -> None:
        self._events = events
        self._after_s = after_s
        self._first: float | None = None
        self._chunks: queue.Queue[list[Event] | None] = queue.Queue(maxsize=AHEAD)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="anemon-replay-load", daemon=True)
        self._started = self._ended = False
        self.error: Exception | None = None
        """Why the reading stopped early (the replay plays what was read)."""

    def take(self) -> list[Event] | None:
        if not self._started:
            self._first = time.monotonic() if self._first is None else self._first
            if time.monotonic() - self._first < self._after_s:
                return []
            self._started = True
            self._thread.start()
        taken: list[Event] = []
        while not self._ended:
            try:
                chunk = self._chunks.get_nowait()
            except queue.Empty:
                break
            if chunk is None:
                self._ended = True
            else:
                taken.extend(chunk)
        if gc.get_freeze_count():
            # the app froze what was alive at its start, the recording read so far with it
            # (ui.app); what is read behind lives as long: frozen too, or a full collection
            # walks it (~0.5 s for 1M events). What was garbage in cycles just then is kept.
            gc.freeze()
        return None if self._ended and not taken else taken

    def _read(self) -> None:
        try:
            while chunk := list(itertools.islice(self._events, CHUNK)):
                if not self._put(chunk):
                    return
        except Exception as e:  # what was read plays; the view says why the rest did not
            self.error = e
        self._put(None)

    def _put(self, chunk: list[Event] | None) -> bool:
        while not self._stop.is_set():
            try:
                self._chunks.put(chunk, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def close(self) -> None:
        self._stop.set()


class ReplayClock:
    """The Clock of a replayed session: where the replay has got to (pauses, speed, seeks)."""

    POLL_S = 0.05
    """How often `sleep` looks whether the replay has got far enough."""

    def __init__(self, replayer: Replayer) -> None:
        self._replayer = replayer

    def now(self) -> float:
        return self._replayer.start + self._replayer.position

    def wall(self) -> float:
        """The recorded wall time at `now` (0 for a recording without events)."""
        replayer = self._replayer
        return replayer._wall + self.now() if replayer.times else 0.0

    async def sleep(self, seconds: float) -> None:
        """Until the replay has moved `seconds` on (or has ended)."""
        until = self.now() + seconds
        while self.now() < until and not self._replayer.finished:
            await asyncio.sleep(self.POLL_S)
