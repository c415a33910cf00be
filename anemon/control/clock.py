"""Session time for a run: real time scaled by a speed, or virtual time as fast as possible.

At a finite speed the event loop is the ordinary one and every wait is divided by the
speed. At `max` the run goes on a `VirtualTimeLoop`: its `time()` is virtual and, whenever no
callback is ready, it jumps straight to the next timer instead of blocking. Every watchdog,
cooldown and poll then runs in virtual time, deterministically, with no real-time threshold
that a loaded machine could trip.
"""

from __future__ import annotations

import asyncio
import math
import selectors
import time
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Clock:
    """Seconds since the run began at `speed` times the event loop's clock, and the wall."""

    def __init__(self, speed: float = 1.0) -> None:
        if not speed > 0 or math.isinf(speed):
            raise ValueError("a Clock's speed is finite and > 0 (max runs on VirtualTimeLoop)")
        self.speed = speed
        self.virtual = False
        """Runs on a VirtualTimeLoop (speed `max`)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._t0 = 0.0
        self._wall0 = time.time()

    def start(self) -> None:
        """Start counting from now; call from inside the running loop."""
        self._loop = asyncio.get_running_loop()
        self._t0 = self._loop.time()
        self._wall0 = time.time()

    def t(self) -> float:
        """Session seconds (virtual when the loop is)."""
        if self._loop is None:
            return 0.0
        return (self._loop.time() - self._t0) * self.speed

    now = t

    def wall(self) -> float:
        """Epoch seconds: the start's wall time plus session time (synthetic when virtual)."""
        return self._wall0 + self.t()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.speed)

    async def wait_for(self, awaitable: Awaitable[T], seconds: float | None) -> T:
        """`asyncio.wait_for` in session seconds (None: no limit)."""
        limit = None if seconds is None else max(0.0, seconds) / self.speed
        return await asyncio.wait_for(awaitable, limit)


class VirtualTimeExceeded(RuntimeError):
    """A virtual run went past its limit: something waits for what never comes."""


class _JumpingSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    """Polls instead of blocking, and moves the loop's virtual time to the next timer."""

    loop: VirtualTimeLoop

    def select(self, timeout: float | None = None):  # type: ignore[no-untyped-def]
        if timeout is None or timeout <= 0:
            return super().select(timeout)  # None: no timer at all, block for real I/O
        events = super().select(0)
        if not events:
            self.loop.advance(timeout)
        return events


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose time is virtual and jumps to the next timer when idle."""

    def __init__(self, limit_s: float = math.inf) -> None:
        self._virtual = 0.0
        self._limit_s = limit_s
        selector = _JumpingSelector()
        selector.loop = self
        super().__init__(selector)

    def time(self) -> float:
        return self._virtual

    def advance(self, seconds: float) -> None:
        self._virtual += seconds
        if self._virtual > self._limit_s:
            raise VirtualTimeExceeded(f"virtual time passed {self._limit_s:g} s")


def clock_for(speed: float) -> Clock:
    """The clock of a run at `speed` (inf = `max`: virtual time, see `run`)."""
    if math.isinf(speed):
        clock = Clock(1.0)
        clock.virtual = True
        return clock
    return Clock(speed)


def run(main: Coroutine[Any, Any, T], clock: Clock, *, limit_s: float = math.inf) -> T:
    """Run `main` to completion on the loop `clock` needs (virtual for `max`)."""
    if not clock.virtual:
        return asyncio.run(main)
    loop = VirtualTimeLoop(limit_s)
    try:
        return loop.run_until_complete(main)
    finally:
        _close(loop)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """What asyncio.run does on the way out: cancel leftovers, close generators, close."""
    try:
        tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()
