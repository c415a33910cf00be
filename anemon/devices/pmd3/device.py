"""The pymobiledevice3 backend: usbmux/lockdown telemetry and device power (IOPMPowerSource),
house_arrest/AFC mirroring, the app's console lines (os_trace), and over the run's one DVT
connection (session.py) launch and kill, the app's exits, its CPU, memory and GPU, the crash
reports naming it (watch.py) and a held condition; before a run, the reports naming the app
since the last session (crashes.py), which knows the app by its executable's name
(installation_proxy, apps.py).

pymobiledevice3 (11.45 up to 12; CI tests 11.45.0) is imported inside functions only:
importing this package costs nothing, so `anemon --help`, replay and the simulator stay fast.
Everything runs in the caller's event loop. The device's connection is one `Pmd3Connection`
(connection.py), which follow.py, console.py, power.py and the DVT session use.
`USBMUXD_SOCKET_ADDRESS` (or `usbmux_address=`) selects another usbmuxd, e.g. the virtual
iPhone's; `connect="network"` and `host=` reach the phone over the network instead (lockdown
over TCP), so the cable can come out.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anemon.devices.base import (
    CONNECTIONS,
    AppFinder,
    AppNews,
    AppWatcher,
    Conditioner,
    ConsoleSource,
    CrashReports,
    DeviceError,
    DeviceInfo,
    DeviceReport,
    DeviceSpec,
    Inspector,
    Installer,
    PowerSource,
    Telemetry,
)
from anemon.devices.pmd3.apps import Executables
from anemon.devices.pmd3.connection import Pmd3Connection, list_devices
from anemon.devices.pmd3.console import console_lines
from anemon.devices.pmd3.crashes import app_reports
from anemon.devices.pmd3.errors import AppNotInstalled
from anemon.devices.pmd3.follow import LogFollower
from anemon.devices.pmd3.power import PowerReader, power_from
from anemon.devices.pmd3.session import DvtSession
from anemon.devices.pmd3.watch import SILENT_S, AppWatch, Pace, Warnings
from anemon.errors import AnemonError
from anemon.sources.items import LogItem

if TYPE_CHECKING:
    from anemon.clock import Clock

KIND = "pymobiledevice3"
GB = 1_000_000_000
DISK_USAGE = "com.apple.disk_usage"


class Pmd3Device(
    Installer,
    ConsoleSource,
    PowerSource,
    Inspector,
    AppWatcher,
    AppFinder,
    Conditioner,
    CrashReports,
):
    """One iPhone through usbmuxd (the first attached one unless `udid` is given), or over the
    network at `host` (`connect="network"`)."""

    kind = KIND

    def __init__(
        self,
        udid: str | None = None,
        *,
        usbmux_address: str | None = None,
        connect: str = "usb",
        host: str = "",
        poll_s: float = 2.0,
        power_s: float = 1.0,
        process_s: float = 1.0,
        silent_s: float = SILENT_S,
        reconnect_s: float = 2.0,
        pairing_records_cache_folder: Path | None = None,
    ) -> None:
        if connect not in CONNECTIONS:
            raise ValueError(f"connect is usb or network, not {connect!r}")
        if connect == "network" and not host:
            raise ValueError("connect = network needs the iPhone's address (host)")
        self.connection = Pmd3Connection(
            udid,
            usbmux_address=usbmux_address,
            host=host if connect == "network" else None,
            pairing_records_cache_folder=pairing_records_cache_folder,
        )
        self.poll_s = poll_s
        self.power_s = power_s
        self.process_s = process_s
        """How often sysmontap samples the app (plan `device.process_s`)."""
        self.silent_s = silent_s
        """sysmontap silent this long is a gap (real seconds)."""
        self.reconnect_s = reconnect_s
        self.power_reader = PowerReader(self.connection)
        """IOPMPowerSource over one diagnostics connection, shared by `power` and `telemetry`."""
        self.dvt = DvtSession(self.connection)
        """The run's one DVT connection: launch, kill, exits, samples, a held condition."""
        self.warnings = Warnings()
        """What the watch dropped (absurd samples, malformed rows, reports not JSON)."""
        self.executables = Executables(self.connection)
        """The apps' executable names (installation_proxy), which jetsam reports name them by."""

    async def connect(self) -> DeviceInfo:
        return _info(await self.connection.lockdown())

    async def close(self) -> None:
        await self.dvt.close()
        await self.power_reader.close()
        await self.connection.close()

    # -- telemetry ----------------------------------------------------------------------------

    @property
    def power_warnings(self) -> int:
        """Absurd power readings dropped so far (the reader counts them)."""
        return self.power_reader.warnings

    async def power(self) -> Telemetry | None:
        """IOPMPowerSource now: power, charging, plugged, battery, battery temperature."""
        return (await self.power_reader.read()).telemetry

    async def telemetry(self) -> Telemetry | None:
        """Battery and power (IORegistry) and disk (lockdown domain); never thermal state."""
        lockdown = await self.connection.lockdown()
        battery = await self.power_reader.registry()
        try:
            disk = await lockdown.get_value(domain=DISK_USAGE) or {}
        except Exception as e:
            await self.connection.drop()
            raise self.connection.error(e) from e
        return telemetry_from(self.power_reader.observe(power_from(battery)).telemetry, disk)

    # -- the app ------------------------------------------------------------------------------

    async def install(self, app: Path) -> None:
        from anemon.devices.pmd3.install import install_in_subprocess

        connection = self.connection
        await connection.lockdown()  # fail here, with the usual message, when nothing is attached
        await install_in_subprocess(str(connection.udid), app, connection.usbmux_address)

    async def app_installed(self, bundle: str) -> bool | None:
        """Whether house_arrest vends the app's container: the way the log is read, so a
        "yes" also says the app is development-signed (Low Power Mode: not readable)."""
        from pymobiledevice3.services.house_arrest import HouseArrestService

        lockdown = await self.connection.lockdown()
        try:
            afc = await HouseArrestService.create(lockdown, bundle)
        except Exception as e:
            error = self.connection.error(e, bundle=bundle)
            if isinstance(error, AppNotInstalled):
                return False
            raise error from e
        with contextlib.suppress(Exception):
            await afc.aclose()
        return True

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        return await self.dvt.launch(bundle, env)

    async def terminate(self, pid: int) -> None:
        await self.dvt.kill(pid)

    @property
    def watch_warnings(self) -> int:
        return self.warnings.count

    def watch(self, bundle: str) -> AsyncIterator[AppNews]:
        """The app's exits, samples every `process_s`, crash reports, over the DVT session."""
        return self._watch(bundle, finds=False)

    def watch_running(self, bundle: str) -> AsyncIterator[AppNews]:
        """The same of the app someone else launched, found by `bundle` (a watch)."""
        return self._watch(bundle, finds=True)

    def _watch(self, bundle: str, *, finds: bool) -> AsyncIterator[AppNews]:
        pace = Pace(self.process_s, self.poll_s, self.reconnect_s, self.silent_s)
        watch = AppWatch(self.dvt, bundle, pace, self.warnings, self.executables, finds=finds)
        return watch.news()

    async def reports(self, bundle: str, since: float | None = None) -> list[tuple[str, float]]:
        """The CrashReporter folder's reports naming the app, written after `since`."""
        executable = await self.executables.name(bundle)
        provider = await self.connection.developer_provider()
        try:
            return await app_reports(provider, bundle, executable, since)
        except Exception as e:
            raise self.connection.error(e, bundle=bundle) from e

    async def hold_condition(self, profile: str) -> str:
        await self.dvt.hold(profile)
        return f"condition {profile} forced (DVT ConditionInducer), held for the run"

    async def release_condition(self) -> str:
        held = self.dvt.condition
        return f"condition {held} cleared" if await self.dvt.release() else ""

    def follow_log(self, bundle: str, path: str, mirror: Path) -> AsyncIterator[list[LogItem]]:
        follower = LogFollower(
            self.connection, bundle, path, mirror, poll_s=self.poll_s, reconnect_s=self.reconnect_s
        )
        return follower.run()

    def console(self, process: str) -> AsyncIterator[str]:
        """The lines the app's process (its executable's name) logs from now on (os_trace)."""
        return console_lines(self.connection, process)


def make_device(spec: DeviceSpec, clock: Clock) -> Pmd3Device:
    """The phone `spec` names, through usbmuxd or (`connect = "network"`) at `spec.host`; it
    keeps its own time (`clock` is not needed). An empty host is a usage error (AnemonError):
    finding the phone by Bonjour is not done."""
    if spec.connect == "network" and not spec.host:
        raise AnemonError(
            'device.connect = "network" needs device.host (or --host): the iPhone\'s '
            "address on the network, HOST or HOST:PORT"
        )
    return Pmd3Device(spec.id or None, connect=spec.connect, host=spec.host, poll_s=spec.poll_s,
                      power_s=spec.power_s, process_s=spec.process_s)  # fmt: skip


# -- listing ----------------------------------------------------------------------------------


async def list_attached(usbmux_address: str | None = None) -> list[DeviceReport]:
    """Every iPhone usbmuxd lists, with what the host can read from it."""
    devices = await list_devices(usbmux_address)
    reports = []
    for mux in devices:
        if mux.is_usb or not any(d.serial == mux.serial and d.is_usb for d in devices):
            reports.append(await _report(mux.serial, usbmux_address))
    return reports


async def _report(udid: str, usbmux_address: str | None) -> DeviceReport:
    device = Pmd3Device(udid, usbmux_address=usbmux_address)
    try:
        info = await device.connect()
    except DeviceError as e:
        return DeviceReport(DeviceInfo(KIND, udid, name="?"), None, str(e))
    try:
        return DeviceReport(info, await device.telemetry())
    except DeviceError as e:
        return DeviceReport(info, None, str(e))
    finally:
        await device.close()


# -- payloads to dataclasses --------------------------------------------------------------------


def _info(lockdown: Any) -> DeviceInfo:
    values = lockdown.all_values
    return DeviceInfo(
        kind=KIND,
        udid=str(lockdown.udid or lockdown.identifier or ""),
        name=str(values.get("DeviceName", "iPhone")),
        os=str(values.get("ProductVersion", "")),
        model=str(values.get("ProductType", "")),
    )


def telemetry_from(power: Telemetry, disk: Mapping[str, Any]) -> Telemetry:
    """The IOPMPowerSource reading (power.py's `power_from`, an absurd reading dropped but not
    counted here) + com.apple.disk_usage as Telemetry; a missing key stays None."""
    free = _number(disk.get("AmountDataAvailable", disk.get("TotalDataAvailable")))
    total = _number(disk.get("TotalDiskCapacity", disk.get("TotalDataCapacity")))
    return dataclasses.replace(
        power,
        free_gb=None if free is None else free / GB,
        total_gb=None if total is None else total / GB,
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
