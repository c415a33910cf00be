"""The one stream of events: stamps them, stores them in the Session, records them, fans out.

Sources (mirror tail, device console, simulator, replay) push here; views and the controller
subscribe. Nothing here knows whether the session is live or replayed.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from anemon.clock import Clock, RealClock
from anemon.devices.base import Device, DeviceError, PowerSource, Telemetry
from anemon.events import Event, GapEvent, MarkerEvent, RecordEvent, ResetEvent, TelemetryEvent
from anemon.parsing import LineParser
from anemon.recording.writer import Recorder
from anemon.sources.items import LogGap, LogItem, LogReset
from anemon.store import Session

Listener = Callable[[Event], None]
E = TypeVar("E", bound=Event)


class Pipeline:
    """Every event goes through `emit`: into the Session, the recording, then each listener.
    What happens now is stamped here (`emit_now`), never by its emitter."""

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
        self._load_change: tuple[float, float] | None = None
        """The phone's last system-load change (`emit_reading`): its epoch seconds as the
        device saw it, and its session time as the first reading of it said."""

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, event: Event) -> None:
        self.session.add(event)
        if self.recorder is not None:
            self.recorder.write(event)
        for listener in self._listeners:
            listener(event)

    def emit_now(self, make: Callable[..., E], /, **fields: Any) -> E:
        """`emit` an event happening now: `make(t=..., wall=..., **fields)`, stamped by the
        session clock. `make` is an event class or what builds one (`Telemetry.event`)."""
        event = make(t=self.clock.now(), wall=self.clock.wall(), **fields)
        self.emit(event)
        return event

    def emit_reading(self, reading: Telemetry, **fields: Any) -> TelemetryEvent:
        """`emit_now` of a device's reading (`Telemetry.event`), its system load's change
        time pinned (`_pinned`)."""
        return self.emit_now(functools.partial(self._pinned, reading), **fields)

    def _pinned(self, reading: Telemetry, **fields: Any) -> TelemetryEvent:
        """`reading`'s event, saying the session time the first reading of its system-load
        change said: each works it out from its own t and wall, two clocks read apart, and it
        moved by ~0.1 µs from one reading to the next, so that each looked like a change of
        its own (the refresh interval came out as the reads' interval, the load was never
        stale, and the live figures made their steps again whenever one moved back)."""
        event = reading.event(**fields)
        changed, at = reading.load_changed_wall, event.load_changed_t
        if changed is None or at is None:
            return event
        if self._load_change is not None and self._load_change[0] == changed:
            return dataclasses.replace(event, load_changed_t=self._load_change[1])
        self._load_change = (changed, at)
        return event

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()


ArmOf = Callable[[RecordEvent], str | None]
"""The arm a parsed line belongs to, where a source knows better than the line's `arm=`."""


class LineFeed:
    """Turns lines from a live source into events on a pipeline (a reset starts a new log).

    `arm_of` (the controller's launches) decides each record's arm; without it, the line's."""

    def __init__(self, pipeline: Pipeline, source: str, arm_of: ArmOf | None = None) -> None:
        self.pipeline = pipeline
        self.parser = LineParser(source)
        self.arm_of = arm_of
        self.arm: str | None = None
        """The arm of the latest record (a gap belongs to it)."""

    def feed(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.pipeline.emit_now(self._event, line=line)

    def _event(self, *, line: str, t: float, wall: float) -> Event:
        """The event of a line read at `t`, named after its arm."""
        event = self.parser.parse(line, t=t, wall=wall)
        if isinstance(event, RecordEvent):
            event = self._attributed(event)
            self.arm = event.arm
        return event

    def _attributed(self, event: RecordEvent) -> RecordEvent:
        arm = event.arm if self.arm_of is None else self.arm_of(event)
        return event if arm == event.arm else dataclasses.replace(event, arm=arm)

    def reset(self, reason: str, *, read_on: bool = False) -> None:
        if not read_on:  # another log: its lines are not the launch in progress
            self.parser.reset()
            self.arm = None
        self.pipeline.emit_now(
            ResetEvent, source=self.parser.source, reason=reason, read_on=read_on
        )

    def feed_items(self, batch: Iterable[LogItem]) -> None:
        """A batch from `Device.follow_log`: lines, and gap/reset markers, in order."""
        for item in batch:
            if isinstance(item, str):
                self.feed((item,))
            elif isinstance(item, LogReset):
                self.reset(item.reason, read_on=item.read_on)
            elif isinstance(item, LogGap):
                self.pipeline.emit_now(GapEvent, arm=self.arm, source=self.parser.source,
                                       state=item.state, reason=item.reason)  # fmt: skip


async def read_telemetry(
    pipeline: Pipeline, device: Device, source: str, arm: str | None = None
) -> Telemetry | None:
    """Read the host-side telemetry and emit it; None while the device cannot answer."""
    try:
        reading = await device.telemetry()
    except DeviceError:
        return None
    if reading is not None:
        pipeline.emit_reading(reading, source=source, arm=arm)
    return reading


POWER_BACK = "power readings are back"


def power_source(device: Device) -> str:
    """The `source` of power readings, their gaps and warnings (apart from the log's gaps)."""
    return f"{device.kind}:power"


async def poll_power(
    pipeline: Pipeline,
    device: Device,
    clock: Clock | None = None,
    every_s: float | None = None,
    arm_of: Callable[[], str | None] = lambda: None,
    *,
    source: str | None = None,
) -> None:
    """Read device power every `every_s` (default: the device's `power_s`) until cancelled.

    Returns at once when the device is not a PowerSource (devicectl reads no power). Each
    reading is a telemetry event (power_w, charging, plugged, battery, temperature_c); a failed
    read opens a gap (`GapEvent` begin, once) that the next good read closes, never a crash;
    the first of a run of absurd readings (counted by the device in `power_warnings`) is a
    marker. Paced by `clock` (default the pipeline's), so a virtual clock runs it
    deterministically. `arm_of` names the arm the readings belong to, at the moment of each.
    """
    if not isinstance(device, PowerSource):
        return
    clock = clock or pipeline.clock
    every = every_s or device.power_s
    source = source or power_source(device)
    in_gap = False
    dropping = False
    while True:
        warned = device.power_warnings
        try:
            reading = await device.power()
        except DeviceError as e:
            if not in_gap:
                _emit_gap(pipeline, source, arm_of(), "begin", str(e))
                in_gap = True
        else:
            if in_gap:
                _emit_gap(pipeline, source, arm_of(), "end", POWER_BACK)
                in_gap = False
            if reading is not None:
                pipeline.emit_reading(reading, source=source, arm=arm_of())
            dropped = device.power_warnings > warned
            if dropped and not dropping:
                note = (
                    "dropped an absurd power reading (|current| > 10 A, voltage outside "
                    f"2.5-5 V or a system load outside 0-30 W); {device.power_warnings} so far"
                )
                pipeline.emit_now(MarkerEvent, arm=arm_of(), source=source, note=note)
            dropping = dropped
        await clock.sleep(every)


def _emit_gap(pipeline: Pipeline, source: str, arm: str | None, state: str, reason: str) -> None:
    pipeline.emit_now(GapEvent, arm=arm, source=source, state=state, reason=reason)
