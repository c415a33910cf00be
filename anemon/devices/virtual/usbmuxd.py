"""usbmuxd over TCP (plist protocol): lists the virtual iPhones and forwards `Connect`s to them.

Answers what the pymobiledevice3 client asks: ReadBUID, ListDevices, Listen, ReadPairRecord,
Save/DeletePairRecord, Connect. After a successful Connect the socket belongs to the phone
port it named (lockdownd, or a service started through lockdownd) on the phone whose
`DeviceID` it named. A `VirtualIPhone` serves itself alone; `VirtualUsbmuxd` lists several
phones (distinct UDIDs) behind one address, as a Mac with two iPhones plugged in.
"""

from __future__ import annotations

import asyncio
import logging
import plistlib
import uuid
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from anemon.devices.virtual.plist_io import BadRequest, field, read_usbmux, usbmux_packet
from anemon.devices.virtual.server import Handler, LoopbackServer

RESULT_OK = 0
RESULT_BADCOMMAND = 1
RESULT_BADDEV = 2
RESULT_CONNREFUSED = 3
log = logging.getLogger(__name__)


class Phone(Protocol):
    """What usbmuxd needs of a phone it lists (`phone.VirtualIPhone`)."""

    udid: str
    device_id: int
    """The number usbmuxd lists it by (`VirtualUsbmuxd` numbers its phones)."""
    attached: bool
    """On the cable: listed, and reachable by Connect."""

    def pair_record(self) -> dict[str, Any]: ...

    def take_port(self, port: int) -> Handler | None:
        """The handler of a device port (lockdownd, or a started service's one-shot port)."""
        ...

    def track(self, writer: asyncio.StreamWriter) -> None:
        """A connection is the device's from now on: an unplug cuts it."""
        ...

    def untrack(self, writer: asyncio.StreamWriter) -> None:
        """A connection to the device is over."""
        ...


def _swap16(value: int) -> int:
    """`PortNumber` travels in network byte order packed as a host integer (htons)."""
    return int.from_bytes((value & 0xFFFF).to_bytes(2, "little"), "big")


class Usbmuxd:
    """The protocol for `phones` (each with its own `device_id`), answering `ReadBUID` with
    `buid`; `serve` is the per-connection handler."""

    def __init__(self, phones: Sequence[Phone], buid: str) -> None:
        self.phones = tuple(phones)
        self.buid = buid

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            tag, request = await read_usbmux(reader)
            try:
                target = _connect_target(request)
                replies = [] if target else self._answer(request)
            except BadRequest as e:  # what usbmuxd answers a request it cannot read
                log.debug("virtual usbmuxd: refusing a request: %s", e)
                target, replies = None, [_result(RESULT_BADCOMMAND)]
            if target is not None:
                await self._connect(tag, *target, reader, writer)
                return
            for reply in replies:
                writer.write(usbmux_packet(tag, reply))
            await writer.drain()

    def _answer(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        kind = field(request, "MessageType", str, "")
        attached = [_attached(phone) for phone in self.phones if phone.attached]
        if kind == "ReadBUID":
            return [{"BUID": self.buid}]
        if kind == "ListDevices":
            return [{"DeviceList": attached}]
        if kind == "Listen":
            return [_result(RESULT_OK), *attached]
        if kind == "ReadPairRecord":
            udid = field(request, "PairRecordID", str, "")
            phone = next((p for p in self.phones if p.udid == udid), None)
            if phone is None:
                return [_result(RESULT_BADDEV)]
            return [{"PairRecordData": plistlib.dumps(phone.pair_record())}]
        if kind in ("SavePairRecord", "DeletePairRecord"):
            return [_result(RESULT_OK)]
        return [_result(RESULT_BADCOMMAND)]

    async def _connect(
        self,
        tag: int,
        device_id: int | None,
        port: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        phone = next((p for p in self.phones if p.attached and p.device_id == device_id), None)
        if phone is None:
            writer.write(usbmux_packet(tag, _result(RESULT_BADDEV)))
            await writer.drain()
            return
        handler = phone.take_port(port)
        if handler is None:
            writer.write(usbmux_packet(tag, _result(RESULT_CONNREFUSED)))
            await writer.drain()
            return
        writer.write(usbmux_packet(tag, _result(RESULT_OK)))
        await writer.drain()
        # From here on the socket is the device's: an unplug cuts it.
        phone.track(writer)
        await handler(reader, writer)


class VirtualUsbmuxd(LoopbackServer):
    """One loopback usbmuxd listing several virtual iPhones (distinct UDIDs): point
    `USBMUXD_SOCKET_ADDRESS` at `usbmux_address` and one process reaches each by its UDID.
    Each phone keeps its own lockdownd and services; `phone.detach()` unplugs that one only.
    The phones need not be started themselves (their own single-phone address is not used)."""

    _name = "the virtual usbmuxd"
    _log = log
    _log_label = "virtual usbmuxd"

    def __init__(self, phones: Iterable[Phone]) -> None:
        super().__init__()
        self.phones = tuple(phones)
        udids = [phone.udid for phone in self.phones]
        if not udids or len(set(udids)) != len(udids):
            raise ValueError(f"the virtual usbmuxd needs phones with distinct UDIDs, not {udids}")
        for number, phone in enumerate(self.phones, start=1):
            phone.device_id = number  # usbmuxd numbers the devices it lists
        buid = str(uuid.uuid5(uuid.NAMESPACE_URL, "anemon-virtual-usbmuxd")).upper()
        self._usbmuxd = Usbmuxd(self.phones, buid)

    @property
    def usbmux_address(self) -> str:
        """`127.0.0.1:PORT`, the value for `USBMUXD_SOCKET_ADDRESS`."""
        return self.address

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._usbmuxd.serve(reader, writer)

    def _forget(self, writer: asyncio.StreamWriter) -> None:
        for phone in self.phones:
            phone.untrack(writer)


def _connect_target(request: dict[str, Any]) -> tuple[int | None, int] | None:
    """A `Connect`'s device id and port (host order), or None for any other request."""
    if field(request, "MessageType", str, "") != "Connect":
        return None
    return field(request, "DeviceID", int, None), _swap16(field(request, "PortNumber", int, 0))


def _attached(phone: Phone) -> dict[str, Any]:
    properties = {
        "SerialNumber": phone.udid,
        "ConnectionType": "USB",
        "DeviceID": phone.device_id,
        "ProductID": 0x12A8,
    }
    return {"MessageType": "Attached", "DeviceID": phone.device_id, "Properties": properties}


def _result(number: int) -> dict[str, Any]:
    return {"MessageType": "Result", "Number": number}
