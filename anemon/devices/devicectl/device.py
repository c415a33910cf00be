"""The `devicectl` backend: a real iPhone through Apple's `xcrun devicectl` (Xcode 15+).

Its connection is one `Devicectl` (runner.py): the xcrun path, the target device and the JSON
documents' directory. devicectl has no telemetry and no byte-range reads, so the container log
is copied whole every `poll_s` into a local mirror, whose new lines the MirrorTailer reads
(devices/pulled.py; docs/devices.md, "xcrun devicectl").
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.devices.base import (
    DeviceError,
    DeviceInfo,
    DeviceReport,
    DeviceSpec,
    Inspector,
    Installer,
    Telemetry,
)
from anemon.devices.devicectl.errors import ContainerFileMissing
from anemon.devices.devicectl.json import (
    CoreDevice,
    Document,
    LockState,
    RunningProcess,
    parse_app_bundles,
    parse_installed_bundles,
    parse_launch_pid,
    parse_lock_state,
    parse_processes,
)
from anemon.devices.devicectl.runner import CALL_TIMEOUT_S, Call, Devicectl
from anemon.devices.pulled import follow_pulled
from anemon.errors import AnemonError
from anemon.sources.items import LogItem

if TYPE_CHECKING:
    from anemon.clock import Clock

INSTALL_TIMEOUT_S = 3600.0  # a multi-GB app over Wi-Fi takes many minutes
ANSWERS_AGAIN = "the device answers again"


class DevicectlDevice(Installer, Inspector):
    """A real iPhone driven through `xcrun devicectl`."""

    kind = "devicectl"

    def __init__(
        self,
        device_id: str = "",
        *,
        poll_s: float = 2.0,
        xcrun: str = "xcrun",
        call_timeout_s: float = CALL_TIMEOUT_S,
        install_timeout_s: float = INSTALL_TIMEOUT_S,
    ) -> None:
        self.devicectl = Devicectl(device_id, xcrun=xcrun, call_timeout_s=call_timeout_s)
        self._poll_s = poll_s
        self._install_timeout_s = install_timeout_s
        self._disturbed = ""  # "an install" / "a kill" since the last successful launch
        self.installed: list[str] = []
        """Bundle ids of the last install."""

    # -- the Device protocol -------------------------------------------------------------

    async def connect(self) -> DeviceInfo:
        device = await self.devicectl.connect()
        return DeviceInfo(
            kind=self.kind,
            udid=device.udid or device.identifier,
            name=device.name,
            os=device.os_version,
            model=device.marketing_name or device.product_type,
        )

    async def install(self, app: Path) -> None:
        call = Call(("device", "install", "app"), await self.devicectl.target(), (str(app),))
        document = await self._run(call, timeout_s=self._install_timeout_s)
        self.installed = parse_installed_bundles(document)
        self._disturbed = "an install"

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        """Launch `bundle` with `env` (never `--console`: console launches get refused)."""
        options = (
            *await self.devicectl.target(),
            "--terminate-existing",
            "--environment-variables",
            json.dumps(dict(env), ensure_ascii=False),
        )
        call = Call(("device", "process", "launch"), options, (bundle,))
        pid = parse_launch_pid(await self._run(call, bundle=bundle))
        self._disturbed = ""
        return pid

    async def terminate(self, pid: int) -> None:
        """Stop `pid`; a process that already exited is not an error."""
        options = (*await self.devicectl.target(), "--pid", str(pid))
        self._disturbed = "a kill"
        try:
            await self._run(Call(("device", "process", "terminate"), options))
        except DeviceError:
            # The app exits on its own after END: only fail if it is in fact still running.
            if any(process.pid == pid for process in await self.processes()):
                raise

    def follow_log(self, bundle: str, path: str, mirror: Path) -> AsyncIterator[list[LogItem]]:
        """Every `poll_s`: copy the container file into `mirror`, then yield its new lines.

        A file not there yet (the app has not started) is waited for silently. A copy that
        fails for any other reason (the phone unplugged, say) opens a LogGap once, closed by
        the next copy that works: the log on the phone survives and is read on reconnect.
        """
        mirror = Path(mirror)

        async def pull() -> bool:
            try:
                await self.copy_from(bundle, path, mirror)
            except ContainerFileMissing:
                return False
            return True

        return follow_pulled(pull, mirror, poll_s=self._poll_s, back=ANSWERS_AGAIN)

    async def telemetry(self) -> Telemetry | None:
        return None  # devicectl reads no battery, disk or temperature

    async def close(self) -> None:
        await self.devicectl.close()

    # -- more devicectl capabilities -------------------------------------------------------

    async def list_devices(self) -> list[CoreDevice]:
        """The physical devices CoreDevice knows (simulated ones filtered out)."""
        return await self.devicectl.list_devices()

    async def copy_from(self, bundle: str, source: str, destination: Path) -> None:
        """Copy `source` of the app's data container to `destination`, replacing it whole.

        devicectl may not overwrite an existing file, and a reader must never see half a copy:
        copy to a fresh name beside it, then rename into place.
        """
        destination = Path(destination)
        destination.parent.mkdir(parents=True, exist_ok=True)
        serial = self.devicectl.serial()
        part = destination.with_name(f".{destination.name}.{os.getpid()}.{serial}")
        options = (
            *await self.devicectl.target(),
            "--domain-type",
            "appDataContainer",
            "--domain-identifier",
            bundle,
            "--source",
            source,
            "--destination",
            str(part),
        )
        try:
            await self._run(Call(("device", "copy", "from"), options), bundle=bundle)
            os.replace(part, destination)
        finally:
            with contextlib.suppress(FileNotFoundError):
                part.unlink()

    async def processes(self) -> list[RunningProcess]:
        call = Call(("device", "info", "processes"), await self.devicectl.target())
        return parse_processes(await self._run(call))

    async def app_installed(self, bundle: str) -> bool | None:
        """`device info apps --bundle-id`: listed or not (Low Power Mode: not readable)."""
        options = (*await self.devicectl.target(), "--bundle-id", bundle)
        document = await self._run(Call(("device", "info", "apps"), options))
        return bundle in parse_app_bundles(document)

    async def lock_state(self) -> LockState:
        call = Call(("device", "info", "lockState"), await self.devicectl.target())
        return parse_lock_state(await self._run(call))

    async def _run(self, call: Call, *, bundle: str = "", timeout_s: float = 0.0) -> Document:
        """One call, its errors told what happened since the last launch."""
        return await self.devicectl.run(
            call, bundle=bundle, after=self._disturbed, timeout_s=timeout_s
        )


NO_READINGS = "devicectl reads no battery, temperature, disk or power"


def make_device(spec: DeviceSpec, clock: Clock) -> DevicectlDevice:
    """The phone `spec` names (devicectl finds networked phones itself: `connect` and `host`
    are not used, nor `clock`). A condition is refused (an AnemonError, one line)."""
    if spec.condition:
        raise AnemonError(
            f'device.condition = "{spec.condition}" needs DVT\'s ConditionInducer, which '
            "devicectl has not: run it with --device pymobiledevice3, or drop the key"
        )
    return DevicectlDevice(spec.id, poll_s=spec.poll_s)


async def list_attached() -> list[DeviceReport]:
    """The physical devices CoreDevice knows; devicectl reads none of their readings."""
    lister = Devicectl()
    try:
        devices = await lister.list_devices()
    finally:
        await lister.close()
    return [
        DeviceReport(DeviceInfo("devicectl", d.udid or d.identifier, d.name, d.os_version,
                                d.product_type), None, NO_READINGS)
        for d in devices
    ]  # fmt: skip
