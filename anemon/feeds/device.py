"""Live feeds read from a phone by a device backend (`anemon watch --device KIND`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from anemon.devices import reads_power
from anemon.devices.base import AppFinder, ConsoleSource, Device, PowerSource
from anemon.errors import AnemonError
from anemon.feeds.app import WatchedApp
from anemon.feeds.live import LiveFeed, until_stopped
from anemon.pipeline import LineFeed, Pipeline, poll_power, read_telemetry

TELEMETRY_S = 10.0
"""How often host telemetry (battery, temperature, disk) is read; device power is read every
`power_s` of the device, where the backend can (a PowerSource)."""


class OnDevice(LiveFeed):
    """What a feed read from a device shares: connect, read host telemetry and device power
    beside the app's lines (`follow`, in the subclass) and, where the backend can find the app
    (an `AppFinder`) and `app_grace_s` is given, watch the app (feeds/app.py), until stopped
    or the lines end, let go of the device."""

    def __init__(
        self, device: Device, bundle: str, title: str, source: str, pipeline: Pipeline, *,
        app_grace_s: float | None = None,
    ) -> None:  # fmt: skip
        super().__init__(title, pipeline)
        self.device = device
        self.reads_power = reads_power(device.kind)
        self.bundle = bundle
        self._lines = LineFeed(pipeline, source)
        self.app: WatchedApp | None = None
        """The app's process, sampled and followed (None: not watched)."""
        if isinstance(device, AppFinder) and app_grace_s is not None:
            self.app = WatchedApp(device, bundle, pipeline, kind=device.kind, log_source=source,
                                  grace_s=app_grace_s)  # fmt: skip

    async def run(self) -> None:
        try:
            # connecting ends on a stop too (a signal while a daemon does not answer)
            await until_stopped(self._stop, self._connected())
        finally:
            await self.device.close()

    async def _connected(self) -> None:
        info = self.device_info = await self.device.connect()
        self.title = f"{info.name} ({info.kind}): {self.bundle}"
        work = [self.follow(), self._telemetry()]
        if isinstance(self.device, PowerSource):  # poll_power would return at once
            work.append(poll_power(self.pipeline, self.device))
        if self.app is not None:
            work.append(self.app.run())
        await until_stopped(self._stop, *work)

    async def follow(self) -> None:
        """Feed the app's lines to the pipeline until they end."""
        raise NotImplementedError

    async def _telemetry(self) -> None:
        while True:
            await read_telemetry(self.pipeline, self.device, self.device.kind)
            await asyncio.sleep(TELEMETRY_S)


class DeviceFeed(OnDevice):
    """The app's log in its container, mirrored to `mirror` by the backend."""

    def __init__(
        self, device: Device, bundle: str, log: str, mirror: Path, pipeline: Pipeline, *,
        app_grace_s: float | None = None,
    ) -> None:  # fmt: skip
        super().__init__(device, bundle, f"{device.kind}: {bundle}/{log}",
                         f"{device.kind}:{log}", pipeline, app_grace_s=app_grace_s)  # fmt: skip
        self.log = log
        self.mirror = mirror

    async def follow(self) -> None:
        async for batch in self.device.follow_log(self.bundle, self.log, self.mirror):
            self._lines.feed_items(batch)


class ConsoleFeed(OnDevice):
    """The app's console lines (os_trace) instead of its mirrored log: live only, so lines the
    app printed while the phone was unreachable are lost (the mirrored log has them)."""

    def __init__(
        self, device: Device, bundle: str, process: str, pipeline: Pipeline, *,
        app_grace_s: float | None = None,
    ) -> None:  # fmt: skip
        if not isinstance(device, ConsoleSource):
            raise AnemonError(f"the {device.kind} backend has no console (os_trace)")
        super().__init__(device, bundle, f"{device.kind}: {bundle} console:{process}",
                         f"{device.kind}:console:{process}", pipeline,
                         app_grace_s=app_grace_s)  # fmt: skip
        self.console: ConsoleSource = device
        self.process = process

    async def follow(self) -> None:
        async for line in self.console.console(self.process):
            self._lines.feed((line,))
