"""THE way any feed is run, by the dashboard, headless mode and every command.

`run_feed` runs a feed to its end, or until it is stopped (the operator leaves the view, or
SIGINT/SIGTERM/SIGHUP; a dropped SSH session is handled as SIGTERM; or its recording cannot be
written, a full disk: the view is left and `close` raises why); lets it read what is
pending, for at most `STOP_TIMEOUT_S`; closes it (the recording) whatever happened; and raises
again what the feed failed with. `run_feed_sync` is the same from synchronous code, on the event
loop the feed's clock needs (a plan run at speed `max` runs on its VirtualClock's loop).

A command holds these signals from start-up (parsing, imports, plan loading) until `run_feed`
takes over (`anemon.cli.common.SignalHolder`): one held is acted on by `run_feed` as
soon as its handlers are in place, so it ends the command exactly as one a moment later would
(stopped, drained, abort recorded, closed).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from anemon.clock import RealClock
from anemon.events import Event, MarkerEvent
from anemon.feeds import RECORDING_STOPPED, Feed
from anemon.signals import SIGNALS

STOP_TIMEOUT_S = 10.0
"""How long (real seconds) a stopped feed may take to read what is pending before it is cut."""
DRAIN_POLL_S = 0.1
"""How often (loop seconds) the drain looks at the real clock: a virtual loop's time jumps."""


class View(Protocol):
    """What shows a feed while it runs (the dashboard). Headless there is none: events reach
    the printer through `Feed.subscribe`."""

    async def show(self) -> None:
        """Until the operator leaves."""
        ...

    def leave(self) -> None:
        """Leave now, as the operator would (a signal came)."""
        ...

    def failed(self, error: BaseException) -> None:
        """The feed failed while shown: say so (`run_feed` raises it again once left)."""
        ...


@dataclass
class Ending:
    """How a run of a feed ended."""

    signal: str | None = None
    """The signal that stopped it ("SIGINT", "SIGTERM", "SIGHUP"), if one did."""


def run_feed_sync(
    feed: Feed, view: View | None = None, *, timeout: float = STOP_TIMEOUT_S
) -> Ending:
    """`run_feed` on the loop the feed's clock needs (its own, for a VirtualClock)."""
    main = run_feed(feed, view, timeout=timeout)
    clock = feed.clock
    return clock.run(main) if isinstance(clock, RealClock) else asyncio.run(main)


async def run_feed(
    feed: Feed, view: View | None = None, *, timeout: float = STOP_TIMEOUT_S
) -> Ending:
    """Run `feed` until it ends (headless) or the view is left; SIGINT/SIGTERM/SIGHUP stop it
    (one held since start-up too: at once).

    A view showing a replay drives it (the dashboard's timer ticks it, the operator pauses and
    seeks), so `feed.run()` is started only headless or for a live feed.
    """
    ending = Ending()
    stopped = asyncio.Event()

    def stop(why: str) -> None:
        if not stopped.is_set():
            stopped.set()
            feed.stop(why)

    def on_signal(sig: signal.Signals) -> None:
        ending.signal = ending.signal or sig.name
        stop(sig.name)
        if view is not None:
            view.leave()

    def on_event(event: Event) -> None:
        # the recording cannot be written (a full disk): the session ends; `feed.close`
        # raises why
        if isinstance(event, MarkerEvent) and event.source == RECORDING_STOPPED:
            stop("recording failed")
            if view is not None:
                view.leave()

    if feed.replay is None:
        feed.subscribe(on_event)
    runner: asyncio.Task[None] | None = None
    if view is None or feed.replay is None:
        runner = asyncio.create_task(feed.run(), name="anemon-feed")
    installed = _install(on_signal)
    try:
        for sig in _held_by(installed):
            on_signal(sig)
        if view is not None:
            if runner is not None:
                runner.add_done_callback(_reporter(view))
            await view.show()
        elif runner is not None:
            await _first(runner, stopped)
    finally:
        try:
            if runner is not None:
                if not runner.done():
                    stop("quit")
                await _drain(runner, timeout)
        finally:
            _remove(installed)
            feed.close()
    return ending


async def _first(runner: asyncio.Task[None], stopped: asyncio.Event) -> None:
    """Until the feed ends or is asked to stop."""
    waiting = asyncio.ensure_future(stopped.wait())
    try:
        await asyncio.wait((runner, waiting), return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()


async def _drain(runner: asyncio.Task[None], timeout: float) -> None:
    """Let a stopped feed read what is pending (at most `timeout` real seconds, however the
    loop's time runs), cut it after; raise what it failed with."""
    deadline = time.monotonic() + timeout
    while not runner.done() and (left := deadline - time.monotonic()) > 0:
        await asyncio.wait((runner,), timeout=min(left, DRAIN_POLL_S))
    runner.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await runner


def _reporter(view: View) -> Callable[[asyncio.Task[None]], None]:
    def done(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and (error := task.exception()) is not None:
            view.failed(error)

    return done


def _held_by(installed: dict[signal.Signals, object]) -> list[signal.Signals]:
    """What the handlers `_install` replaced held during start-up: a holder
    (`anemon.cli.common.SignalHolder`) is a Python handler with `take() -> list[Signals]`."""
    held: list[signal.Signals] = []
    for previous in {id(p): p for p in installed.values()}.values():
        take = getattr(previous, "take", None)
        if callable(take):
            held += [sig for sig in take() if sig in installed and sig not in held]
    return held


def _install(handler: Callable[[signal.Signals], None]) -> dict[signal.Signals, object]:
    """SIGNALS → `handler(sig)` on the running loop, each with the handler it replaced (put back
    by `_remove`); none where the loop cannot (not the main thread, or no Unix signals)."""
    loop = asyncio.get_running_loop()
    installed: dict[signal.Signals, object] = {}
    for sig in SIGNALS:
        previous = signal.getsignal(sig)
        try:
            loop.add_signal_handler(sig, handler, sig)
        except (NotImplementedError, RuntimeError, ValueError):
            continue
        installed[sig] = previous
    return installed


def _remove(installed: dict[signal.Signals, object]) -> None:
    loop = asyncio.get_running_loop()
    for sig, previous in installed.items():
        loop.remove_signal_handler(sig)
        if previous is not None:
            signal.signal(sig, previous)  # type: ignore[arg-type]
