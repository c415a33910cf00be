"""The base of every live feed: a pipeline (session + recording), a stop, the operator's notes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path

from anemon.clock import Clock
from anemon.events import MarkerEvent
from anemon.feeds import RECORDING_STOPPED, Listener, RunControls
from anemon.pipeline import Pipeline
from anemon.recording.writer import Recorder, RecordingError
from anemon.store import Session


class LiveFeed:
    """A live session on `pipeline`. The base reads nothing itself: its `run` waits until
    stopped while whoever holds the pipeline emits (a test, a benchmark); subclasses read a
    source until it ends or they are stopped."""

    replay: None = None

    def __init__(
        self,
        title: str,
        pipeline: Pipeline,
        *,
        tag: str | None = None,
        controls: RunControls | None = None,
    ) -> None:
        self.title = title
        self.tag = tag
        self.pipeline = pipeline
        self.controls = controls
        self.reads_power: bool | None = None
        self._stop = asyncio.Event()
        if pipeline.recorder is not None:
            self.watch_recording(pipeline.recorder)

    def watch_recording(self, recorder: Recorder) -> None:
        """A recording that cannot be written (a full disk) ends the session: it is stopped
        (a plan run aborts: its app is stopped), the reason is said in the log panel (a
        marker of source RECORDING_STOPPED, which `run_feed` acts on too), and `close`
        raises it (exit 2)."""
        recorder.on_error.append(self._recording_failed)

    def _recording_failed(self, error: RecordingError) -> None:
        t, wall = self.pipeline.stamp()
        self.pipeline.emit(
            MarkerEvent(t=t, wall=wall, source=RECORDING_STOPPED, note=str(error))
        )  # fmt: skip
        self.stop("recording failed")

    @property
    def session(self) -> Session:
        return self.pipeline.session

    @property
    def status_note(self) -> str | None:
        """Nothing to say, but where a subclass waits for its source."""
        return None

    @property
    def clock(self) -> Clock:
        return self.pipeline.clock

    @property
    def finished(self) -> bool:
        """Stopped, or the controller said its queue is through."""
        return self._stop.is_set() or queue_ended(self.session)

    @property
    def recorder(self) -> Recorder | None:
        return self.pipeline.recorder

    @property
    def record(self) -> Path | None:
        recorder = self.recorder
        return recorder.path if recorder is not None else None

    def subscribe(self, listener: Listener) -> None:
        self.pipeline.subscribe(listener)

    def marker(self, note: str) -> None:
        t, wall = self.pipeline.stamp()
        self.pipeline.emit(MarkerEvent(t=t, wall=wall, source="operator", note=note))

    def stop(self, why: str = "quit") -> None:
        self._stop.set()

    async def run(self) -> None:
        await self._stop.wait()

    def close(self) -> None:
        """Close the recording; a write that failed is raised here (RecordingError, exit 2)."""
        self.pipeline.close()


def queue_ended(session: Session) -> bool:
    """The session's last phase ends the whole queue: done or aborted, no arm named (an arm's
    own end names it)."""
    phase = session.phase
    return phase is not None and phase.phase in ("done", "aborted") and phase.arm is None


async def until_stopped(stop: asyncio.Event, *work: Awaitable[None]) -> None:
    """Run `work` side by side until `stop` is set (one of them ending sets it too); then
    cancel the rest and re-raise what any of them failed with."""
    tasks = [asyncio.ensure_future(w) for w in work]
    for task in tasks:
        task.add_done_callback(lambda _: stop.set())
    try:
        await stop.wait()
        await asyncio.sleep(0)  # let a batch already read reach the pipeline
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in tasks:
        if not task.cancelled() and (error := task.exception()) is not None:
            raise error
