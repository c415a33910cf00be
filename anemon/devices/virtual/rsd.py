"""RemoteServiceDiscovery (RSD): how an iOS 17+ phone offers its services at its tunnel's end.

A real phone's RSD port (58783) speaks RemoteXPC: the HTTP/2 preface and SETTINGS, then XPC
wrappers in DATA frames (pymobiledevice3 `remote/remotexpc.py`, `xpc_message.py`). To the
host's `Handshake` it answers `peer_info`: `{MessageType: Handshake, Properties:
{UniqueDeviceID, ProductType, OSVersion, BuildVersion, ...}, Services: {name: {Port: "n"}}}`;
every service then listens on its own port at the same address. The developer services are
raw (`com.apple.instruments.dtservicehub` is DTX from the first byte); the lockdown services
are the old ones behind a `.shim.remote` name: the host sends `{Request: RSDCheckin}`, the
phone answers `{Request: RSDCheckin}` and `{Request: StartService}`, and the old protocol
follows on the same socket.

`VirtualRsd` serves that for a virtual phone on loopback: the RSD on an ephemeral port and one
listener per service, each backed by the handler the phone's lockdownd starts for the same
service (so house_arrest, diagnostics, os_trace, the crash report services and
installation_proxy behave alike on both routes), and dtservicehub by the phone's instruments
(`virtual/dvt`: the DTX server an iOS 16 phone serves on lockdown). Its `tunnel()` is what
the stand-in tunneld (`tunneld.py`) lists. A message from the host that is
not XPC is a counted warning (`stats.malformed`), never a traceback.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from bytestruct import BinaryParseError, TruncatedDataError
from hyperframe.exceptions import HyperframeError
from hyperframe.frame import DataFrame, Frame, GoAwayFrame, SettingsFrame
from pymobiledevice3.remote.xpc_message import (
    XPC_WRAPPER_MAGIC,
    XpcUInt64Type,
    XpcWrapper,
    XpcWrapperHeader,
    create_xpc_wrapper,
    decode_xpc_object,
)

from anemon.devices.virtual import afc, crash_reports, diagnostics, installation_proxy, os_trace
from anemon.devices.virtual.dvt import Instruments
from anemon.devices.virtual.lockdownd import Lockdownd
from anemon.devices.virtual.lockdownd import Phone as LockdowndPhone
from anemon.devices.virtual.plist_io import (
    MAX_MESSAGE,
    ProtocolViolation,
    prefixed_packet,
    read_prefixed,
)
from anemon.devices.virtual.server import LOOPBACK, Handler, LoopbackServer
from anemon.devices.virtual.tunneld import Tunnel

DTSERVICEHUB = "com.apple.instruments.dtservicehub"
REMOTE_LOCKDOWN = "com.apple.mobile.lockdown.remote.trusted"
SHIM = ".shim.remote"
SHIMMED = (
    diagnostics.SERVICE_NAME,
    afc.SERVICE_NAME,
    os_trace.SERVICE_NAME,
    crash_reports.COPY_MOBILE,
    crash_reports.MOVER,
    installation_proxy.SERVICE_NAME,
)
"""Lockdown services offered as `NAME.shim.remote`, when the phone runs them."""
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
FRAME_HEADER = 9
MAX_FRAME = 16384
"""HTTP/2's default SETTINGS_MAX_FRAME_SIZE, which the client never raises."""
ROOT_STREAM = 1
MAX_STREAMS = 100
"""SETTINGS_MAX_CONCURRENT_STREAMS, as remoted announces it."""
MESSAGING_PROTOCOL_VERSION = 7
log = logging.getLogger(__name__)


class Phone(LockdowndPhone, Protocol):
    """What the RSD needs of the phone (`phone.VirtualIPhone`)."""

    udid: str
    attached: bool
    """False while unplugged: its tunnel is down, so nothing is served."""
    instruments: Instruments | None
    """The DTX server behind dtservicehub (None: no developer disk image, no DVT)."""


@dataclass
class RsdStats:
    """What the RSD saw (mutable counters, for tests and the standalone runner)."""

    handshakes: int = 0
    malformed: int = 0
    """Messages from the host that were not XPC, each a logged warning."""


class ServicePort(LoopbackServer):
    """One RSD service's listener: every connection goes to `handler`."""

    _name = "an RSD service port"
    _log = log
    _log_label = "virtual iPhone (RSD service)"

    def __init__(self, handler: Handler, admit: Callable[[], bool]) -> None:
        super().__init__()
        self._handler = handler
        self._admit_if = admit

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._handler(reader, writer)

    def _admit(self) -> bool:
        return self._admit_if()


class VirtualRsd(LoopbackServer):
    """The phone's RSD at its tunnel's end (`address`), and a port for each service it lists."""

    _name = "the virtual RSD"
    _log = log
    _log_label = "virtual iPhone (RSD)"

    def __init__(self, phone: Phone) -> None:
        super().__init__()
        self.phone = phone
        self.stats = RsdStats()
        self.ports: dict[str, ServicePort] = {}
        """Each listed service's listener, by its RSD name."""

    async def start(self) -> None:
        await super().start()
        for name, handler in self._handlers().items():
            self.ports[name] = port = ServicePort(handler, self.up)
            await port.start()

    async def _on_stop(self) -> None:
        for port in self.ports.values():
            await port.stop()
        self.ports.clear()

    def tunnel(self) -> Tunnel:
        """This phone's entry in tunneld's list."""
        return Tunnel(udid=self.phone.udid, address=LOOPBACK, port=self.port)

    def up(self) -> bool:
        """Whether the tunnel is up: the phone is plugged in."""
        return self.phone.attached

    def tunnel_down(self) -> None:
        """The tunnel dropped with the cable (call it beside `phone.detach()`): every connection
        to the RSD and its services is cut; new ones are refused until `phone.attach()`."""
        for server in (self, *self.ports.values()):
            server._cut_all()

    def peer_info(self) -> dict[str, Any]:
        """The answer to the host's handshake."""
        values = self.phone.device_values()
        properties = {
            "UniqueDeviceID": values["UniqueDeviceID"],
            "ProductType": values["ProductType"],
            "OSVersion": values["ProductVersion"],
            "BuildVersion": values["BuildVersion"],
            "UniqueChipID": XpcUInt64Type(values["UniqueChipID"]),
            "DeviceClass": values["DeviceClass"],
        }
        services = {name: {"Entitlement": REMOTE_LOCKDOWN, "Port": str(port.port)}
                    for name, port in self.ports.items()}  # fmt: skip
        return {
            "MessageType": "Handshake",
            "MessagingProtocolVersion": XpcUInt64Type(MESSAGING_PROTOCOL_VERSION),
            "UUID": uuid.uuid5(uuid.NAMESPACE_URL, f"anemon-virtual-rsd:{self.phone.udid}"),
            "Properties": properties,
            "Services": services,
        }

    def _handlers(self) -> dict[str, Handler]:
        """What the RSD lists: dtservicehub (raw DTX, with the phone's instruments), the remote
        lockdownd and the shimmed lockdown services, each counted in `service_starts`."""
        handlers: dict[str, Handler] = {}
        if self.phone.instruments is not None:
            handlers[DTSERVICEHUB] = self._counted(DTSERVICEHUB, self.phone.instruments.serve)
        lockdown = Lockdownd(self.phone).serve
        handlers[REMOTE_LOCKDOWN] = self._counted(REMOTE_LOCKDOWN, _checked_in(lockdown))
        for name in SHIMMED:
            if (handler := self.phone.service_handler(name)) is not None:
                handlers[name + SHIM] = self._counted(name + SHIM, _checked_in(handler))
        return handlers

    def _counted(self, name: str, handler: Handler) -> Handler:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.phone.service_starts[name] += 1
            await handler(reader, writer)

        return serve

    # -- the RSD connection -------------------------------------------------------------------

    def _admit(self) -> bool:
        return self.up()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if await reader.readexactly(len(HTTP2_PREFACE)) != HTTP2_PREFACE:
            raise ProtocolViolation("RSD: no HTTP/2 preface")
        settings = {SettingsFrame.MAX_CONCURRENT_STREAMS: MAX_STREAMS}
        writer.write(SettingsFrame(settings=settings).serialize())
        await writer.drain()
        partial: dict[int, bytes] = {}
        while True:
            frame = await read_frame(reader)
            if isinstance(frame, GoAwayFrame):
                return
            if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
                writer.write(SettingsFrame(flags=["ACK"]).serialize())
            elif isinstance(frame, DataFrame):
                message = self._message(partial, frame)
                if message is not None and message.get("MessageType") == "Handshake":
                    self.stats.handshakes += 1
                    for reply in data_frames(ROOT_STREAM, create_xpc_wrapper(self.peer_info())):
                        writer.write(reply.serialize())
            await writer.drain()

    def _message(self, partial: dict[int, bytes], frame: DataFrame) -> dict[str, Any] | None:
        """The XPC dictionary `frame` completes (None: none yet, or an empty one); a frame that
        is not XPC is dropped with a counted warning."""
        data = partial.pop(frame.stream_id, b"") + bytes(frame.data)
        if not data:
            return None
        try:
            return _dictionary(data)
        except TruncatedDataError:
            if len(data) > MAX_MESSAGE:
                raise ProtocolViolation(f"RSD: an XPC message over {MAX_MESSAGE} bytes") from None
            partial[frame.stream_id] = data  # the rest comes in the stream's next frames
        except (BinaryParseError, TypeError, ValueError) as e:
            self.stats.malformed += 1
            log.warning("virtual iPhone (RSD): dropped a message that is not XPC (%d so far): %s",
                        self.stats.malformed, e)  # fmt: skip
        return None


def _dictionary(data: bytes) -> dict[str, Any] | None:
    """The XPC dictionary in the wrapper `data` (None: a wrapper without a payload, as the
    client's handshake frames are). TruncatedDataError: only part of one; BinaryParseError,
    TypeError or ValueError: not XPC."""
    if len(data) >= 4 and int.from_bytes(data[:4], "little") != XPC_WRAPPER_MAGIC:
        raise ValueError(f"no XPC wrapper magic: {data[:8].hex()}")
    header = XpcWrapperHeader.parse(data)
    wrapper = XpcWrapper.parse(data)
    if wrapper.payload is None:
        if header.size:
            raise ValueError(f"an XPC payload of {header.size} bytes that does not parse")
        return None
    value = decode_xpc_object(wrapper.payload)
    if not isinstance(value, dict):
        raise ValueError(f"an XPC {type(value).__name__}, not a dictionary")
    return value or None


async def read_frame(reader: asyncio.StreamReader) -> Frame:
    """One HTTP/2 frame from the host; one that does not parse is a ProtocolViolation."""
    header = await reader.readexactly(FRAME_HEADER)
    try:
        frame, length = Frame.parse_frame_header(memoryview(header))
        if length > MAX_MESSAGE:
            raise ProtocolViolation(f"RSD: an HTTP/2 frame of {length} bytes")
        frame.parse_body(memoryview(await reader.readexactly(length)))
    except HyperframeError as e:
        raise ProtocolViolation(f"RSD: not an HTTP/2 frame: {e}") from e
    return frame


def data_frames(stream: int, payload: bytes) -> list[DataFrame]:
    """`payload` on `stream` in DATA frames no longer than the client accepts."""
    chunks = [payload[i : i + MAX_FRAME] for i in range(0, len(payload), MAX_FRAME)]
    return [DataFrame(stream_id=stream, data=chunk) for chunk in chunks or [b""]]


def _checked_in(handler: Handler) -> Handler:
    """`handler` behind the RSD check-in a `.shim.remote` service starts with."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await read_prefixed(reader)
        if request.get("Request") != "RSDCheckin":
            raise ProtocolViolation(f"RSD: a shim service got {request.get('Request')!r} first")
        writer.write(prefixed_packet({"Request": "RSDCheckin"}))
        writer.write(prefixed_packet({"Request": "StartService"}))
        await writer.drain()
        await handler(reader, writer)

    return serve
