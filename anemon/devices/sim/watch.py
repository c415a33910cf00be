"""What the sim backend sees of the bench app while a run goes (`SimDevice.watch`).

Every `process_s` of session time (the clock the backend paces its log pulls and power reads
by) the phone is brought to the present and read as the pymobiledevice3 backend reads a real
one over DVT and the crash report service:
- each report new in the CrashReporter folder since the watch began, read by the code that
  reads a real phone's (devices/reports.py): a jetsam's JetsamEvent names the app it killed;
- the end of each launch this backend made, once, in the words a phone's termination message
  gets (`exit_reason`);
- the running app's sample from the process model (anemon/simulator/process.py): sysmontap's
  CPU and footprint, graphics' GPU utilisation, in one reading.
While the host cannot reach the phone (its cable out, over USB) nothing is read: each stream
is a gap until it is back, and what happened meanwhile (an exit, a report) is news then.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Protocol

from anemon.clock import Clock
from anemon.devices import reports
from anemon.devices.base import AppExit, AppGap, AppNews, AppSample, exit_reason
from anemon.simulator import SimulatedIPhone
from anemon.simulator.phone import CRASH_REPORTER

GB = 1_000_000_000
STREAMS = ("exits", "sysmontap", "graphics", "reports")
"""What a real phone's watch reads, each of which goes silent with the phone."""
AWAY = "unplugged: the phone cannot be read until it is back on USB"


class Watched(Protocol):
    """What the watch reads of the backend (sim/device.py's SimDevice)."""

    phone: SimulatedIPhone
    clock: Clock
    process_s: float
    launched: list[int]
    """The pids of the backend's launches."""
    dropped: int
    """Reports that could not be read, counted here."""

    @property
    def reachable(self) -> bool: ...

    def sync(self) -> None: ...


class SimWatch:
    """The news of one bundle from the backend's launches, until closed."""

    def __init__(self, device: Watched, bundle: str) -> None:
        self.device = device
        self.phone = device.phone
        self.bundle = bundle
        device.sync()
        self._seen = set(self.phone.container_files(CRASH_REPORTER))
        """The reports listed so far: those there when the watch began are not this run's."""
        self._exited: set[int] = set()

    async def news(self) -> AsyncIterator[AppNews]:
        away = False
        while True:
            await self.device.clock.sleep(self.device.process_s)
            self.device.sync()
            if self.device.reachable == away:  # it went, or it came back
                away = not away
                state, reason = ("begin", AWAY) if away else ("end", "back")
                for stream in STREAMS:
                    yield AppGap(stream, state, reason)
            if away:
                continue
            for news in self._reports():
                yield news
            for news in self._exits():
                yield news
            sample = self._sample()
            if sample is not None:
                yield sample

    def _reports(self) -> Iterator[AppNews]:
        for name, data in sorted(self.phone.container_files(CRASH_REPORTER).items()):
            if name in self._seen:
                continue
            self._seen.add(name)
            try:
                crash = reports.app_crash(name, data, bundle=self.bundle, pids=self.device.launched)
            except reports.NotAReport:
                self.device.dropped += 1
                continue
            if crash is not None:
                yield crash

    def _exits(self) -> Iterator[AppExit]:
        for pid in self.device.launched:
            ended = self.phone.exit_of(pid)
            if ended is not None and pid not in self._exited:
                self._exited.add(pid)
                yield AppExit(pid, exit_reason(ended.code, ended.signal))

    def _sample(self) -> AppSample | None:
        pid = self.phone.pid_of(self.bundle)
        usage = next((u for u in self.phone.usage() if u.pid == pid), None)
        if usage is None or pid not in self.device.launched:
            return None
        return AppSample(pid, cpu_pct=usage.cpu_pct, mem_gb=usage.footprint_bytes / GB,
                         gpu_pct=usage.gpu_pct)  # fmt: skip
