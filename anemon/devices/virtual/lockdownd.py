"""lockdownd (device port 62078): device values, a session without TLS, and StartService.

The session is answered without `EnableSessionSSL`, so the client never needs the pair
record's certificates: any record with a `HostID` pairs. Through usbmuxd (`Lockdownd`, reached
by a `Connect` to port 62078) a started service gets a one-shot virtual port that the client
then reaches through usbmuxd's Connect. Over the network (`NetworkLockdownd`, what a paired
phone with Wi-Fi connections on serves) lockdownd listens on a loopback TCP port of its own and
each started service on a one-shot loopback TCP port, which pymobiledevice3's TCP lockdown
client connects to directly. Every StartService is counted on the phone (`service_starts`).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

from anemon.devices.virtual.plist_io import BadRequest, PlistService, field
from anemon.devices.virtual.server import LOOPBACK, Handler, LoopbackServer
from anemon.devices.virtual.simlike import SimLike

LOCKDOWN_PORT = 62078
DISK_USAGE = "com.apple.disk_usage"
BATTERY = "com.apple.mobile.battery"
ACCEPT_S = 30.0
"""How long a started service's one-shot TCP port waits for the client to connect."""

log = logging.getLogger(__name__)


class Phone(Protocol):
    """What lockdownd needs of the phone (`phone.VirtualIPhone`)."""

    sim: SimLike
    """Read for the disk and battery domains."""
    service_starts: Counter[str]
    """How many times each service was started (over usbmuxd and the network alike)."""

    def device_values(self) -> dict[str, Any]:
        """The values of no domain: UniqueDeviceID, DeviceName, ProductVersion, ..."""
        ...

    def service_handler(self, name: str) -> Handler | None:
        """The handler of a service the phone runs (None: it has none of that name)."""
        ...

    def open_port(self, handler: Handler) -> int:
        """A one-shot device port behind usbmuxd for a started service."""
        ...


class Lockdownd(PlistService):
    """One phone's lockdownd; `open_port` gives a started service its port (default: a
    virtual port behind usbmuxd)."""

    def __init__(self, phone: Phone, open_port: Callable[[Handler], int] | None = None) -> None:
        self.phone = phone
        self._open_port = open_port or phone.open_port

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request.get("Request")
        reply: dict[str, Any] = {"Request": name}
        if name == "QueryType":
            reply["Type"] = "com.apple.mobile.lockdown"
        elif name == "GetValue":
            domain, key = field(request, "Domain", str, None), field(request, "Key", str, None)
            reply.update(self._get_value(domain, key))
        elif name == "StartSession":
            reply["SessionID"] = "VIRTUAL-SESSION"  # no EnableSessionSSL: plain text from here on
        elif name == "StopSession":
            reply["Result"] = "Success"
        elif name == "StartService":
            reply.update(self._start_service(field(request, "Service", str, "")))
        else:
            reply["Error"] = "UnsupportedRequest"
        return reply

    def refuse(self, error: BadRequest) -> dict[str, Any]:
        log.debug("virtual lockdownd: refusing a request: %s", error)
        return {"Error": "InvalidRequest"}

    def _get_value(self, domain: str | None, key: str | None) -> dict[str, Any]:
        values = self._domain(domain)
        if values is None:
            return {"Error": "MissingValue"} if key else {}
        if key is None:
            return {"Value": values}
        if key not in values:
            return {"Error": "MissingValue"}
        return {"Value": values[key]}

    def _domain(self, domain: str | None) -> dict[str, Any] | None:
        phone = self.phone
        telemetry = phone.sim.telemetry()
        if domain is None:
            return phone.device_values()
        if domain == DISK_USAGE:
            return {
                "AmountDataAvailable": int(telemetry.free_bytes),
                "TotalDataAvailable": int(telemetry.free_bytes),
                "TotalDiskCapacity": int(telemetry.total_bytes),
                "TotalDataCapacity": int(telemetry.total_bytes),
            }
        if domain == BATTERY:
            return {
                "BatteryCurrentCapacity": round(telemetry.battery_percent),
                "BatteryIsCharging": bool(telemetry.charging),
                "ExternalConnected": bool(telemetry.plugged),
            }
        return None

    def _start_service(self, service: str) -> dict[str, Any]:
        handler = self.phone.service_handler(service)
        if handler is None:
            # What a real phone says for DVT without the developer disk image, or on iOS 17+.
            return {"Error": "InvalidService"}
        self.phone.service_starts[service] += 1
        return {"Service": service, "Port": self._open_port(handler)}


class NetworkLockdownd(LoopbackServer):
    """The phone's lockdownd on the network: a loopback TCP port (`port`, `address` =
    "127.0.0.1:PORT", the value for `--host`), and one-shot loopback ports for the services it
    starts. Independent of USB: `phone.detach()` (the cable out) leaves it answering;
    `go_offline()` takes the phone off the network (every connection cut, new ones hung up on)
    and `go_online()` brings it back. An async context manager, like the phone."""

    _name = "the network lockdownd"
    _log = log
    _log_label = "virtual iPhone (network)"

    def __init__(self, phone: Phone) -> None:
        super().__init__()
        self.phone = phone
        self.online = True
        self.connections = 0
        """TCP connections accepted so far (lockdownd and services)."""
        self._lockdownd = Lockdownd(phone, open_port=self._open_service_port)
        self._tasks: set[asyncio.Task[None]] = set()

    def go_offline(self) -> None:
        """Off the network (out of range, Wi-Fi off): cut every connection, hang up on new ones."""
        self.online = False
        self._cut_all()

    def go_online(self) -> None:
        self.online = True

    # -- connections --------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._lockdownd.serve(reader, writer)

    def _admit(self) -> bool:
        if not self.online:
            return False
        self.connections += 1
        return True

    async def _on_stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _open_service_port(self, handler: Handler) -> int:
        """A loopback port, listening already, that serves `handler` to its first client."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind((LOOPBACK, 0))
        listener.listen(1)
        listener.setblocking(False)
        task = asyncio.get_running_loop().create_task(self._serve_once(listener, handler))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return int(listener.getsockname()[1])

    async def _serve_once(self, listener: socket.socket, handler: Handler) -> None:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(ACCEPT_S):
                client, _ = await loop.sock_accept(listener)
        except TimeoutError:
            return
        finally:
            listener.close()
        reader, writer = await asyncio.open_connection(sock=client)
        await self._serve(handler, reader, writer)
