"""The crash report services: `com.apple.crashreportcopymobile`, plain AFC (no VendContainer)
over the phone's CrashReporter folder (the simulator's reports: JetsamEvent-*.ips, ...), and
`com.apple.crashreportmover`, which moves pending reports into it and says `ping\\0` when done
(the simulator writes its reports there at once: nothing is pending).

A report's modification time (`st_mtime`) is when the phone wrote it: the `timestamp` its
header line gives ("2026-12-02 05:10:00.00 +0000", written with it), else the phone's time now.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json

from anemon.devices.virtual.afc import AfcSession, HouseArrest
from anemon.simulator.phone import CRASH_REPORTER

COPY_MOBILE = "com.apple.crashreportcopymobile"
MOVER = "com.apple.crashreportmover"
PING = b"ping\x00"
TIMESTAMP = "%Y-%m-%d %H:%M:%S.%f %z"
"""A report header's `timestamp`, as pycrashreport reads it."""


class CrashReports:
    """Both services over `house`'s simulator (and its AFC counters)."""

    def __init__(self, house: HouseArrest) -> None:
        self.house = house

    async def copy_mobile(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await AfcSession(self.house, CRASH_REPORTER, "", written_ns).serve(reader, writer)

    async def mover(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(PING)
        await writer.drain()
        await reader.read()  # until the client hangs up


def written_ns(data: bytes) -> int | None:
    """When the report `data` was written, in ns since the epoch, from its header line (None:
    it has no readable `timestamp`)."""
    with contextlib.suppress(ValueError, TypeError, KeyError):
        header = json.loads(data.split(b"\n", 1)[0])
        when = datetime.datetime.strptime(header["timestamp"], TIMESTAMP)
        return int(when.timestamp() * 1e9)
    return None
