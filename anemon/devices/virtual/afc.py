"""house_arrest + AFC: the bench app's container, read-only, as the real client reads it.

First a plist `{Command: VendContainer, Identifier: bundle}` (unknown bundle →
`ApplicationLookupFailed`), then AFC packets on the same socket: a 40-byte header `CFA6LPAA`
+ little-endian u64 entire_length, this_length, packet_num, operation, then the payload.
Served: get file info, open (read only), seek, read, close, read dir, device info.
Every byte a READ returns is counted in `AfcStats`, so tests can prove a poller reads only
what is new.
"""

from __future__ import annotations

import asyncio
import posixpath
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from anemon.devices.virtual.plist_io import ProtocolViolation, prefixed_packet, read_prefixed
from anemon.devices.virtual.simlike import SimLike

SERVICE_NAME = "com.apple.mobile.house_arrest"
MAGIC = b"CFA6LPAA"
HEADER = struct.Struct("<8sQQQQ")
MAX_PACKET = 1 << 20

OP_STATUS = 0x01
OP_DATA = 0x02
OP_READ_DIR = 0x03
OP_GET_FILE_INFO = 0x0A
OP_GET_DEVINFO = 0x0B
OP_FILE_OPEN = 0x0D
OP_FILE_OPEN_RES = 0x0E
OP_READ = 0x0F
OP_FILE_SEEK = 0x11
OP_FILE_CLOSE = 0x14

SUCCESS = 0
INVALID_ARG = 7
OBJECT_NOT_FOUND = 8
PERM_DENIED = 10
OP_NOT_SUPPORTED = 15
MODE_READ_ONLY = 1
SEEK_SET, SEEK_CUR, SEEK_END = 0, 1, 2


@dataclass
class AfcStats:
    """What the AFC server handed out (mutable counters, for tests and the standalone runner)."""

    reads: int = 0
    bytes_read: int = 0
    opens: int = 0


@dataclass
class _Handle:
    path: str
    position: int = 0


@dataclass(frozen=True)
class HouseArrest:
    """The service for the apps `bundles` of `sim`, on a phone of model `model` whose files'
    times are `mtime_ns()`; what it hands out is counted in `stats`."""

    sim: SimLike
    bundles: frozenset[str]
    model: str
    mtime_ns: Callable[[], int]
    stats: AfcStats = field(default_factory=AfcStats)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await read_prefixed(reader)
        command, bundle = request.get("Command"), request.get("Identifier")
        if command not in ("VendContainer", "VendDocuments"):
            writer.write(prefixed_packet({"Error": "UnknownCommand"}))
        elif not isinstance(bundle, str) or bundle not in self.bundles:
            writer.write(prefixed_packet({"Error": "ApplicationLookupFailed"}))
        else:
            writer.write(prefixed_packet({"Status": "Complete"}))
            await writer.drain()
            root = "Documents" if command == "VendDocuments" else ""
            await AfcSession(self, str(bundle), root).serve(reader, writer)
        await writer.drain()


Written = Callable[[bytes], int | None]
"""When a file (by its content) was last written, in ns (None: the phone's time now)."""


class AfcSession:
    """One vended container: a handle table over the simulator's files, each written at
    `written(data)` (default: the phone's time now)."""

    def __init__(
        self, house: HouseArrest, bundle: str, root: str, written: Written | None = None
    ) -> None:
        self.house = house
        self.bundle = bundle
        self.root = root
        self.written = written
        self.handles: dict[int, _Handle] = {}
        self.next_handle = 1

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            header = await reader.readexactly(HEADER.size)
            magic, entire, _this, packet_num, op = HEADER.unpack(header)
            if magic != MAGIC or not HEADER.size <= entire <= MAX_PACKET:
                raise ProtocolViolation("bad AFC header")
            payload = await reader.readexactly(entire - HEADER.size)
            reply_op, data = self.handle(op, payload)
            length = HEADER.size + len(data)
            writer.write(HEADER.pack(MAGIC, length, length, packet_num, reply_op) + data)
            await writer.drain()

    def handle(self, op: int, payload: bytes) -> tuple[int, bytes]:
        try:
            if op == OP_GET_FILE_INFO:
                return self._file_info(_cstring(payload))
            if op == OP_FILE_OPEN:
                return self._open(payload)
            if op == OP_FILE_SEEK:
                return self._seek(payload)
            if op == OP_READ:
                return self._read(payload)
            if op == OP_FILE_CLOSE:
                self.handles.pop(struct.unpack_from("<Q", payload)[0], None)
                return _status(SUCCESS)
            if op == OP_READ_DIR:
                return self._read_dir(_cstring(payload))
            if op == OP_GET_DEVINFO:
                return self._device_info()
        except (struct.error, UnicodeDecodeError, KeyError):
            return _status(INVALID_ARG)
        return _status(OP_NOT_SUPPORTED)

    # -- the container as a tree ---------------------------------------------------------

    def _files(self) -> dict[str, bytes]:
        return dict(self.house.sim.container_files(self.bundle))

    def _path(self, path: str) -> str:
        joined = posixpath.normpath(posixpath.join(self.root, path.lstrip("/")))
        return "" if joined == "." else joined

    def _is_dir(self, path: str, files: dict[str, bytes]) -> bool:
        return path == "" or any(name.startswith(path + "/") for name in files)

    # -- operations ----------------------------------------------------------------------

    def _file_info(self, raw: str) -> tuple[int, bytes]:
        path, files = self._path(raw), self._files()
        written = None
        if path in files:
            kind, size = "S_IFREG", len(files[path])
            written = self.written(files[path]) if self.written is not None else None
        elif self._is_dir(path, files):
            kind, size = "S_IFDIR", 64
        else:
            return _status(OBJECT_NOT_FOUND)
        mtime = str(int(self.house.mtime_ns() if written is None else written))
        info = {
            "st_size": str(size),
            "st_blocks": str((size + 511) // 512),
            "st_nlink": "1",
            "st_ifmt": kind,
            "st_mtime": mtime,
            "st_birthtime": mtime,
        }
        return OP_DATA, _pairs(info)

    def _open(self, payload: bytes) -> tuple[int, bytes]:
        (mode,) = struct.unpack_from("<Q", payload)
        path = self._path(_cstring(payload[8:]))
        if mode != MODE_READ_ONLY:
            return _status(PERM_DENIED)  # the container is read-only from the host's side here
        if path not in self._files():
            return _status(OBJECT_NOT_FOUND)
        handle, self.next_handle = self.next_handle, self.next_handle + 1
        self.handles[handle] = _Handle(path)
        self.house.stats.opens += 1
        return OP_FILE_OPEN_RES, struct.pack("<Q", handle)

    def _seek(self, payload: bytes) -> tuple[int, bytes]:
        handle_id, whence, offset = struct.unpack_from("<QQq", payload)
        handle = self.handles[handle_id]
        if whence == SEEK_SET:
            base = 0
        elif whence == SEEK_CUR:
            base = handle.position
        else:
            base = len(self._files().get(handle.path, b""))
        if base + offset < 0:
            return _status(INVALID_ARG)
        handle.position = base + offset
        return _status(SUCCESS)

    def _read(self, payload: bytes) -> tuple[int, bytes]:
        handle_id, size = struct.unpack_from("<QQ", payload)
        handle = self.handles[handle_id]
        try:
            sim = self.house.sim
            data = sim.read_container_file(self.bundle, handle.path, handle.position, size)
        except FileNotFoundError:
            return _status(OBJECT_NOT_FOUND)
        handle.position += len(data)
        self.house.stats.reads += 1
        self.house.stats.bytes_read += len(data)
        return OP_DATA, data

    def _read_dir(self, raw: str) -> tuple[int, bytes]:
        path, files = self._path(raw), self._files()
        if not self._is_dir(path, files):
            return _status(OBJECT_NOT_FOUND)
        prefix = path + "/" if path else ""
        inside = [name[len(prefix) :] for name in files if name.startswith(prefix)]
        names = sorted({name.split("/")[0] for name in inside})
        return OP_DATA, b"".join(n.encode() + b"\0" for n in [".", "..", *names])

    def _device_info(self) -> tuple[int, bytes]:
        t = self.house.sim.telemetry()
        info: dict[str, Any] = {
            "Model": self.house.model,
            "FSTotalBytes": int(t.total_bytes),
            "FSFreeBytes": int(t.free_bytes),
            "FSBlockSize": 4096,
        }
        return OP_DATA, _pairs({k: str(v) for k, v in info.items()})


def _cstring(data: bytes) -> str:
    return data.split(b"\0", 1)[0].decode()


def _pairs(values: dict[str, str]) -> bytes:
    return b"".join(k.encode() + b"\0" + v.encode() + b"\0" for k, v in values.items())


def _status(code: int) -> tuple[int, bytes]:
    return OP_STATUS, struct.pack("<Q", code)
