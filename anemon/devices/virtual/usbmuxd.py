"""usbmuxd over TCP (plist protocol): lists the virtual iPhone and forwards `Connect`s to it.

Answers what the pymobiledevice3 client asks: ReadBUID, ListDevices, Listen, ReadPairRecord,
Save/DeletePairRecord, Connect. After a successful Connect the socket belongs to the phone
port it named (lockdownd, or a service started through lockdownd).
"""

from __future__ import annotations

import asyncio
import plistlib
from typing import TYPE_CHECKING, Any

from anemon.devices.virtual.plist_io import read_usbmux, usbmux_packet

if TYPE_CHECKING:
    from anemon.devices.virtual.phone import VirtualIPhone

RESULT_OK = 0
RESULT_BADCOMMAND = 1
RESULT_BADDEV = 2
RESULT_CONNREFUSED = 3


def _swap16(value: int) -> int:
    """`PortNumber` travels in network byte order packed as a host integer (htons)."""
    return int.from_bytes((value & 0xFFFF).to_bytes(2, "little"), "big")


class Usbmuxd:
    """One instance per virtual phone; `serve` is the per-connection handler."""

    def __init__(self, phone: VirtualIPhone) -> None:
        self.phone = phone

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            tag, request = await read_usbmux(reader)
            if request.get("MessageType") == "Connect":
                await self._connect(tag, request, reader, writer)
                return
            for reply in self._answer(request):
                writer.write(usbmux_packet(tag, reply))
            await writer.drain()

    def _answer(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        kind = request.get("MessageType")
        phone = self.phone
        if kind == "ReadBUID":
            return [{"BUID": phone.system_buid}]
        if kind == "ListDevices":
            return [{"DeviceList": [self._attached()] if phone.attached else []}]
        if kind == "Listen":
            return [_result(RESULT_OK)] + ([self._attached()] if phone.attached else [])
        if kind == "ReadPairRecord":
            if request.get("PairRecordID") != phone.udid:
                return [_result(RESULT_BADDEV)]
            return [{"PairRecordData": plistlib.dumps(phone.pair_record())}]
        if kind in ("SavePairRecord", "DeletePairRecord"):
            return [_result(RESULT_OK)]
        return [_result(RESULT_BADCOMMAND)]

    def _attached(self) -> dict[str, Any]:
        phone = self.phone
        properties = {
            "SerialNumber": phone.udid,
            "ConnectionType": "USB",
            "DeviceID": phone.device_id,
            "ProductID": 0x12A8,
        }
        return {"MessageType": "Attached", "DeviceID": phone.device_id, "Properties": properties}

    async def _connect(
        self,
        tag: int,
        request: dict[str, Any],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        phone = self.phone
        if not phone.attached or request.get("DeviceID") != phone.device_id:
            writer.write(usbmux_packet(tag, _result(RESULT_BADDEV)))
            await writer.drain()
            return
        handler = phone.take_port(_swap16(int(request.get("PortNumber", 0))))
        if handler is None:
            writer.write(usbmux_packet(tag, _result(RESULT_CONNREFUSED)))
            await writer.drain()
            return
        writer.write(usbmux_packet(tag, _result(RESULT_OK)))
        await writer.drain()
        # From here on the socket is the device's: an unplug cuts it.
        phone.track(writer)
        await handler(reader, writer)


def _result(number: int) -> dict[str, Any]:
    return {"MessageType": "Result", "Number": number}
