"""DVT (the instruments server) on the virtual iPhone, as an iOS 14-16 phone with the developer
disk image mounted serves it: the lockdown service `SERVICE_NAME`, plain DTX (no SSL).

`connection.serve_dtx` serves one DTX connection on any stream pair (wire.py: the framing);
`Instruments` gives it the phone's services: process control, device info, sysmontap,
graphics and the condition inducer, over the simulator.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from anemon.devices.virtual.dvt import conditions, deviceinfo, graphics, processcontrol, sysmontap
from anemon.devices.virtual.dvt.conditions import Conditions
from anemon.devices.virtual.dvt.connection import Channel, DtxStats, ServiceFactory, serve_dtx
from anemon.devices.virtual.dvt.processcontrol import Processes

SERVICE_NAME = "com.apple.instruments.remoteserver.DVTSecureSocketProxy"


class Instruments:
    """The DVT services of one phone over `sim` (its installed apps `bundles`, its clock in
    Unix seconds `clock`), looking at the app every `poll_s` and sampling the GPU every
    `graphics_s`; what it saw is in `stats`, the condition it holds in `conditions`, and
    `misbehaving` is what a test makes it do as some phones do."""

    def __init__(
        self,
        sim: Processes,
        bundles: frozenset[str],
        clock: Callable[[], float],
        poll_s: float,
        *,
        graphics_s: float = 1.0,
        condition_changed: Callable[[str], None] | None = None,
    ) -> None:
        self.sim, self.bundles, self.clock = sim, bundles, clock
        self.poll_s, self.graphics_s = poll_s, graphics_s
        self.stats = DtxStats()
        self.conditions = Conditions(sim, condition_changed)
        self.misbehaving = sysmontap.Misbehaviour()

    def services(self) -> dict[str, ServiceFactory]:
        sim, clock = self.sim, self.clock

        def process_control(channel: Channel) -> processcontrol.ProcessControl:
            return processcontrol.ProcessControl(channel, sim, self.bundles, clock, self.poll_s)

        return {
            processcontrol.IDENTIFIER: process_control,
            deviceinfo.IDENTIFIER: lambda channel: deviceinfo.DeviceInfo(channel, sim),
            sysmontap.IDENTIFIER: lambda channel: sysmontap.Sysmontap(channel, sim, clock,
                                                                      self.misbehaving),
            graphics.IDENTIFIER: lambda channel: graphics.Graphics(channel, sim, clock,
                                                                   self.graphics_s),
            conditions.IDENTIFIER: lambda channel: conditions.ConditionInducer(
                channel, self.conditions),
        }  # fmt: skip

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await serve_dtx(reader, writer, self.services(), self.stats)


__all__ = ["SERVICE_NAME", "DtxStats", "Instruments", "Processes", "serve_dtx"]
