"""THE way any feed is run, by the dashboard, headless mode and every command.

`run_feeds` runs `Runs` (one feed, or several side by side on one event loop: `anemon run
A.toml B.toml`) to their end, or until they are stopped (the operator leaves the view, or
SIGINT/SIGTERM/SIGHUP; a dropped SSH session is handled as SIGTERM; or a recording cannot be
written, a full disk: the view is left and `close` raises why); lets each read what is
pending, for at most `STOP_TIMEOUT_S`; closes each (its recording) whatever happened; keeps
what a run failed with while the others go on. `run_feeds_sync` is the same from synchronous
code, on the event loop the runs' clock needs (a plan run at speed `max` runs on its
VirtualClock's loop, which every run shares then: `runs.shared_clocks`).

A command holds these signals from start-up (parsing, imports, plan loading) until `run_feeds`
takes over (`anemon.cli.common.SignalHolder`): one held is acted on by `run_feeds` as
soon as its handlers are in place, so it ends the command exactly as one a moment later would
(stopped, drained, abort recorded, closed).
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from anemon.clock import RealClock
from anemon.events import Event, RecordingFailedEvent
from anemon.feeds.runs import Run, Runs
from anemon.signals import SIGNALS

STOP_TIMEOUT_S = 10.0
"""How long (real seconds) a stopped feed may take to read what is pending before it is cut."""
DRAIN_POLL_S = 0.1
"""How often (loop seconds) the drain looks at the real clock: a virtual loop's time jumps."""


class View(Protocol):
    """What shows the runs while they run (the dashboard). Headless there is none: events
    reach the printers through `Feed.subscribe`."""

    async def show(self) -> None:
        """Until the operator leaves."""
        ...

    def leave(self) -> None:
        """Leave now, as the operator would (a signal came)."""
        ...

    def failed(self, run: Run, error: BaseException) -> None:
        """`run` failed while shown: say so (the others go on)."""
        ...


@dataclass
class Ending:
    """How the runs ended."""

    signal: str | None = None
    """The signal that stopped them ("SIGINT", "SIGTERM", "SIGHUP"), if one did."""
    failures: dict[Run, BaseException] = field(default_factory=dict)
    """What a run failed with: the others went on; its outcome says so."""


def run_feeds_sync(
    runs: Runs, view: View | None = None, *, timeout: float = STOP_TIMEOUT_S
) -> Ending:
    """`run_feeds` on the loop the runs' clock needs (its own, for a VirtualClock)."""
    main = run_feeds(runs, view, timeout=timeout)
    clock = runs.clock
    return clock.run(main) if isinstance(clock, RealClock) else asyncio.run(main)


async def run_feeds(
    runs: Runs, view: View | None = None, *, timeout: float = STOP_TIMEOUT_S
) -> Ending:
    """Run every feed of `runs` side by side until each has ended (headless) or the view is
    left; SIGINT/SIGTERM/SIGHUP or a recording that cannot be written stop them all (a signal
    held since start-up too: at once). Each is drained and closed; the first close failure
    is raised (a recording that could not be written: exit 2). A run that fails leaves the
    others to go on (`Ending.failures`); the failure of a lone run is raised once it is
    closed, as there is no other run's outcome to say it beside.

    A view showing a replay drives it (the dashboard's timer ticks it, the operator pauses and
    seeks), so a feed's `run()` is started only headless or for a live feed.
    """
    ending = Ending()
    stopped = asyncio.Event()

    def stop(why: str) -> None:
        if not stopped.is_set():
            stopped.set()
            runs.stop(why)

    def on_signal(sig: signal.Signals) -> None:
        ending.signal = ending.signal or sig.name
        stop(sig.name)
        if view is not None:
            view.leave()

    def on_event(event: Event) -> None:
        # the recording cannot be written (a full disk): the session ends; `feed.close`
        # raises why
        if isinstance(event, RecordingFailedEvent):
            stop("recording failed")
            if view is not None:
                view.leave()

    runners: dict[Run, asyncio.Task[None]] = {}
    for run in runs:
        if run.feed.replay is None:
            run.feed.subscribe(on_event)
        if view is None or run.feed.replay is None:
            runners[run] = asyncio.create_task(run.feed.run(), name="anemon-feed")
            runners[run].add_done_callback(_reporter(run, ending, view))
    installed = _install(on_signal)
    try:
        for sig in _held_by(installed):
            on_signal(sig)
        if view is not None:
            await view.show()
        elif runners:
            await _first(list(runners.values()), stopped)
    finally:
        try:
            if any(not runner.done() for runner in runners.values()):
                stop("quit")
            await _drain(list(runners.values()), timeout)
        finally:
            _remove(installed)
            _close(runs)
    if len(runs) == 1 and ending.failures:
        raise next(iter(ending.failures.values()))
    return ending


def _close(runs: Runs) -> None:
    """Close every run (each recording), whatever one raised; then raise the first failure."""
    failure: BaseException | None = None
    for run in runs:
        try:
            run.feed.close()
        except BaseException as e:  # every recording is closed whatever one raised
            failure = failure or e
    if failure is not None:
        raise failure


async def _first(runners: list[asyncio.Task[None]], stopped: asyncio.Event) -> None:
    """Until every run has ended or they are asked to stop."""
    waiting = asyncio.ensure_future(stopped.wait())
    every = asyncio.ensure_future(asyncio.wait(runners))
    try:
        await asyncio.wait((every, waiting), return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()
        every.cancel()


async def _drain(runners: list[asyncio.Task[None]], timeout: float) -> None:
    """Let stopped feeds read what is pending (at most `timeout` real seconds in all, however
    the loop's time runs), cut them after. What one failed with is its `_reporter`'s."""
    deadline = time.monotonic() + timeout
    while not all(r.done() for r in runners) and (left := deadline - time.monotonic()) > 0:
        await asyncio.wait(runners, timeout=min(left, DRAIN_POLL_S))
    for runner in runners:
        runner.cancel()
    await asyncio.gather(*runners, return_exceptions=True)


def _reporter(run: Run, ending: Ending, view: View | None) -> Callable[[asyncio.Task[None]], None]:
    """A run's failure kept in `ending` (and said by the view): the others go on."""

    def done(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and (error := task.exception()) is not None:
            ending.failures[run] = error
            if view is not None:
                view.failed(run, error)

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
