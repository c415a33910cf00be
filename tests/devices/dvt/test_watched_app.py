"""The watch's rules for the app it did not launch (feeds/app.py), with a scripted backend: an
exit without END fails its round after the grace; a gap of the log holds the grace (the END
may be on the phone); an END read by then, or a report, leaves the exit's reason out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from anemon.devices.base import AppCrash, AppExit, AppFinder, AppNews, AppSample
from anemon.events import EndEvent, ErrorEvent, Event, GapEvent, StartEvent
from anemon.feeds.app import WatchedApp
from anemon.pipeline import Pipeline
from anemon.recording.writer import Recorder, make_header

LOG = "pymobiledevice3:Documents/sustain/bench.log"
GRACE_S = 0.02
BOUND_S = 10.0
"""A bound on a wait, never a timing assertion."""


class Finder(AppFinder):
    def __init__(self) -> None:
        self.news: asyncio.Queue[AppNews] = asyncio.Queue()

    async def watch_running(self, bundle: str) -> AsyncIterator[AppNews]:
        while True:
            yield await self.news.get()


class Watched:
    def __init__(self, recorder: Recorder | None = None) -> None:
        self.finder = Finder()
        self.pipeline = Pipeline(recorder=recorder)
        self.events: list[Event] = []
        self.pipeline.subscribe(self.events.append)
        self.app = WatchedApp(self.finder, "b", self.pipeline, kind="pymobiledevice3",
                              log_source=LOG, grace_s=GRACE_S)  # fmt: skip

    def line(self, make: type[Event], **fields: object) -> None:
        self.pipeline.emit_now(make, source=LOG, **fields)

    async def settled(self) -> None:
        """Every piece of news handed over, and many graces' worth of waiting after it."""
        while not self.finder.news.empty():
            await asyncio.sleep(0)
        await asyncio.sleep(GRACE_S * 10)

    def errors(self) -> list[ErrorEvent]:
        return [e for e in self.events if isinstance(e, ErrorEvent)]


async def watching(script: object, recorder: Recorder | None = None) -> Watched:
    watched = Watched(recorder)
    task = asyncio.create_task(watched.app.run())
    try:
        async with asyncio.timeout(BOUND_S):
            await script(watched)  # type: ignore[operator]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    return watched


async def test_an_exit_without_end_fails_its_round_after_the_grace() -> None:
    async def script(w: Watched) -> None:
        w.line(StartEvent, arm="a")
        w.finder.news.put_nowait(AppSample(7, mem_gb=1.0))
        w.finder.news.put_nowait(AppExit(7, "exited (its pid is gone)"))
        while not w.errors():
            await asyncio.sleep(0.005)

    (error,) = (await watching(script)).errors()
    assert (error.arm, error.line) == ("a", "anemon: ERROR: the app exited (its pid is gone) "
                                            "without an END line")  # fmt: skip


async def test_a_gap_of_the_log_holds_the_grace_and_the_end_read_after_it_counts() -> None:
    async def script(w: Watched) -> None:
        w.line(StartEvent, arm="a")
        w.finder.news.put_nowait(AppSample(7, mem_gb=1.0))
        w.line(GapEvent, state="begin", reason="unplugged")
        w.finder.news.put_nowait(AppExit(7, "exited on signal 9"))
        await w.settled()
        assert w.errors() == []  # held while the log cannot be pulled
        w.line(GapEvent, state="end", reason="back")
        w.line(EndEvent, arm="a", reason="done", trials=5)  # the last pull brings it
        await w.settled()

    assert (await watching(script)).errors() == []


CRASH = AppCrash("jetsam", "jetsam: per-process-limit at 3.4 GB", "JetsamEvent-1.ips",
                 "BenchApp", b'{"bug_type":"298"}', pid=7, footprint_gb=3.4)  # fmt: skip


async def test_a_report_gives_the_round_its_reason_not_the_exit() -> None:
    crash = CRASH

    async def script(w: Watched) -> None:
        w.line(StartEvent, arm="a")
        w.finder.news.put_nowait(AppSample(7, mem_gb=3.3))
        w.finder.news.put_nowait(AppExit(7, "exited on signal 9"))
        w.finder.news.put_nowait(crash)
        await w.settled()

    watched = await watching(script)
    assert watched.errors() == []
    (event,) = [e for e in watched.events if e.kind == "crash"]
    assert (event.arm, event.source) == ("a", "pymobiledevice3:app")


async def test_a_report_is_copied_next_to_the_recording_as_a_runs_is(tmp_path: Path) -> None:
    """Never over a file already there: a second report of that name gets `-2`."""
    recording = tmp_path / "watch.jsonl"
    (tmp_path / "watch.JetsamEvent-1.ips").write_text("an earlier session's copy")

    async def script(w: Watched) -> None:
        w.line(StartEvent, arm="a")
        w.finder.news.put_nowait(AppSample(7, mem_gb=3.3))
        w.finder.news.put_nowait(CRASH)
        await w.settled()

    with Recorder(recording, make_header(source="test")) as recorder:
        watched = await watching(script, recorder)
    assert [e.kind for e in watched.events if e.kind in ("crash", "marker")] == ["crash"]
    assert (tmp_path / "watch.JetsamEvent-1-2.ips").read_text() == '{"bug_type":"298"}'
    assert (tmp_path / "watch.JetsamEvent-1.ips").read_text() == "an earlier session's copy"


async def test_a_report_that_cannot_be_copied_is_said_and_still_recorded(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()

    async def script(w: Watched) -> None:
        w.line(StartEvent, arm="a")
        folder.rename(tmp_path / "moved")  # the recording's folder gone from its name
        w.finder.news.put_nowait(CRASH)
        await w.settled()

    with Recorder(folder / "watch.jsonl", make_header(source="test")) as recorder:
        watched = await watching(script, recorder)
    (marker,) = [e for e in watched.events if e.kind == "marker"]
    assert marker.note.startswith("could not copy the crash report JetsamEvent-1.ips: ")
    assert [e.kind for e in watched.events].count("crash") == 1
