"""The two plist framings the virtual iPhone speaks.

usbmuxd: a 16-byte little-endian header (total length, version 1, message 8 = plist, tag) and
an XML plist. lockdownd and the services behind it: a 4-byte big-endian length and a plist.
"""

from __future__ import annotations

import asyncio
import plistlib
import struct
from collections.abc import Mapping
from typing import Any, TypeVar

USBMUX_HEADER = struct.Struct("<IIII")
USBMUX_VERSION_PLIST = 1
USBMUX_MESSAGE_PLIST = 8
MAX_MESSAGE = 1 << 20
"""A request larger than this is a protocol bug on the client's side: drop the connection."""


T = TypeVar("T")
D = TypeVar("D")


class ProtocolViolation(Exception):
    """The peer sent something the virtual iPhone cannot parse: it closes the connection."""


class BadRequest(ProtocolViolation):
    """A well-framed request with a field of the wrong type: a service answers it with the
    error reply a real one gives (one that has none closes the connection)."""


def field(request: Mapping[str, Any], key: str, kind: type[T], default: D) -> T | D:
    """`request[key]` if it is a `kind` (a bool is not an int), `default` if it is missing;
    else BadRequest naming the field."""
    if key not in request:
        return default
    value = request[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise BadRequest(f"{key} is {type(value).__name__}, not {kind.__name__}")
    return value


async def read_usbmux(reader: asyncio.StreamReader) -> tuple[int, dict[str, Any]]:
    """One usbmuxd request: its tag and its plist."""
    header = await reader.readexactly(USBMUX_HEADER.size)
    length, _version, _message, tag = USBMUX_HEADER.unpack(header)
    if not USBMUX_HEADER.size <= length <= MAX_MESSAGE:
        raise ProtocolViolation(f"usbmux message of {length} bytes")
    return tag, _loads(await reader.readexactly(length - USBMUX_HEADER.size))


def usbmux_packet(tag: int, message: dict[str, Any]) -> bytes:
    payload = plistlib.dumps(message)
    length = USBMUX_HEADER.size + len(payload)
    return USBMUX_HEADER.pack(length, USBMUX_VERSION_PLIST, USBMUX_MESSAGE_PLIST, tag) + payload


async def read_prefixed(reader: asyncio.StreamReader) -> dict[str, Any]:
    """One lockdownd-style request (4-byte big-endian length + plist)."""
    (length,) = struct.unpack(">I", await reader.readexactly(4))
    if length > MAX_MESSAGE:
        raise ProtocolViolation(f"plist message of {length} bytes")
    return _loads(await reader.readexactly(length))


def prefixed_packet(message: dict[str, Any]) -> bytes:
    payload = plistlib.dumps(message)
    return struct.pack(">I", len(payload)) + payload


def _loads(data: bytes) -> dict[str, Any]:
    try:
        value = plistlib.loads(data)
    except Exception as e:  # plistlib raises several types for garbage
        raise ProtocolViolation(f"not a plist: {e}") from e
    if not isinstance(value, dict):
        raise ProtocolViolation("plist is not a dictionary")
    return value


class PlistService:
    """A service that answers each length-prefixed plist request with one plist reply."""

    closing_request: str | None = None
    """A request after whose reply the service hangs up."""

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            request = await read_prefixed(reader)
            try:
                answer = self.answer(request)
            except BadRequest as e:
                answer = self.refuse(e)
            writer.write(prefixed_packet(answer))
            await writer.drain()
            if self.closing_request and request.get("Request") == self.closing_request:
                return

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def refuse(self, error: BadRequest) -> dict[str, Any]:
        """The reply to a request with a field of the wrong type (by default: hang up)."""
        raise error
