"""The base of every live feed: a pipeline (session + recording), a stop, the operator's notes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path

from anemon.clock import Clock
from anemon.devices.base import DeviceInfo
from anemon.events import SUMMARY_VERSION, MarkerEvent, RecordingFailedEvent, SummaryEvent
from anemon.feeds import Listener, RunControls
from anemon.pipeline import Pipeline
from anemon.recording.writer import Recorder, RecordingError
from anemon.store import Session

SUMMARY_SOURCE = "anemon"
"""The `source` of the closing summary event."""
_STATUS_RANK = ("done", "incomplete", "aborted", "failed")
"""A session's status from its arms' (a watch): the worst of them, in this order."""


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
        self.device_info: DeviceInfo | None = None
        """What the backend said when it connected (None: no device, a mirrored log)."""
        self._stop = asyncio.Event()
        if pipeline.recorder is not None:
            self.watch_recording(pipeline.recorder)

    def watch_recording(self, recorder: Recorder) -> None:
        """A recording that cannot be written (a full disk) ends the session: it is stopped
        (a plan run aborts: its app is stopped), the reason is said in the log panel (a
        `RecordingFailedEvent`, which `run_feeds` acts on too), and `close` raises it
        (exit 2)."""
        recorder.on_error.append(self._recording_failed)

    def _recording_failed(self, error: RecordingError) -> None:
        self.pipeline.emit_now(RecordingFailedEvent, source=SUMMARY_SOURCE, note=str(error))
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

    def marker(self, note: str, source: str = "operator") -> None:
        self.pipeline.emit_now(MarkerEvent, source=source, note=note)

    def stop(self, why: str = "quit") -> None:
        self._stop.set()

    async def run(self) -> None:
        await self._stop.wait()

    def close(self) -> None:
        """End the recording with its summary and close it; a write that failed is raised here
        (RecordingError, exit 2)."""
        try:
            self.write_summary()
        finally:
            self.pipeline.close()

    def session_status(self) -> str:
        """How the session ended, for the closing summary: a watch has no verdict of its own,
        so the worst of its arms' statuses (a plan run overrides this with its result)."""
        from anemon.analysis.summary import arm_status

        statuses = {arm_status(arm)[0] for arm in self.session.arms.values()} or {"incomplete"}
        return max(statuses, key=_STATUS_RANK.index)

    def write_summary(self) -> None:
        """The recording's last line (version 2): the session's summary, so that a session
        index reads the first and last lines only. Not after a failed write (the recording
        ends where the disk filled) nor in a file that was claimed but never begun."""
        recorder = self.pipeline.recorder
        if recorder is None or not recorder.writable:
            return
        created = (recorder.header or {}).get("created")
        recorder.write(
            closing_summary(
                self.session,
                status=self.session_status(),
                tag=self.tag,
                created=created if isinstance(created, str) else None,
                device=self.device_info,
                wall=self.clock.wall(),
            )
        )


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


def closing_summary(
    session: Session,
    *,
    status: str,
    tag: str | None = None,
    created: str | None = None,
    device: DeviceInfo | None = None,
    wall: float = 0.0,
) -> SummaryEvent:
    """The summary event of `session`, at its last event's time (a replay's length stays the
    session's). The tag and OS build fall back on what the app's START lines said."""
    from anemon.analysis.summary import summarize  # numpy: only once a session ends

    summaries = summarize(session)
    starts = [arm.start for arm in session.arms.values() if arm.start is not None]
    os_build = next((s.os for s in starts if s.os), None) or (device.os if device else None)
    return SummaryEvent(
        t=session.last_t,
        wall=wall,
        source=SUMMARY_SOURCE,
        status=status,
        tag=tag or next((s.tag for s in starts if s.tag), None),
        created=created,
        device=(device.name or None) if device else None,
        udid=(device.udid or None) if device else None,
        backend=device.kind if device else None,
        os_build=os_build or None,
        trials=sum(s.trials for s in summaries),
        arms=tuple(s.to_json() for s in summaries),
        summary_version=SUMMARY_VERSION,
    )
