"""`com.apple.instruments.server.services.deviceinfo`: the sysmon attribute lists (what
sysmontap can sample), the running processes, a pid's name."""

from __future__ import annotations

from typing import Any

from anemon.devices.virtual.dvt.connection import Channel, arguments, unknown
from anemon.devices.virtual.dvt.processcontrol import Processes

IDENTIFIER = "com.apple.instruments.server.services.deviceinfo"
PROCESS_ATTRIBUTES = ("pid", "name", "cpuUsage", "physFootprint", "memResidentSize",
                      "threadCount", "powerScore")  # fmt: skip
SYSTEM_ATTRIBUTES = ("vmFreeCount", "vmUsedCount", "vmPageSize", "physMemSize", "threadCount")


class DeviceInfo:
    def __init__(self, channel: Channel, sim: Processes) -> None:
        self.channel, self.sim = channel, sim

    async def call(self, selector: str, args: list[Any]) -> Any:
        if selector == "sysmonProcessAttributes":
            return list(PROCESS_ATTRIBUTES)
        if selector == "sysmonSystemAttributes":
            return list(SYSTEM_ATTRIBUTES)
        if selector == "runningProcesses":
            return [{"pid": u.pid, "name": u.name, "realAppName": u.name,
                     "isApplication": u.pid in self.sim.running()}
                    for u in self.sim.usage()]  # fmt: skip
        if selector in ("isRunningPid:", "execnameForPid:"):
            (pid,) = arguments(args, int)
            names = {u.pid: u.name for u in self.sim.usage()}
            return pid in names if selector == "isRunningPid:" else names.get(pid, "")
        raise unknown(selector)

    def close(self) -> None:
        """Nothing held."""
