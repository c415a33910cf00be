"""The bench app someone else launched, as the backend sees it during a watch (`anemon watch
--device`, a backend that is an `AppFinder`): its CPU, memory and GPU recorded as the app's
telemetry, the gaps of the streams about it, the crash and jetsam reports naming it, and its
exit. An exit in a round that has no END yet fails that round as a run's does
(control/arm.py): once the log has had `grace_s` to bring the END (a last pull), or a report
to say why (then the report's reason is the round's); while the log cannot be pulled the grace
waits for it, and starts again when it is back.
"""

from __future__ import annotations

import asyncio

from anemon.devices.base import AppCrash, AppExit, AppFinder, AppNews
from anemon.events import EndEvent, ErrorEvent, Event, GapEvent, StartEvent
from anemon.pipeline import Pipeline


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
        self.arm: str | None = None
        """The arm of the round in progress (a START, no END yet), else None."""
        self._round = 0
        """Counts STARTs: a grace belongs to the round it began in."""
        self._explained: set[int] = set()
        """Rounds a crash report ended (its reason is theirs, not the exit's)."""
        self._log_back = asyncio.Event()
        self._log_back.set()
        self._graces: set[asyncio.Task[None]] = set()
        pipeline.subscribe(self._on_event)

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
            if self.arm is not None:
                grace = asyncio.create_task(self._fail_after_grace(self.arm, self._round, news))
                self._graces.add(grace)
                grace.add_done_callback(self._graces.discard)
            return
        if isinstance(news, AppCrash) and self.arm is not None:
            self._explained.add(self._round)  # the summary takes the report's reason
        self.pipeline.emit_now(news.event, arm=self.arm, source=self.source)

    async def _fail_after_grace(self, arm: str, round_: int, exited: AppExit) -> None:
        while True:
            await self.pipeline.clock.sleep(self.grace_s)
            if self._log_back.is_set():
                break
            await self._log_back.wait()  # the END may be on the phone: a new grace once back
        if self.arm == arm and self._round == round_ and round_ not in self._explained:
            message = f"the app {exited.reason} without an END line"
            self.arm = None
            self.pipeline.emit_now(ErrorEvent, arm=arm, source=self.source, message=message,
                                   line=f"anemon: ERROR: {message}")  # fmt: skip

    def _on_event(self, event: Event) -> None:
        if isinstance(event, StartEvent):
            self.arm, self._round = event.arm, self._round + 1
        elif isinstance(event, EndEvent):
            self.arm = None
        elif isinstance(event, GapEvent) and event.source == self.log_source:
            if event.state == "begin":
                self._log_back.clear()
            else:
                self._log_back.set()
