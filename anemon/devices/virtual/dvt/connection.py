"""One DTX connection, the phone's side: the handshake, channels, calls and device messages.

`serve_dtx(reader, writer, services)` serves a connection on any stream pair (the lockdown
service here; RSD's dtservicehub is the same protocol). Both sides first send
`_notifyOfPublishedCapabilities:` on channel 0. The host then asks for channels by code
(`_requestChannelWithCode:identifier:`): a known service is opened (OK), an unknown one
refused (ERROR). Calls on channel c are answered with the same identifier, conversation + 1:
OK (nothing returned), OBJECT (a value) or ERROR (an NSError). The phone's own messages on c
go out with conversation 0 on the wire code -c, never expecting a reply. A message that is
well framed but unreadable is counted in `DtxStats` and logged in one line (answered with an
ERROR if it expects a reply); one that breaks the framing ends the connection (counted and
logged in one line too). When the
connection ends every open service is closed (what a service holds ends with it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from anemon.devices.virtual.dvt.wire import (
    Frame,
    Kind,
    Malformed,
    Message,
    NSError,
    encode,
    read_message,
)
from anemon.devices.virtual.plist_io import ProtocolViolation

CONTROL = 0
CAPABILITIES = "_notifyOfPublishedCapabilities:"
REQUEST_CHANNEL = "_requestChannelWithCode:identifier:"
CANCEL_CHANNEL = "_channelCanceled:"
DOMAIN = "DTXMessage"

log = logging.getLogger(__name__)


class Refused(Exception):
    """A call the service refuses: its ERROR reply carries `error`."""

    def __init__(self, error: NSError) -> None:
        super().__init__(error.user_info.get("NSLocalizedDescription", error.domain))
        self.error = error


def refusal(description: str, code: int = 1) -> Refused:
    return Refused(NSError(code, DOMAIN, {"NSLocalizedDescription": description}))


def unknown(selector: str) -> Refused:
    """A selector the service lacks (the client raises UnrecognizedSelectorError for it)."""
    return refusal(f"Unable to invoke {selector!r} - it does not respond to the selector")


class Service(Protocol):
    """One opened channel's service."""

    async def call(self, selector: str, args: list[Any]) -> Any:
        """The value to return (None: an OK reply); raises Refused (an ERROR reply)."""
        ...

    def close(self) -> None:
        """The channel was cancelled or the connection ended."""
        ...


ServiceFactory = Callable[["Channel"], Service]


@dataclass
class DtxStats:
    """What the DTX server saw (mutable counters, for tests and the standalone runner)."""

    connections: int = 0
    malformed: int = 0
    """Well-framed messages it could not read (or calls with arguments it could not use)."""
    broken: int = 0
    """Connections dropped because the host broke the framing."""
    refused_channels: int = 0
    calls: dict[str, int] = field(default_factory=dict)


class Channel:
    """A channel the host opened: what its service sends on its own (on the wire code -c), and
    the tasks it sends from (cancelled when the channel or the connection ends)."""

    def __init__(self, connection: DtxConnection, code: int, identifier: str) -> None:
        self.connection = connection
        self.code = code
        self.identifier = identifier
        self._tasks: set[asyncio.Task[None]] = set()

    def every(self, period_s: float, send: Callable[[], None]) -> None:
        """Call `send` now and every `period_s` (real seconds) until `quiet()` or the end."""

        async def repeat() -> None:
            while True:
                send()
                await asyncio.sleep(period_s)

        task = asyncio.get_running_loop().create_task(repeat())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def quiet(self) -> None:
        """Stop what `every` started."""
        for task in list(self._tasks):
            task.cancel()

    def dispatch(self, selector: str, *args: Any) -> None:
        """Call `selector` on the host's side (no reply expected)."""
        self.connection.send(Kind.DISPATCH, -self.code, selector, args)

    def send(self, value: Any) -> None:
        """An OBJECT message (a tap's samples)."""
        self.connection.send(Kind.OBJECT, -self.code, value)


class DtxConnection:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        services: Mapping[str, ServiceFactory],
        stats: DtxStats,
    ) -> None:
        self.reader, self.writer = reader, writer
        self.services = services
        self.stats = stats
        self.channels: dict[int, tuple[Channel, Service]] = {}
        self._next_identifier = 1
        self._on_close: list[Callable[[], None]] = []

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call `callback` when the connection ends (what the phone holds for it, it drops)."""
        self._on_close.append(callback)

    def send(self, kind: Kind, wire_code: int, payload: Any, args: tuple[Any, ...] = ()) -> None:
        """A message of the phone's own (conversation 0). One write: messages never interleave."""
        if self.writer.is_closing():
            return
        frame = Frame(self._next_identifier, 0, wire_code, expects_reply=False)
        self._next_identifier += 1
        self.writer.write(encode(kind, frame, payload, args))

    async def serve(self) -> None:
        self.stats.connections += 1
        capabilities = {"com.apple.private.DTXConnection": 1,
                        "com.apple.private.DTXBlockCompression": 0,
                        **dict.fromkeys(self.services, 1)}  # fmt: skip
        self.send(Kind.DISPATCH, CONTROL, CAPABILITIES, (capabilities,))
        try:
            while True:
                message = await read_message(self.reader)
                await self._answer(message)
                await self.writer.drain()
        except ProtocolViolation as e:
            self.stats.broken += 1
            log.warning("virtual iPhone (DVT): dropping a connection: %s", e)
        finally:
            for code in list(self.channels):
                self._cancel(code)
            for callback in self._on_close:
                callback()

    async def _answer(self, message: Message) -> None:
        frame = message.frame
        try:
            value = await self._handle(message)
        except Malformed as e:
            self.stats.malformed += 1
            log.warning("virtual iPhone (DVT): an unreadable message on channel %d: %s",
                        frame.channel, e)  # fmt: skip
            self._reply(frame, Kind.ERROR, NSError(1, DOMAIN, {"NSLocalizedDescription": str(e)}))
        except Refused as e:
            self._reply(frame, Kind.ERROR, e.error)
        else:
            self._reply(frame, Kind.OK if value is None else Kind.OBJECT, value)

    def _reply(self, frame: Frame, kind: Kind, payload: Any) -> None:
        if frame.expects_reply:
            reply = Frame(frame.identifier, frame.conversation + 1, frame.channel, False)
            self.writer.write(encode(kind, reply, payload))

    async def _handle(self, message: Message) -> Any:
        if message.kind != Kind.DISPATCH:
            return None  # the host's replies (the phone asks nothing) and barriers
        selector, args = message.selector(), message.arguments()
        self.stats.calls[selector] = self.stats.calls.get(selector, 0) + 1
        code = message.frame.channel
        if code == CONTROL:
            return self._control(selector, args)
        if code not in self.channels:
            raise refusal(f"No channel registered for code {code}")
        return await self.channels[code][1].call(selector, args)

    def _control(self, selector: str, args: list[Any]) -> Any:
        if selector == CAPABILITIES:
            return None  # the host's capabilities: nothing the phone changes for
        if selector == REQUEST_CHANNEL:
            code, identifier = arguments(args, int, str)
            return self._open(code, identifier)
        if selector == CANCEL_CHANNEL:
            (code,) = arguments(args, int)
            self._cancel(code)
            return None
        raise unknown(selector)

    def _cancel(self, code: int) -> None:
        opened = self.channels.pop(code, None)
        if opened is not None:
            opened[0].quiet()
            opened[1].close()

    def _open(self, code: int, identifier: str) -> None:
        factory = self.services.get(identifier)
        if factory is None:
            self.stats.refused_channels += 1
            raise refusal(f"the service {identifier!r} is not available on this device")
        if code <= 0 or code in self.channels:
            raise refusal(f"Channel code {code} is already in use or not valid")
        channel = Channel(self, code, identifier)
        self.channels[code] = (channel, factory(channel))


def arguments(args: list[Any], *kinds: type) -> tuple[Any, ...]:
    """`args` if they are of `kinds` in order (a bool is no int); else Malformed."""
    if len(args) != len(kinds):
        raise Malformed(f"{len(args)} arguments, not {len(kinds)}")
    for value, kind in zip(args, kinds, strict=True):
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            raise Malformed(f"an argument of type {type(value).__name__}, not {kind.__name__}")
    return tuple(args)


async def serve_dtx(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    services: Mapping[str, ServiceFactory],
    stats: DtxStats,
) -> None:
    """Serve one DTX connection on this stream pair until the host hangs up or breaks the
    framing."""
    await DtxConnection(reader, writer, services, stats).serve()
