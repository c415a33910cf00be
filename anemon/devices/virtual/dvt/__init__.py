"""DVT (the instruments server) on the virtual iPhone, as an iOS 14-16 phone with the developer
disk image mounted serves it: the lockdown service `SERVICE_NAME`, plain DTX (no SSL).

`connection.serve_dtx` serves one DTX connection on any stream pair (wire.py: the framing);
`Instruments` gives it the phone's services: process control (processcontrol.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from anemon.devices.virtual.dvt.connection import Channel, DtxStats, ServiceFactory, serve_dtx
from anemon.devices.virtual.dvt.processcontrol import IDENTIFIER as PROCESS_CONTROL
from anemon.devices.virtual.dvt.processcontrol import ProcessControl, Processes

SERVICE_NAME = "com.apple.instruments.remoteserver.DVTSecureSocketProxy"


class Instruments:
    """The DVT services of one phone over `sim` (its installed apps `bundles`, its clock in
    Unix seconds `clock`), looking at the app every `poll_s`; what it saw is in `stats`."""

    def __init__(
        self,
        sim: Processes,
        bundles: frozenset[str],
        clock: Callable[[], float],
        poll_s: float,
    ) -> None:
        self.sim, self.bundles, self.clock, self.poll_s = sim, bundles, clock, poll_s
        self.stats = DtxStats()

    def services(self) -> dict[str, ServiceFactory]:
        def process_control(channel: Channel) -> ProcessControl:
            return ProcessControl(channel, self.sim, self.bundles, self.clock, self.poll_s)

        return {PROCESS_CONTROL: process_control}

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await serve_dtx(reader, writer, self.services(), self.stats)


__all__ = ["SERVICE_NAME", "DtxStats", "Instruments", "Processes", "serve_dtx"]
