"""The crash report services: `com.apple.crashreportcopymobile`, plain AFC (no VendContainer)
over the phone's CrashReporter folder (the simulator's reports: JetsamEvent-*.ips, ...), and
`com.apple.crashreportmover`, which moves pending reports into it and says `ping\\0` when done
(the simulator writes its reports there at once: nothing is pending)."""

from __future__ import annotations

import asyncio

from anemon.devices.virtual.afc import AfcSession, HouseArrest
from anemon.simulator.phone import CRASH_REPORTER

COPY_MOBILE = "com.apple.crashreportcopymobile"
MOVER = "com.apple.crashreportmover"
PING = b"ping\x00"


class CrashReports:
    """Both services over `house`'s simulator (and its AFC counters)."""

    def __init__(self, house: HouseArrest) -> None:
        self.house = house

    async def copy_mobile(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await AfcSession(self.house, CRASH_REPORTER, "").serve(reader, writer)

    async def mover(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(PING)
        await writer.drain()
        await reader.read()  # until the client hangs up
