"""The pymobiledevice3 backend: usbmux/lockdown telemetry, house_arrest/AFC mirroring, DVT launch,
the app's console lines (os_trace).

pymobiledevice3 (pinned 11.45.0) is imported inside functions only: importing this module costs
nothing, so `anemon --help`, replay and the simulator stay fast. Everything runs in the
caller's event loop. `USBMUXD_SOCKET_ADDRESS` (or `usbmux_address=`) selects another usbmuxd,
e.g. the virtual iPhone's.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anemon.devices import pmd3_dvt
from anemon.devices.base import ConsoleSource, DeviceError, DeviceInfo, Installer, Telemetry
from anemon.devices.pmd3_console import console_lines
from anemon.devices.pmd3_errors import PairingNeeded, translate
from anemon.devices.pmd3_follow import LogFollower
from anemon.sources.items import LogItem

KIND = "pymobiledevice3"
GB = 1_000_000_000
DISK_USAGE = "com.apple.disk_usage"


@dataclass(frozen=True, slots=True)
class DeviceReport:
    """One attached device as `anemon devices` shows it."""

    info: DeviceInfo
    telemetry: Telemetry | None
    error: str = ""
    """Why telemetry could not be read (locked, not paired, ...), or empty."""


class Pmd3Device(Installer, ConsoleSource):
    """One iPhone through usbmuxd (the first attached one unless `udid` is given)."""

    kind = KIND

    def __init__(
        self,
        udid: str | None = None,
        *,
        usbmux_address: str | None = None,
        poll_s: float = 2.0,
        reconnect_s: float = 2.0,
        pairing_records_cache_folder: Path | None = None,
    ) -> None:
        self.udid = udid
        self.usbmux_address = usbmux_address
        self.poll_s = poll_s
        self.reconnect_s = reconnect_s
        self._pair_dir = pairing_records_cache_folder
        self._lockdown: Any = None
        self._rsd: Any = None
        self._close_rsd: pmd3_dvt.Closer | None = None
        self.product_version = ""

    # -- connection ---------------------------------------------------------------------------

    async def lockdown(self) -> Any:
        """The cached lockdown client, (re)connected on demand."""
        if self._lockdown is None:
            self._lockdown = await self.open_lockdown()
        return self._lockdown

    async def open_lockdown(self) -> Any:
        """A new lockdown client for this device (never waits on the Trust dialog)."""
        from pymobiledevice3.lockdown import create_using_usbmux

        try:
            lockdown = await create_using_usbmux(
                serial=self.udid,
                autopair=False,
                usbmux_address=self.usbmux_address,
                pairing_records_cache_folder=self._pair_dir,
            )
        except Exception as e:
            raise self.error(e) from e
        if not lockdown.paired:
            await lockdown.close()
            raise PairingNeeded(
                "this computer is not paired with the iPhone: unlock it, tap Trust, or run "
                "`pymobiledevice3 lockdown pair`"
            )
        self.udid = self.udid or lockdown.udid  # reconnect to this phone, not another one
        self.product_version = lockdown.product_version
        return lockdown

    async def drop(self) -> None:
        """Forget the lockdown client (after an unplug): the next call reconnects."""
        lockdown, self._lockdown = self._lockdown, None
        if lockdown is not None:
            with contextlib.suppress(Exception):
                await lockdown.close()

    def error(self, e: BaseException, bundle: str | None = None) -> DeviceError:
        return translate(
            e,
            address=self.usbmux_address,
            udid=self.udid,
            bundle=bundle,
            product_version=self.product_version,
        )

    async def connect(self) -> DeviceInfo:
        return _info(await self.lockdown())

    async def close(self) -> None:
        await self.drop()
        if self._close_rsd is not None:
            close, self._close_rsd, self._rsd = self._close_rsd, None, None
            with contextlib.suppress(Exception):
                await close()

    # -- telemetry ----------------------------------------------------------------------------

    async def telemetry(self) -> Telemetry | None:
        """Battery (IORegistry) and disk (lockdown domain); never thermal state."""
        from pymobiledevice3.services.diagnostics import DiagnosticsService

        lockdown = await self.lockdown()
        try:
            async with DiagnosticsService(lockdown) as diagnostics:
                battery = await diagnostics.get_battery() or {}
            disk = await lockdown.get_value(domain=DISK_USAGE) or {}
        except Exception as e:
            await self.drop()
            raise self.error(e) from e
        return telemetry_from(battery, disk)

    # -- the app ------------------------------------------------------------------------------

    async def install(self, app: Path) -> None:
        from anemon.devices.pmd3_install import install_in_subprocess

        await self.lockdown()  # fail here, with the usual message, when nothing is attached
        await install_in_subprocess(str(self.udid), app, self.usbmux_address)

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        provider = await self._developer_provider()
        return await pmd3_dvt.launch(provider, bundle, env, self.product_version)

    async def terminate(self, pid: int) -> None:
        provider = await self._developer_provider()
        await pmd3_dvt.kill(provider, pid, self.product_version)

    async def _developer_provider(self) -> Any:
        """Lockdown before iOS 17; an RSD tunnel (kept open until `close`) from 17 on."""
        lockdown = await self.lockdown()
        if _major(self.product_version) < 17:
            return lockdown
        if self._rsd is None:
            self._rsd, self._close_rsd = await pmd3_dvt.open_rsd(str(self.udid))
        return self._rsd

    def follow_log(self, bundle: str, path: str, mirror: Path) -> AsyncIterator[list[LogItem]]:
        return LogFollower(self, bundle, path, mirror).run()

    def console(self, process: str) -> AsyncIterator[str]:
        """The lines the app's process (its executable's name) logs from now on (os_trace)."""
        return console_lines(self, process)


# -- listing ----------------------------------------------------------------------------------


async def list_attached(usbmux_address: str | None = None) -> list[DeviceReport]:
    """Every iPhone usbmuxd lists, with what the host can read from it."""
    from pymobiledevice3.usbmux import list_devices

    try:
        devices = await list_devices(usbmux_address=usbmux_address)
    except Exception as e:
        raise translate(e, address=usbmux_address) from e
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


def telemetry_from(battery: Mapping[str, Any], disk: Mapping[str, Any]) -> Telemetry:
    """IOPMPowerSource + com.apple.disk_usage as Telemetry; a missing key stays None."""
    temperature = _number(battery.get("Temperature"))
    free = _number(disk.get("AmountDataAvailable", disk.get("TotalDataAvailable")))
    total = _number(disk.get("TotalDiskCapacity", disk.get("TotalDataCapacity")))
    return Telemetry(
        battery=_number(battery.get("CurrentCapacity")),
        charging=_flag(battery.get("IsCharging")),
        plugged=_flag(battery.get("ExternalConnected")),
        temperature_c=None if temperature is None else temperature / 100,
        free_gb=None if free is None else free / GB,
        total_gb=None if total is None else total / GB,
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _flag(value: Any) -> bool | None:
    return bool(value) if isinstance(value, bool | int) else None


def _major(version: str) -> int:
    try:
        return int(version.split(".")[0])
    except ValueError:
        return 0
