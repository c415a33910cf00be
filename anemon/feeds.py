"""What a view watches: a live session or a replay, behind one small interface.

The dashboard and the headless printer take a Feed; neither knows which kind it has.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Protocol

from anemon.devices.base import ConsoleSource, Device
from anemon.errors import AnemonError
from anemon.events import MarkerEvent
from anemon.pipeline import LineFeed, Pipeline, read_telemetry
from anemon.recording.reader import open_source
from anemon.sources.replay import ReplayClock, Replayer
from anemon.store import Session


class Feed(Protocol):
    title: str
    """The source or device, for the status line."""
    replay: Replayer | None
    """Replay controls, when this is a replay."""

    @property
    def session(self) -> Session:
        """What has been seen so far (a replay seeking back swaps in a new one)."""
        ...

    def marker(self, note: str) -> None:
        """An operator's note: becomes an event (recorded when live)."""
        ...

    async def run(self) -> None:
        """Drive the feed until it ends or is cancelled."""
        ...

    def close(self) -> None:
        """After `run` has ended: close the recording."""
        ...


class ReplayFeed:
    """A recording or log played through a Replayer."""

    def __init__(self, replayer: Replayer, title: str, tag: str | None = None) -> None:
        self.replay: Replayer | None = replayer
        self.title = title
        self.tag = tag
        self._replayer = replayer
        self.clock = ReplayClock(replayer)

    @classmethod
    def open(cls, path: Path, **replay_options: Any) -> ReplayFeed:
        """A SOURCE (recording or raw log) read whole, ready to play."""
        reader = open_source(path)
        return cls(Replayer(list(reader), **replay_options), str(path), reader.tag)

    @property
    def session(self) -> Session:
        return self._replayer.session

    def marker(self, note: str) -> None:
        t, wall = self.clock.now(), self.clock.wall()
        self.session.add(MarkerEvent(t=t, wall=wall, source="operator", note=note))

    async def run(self) -> None:
        await self._replayer.play()

    def close(self) -> None:
        pass


class LiveFeed:
    """What every live feed shares: a pipeline (session + recording) and the operator's notes."""

    replay = None

    def __init__(self, title: str, pipeline: Pipeline) -> None:
        self.title = title
        self.pipeline = pipeline
        self._stop = asyncio.Event()

    @property
    def session(self) -> Session:
        return self.pipeline.session

    def marker(self, note: str) -> None:
        t, wall = self.pipeline.stamp()
        self.pipeline.emit(MarkerEvent(t=t, wall=wall, source="operator", note=note))

    def stop(self) -> None:
        """Ask `run` to finish after reading what is pending."""
        self._stop.set()

    def close(self) -> None:
        self.pipeline.close()


class MirrorFeed(LiveFeed):
    """A live mirrored log that something else refreshes (`anemon watch PATH`)."""

    def __init__(self, path: Path, pipeline: Pipeline, poll_s: float = 1.0) -> None:
        from anemon.sources.mirror import MirrorTailer

        super().__init__(str(path), pipeline)
        self._tailer = MirrorTailer(path, poll_s=poll_s)
        self._lines = LineFeed(pipeline, path.name)

    async def run(self) -> None:
        async for batch in self._tailer.follow(self._stop):
            self._lines.feed_items(batch)


class DeviceFeed(LiveFeed):
    """A live container log mirrored by a device backend (`anemon watch --device KIND`)."""

    TELEMETRY_S = 10.0
    """How often host telemetry (battery, temperature, disk) is read."""

    def __init__(
        self, device: Device, bundle: str, log: str, mirror: Path, pipeline: Pipeline
    ) -> None:
        super().__init__(f"{device.kind}: {bundle}/{log}", pipeline)
        self.device = device
        self._where = (bundle, log, mirror)
        self._lines = LineFeed(pipeline, f"{device.kind}:{log}")

    async def run(self) -> None:
        info = await self.device.connect()
        self.title = f"{info.name} ({info.kind}): {self._where[0]}"
        tasks = [asyncio.create_task(self._follow()), asyncio.create_task(self._telemetry())]
        try:
            await self._stop.wait()
            await asyncio.sleep(0)  # let a batch already read reach the pipeline
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.device.close()
        for task in tasks:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]

    async def _follow(self) -> None:
        try:
            async for batch in self.device.follow_log(*self._where):
                self._lines.feed_items(batch)
        finally:
            self._stop.set()

    async def _telemetry(self) -> None:
        while True:
            await read_telemetry(self.pipeline, self.device, self.device.kind)
            await asyncio.sleep(self.TELEMETRY_S)


class ConsoleFeed(DeviceFeed):
    """The app's console lines (os_trace) instead of its mirrored log: live only, so lines the
    app printed while the phone was unreachable are lost (the mirrored log has them)."""

    def __init__(self, device: Device, bundle: str, process: str, pipeline: Pipeline) -> None:
        if not isinstance(device, ConsoleSource):
            raise AnemonError(f"the {device.kind} backend has no console (os_trace)")
        LiveFeed.__init__(self, f"{device.kind}: {bundle} console:{process}", pipeline)
        self.console: ConsoleSource = device
        self.device = device
        self._where = (bundle, process, None)
        self._lines = LineFeed(pipeline, f"{device.kind}:console:{process}")

    async def _follow(self) -> None:
        try:
            async for line in self.console.console(self._where[1]):
                self._lines.feed((line,))
        finally:
            self._stop.set()
