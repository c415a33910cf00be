"""os_trace_relay: the phone's live console, with the bench app logging each line of its log.

The framing is the one pymobiledevice3 11.45's `OsTraceService.syslog()` parses: the request
is a length-prefixed plist `{Request: StartActivity, Pid, MessageFilter, StreamFlags}`; the
reply is a u32 little-endian width W, then the plist's length in W little-endian bytes, then
the plist `{Status: RequestSuccessful}`; then one chunk per entry: the byte 0x02, a u32
little-endian length and a binary record (a 129-byte header, the NUL-terminated process path,
then the sender image, the message, the subsystem and the category, each NUL-terminated and
sized by the header).

Like a real console the stream is live only: a stream shows the lines the app completes after
it started, never the ones before (nor those written while unplugged). Each line is sent twice:
once from the bench app's process, once from another process quoting it, so a client that does
not filter by process sees every line twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import plistlib
import posixpath
import struct
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from anemon.devices.virtual.plist_io import BadRequest, field, prefixed_packet, read_prefixed
from anemon.devices.virtual.simlike import SimLike, SystemLogging
from anemon.sources.lines import LineAssembler

SERVICE_NAME = "com.apple.os_trace_relay"
ALL_PIDS = -1
CHUNK_ENTRY = b"\x02"
MAX_MESSAGE_BYTES = 0xFFFF - 1
"""The header sizes the message (NUL included) in a u16."""
LEVEL_NOTICE = 0x00  # os_log's default level

# pid, procid, process image uuid, seconds, microseconds, level, mach time, thread, sender image
# uuid, image name size, message size, sender image offset, subsystem size, category size
RECORD_HEADER = struct.Struct("<9xIQ16s18xI4xIxB6xQQ16sHH2xIII4x")


@dataclass(frozen=True, slots=True)
class Process:
    """Who an entry comes from, as os_trace names it."""

    pid: int
    path: str
    """The executable: `basename(path)` is the process name."""
    image: str
    """The image the log call was made from (the app itself, or a framework)."""

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


BENCH_PID = 4242
SPRINGBOARD = Process(
    pid=61,
    path="/System/Library/CoreServices/SpringBoard.app/SpringBoard",
    image="/System/Library/PrivateFrameworks/FrontBoard.framework/FrontBoard",
)
SYSTEM_PROCESSES = {
    "osanalyticshelper": Process(
        pid=112,
        path="/System/Library/PrivateFrameworks/OSAnalytics.framework/osanalyticshelper",
        image="/System/Library/PrivateFrameworks/OSAnalytics.framework/OSAnalytics",
    ),
}
"""The phone's processes that log what the simulator's `system_log` says (a new report)."""


def bench_process(name: str) -> Process:
    """The bench app's executable inside its (made-up) bundle container."""
    container = str(uuid.uuid5(uuid.NAMESPACE_URL, f"anemon-virtual-app:{name}")).upper()
    path = f"/private/var/containers/Bundle/Application/{container}/{name}.app/{name}"
    return Process(pid=BENCH_PID, path=path, image=path)


@dataclass(frozen=True, slots=True)
class Entry:
    process: Process
    message: str
    subsystem: str = ""
    category: str = ""


def record(entry: Entry, *, seconds: float) -> bytes:
    """One entry as the binary record `parse_syslog_entry` decodes."""
    message = entry.message.encode()[:MAX_MESSAGE_BYTES] + b"\0"
    image = entry.process.image.encode() + b"\0"
    label = b""
    subsystem_size = category_size = 0
    if entry.subsystem and entry.category:
        subsystem, category = entry.subsystem.encode() + b"\0", entry.category.encode() + b"\0"
        subsystem_size, category_size, label = len(subsystem), len(category), subsystem + category
    process = entry.process
    header = RECORD_HEADER.pack(
        process.pid, process.pid, _uuid(process.path), int(seconds),
        int(seconds % 1 * 1_000_000), LEVEL_NOTICE, int(seconds * 24_000_000), 1,
        _uuid(process.image), len(image), len(message), 0x4000, subsystem_size, category_size,
    )  # fmt: skip
    return header + process.path.encode() + b"\0" + image + message + label


def chunk(entry: Entry, *, seconds: float) -> bytes:
    data = record(entry, seconds=seconds)
    return CHUNK_ENTRY + struct.pack("<I", len(data)) + data


def reply(message: dict[str, Any]) -> bytes:
    """The StartActivity reply: a u32 width, the length in that many bytes, the plist."""
    payload = plistlib.dumps(message)
    return struct.pack("<I", 4) + struct.pack("<I", len(payload)) + payload


def _uuid(text: str) -> bytes:
    return uuid.uuid5(uuid.NAMESPACE_URL, text).bytes


class BenchLog:
    """The new complete lines of one container log, from where it stood when the stream began."""

    def __init__(self, sim: SimLike, bundle: str, path: str) -> None:
        self.sim, self.bundle, self.path = sim, bundle, path
        current = bytes(sim.container_files(bundle).get(path, b""))
        self._offset = current.rfind(b"\n") + 1  # a line being written when it began is new
        self._lines = LineAssembler()

    def new_lines(self) -> list[str]:
        data = bytes(self.sim.container_files(self.bundle).get(self.path, b""))
        if len(data) < self._offset:  # another log took its place: all of it is new
            self._offset, self._lines = 0, LineAssembler()
        new, self._offset = data[self._offset :], len(data)
        return self._lines.feed(new)


class SystemLog:
    """The new lines of the simulator's own processes (none for a simulator without them)."""

    def __init__(self, sim: SimLike) -> None:
        self.lines = sim.system_log if isinstance(sim, SystemLogging) else []
        self._offset = len(self.lines)

    def new_entries(self) -> list[Entry]:
        new, self._offset = self.lines[self._offset :], len(self.lines)
        return [Entry(SYSTEM_PROCESSES[name], text) for name, text in new
                if name in SYSTEM_PROCESSES]  # fmt: skip


class OsTraceRelay:
    """`com.apple.os_trace_relay`: StartActivity streams, PidList; counts open streams. The app
    `process` logs each line of the container file `log` of every app of `bundles` on `sim`,
    at the phone's time `mtime_ns()`, looked at every `poll_s`."""

    def __init__(
        self,
        sim: SimLike,
        bundles: frozenset[str],
        mtime_ns: Callable[[], int],
        *,
        log: str,
        process: str,
        poll_s: float,
    ) -> None:
        self.sim = sim
        self.bundles = bundles
        self.mtime_ns = mtime_ns
        self.log = log
        self.process = bench_process(process)
        self.poll_s = poll_s
        self.streams = 0
        """Streams open right now (tests wait for one before the app writes)."""
        self._changed = asyncio.Condition()

    async def wait_streams(self, count: int) -> None:
        """Until exactly `count` streams are open (a test's cue to write, or proof of a hang-up)."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.streams == count)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await read_prefixed(reader)
        name = request.get("Request")
        try:
            pid = field(request, "Pid", int, ALL_PIDS)
        except BadRequest as e:
            writer.write(reply({"Status": "RequestFailed", "Error": str(e)}))
        else:
            await self._answer(name, pid, reader, writer)
        await writer.drain()

    async def _answer(
        self, name: object, pid: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if name == "PidList":
            writer.write(b"\x01" + prefixed_packet(self._pid_list()))
        elif name == "StartActivity":
            await self._stream(pid, reader, writer)
        else:
            writer.write(reply({"Status": "RequestFailed", "Error": f"unknown request {name}"}))

    def _pid_list(self) -> dict[str, Any]:
        processes = (self.process, SPRINGBOARD)
        payload = {str(p.pid): {"ProcessName": p.name} for p in processes}
        return {"Status": "RequestSuccessful", "Payload": payload}

    async def _stream(
        self, pid: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        logs = [BenchLog(self.sim, bundle, self.log) for bundle in sorted(self.bundles)]
        system = SystemLog(self.sim)
        writer.write(reply({"Status": "RequestSuccessful"}))
        hello = Entry(SPRINGBOARD, "console stream started")
        self._send(writer, [hello], pid)
        await writer.drain()
        hung_up = asyncio.ensure_future(reader.read())  # the client sends nothing more: EOF
        await self._count(+1)
        try:
            while not hung_up.done():
                for log in logs:
                    self._send(writer, self._entries(log.bundle, log.new_lines()), pid)
                self._send(writer, system.new_entries(), pid)
                await writer.drain()
                await asyncio.wait([hung_up], timeout=self.poll_s)
        finally:
            hung_up.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await hung_up
            await self._count(-1)

    def _entries(self, bundle: str, lines: list[str]) -> Iterable[Entry]:
        for line in lines:
            yield Entry(self.process, line, subsystem=bundle, category="bench")
            yield Entry(SPRINGBOARD, line)  # same text, other process: filtering must drop it

    def _send(self, writer: asyncio.StreamWriter, entries: Iterable[Entry], pid: int) -> None:
        seconds = self.mtime_ns() / 1e9
        for entry in entries:
            if pid in (ALL_PIDS, entry.process.pid):
                writer.write(chunk(entry, seconds=seconds))

    async def _count(self, step: int) -> None:
        async with self._changed:
            self.streams += step
            self._changed.notify_all()
