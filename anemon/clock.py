"""Session time: one Clock protocol and its implementations.

- `RealClock`: the host's monotonic time since the session began, scaled by a speed (a
  simulated phone can run faster than real time; every wait is divided by the speed).
- `VirtualClock`: speed `max`. The session runs on its own `VirtualTimeLoop`, whose time is
  virtual and jumps straight to the next timer whenever nothing is ready: every watchdog,
  cooldown and poll then runs deterministically, with no real-time threshold that a loaded
  machine could trip.
- `ReplayClock` (anemon/sources/replay.py): where a replay has got to.
"""

from __future__ import annotations

import asyncio
import math
import selectors
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Clock(Protocol):
    """What stamps events and paces waits."""

    def now(self) -> float:
        """Seconds since the session began."""
        ...

    def wall(self) -> float:
        """Epoch seconds of `now`."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of session time."""
        ...


async def wait_for(clock: Clock, awaitable: Awaitable[T], seconds: float | None) -> T:
    """`asyncio.wait_for` in session seconds of `clock` (None: no limit); TimeoutError.

    A cancel of the caller is never lost, even one that comes while the timed-out awaitable
    is still being cancelled: a poll loop that goes on after a TimeoutError then ends when
    cancelled, instead of running on (and holding up whoever gathers it) for good."""
    if seconds is None:
        return await awaitable
    task = asyncio.ensure_future(awaitable)
    timer = asyncio.ensure_future(clock.sleep(seconds))
    try:
        await asyncio.wait((task, timer), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        timer.cancel()
    if task.done():
        return task.result()
    task.cancel()
    try:
        return await task  # it may still finish rather than be cancelled
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # the caller was cancelled meanwhile: that cancel is its, not a timeout
        raise TimeoutError from None


class RealClock:
    """Seconds since `start` (or creation) at `speed` times the host's monotonic clock."""

    def __init__(self, speed: float = 1.0, monotonic: Callable[[], float] = time.monotonic) -> None:
        if not speed > 0 or math.isinf(speed):
            raise ValueError("a clock's speed is finite and > 0 (max is a VirtualClock)")
        self.speed = speed
        self._monotonic = monotonic
        self.start()

    def start(self) -> None:
        """Count from now: the session begins."""
        self._t0 = self._monotonic()
        self._wall0 = time.time()

    def now(self) -> float:
        return (self._monotonic() - self._t0) * self.speed

    def wall(self) -> float:
        """The start's wall time plus session time (synthetic when the speed is not 1)."""
        return self._wall0 + self.now()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.speed)

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        """Run `main` to completion on the event loop this clock needs."""
        return asyncio.run(main)


class VirtualTimeExceeded(RuntimeError):
    """A virtual run went past its limit: something waits for what never comes."""


class VirtualClock(RealClock):
    """Speed `max`: session time is the virtual time of this clock's own event loop."""

    def __init__(self, limit_s: float = math.inf) -> None:
        self.loop = VirtualTimeLoop(limit_s)
        super().__init__(1.0, self.loop.time)

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        try:
            return self.loop.run_until_complete(main)
        finally:
            _close(self.loop)


class _JumpingSelector(selectors.DefaultSelector):
    """Polls instead of blocking, and moves the loop's virtual time to the next timer."""

    loop: VirtualTimeLoop

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
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
