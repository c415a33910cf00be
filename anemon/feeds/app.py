"""The bench app someone else launched, as the backend sees it during a watch (`anemon watch
--device`, a backend that is an `AppFinder`): its CPU, memory and GPU recorded as the app's
telemetry, the gaps of the streams about it, the crash and jetsam reports naming it (copied
next to the recording, as a run's are), and its exit. An exit in a round that has no END yet
fails that round as a run's does (control/arm.py): once the log has had `grace_s` to bring
the END (a last pull), or a report to say why (then the report's reason is the round's);
while the log cannot be pulled the grace waits for it, and starts again when it is back.

A watch launched nothing, so which round a process ran is told by time: the latest START read
before the process was last sampled (the app's next launch may have written its START before
the poll saw the old process gone); a process never sampled ran the latest round.
"""

from __future__ import annotations

import asyncio

from anemon.devices.base import AppCrash, AppExit, AppFinder, AppNews, AppSample
from anemon.events import EndEvent, ErrorEvent, Event, GapEvent, MarkerEvent, StartEvent
from anemon.pipeline import Pipeline
from anemon.recording.writer import keep_beside


class WatchedApp:
    """The news of `bundle` from `finder`, on `pipeline`, beside the log read from `log_source`."""

    def __init__(
        self, finder: AppFinder, bundle: str, pipeline: Pipeline, *, kind: str, log_source: str,
        grace_s: float,
    ) -> None:  # fmt: skip
        self.finder = finder
        self.bundle = bundle
        self.pipeline = pipeline
        self.source = f"{kind}:app"
        """As a run's app source (the controller's): `KIND:app`, its gaps `KIND:app:STREAM`."""
        self.log_source = log_source
        self.grace_s = grace_s
        self._starts: list[tuple[float, str | None]] = []
        """Each round's START: when it was read, its arm (round n is `_starts[n - 1]`)."""
        self._over: set[int] = set()
        """Rounds with their END, or ended by a report or an exit (nothing more fails them)."""
        self._sampled_at: dict[int, float] = {}
        """When each process was last sampled (session time)."""
        self._log_back = asyncio.Event()
        self._log_back.set()
        self._graces: set[asyncio.Task[None]] = set()
        pipeline.subscribe(self._on_event)

    @property
    def arm(self) -> str | None:
        """The arm of the round in progress (a START, no END yet), else None."""
        latest = len(self._starts)
        return self._starts[-1][1] if latest and latest not in self._over else None

    async def run(self) -> None:
        try:
            async for news in self.finder.watch_running(self.bundle):
                self._on_news(news)
        finally:
            for grace in self._graces:
                grace.cancel()
            await asyncio.gather(*self._graces, return_exceptions=True)

    def _on_news(self, news: AppNews) -> None:
        if isinstance(news, AppExit):
            round_ = self._round_of(news.pid)
            if round_ and round_ not in self._over:
                grace = asyncio.create_task(self._fail_after_grace(round_, news))
                self._graces.add(grace)
                grace.add_done_callback(self._graces.discard)
            return
        arm = self.arm
        if isinstance(news, AppSample) and news.pid is not None:
            self._sampled_at[news.pid] = self.pipeline.clock.now()
        elif isinstance(news, AppCrash):
            round_ = self._round_of(news.pid)
            if round_ and round_ not in self._over:
                self._over.add(round_)  # the summary takes the report's reason
                arm = self._starts[round_ - 1][1]
            self._keep(news, arm)
        self.pipeline.emit_now(news.event, arm=arm, source=self.source)

    def _keep(self, crash: AppCrash, arm: str | None) -> None:
        """Copy the report next to the recording, as a run does (none: nothing to put it by)."""
        recorder = self.pipeline.recorder
        if recorder is None:
            return
        try:
            keep_beside(recorder.path, crash.file, crash.data)
        except OSError as e:
            note = f"could not copy the crash report {crash.file}: {e.strerror or e}"
            self.pipeline.emit_now(MarkerEvent, arm=arm, source=self.source, note=note)

    def _round_of(self, pid: int | None) -> int:
        """The round process `pid` ran (0: none yet)."""
        seen = self._sampled_at.get(pid) if pid is not None else None
        if seen is None:
            return len(self._starts)
        return sum(1 for t, _ in self._starts if t <= seen)

    async def _fail_after_grace(self, round_: int, exited: AppExit) -> None:
        while True:
            await self.pipeline.clock.sleep(self.grace_s)
            if self._log_back.is_set():
                break
            await self._log_back.wait()  # the END may be on the phone: a new grace once back
        if round_ in self._over:
            return
        self._over.add(round_)
        arm = self._starts[round_ - 1][1]
        message = f"the app {exited.reason} without an END line"
        self.pipeline.emit_now(ErrorEvent, arm=arm, source=self.source, message=message,
                               line=f"anemon: ERROR: {message}")  # fmt: skip

    def _on_event(self, event: Event) -> None:
        if isinstance(event, StartEvent):
            self._starts.append((event.t, event.arm))
        elif isinstance(event, EndEvent) and self._starts:
            self._over.add(len(self._starts))
        elif isinstance(event, GapEvent) and event.source == self.log_source:
            if event.state == "begin":
                self._log_back.clear()
            else:
                self._log_back.set()
