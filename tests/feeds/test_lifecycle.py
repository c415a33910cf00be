"""`run_feeds` headless: to the end or a signal, drained within a bound, always closed, a
failure raised again; `run_feeds_sync` on the loop the feed's clock needs."""

from __future__ import annotations

import asyncio
import errno
import math
import os
import signal
import time

import pytest

from anemon.cli.common import hold_signals
from anemon.clock import VirtualClock
from anemon.control.plan import parse_plan
from anemon.events import RecordingFailedEvent, TrialEvent
from anemon.feeds.lifecycle import run_feeds, run_feeds_sync
from anemon.feeds.live import LiveFeed
from anemon.feeds.plan import PlanRun
from anemon.feeds.replay import ReplayFeed
from anemon.feeds.runs import Run, Runs
from anemon.pipeline import Pipeline
from anemon.recording.writer import Recorder, RecordingError, make_header
from tests.ui.helpers import StepLog
from tests.ui.sample import sustained


class EndsAlone(StepLog):
    async def run(self) -> None:
        await asyncio.sleep(0)
        self.steps.append("ended")


async def test_a_feed_that_ends_is_closed_once_and_not_stopped() -> None:
    feed = EndsAlone()
    ending = await run_feeds(Runs.one(feed))
    assert feed.steps == ["ended", "close"]
    assert ending.signal is None


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_stops_drains_and_closes(sig: signal.Signals) -> None:
    class Signalled(StepLog):
        async def run(self) -> None:
            os.kill(os.getpid(), sig)
            await super().run()

    feed = Signalled()
    ending = await run_feeds(Runs.one(feed))
    assert feed.steps == [f"stop ({sig.name})", "drained", "close"]
    assert ending.signal == sig.name


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
async def test_the_signal_handlers_are_put_back_after(sig: signal.Signals) -> None:
    before = signal.getsignal(sig)
    await run_feeds(Runs.one(EndsAlone()))
    assert signal.getsignal(sig) == before


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_held_at_start_up_stops_the_feed_as_soon_as_it_runs(sig: signal.Signals) -> None:
    """`anemon.cli` holds signals until `run_feeds` takes over: one that came then is acted on
    at once (the feed stopped, drained and closed; the ending says which signal), and the
    holder is its handler again after."""
    feed = StepLog()
    with hold_signals() as holder:
        os.kill(os.getpid(), sig)
        assert holder.held == [sig]
        ending = run_feeds_sync(Runs.one(feed))
        assert signal.getsignal(sig) is holder
        assert holder.held == []
    assert feed.steps == [f"stop ({sig.name})", "drained", "close"]
    assert ending.signal == sig.name


def test_a_second_signal_held_at_start_up_interrupts() -> None:
    """Start-up hangs, the operator insists: the second signal interrupts at once."""
    before = signal.getsignal(signal.SIGTERM)
    with hold_signals(), pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGHUP)
    assert signal.getsignal(signal.SIGTERM) == before


async def test_a_feed_that_does_not_drain_in_time_is_cut_and_still_closed() -> None:
    class Deaf(StepLog):
        async def run(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(3600)

    feed = Deaf()
    start = time.monotonic()
    ending = await run_feeds(Runs.one(feed), timeout=0.2)
    assert time.monotonic() - start < 5
    assert feed.steps == ["stop (SIGINT)", "close"]
    assert ending.signal == "SIGINT"


async def test_a_feed_failure_is_raised_after_the_recording_is_closed() -> None:
    class Broken(StepLog):
        async def run(self) -> None:
            raise RuntimeError("device gone")

    feed = Broken()
    with pytest.raises(RuntimeError, match="device gone"):
        await run_feeds(Runs.one(feed))
    assert feed.steps == ["close"]


async def test_a_replay_is_played_through_headless_and_its_events_seen() -> None:
    feed = ReplayFeed(sustained(), "sample", speed=math.inf)
    seen: list[object] = []
    feed.subscribe(seen.append)
    await run_feeds(Runs.one(feed))
    assert feed.replay.finished
    assert len(seen) == len(feed.replay.events)


def test_a_virtual_clock_runs_the_feed_on_its_own_loop() -> None:
    clock = VirtualClock()
    loops = []

    class Once(LiveFeed):
        async def run(self) -> None:
            loops.append(asyncio.get_running_loop())

    run_feeds_sync(Runs.one(Once("virtual", Pipeline(clock=clock))))
    assert loops == [clock.loop]


PLAN = """
tag = "s"
[[arms]]
name = "minicpm5_1b_ane_pal8"
[[arms]]
name = "minicpm5_1b_gpu_int8"
"""


def test_sigint_aborts_a_plan_run_with_the_signal_in_the_record() -> None:
    feed = PlanRun(parse_plan(PLAN, "s.toml"), VirtualClock(limit_s=6 * 3600.0))

    def interrupt_at_the_first_trial(event: object) -> None:
        if isinstance(event, TrialEvent) and event.trial == 1:
            os.kill(os.getpid(), signal.SIGINT)

    feed.subscribe(interrupt_at_the_first_trial)
    ending = run_feeds_sync(Runs.one(feed))
    assert ending.signal == "SIGINT"
    assert feed.result is not None and feed.result.aborted and feed.result.exit_status == 130
    assert [m.note for m in feed.session.markers] == ["abort session (SIGINT)"]
    assert not any(o.status == "done" for o in feed.result.outcomes)


def test_an_abort_before_the_recording_opens_is_still_recorded(tmp_path):
    """A signal in the first moments stops a plan run before its device has answered (the
    recording's header needs that answer): the abort marker is written first once it opens."""
    import json

    from anemon.clock import VirtualClock
    from anemon.feeds.plan import PlanRun
    from tests.control.helpers import TWO_ARMS, plan

    record = tmp_path / "early.jsonl"
    clock = VirtualClock(limit_s=3600)
    feed = PlanRun(plan(TWO_ARMS), clock, record=record)
    feed.stop("SIGTERM")
    try:
        clock.run(feed.run())
    finally:
        feed.close()
    events = [json.loads(line) for line in record.read_text().splitlines()[1:]]
    assert events[0]["kind"] == "marker" and events[0]["note"] == "abort session (SIGTERM)"
    assert events[-2]["kind"] == "phase" and events[-2]["phase"] == "aborted"
    assert events[-1]["kind"] == "summary" and events[-1]["status"] == "aborted"


class _FullDisk:
    """The recording's file, full: every write fails as a full disk does."""

    def __init__(self, file) -> None:
        self.file = file

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self.file, name)


class _Shown:
    """A view that stays until it is left, as the dashboard does."""

    def __init__(self) -> None:
        self.left = asyncio.Event()
        self.failures: list[BaseException] = []

    async def show(self) -> None:
        await self.left.wait()

    def leave(self) -> None:
        self.left.set()

    def failed(self, run: Run, error: BaseException) -> None:
        self.failures.append(error)


@pytest.mark.parametrize("shown", [False, True], ids=["headless", "view"])
async def test_a_full_disk_ends_the_session_and_close_raises_it(tmp_path, shown) -> None:
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path, make_header("test"))
    feed = LiveFeed("test", Pipeline(recorder=recorder))
    seen: list[object] = []
    feed.subscribe(seen.append)

    async def fill_the_disk() -> None:
        await asyncio.sleep(0)
        recorder._file = _FullDisk(recorder._file)
        feed.marker("one event too many")

    view = _Shown() if shown else None
    filling = asyncio.create_task(fill_the_disk())
    with pytest.raises(RecordingError, match=r"^recording: no space left on device writing "):
        await asyncio.wait_for(run_feeds(Runs.one(feed), view), timeout=30)
    await filling
    assert feed.finished and (view is None or view.left.is_set())
    stopped = [e for e in seen if isinstance(e, RecordingFailedEvent)]
    assert len(stopped) == 1 and "no space left" in stopped[0].note
    assert path.read_text().count("\n") == 1  # the header, whole
