"""Replay: recorded events fed into a Session through a clock (pause, speed, seek).

The driver (the dashboard's timer, or the headless loop) calls `tick()`; whatever came due
since the last call is added in one batch, so a fast replay coalesces by construction.
A replay has no Pipeline: its events were stamped and recorded when they happened, and the
Replayer is the one way into the replayed Session (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from anemon.events import Event
from anemon.store import Session

MAX_BATCH = 5_000
"""Events added per tick at `max` speed, so a view stays responsive between ticks."""
TICK_BUDGET_S = 0.02
"""A tick stops adding events after this long (seeks excepted), so keys still get answered."""
SPEEDS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 100.0, 1000.0, math.inf)
E = TypeVar("E", bound=Event)


class Replayer:
    """Plays `events` in time order into `self.session`; a seek back rebuilds the Session.

    Events out of time order (a damaged or hand-edited recording) are sorted stably by `t`
    first, and counted in `reordered`; an event whose `t` is not finite takes the previous
    event's. So every replay reaches its end."""

    def __init__(
        self,
        events: Sequence[Event],
        speed: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
        listener: Callable[[Event], None] | None = None,
    ) -> None:
        self.events, self.reordered = in_time_order(events)
        self.times = [e.t for e in self.events]
        self.start = self.times[0] if self.times else 0.0
        self.duration = (self.times[-1] - self.start) if self.times else 0.0
        self.speed = speed
        self.paused = False
        self.session = Session()
        self._monotonic = monotonic
        self._listener = listener
        """Sees every event as it is played (the headless printer); not on a seek."""
        self.clock = ReplayClock(self)
        """Where the replay has got to, as a Clock (what its feed's views and waits go by)."""
        self._index = 0
        self._position = 0.0
        self._last = monotonic()

    @property
    def position(self) -> float:
        """Seconds into the recording."""
        return self._position

    @property
    def finished(self) -> bool:
        return self._index >= len(self.events)

    def tick(self) -> int:
        """Advance by the real time elapsed × speed; add what came due. Returns how many."""
        now = self._monotonic()
        elapsed, self._last = now - self._last, now
        if self.paused or self.finished:
            return 0
        if math.isinf(self.speed):
            return self._add_until(len(self.events), limit=MAX_BATCH)
        self._position = min(self.duration, self._position + elapsed * self.speed)
        return self._add_until(bisect.bisect_right(self.times, self.start + self._position))

    def _add_until(self, end: int, limit: int | None = None, notify: bool = True) -> int:
        if limit is not None:
            end = min(end, self._index + limit)
        add = self.session.add
        listener = self._listener if notify else None
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
        if index > start and limit is not None:
            self._position = self.times[index - 1] - self.start
        return index - start

    def emit_now(self, make: Callable[..., E], /, **fields: Any) -> E:
        """An event happening during the replay (an operator's marker): `make(t=..., wall=...,
        **fields)` stamped by the replay's clock, into the Session and to the listener, as
        `Pipeline.emit_now` does live. Not recorded (a replay's feed keeps its markers)."""
        event = make(t=self.clock.now(), wall=self.clock.wall(), **fields)
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
        """Jump to `position` seconds (clamped); backwards rebuilds the Session from the start."""
        position = max(0.0, min(self.duration, position))
        end = bisect.bisect_right(self.times, self.start + position)
        if end < self._index:
            self.session = Session()
            self._index = 0
        self._add_until(end, notify=False)
        self._position = position

    def seek_by(self, seconds: float) -> None:
        self.seek(self._position + seconds)

    async def play(
        self, interval: float = 0.05, on_tick: Callable[[int], None] | None = None
    ) -> None:
        """Tick until finished (the headless replay); `on_tick` sees each batch size."""
        while not self.finished:
            added = self.tick()
            if on_tick is not None and added:
                on_tick(added)
            await asyncio.sleep(0 if math.isinf(self.speed) else interval)


def in_time_order(events: Sequence[Event]) -> tuple[Sequence[Event], int]:
    """`events` sorted stably by `t` (a non-finite `t` taken as the previous event's), and
    how many were out of order; the sequence itself when it is already in order."""
    placed: list[Event] | None = None
    latest = -math.inf
    previous = 0.0
    out_of_order = 0
    for index, event in enumerate(events):
        if not math.isfinite(event.t):
            placed = placed if placed is not None else list(events)
            placed[index] = event = dataclasses.replace(event, t=previous)
        if event.t < latest:
            out_of_order += 1
        latest = max(latest, event.t)
        previous = event.t
    if placed is None and not out_of_order:
        return events, 0
    ordered = sorted(placed if placed is not None else events, key=lambda e: e.t)
    return ordered, out_of_order


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
        events = self._replayer.events
        if not events:
            return 0.0
        first = events[0]
        return first.wall + (self.now() - first.t)

    async def sleep(self, seconds: float) -> None:
        """Until the replay has moved `seconds` on (or has ended)."""
        until = self.now() + seconds
        while self.now() < until and not self._replayer.finished:
            await asyncio.sleep(self.POLL_S)
