"""What the device tests share besides fixtures: a tiny stand-in phone for the virtual iPhone,
and the virtual iPhone run in a thread for tests whose code under test runs its own loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from anemon.devices.virtual import VirtualIPhone

BUNDLE = "com.example.bench"
LOG = "Documents/sustain/bench.log"
TIMEOUT_S = 15
T = TypeVar("T")


@dataclass
class StandInTelemetry:
    battery_percent: float = 87.4
    charging: bool = True
    plugged: bool = True
    temperature_c: float = 31.25
    free_bytes: int = 38_500_000_000
    total_bytes: int = 128_000_000_000
    thermal: int = 1
    power_w: float = 1.0
    amperage_ma: int = 1200
    """Charging: the charger's current (positive); unplugged it is -power_w / voltage."""
    voltage_mv: int = 4100
    capacity_mah: int = 4250


@dataclass
class StandInPhone:
    """The SimulatedIPhone facade the servers read, with files the test writes itself."""

    files: dict[str, bytearray] = field(default_factory=dict)
    readings: StandInTelemetry = field(default_factory=StandInTelemetry)
    now: float = 0.0

    def telemetry(self) -> StandInTelemetry:
        return self.readings

    def container_files(self, bundle: str) -> dict[str, bytes]:
        return {path: bytes(data) for path, data in self.files.items()} if bundle == BUNDLE else {}

    def read_container_file(self, bundle: str, path: str, offset: int, size: int) -> bytes:
        if bundle != BUNDLE or path not in self.files:
            raise FileNotFoundError(path)
        return bytes(self.files[path][offset : offset + size])

    def append(self, text: str, path: str = LOG) -> None:
        self.files.setdefault(path, bytearray()).extend(text.encode())


class PhoneThread:
    """The virtual iPhone in a background thread's event loop (main() runs its own loop)."""

    def __init__(self, phone: VirtualIPhone) -> None:
        self.phone = phone
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> VirtualIPhone:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.phone.start(), self.loop).result(TIMEOUT_S)
        return self.phone

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` in the phone's loop (e.g. start a `NetworkLockdownd` beside it)."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(TIMEOUT_S)

    def __exit__(self, *_: object) -> None:
        asyncio.run_coroutine_threadsafe(self.phone.stop(), self.loop).result(TIMEOUT_S)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(TIMEOUT_S)
        self.loop.close()
