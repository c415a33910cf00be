"""`com.apple.instruments.server.services.sysmontap`: every process's CPU and memory.

`setConfig:` says what to sample (`procAttrs`, `sysAttrs`, the period `ur` in ms); `start`
answers with one message (the client drops it) and then, every `ur` ms, sends a list of two
rows: `{Type: 7, Processes: {pid: [a value per procAttrs]}}` (the bench app, SpringBoard and
the rest) and `{Type: 33, SystemCPUUsage, System: [a value per sysAttrs]}`. cpuUsage is % of one
core, None in a process's first sample (there is no interval to measure it over yet);
physFootprint and memResidentSize are bytes. `stop` ends the rows. What some phones do is
`Misbehaviour`'s: rows slower than asked, withheld, with the app's values absurd, or garbled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from anemon.devices.virtual.dvt.connection import Channel, unknown
from anemon.devices.virtual.dvt.processcontrol import Processes
from anemon.devices.virtual.dvt.wire import Garbled, Malformed
from anemon.simulator.process import Usage

IDENTIFIER = "com.apple.instruments.server.services.sysmontap"
PAGE = 16_384
PHYSICAL_BYTES = 12_000_000_000
"""An iPhone 17 Pro's memory."""
SYSTEM_BYTES = 3_200_000_000
"""What the kernel and the system hold besides the listed processes (est.)."""
CPU_COUNT = 6
DEFAULT_MS = 500

DAEMONS = tuple(Usage(300 + i, f"daemon{i}", 3_000_000 + 40_000 * i, 0.0, 0.0) for i in range(320))
"""The rest of what a phone runs, idle, each listed in every row: an iPhone lists some 300
processes (est.), so a row costs a client what a phone's does (the simulator's few would not).
Their memory is in SYSTEM_BYTES."""

ABSURD = {"cpuUsage": 1e6, "physFootprint": -4096}
"""What a phone's counters give when they wrap or glitch."""


@dataclass
class Misbehaviour:
    """What a test makes the phone's sysmontap do as some phones do (mutable, read at every
    row; `floor_s` when the tap starts)."""

    floor_s: float = 0.0
    """Rows no more often than this, whatever `ur` asks (iOS 17+ phones: every 3-5 s)."""
    silent: bool = False
    """Send no rows (the tap stays open)."""
    withheld: int = 0
    """Rows not sent so far because of `silent`."""
    absurd: int = 0
    """How many of the next rows carry absurd values for the running app."""
    garbled: int = 0
    """How many of the next messages are bytes that are no archive (a damaged message)."""


_PROCESS: Mapping[str, Callable[[Usage], Any]] = {
    "pid": lambda u: u.pid,
    "name": lambda u: u.name,
    "physFootprint": lambda u: u.footprint_bytes,
    "memResidentSize": lambda u: u.footprint_bytes * 85 // 100,
    "threadCount": lambda u: 14,
    "powerScore": lambda u: round(u.cpu_pct * 0.6 + u.gpu_pct * 0.4, 2),
}


class Sysmontap:
    def __init__(
        self,
        channel: Channel,
        sim: Processes,
        clock: Callable[[], float],
        misbehaving: Misbehaviour,
    ) -> None:
        self.channel, self.sim, self.clock = channel, sim, clock
        self.misbehaving = misbehaving
        self.config: Mapping[str, Any] = {}
        self._seen: set[int] = set()

    async def call(self, selector: str, args: list[Any]) -> Any:
        if selector == "setConfig:":
            if len(args) != 1 or not isinstance(args[0], dict):
                raise Malformed("setConfig: takes one dictionary")
            self.config = args[0]
            return None
        if selector == "start":
            self.channel.send({"Status": "started"})  # the client drops this first message
            self.channel.every(max(self._period_s(), self.misbehaving.floor_s), self._sample)
            return None
        if selector == "stop":
            self.channel.quiet()
            return None
        raise unknown(selector)

    def close(self) -> None:
        """Nothing held: the rows stop with the channel."""

    def _period_s(self) -> float:
        period = self.config.get("ur", DEFAULT_MS)
        if isinstance(period, bool) or not isinstance(period, int | float) or period <= 0:
            period = DEFAULT_MS
        return max(1.0, float(period)) / 1000.0

    def _names(self, key: str) -> list[str]:
        names = self.config.get(key)
        return [str(n) for n in names] if isinstance(names, list) else []

    def _sample(self) -> None:
        if self.misbehaving.silent:
            self.misbehaving.withheld += 1
            return
        if self.misbehaving.garbled > 0:
            self.misbehaving.garbled -= 1
            self.channel.send(Garbled(b"bplist00 damaged on its way"))
            return
        usage = self.sim.usage()
        listed = usage + list(DAEMONS)
        mach = int(self.clock() * 24_000_000)  # the 24 MHz timebase
        processes = {u.pid: [self._value(name, u) for name in self._names("procAttrs")]
                     for u in listed}  # fmt: skip
        self._seen |= {u.pid for u in listed}
        self._spoil(processes)
        system = self._system(usage)
        cpu = sum(u.cpu_pct for u in usage)
        self.channel.send([
            {"Type": 7, "Processes": processes, "StartMachAbsTime": mach,
             "EndMachAbsTime": mach},
            {"Type": 33, "CPUCount": CPU_COUNT, "EnabledCPUs": CPU_COUNT,
             "SystemCPUUsage": {"CPU_TotalLoad": cpu, "CPU_UserLoad": cpu * 0.8,
                                "CPU_SystemLoad": cpu * 0.2},
             "System": [system.get(name) for name in self._names("sysAttrs")]},
        ])  # fmt: skip

    def _spoil(self, processes: dict[int, list[Any]]) -> None:
        if self.misbehaving.absurd <= 0:
            return
        self.misbehaving.absurd -= 1
        names = self._names("procAttrs")
        for pid in self.sim.running() & set(processes):
            for index, name in enumerate(names):
                processes[pid][index] = ABSURD.get(name, processes[pid][index])

    def _value(self, name: str, usage: Usage) -> Any:
        if name == "cpuUsage":
            return usage.cpu_pct if usage.pid in self._seen else None
        read = _PROCESS.get(name)
        return None if read is None else read(usage)

    def _system(self, usage: list[Usage]) -> dict[str, int]:
        used = SYSTEM_BYTES + sum(u.footprint_bytes for u in usage)
        return {
            "vmFreeCount": max(0, PHYSICAL_BYTES - used) // PAGE,
            "vmUsedCount": used // PAGE,
            "vmPageSize": PAGE,
            "physMemSize": PHYSICAL_BYTES,
            "threadCount": 14 * len(usage) + 600,
        }
