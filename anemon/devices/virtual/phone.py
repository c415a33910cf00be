"""The virtual iPhone: a simulated phone reachable by the real pymobiledevice3 client.

One loopback TCP listener (127.0.0.1, an ephemeral port) speaks usbmuxd; everything else
(lockdownd, diagnostics_relay, house_arrest/AFC, os_trace_relay, the crash report services,
installation_proxy, and DVT on a phone below iOS 17 with the developer disk image:
`developer_image=True`) is reached through usbmuxd `Connect`, as on a Mac. Point
`USBMUXD_SOCKET_ADDRESS` at `usbmux_address` (or put several phones, with distinct UDIDs,
behind one `usbmuxd.VirtualUsbmuxd`). `detach()` is an unplug: the phone leaves the device
list and every socket to it is cut; `attach()` plugs it back in.

The simulator (`anemon.simulator.SimulatedIPhone` or anything `SimLike`) is driven by whoever
owns it: the servers only read it, from the event loop they run in. Each service is given what
it needs (the simulator and plain values, or the narrow `Phone` protocol lockdownd and usbmuxd
declare), never this whole object: the services sit below it.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from typing import Any

from anemon.devices.virtual import (
    afc,
    crash_reports,
    diagnostics,
    dvt,
    installation_proxy,
    os_trace,
)
from anemon.devices.virtual.afc import AfcStats, HouseArrest
from anemon.devices.virtual.crash_reports import CrashReports
from anemon.devices.virtual.diagnostics import DiagnosticsRelay, SystemLoadData
from anemon.devices.virtual.installation_proxy import InstallationProxy
from anemon.devices.virtual.lockdownd import LOCKDOWN_PORT, Lockdownd
from anemon.devices.virtual.os_trace import OsTraceRelay
from anemon.devices.virtual.server import Handler, LoopbackServer, cut
from anemon.devices.virtual.simlike import SimLike
from anemon.devices.virtual.usbmuxd import Usbmuxd

DEFAULT_UDID = "00008120-000A11CE5EED0001"
FIRST_SERVICE_PORT = 49152
log = logging.getLogger(__name__)


class VirtualIPhone(LoopbackServer):
    """A SimulatedIPhone as usbmuxd + lockdownd + diagnostics + house_arrest/AFC + os_trace +
    the crash report services + installation_proxy (+ DVT with the developer disk image)."""

    _name = "the virtual iPhone"
    _log = log
    _log_label = "virtual iPhone"

    def __init__(
        self,
        sim: SimLike,
        bundles: Iterable[str] = (),
        *,
        udid: str = DEFAULT_UDID,
        name: str = "Virtual iPhone",
        product_version: str = "18.5",
        product_type: str = "iPhone16,1",
        build_version: str = "22F76",
        console_log: str = "Documents/sustain/bench.log",
        console_process: str = "BenchApp",
        console_poll_s: float = 0.05,
        system_load_s: float | None = None,
        developer_image: bool = False,
        graphics_s: float = 1.0,
    ) -> None:
        super().__init__()
        self.sim = sim
        self.bundles = frozenset(bundles)
        self.udid = udid
        self.name = name
        self.product_version = product_version
        self.product_type = product_type
        self.build_version = build_version
        self.device_id = 1
        self.system_buid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"anemon-virtual:{udid}")).upper()
        self.attached = True
        self.service_starts: Counter[str] = Counter()
        """How many times each service was started (over usbmuxd and the network)."""
        self._host_id = str(uuid.uuid5(uuid.NAMESPACE_URL, "anemon-virtual-host")).upper()
        self._born_ns = time.time_ns()
        self._ports: dict[int, Handler] = {}
        self._next_port = FIRST_SERVICE_PORT
        self._device_writers: set[asyncio.StreamWriter] = set()
        self._usbmuxd = Usbmuxd([self], self.system_buid)
        self._lockdownd = Lockdownd(self)
        house_arrest = HouseArrest(sim, self.bundles, product_type, self.sim_mtime_ns)
        self.afc_stats: AfcStats = house_arrest.stats
        # The app "logs" each line of `console_log` (in every bundle) as process `console_process`.
        self.os_trace = OsTraceRelay(sim, self.bundles, self.sim_mtime_ns, log=console_log,
                                     process=console_process, poll_s=console_poll_s)  # fmt: skip
        # with system_load_s: PowerTelemetryData, refreshed every system_load_s
        system_load = SystemLoadData(system_load_s) if system_load_s else None
        relay = DiagnosticsRelay(sim.telemetry, lambda: sim.now, system_load)
        reports = CrashReports(house_arrest)
        self._services: dict[str, Handler] = {
            diagnostics.SERVICE_NAME: relay.serve,
            afc.SERVICE_NAME: house_arrest.serve,
            os_trace.SERVICE_NAME: self.os_trace.serve,
            crash_reports.COPY_MOBILE: reports.copy_mobile,
            crash_reports.MOVER: reports.mover,
            installation_proxy.SERVICE_NAME: InstallationProxy(self.bundles, console_process).serve,
        }
        self.instruments: dvt.Instruments | None = None
        """DVT, when the developer disk image is mounted: a lockdown service on iOS 14-16;
        from 17 on only reachable through an RSD tunnel (`instruments.serve` behind it)."""
        if developer_image:
            if not isinstance(sim, dvt.Processes):
                raise TypeError("DVT needs a simulator that launches apps (SimulatedIPhone)")
            self.instruments = dvt.Instruments(
                sim, self.bundles, self.sim_time_s, poll_s=console_poll_s, graphics_s=graphics_s
            )
            if _ios_major(product_version) < 17:
                self._services[dvt.SERVICE_NAME] = self.instruments.serve

    # -- life cycle ---------------------------------------------------------------------------

    @property
    def usbmux_address(self) -> str:
        """`127.0.0.1:PORT`, the value for `USBMUXD_SOCKET_ADDRESS`."""
        return self.address

    def detach(self) -> None:
        """Unplug: stop listing the device and cut every connection to it."""
        self.attached = False
        self._ports.clear()
        for writer in list(self._device_writers):
            cut(writer)

    def attach(self) -> None:
        self.attached = True

    # -- for the servers ----------------------------------------------------------------------

    def device_values(self) -> dict[str, Any]:
        return {
            "UniqueDeviceID": self.udid,
            "DeviceName": self.name,
            "ProductVersion": self.product_version,
            "ProductType": self.product_type,
            "BuildVersion": self.build_version,
            "DeviceClass": "iPhone",
            "ProductName": "iPhone OS",
            "HardwareModel": "D83AP",
            "UniqueChipID": int(self.udid.split("-")[-1], 16) if "-" in self.udid else 1,
            "SerialNumber": "VIRTUAL0001",
            "CPUArchitecture": "arm64e",
        }

    def pair_record(self) -> dict[str, Any]:
        """Enough of a pair record for a session without TLS."""
        return {"HostID": self._host_id, "SystemBUID": self.system_buid}

    def sim_mtime_ns(self) -> int:
        return self._born_ns + int(float(getattr(self.sim, "now", 0.0)) * 1e9)

    def sim_time_s(self) -> float:
        """The phone's clock in Unix seconds (it started when the phone was made)."""
        return self.sim_mtime_ns() / 1e9

    def service_handler(self, name: str) -> Handler | None:
        return self._services.get(name)

    def open_port(self, handler: Handler) -> int:
        """A one-shot device port for a started service."""
        port = self._next_port
        self._next_port = FIRST_SERVICE_PORT + (port + 1 - FIRST_SERVICE_PORT) % 16000
        self._ports[port] = handler
        return port

    def take_port(self, port: int) -> Handler | None:
        if port == LOCKDOWN_PORT:
            return self._lockdownd.serve
        return self._ports.pop(port, None)

    def track(self, writer: asyncio.StreamWriter) -> None:
        self._device_writers.add(writer)

    def untrack(self, writer: asyncio.StreamWriter) -> None:
        """A connection to the device is over (whichever usbmuxd served it)."""
        self._device_writers.discard(writer)

    # -- connections --------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._usbmuxd.serve(reader, writer)

    def _forget(self, writer: asyncio.StreamWriter) -> None:
        self.untrack(writer)


def _ios_major(version: str) -> int:
    head = version.split(".")[0]
    return int(head) if head.isdigit() else 0
