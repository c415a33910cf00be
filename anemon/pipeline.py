"""The one stream of events: stamps them, stores them in the Session, records them, fans out.

Sources (mirror tail, device console, simulator, replay) push here; views and the controller
subscribe. Nothing here knows whether the session is live or replayed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from anemon.clock import Clock, RealClock
from anemon.devices.base import Device, DeviceError, Telemetry
from anemon.events import Event, GapEvent, ResetEvent
from anemon.parsing import LineParser
from anemon.recording.writer import Recorder
from anemon.sources.items import LogGap, LogItem, LogReset
from anemon.store import Session

Listener = Callable[[Event], None]


class Pipeline:
    """Every event goes through `emit`: into the Session, the recording, then each listener."""

    def __init__(
        self,
        session: Session | None = None,
        recorder: Recorder | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.session = session if session is not None else Session()
        self.recorder = recorder
        self.clock: Clock = clock or RealClock()
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, event: Event) -> None:
        self.session.add(event)
        if self.recorder is not None:
            self.recorder.write(event)
        for listener in self._listeners:
            listener(event)

    def stamp(self) -> tuple[float, float]:
        """(t, wall) for an event happening now."""
        return self.clock.now(), self.clock.wall()

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()


class LineFeed:
    """Turns lines from a live source into events on a pipeline (a reset starts a new log)."""

    def __init__(self, pipeline: Pipeline, source: str) -> None:
        self.pipeline = pipeline
        self.parser = LineParser(source)

    def feed(self, lines: Iterable[str]) -> None:
        for line in lines:
            t, wall = self.pipeline.stamp()
            self.pipeline.emit(self.parser.parse(line, t=t, wall=wall))

    def reset(self, reason: str) -> None:
        self.parser.reset()
        t, wall = self.pipeline.stamp()
        self.pipeline.emit(ResetEvent(t=t, wall=wall, source=self.parser.source, reason=reason))

    def feed_items(self, batch: Iterable[LogItem]) -> None:
        """A batch from `Device.follow_log`: lines, and gap/reset markers, in order."""
        for item in batch:
            if isinstance(item, str):
                self.feed((item,))
            elif isinstance(item, LogReset):
                self.reset(item.reason)
            elif isinstance(item, LogGap):
                t, wall = self.pipeline.stamp()
                self.pipeline.emit(
                    GapEvent(t=t, wall=wall, arm=self.parser.current_arm,
                             source=self.parser.source, state=item.state, reason=item.reason)
                )  # fmt: skip


async def read_telemetry(
    pipeline: Pipeline, device: Device, source: str, arm: str | None = None
) -> Telemetry | None:
    """Read the host-side telemetry and emit it; None while the device cannot answer."""
    try:
        reading = await device.telemetry()
    except DeviceError:
        return None
    if reading is not None:
        t, wall = pipeline.stamp()
        pipeline.emit(reading.event(t=t, wall=wall, source=source, arm=arm))
    return reading
