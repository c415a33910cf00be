"""`wait_for` in session time: a timeout, a result, and a caller's cancel that is never lost."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from anemon.clock import RealClock, VirtualClock, wait_for


def test_a_wait_that_outlasts_its_seconds_is_a_timeout() -> None:
    clock = VirtualClock()

    async def main() -> float:
        with pytest.raises(TimeoutError):
            await wait_for(clock, asyncio.Event().wait(), 30.0)
        return clock.now()

    assert clock.run(main()) == 30.0


def test_what_ends_in_time_gives_its_result() -> None:
    clock = VirtualClock()

    async def answer() -> str:
        await clock.sleep(5.0)
        return "done"

    assert clock.run(wait_for(clock, answer(), 30.0)) == "done"


def test_a_cancel_while_the_timed_out_awaitable_is_still_being_cancelled_is_not_lost() -> None:
    """The shape of a poll loop (`suppress(TimeoutError)` around each wait) cancelled at the
    moment its wait timed out: it must end, not take the cancel for a timeout and poll on."""
    unwinding = asyncio.Event()
    release = asyncio.Event()
    polls = 0

    async def slow_to_cancel() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            unwinding.set()
            with contextlib.suppress(asyncio.CancelledError):
                await release.wait()  # cleanup that takes a while (the second cancel ends it)
            raise

    async def poll_loop() -> None:
        nonlocal polls
        while polls < 3:  # bounded: on a lost cancel the test fails rather than hangs
            polls += 1
            with contextlib.suppress(TimeoutError):
                await wait_for(RealClock(), slow_to_cancel(), 0.0)

    async def main() -> None:
        loop = asyncio.create_task(poll_loop())
        await unwinding.wait()  # the wait timed out; its awaitable is being cancelled
        loop.cancel()
        release.set()
        await asyncio.wait_for(loop, 5.0)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    assert polls == 1


def test_a_cancelled_caller_cancels_what_it_waited_for() -> None:
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    async def main() -> None:
        waiter = asyncio.create_task(wait_for(RealClock(), forever(), 60.0))
        await asyncio.sleep(0.01)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        await asyncio.wait_for(cancelled.wait(), 5.0)

    asyncio.run(main())
