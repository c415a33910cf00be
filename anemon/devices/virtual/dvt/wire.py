"""DTX on the wire, as the phone's side reads and writes it (pymobiledevice3 11.45's framing).

A message is one or more fragments, each behind a 32-byte little-endian header (magic,
header size, index, count, data size, identifier, conversation index, channel code, flags:
bit 0 = expects a reply). A split message's fragment 0 carries no body and says the total
size. The assembled message starts with a 16-byte payload header (type, aux size, aux +
payload size), then the aux (the arguments, a "primitive dictionary" of null keys and typed
values: strings, int32, int64, doubles, buffers holding NSKeyedArchives), then the payload
(an NSKeyedArchive: a selector, a returned object or an NSError). Archives are bpylist2's,
the archiver the client uses.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from bpylist2 import archiver

from anemon.devices.virtual.plist_io import ProtocolViolation

MAGIC = 0x1F3D5B79
FRAGMENT = struct.Struct("<IIHHIIIiI")
PAYLOAD = struct.Struct("<B3xIII")
EXPECTS_REPLY = 1
MAX_MESSAGE = 32 << 20
"""A message larger than this from the host is a protocol bug: the connection is dropped."""
MAX_FRAGMENT_BODY = 64 << 10
"""What the phone puts in one fragment; larger messages are split."""

AUX_DICT = 0x1F0
AUX_NULL, AUX_STR, AUX_BUF, AUX_I32, AUX_I64, AUX_F64 = 10, 1, 2, 3, 6, 9
_TAG = struct.Struct("<I")
_AUX_HEADER = struct.Struct("<IIQ")


class Kind(IntEnum):
    OK = 0
    DATA = 1
    DISPATCH = 2
    OBJECT = 3
    ERROR = 4
    BARRIER = 5


class Malformed(Exception):
    """A well-framed message whose content cannot be read (the connection goes on)."""


@dataclass(frozen=True)
class Int32:
    """An argument sent as a 32-bit integer (tag 3), as the client sends channel codes."""

    value: int


@dataclass(frozen=True)
class NSError:
    """What an ERROR reply carries (archived as Foundation's NSError)."""

    code: int
    domain: str
    user_info: Mapping[str, Any] = field(default_factory=dict)

    def encode_archive(self, archive: Any) -> None:
        archive.encode("NSDomain", self.domain)
        archive.encode("NSCode", self.code)
        archive.encode("NSUserInfo", dict(self.user_info))


# Archive only: the unarchiving map stays the client's (it decodes NSError in the same process).
archiver.ARCHIVE_CLASS_MAP[NSError] = "NSError"


@dataclass(frozen=True)
class Frame:
    """One fragment's header, as it came."""

    identifier: int
    conversation: int
    channel: int
    """The code on the wire (a device-initiated message on the host's channel c is -c)."""
    expects_reply: bool


@dataclass(frozen=True)
class Message:
    """An assembled message: its frame, type, raw aux and raw payload."""

    frame: Frame
    kind: int
    aux: bytes
    payload: bytes

    def selector(self) -> str:
        """The payload of a DISPATCH: the method's name."""
        value = unarchive(self.payload)
        if not isinstance(value, str):
            raise Malformed(f"a DISPATCH whose payload is {type(value).__name__}, not a selector")
        return value

    def arguments(self) -> list[Any]:
        return parse_aux(self.aux)


# -- reading ----------------------------------------------------------------------------------


async def read_message(reader: asyncio.StreamReader) -> Message:
    """The next whole message (fragments reassembled). ProtocolViolation: the stream cannot
    be read on from here."""
    frame, index, count, size, body = await _read_fragment(reader)
    if count == 1:
        return _assemble(frame, body)
    if index != 0 or size > MAX_MESSAGE:
        raise ProtocolViolation(f"a split message starting at fragment {index} of {size} bytes")
    parts = bytearray()
    for expected in range(1, count):
        more, index, _count, _size, body = await _read_fragment(reader)
        if index != expected or more.identifier != frame.identifier:
            raise ProtocolViolation(f"fragment {index} of message {more.identifier} out of order")
        parts += body
    if len(parts) != size:
        raise ProtocolViolation(f"message {frame.identifier}: {len(parts)} bytes, not {size}")
    return _assemble(frame, bytes(parts))


async def _read_fragment(reader: asyncio.StreamReader) -> tuple[Frame, int, int, int, bytes]:
    raw = await reader.readexactly(FRAGMENT.size)
    magic, header_size, index, count, size, ident, conv, channel, flags = FRAGMENT.unpack(raw)
    if magic != MAGIC or header_size < FRAGMENT.size or not 0 <= index < count or size == 0:
        raise ProtocolViolation(f"not a DTX fragment header: {raw.hex()}")
    if size > MAX_MESSAGE:
        raise ProtocolViolation(f"a fragment of {size} bytes")
    await reader.readexactly(header_size - FRAGMENT.size)
    frame = Frame(ident, conv, channel, bool(flags & EXPECTS_REPLY))
    first_of_many = index == 0 and count > 1
    body = b"" if first_of_many else await reader.readexactly(size)
    return frame, index, count, size, body


def _assemble(frame: Frame, data: bytes) -> Message:
    if len(data) < PAYLOAD.size:
        raise ProtocolViolation(f"message {frame.identifier} of {len(data)} bytes")
    kind, aux_size, total, _flags = PAYLOAD.unpack_from(data)
    if total != len(data) - PAYLOAD.size or aux_size > total:
        raise ProtocolViolation(f"message {frame.identifier}: sizes {aux_size}/{total}")
    aux_end = PAYLOAD.size + aux_size
    return Message(frame, kind, data[PAYLOAD.size : aux_end], data[aux_end:])


def unarchive(data: bytes) -> Any:
    """An NSKeyedArchive's root object (None for no bytes). Malformed if it is not one."""
    if not data:
        return None
    try:
        return archiver.unarchive(data)
    except Exception as e:  # bpylist2 raises whatever plistlib or its own checks raise
        raise Malformed(f"not an NSKeyedArchive: {type(e).__name__}: {e}") from e


def parse_aux(data: bytes) -> list[Any]:
    """The arguments of a message's aux: buffers unarchived (an empty one is None)."""
    if not data:
        return []
    try:
        magic, _flags, length = _AUX_HEADER.unpack_from(data)
        if magic & 0xFF != 0xF0 or _AUX_HEADER.size + length > len(data):
            raise Malformed(f"aux header {magic:#x}, {length} bytes of {len(data)}")
        values: list[Any] = []
        offset, end = _AUX_HEADER.size, _AUX_HEADER.size + length
        while offset < end:
            _key, offset = _primitive(data, offset)
            value, offset = _primitive(data, offset)
            values.append(value)
        return values
    except struct.error as e:
        raise Malformed(f"aux cut short: {e}") from e


def _primitive(data: bytes, offset: int) -> tuple[Any, int]:
    (tag,) = _TAG.unpack_from(data, offset)
    offset += _TAG.size
    tag &= 0xFF
    if tag == AUX_NULL:
        return None, offset
    if tag in (AUX_STR, AUX_BUF):
        (length,) = _TAG.unpack_from(data, offset)
        raw = data[offset + 4 : offset + 4 + length]
        if len(raw) != length:
            raise Malformed(f"an aux value of {length} bytes cut short")
        value = raw.decode("utf-8", "replace") if tag == AUX_STR else unarchive(raw)
        return value, offset + 4 + length
    for code, fmt in ((AUX_I32, "<i"), (AUX_I64, "<q"), (AUX_F64, "<d")):
        if tag == code:
            return struct.unpack_from(fmt, data, offset)[0], offset + struct.calcsize(fmt)
    raise Malformed(f"an aux value of unknown type {tag}")


# -- writing ----------------------------------------------------------------------------------


def encode(kind: Kind, frame: Frame, payload: Any = None, args: Sequence[Any] = ()) -> bytes:
    """A whole message on the wire, split into fragments past MAX_FRAGMENT_BODY."""
    body = b"" if payload is None else archive(payload)
    aux = build_aux(args)
    data = PAYLOAD.pack(int(kind), len(aux), len(aux) + len(body), 0) + aux + body
    return b"".join(_fragments(frame, data))


def _fragments(frame: Frame, data: bytes) -> Iterator[bytes]:
    flags = EXPECTS_REPLY if frame.expects_reply else 0

    def header(index: int, count: int, size: int) -> bytes:
        return FRAGMENT.pack(MAGIC, FRAGMENT.size, index, count, size, frame.identifier,
                             frame.conversation, frame.channel, flags)  # fmt: skip

    if len(data) <= MAX_FRAGMENT_BODY:
        yield header(0, 1, len(data)) + data
        return
    pieces = [data[i : i + MAX_FRAGMENT_BODY] for i in range(0, len(data), MAX_FRAGMENT_BODY)]
    yield header(0, len(pieces) + 1, len(data))
    for index, piece in enumerate(pieces, start=1):
        yield header(index, len(pieces) + 1, len(piece)) + piece


class Garbled(bytes):
    """A payload sent as these bytes, not archived: what a client cannot read."""


def archive(value: Any) -> bytes:
    return value if isinstance(value, Garbled) else bytes(archiver.archive(value))


def build_aux(args: Sequence[Any]) -> bytes:
    """The aux of `args`: Int32 as tag 3, None as an empty buffer (an archived None breaks the
    client's decoding), anything else archived in a buffer."""
    if not args:
        return b""
    body = bytearray()
    for arg in args:
        body += _TAG.pack(AUX_NULL)
        if isinstance(arg, Int32):
            body += struct.pack("<Ii", AUX_I32, arg.value)
        else:
            raw = b"" if arg is None else archive(arg)
            body += struct.pack("<II", AUX_BUF, len(raw)) + raw
    return _AUX_HEADER.pack(AUX_DICT, 0, len(body)) + bytes(body)
