"""What the device tests share besides fixtures: a tiny stand-in phone for the virtual iPhone,
the virtual iPhone (or a usbmuxd of several) run in a thread for tests whose code under test
runs its own loop, and a usbmuxd that never answers."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from anemon.devices.virtual.server import LoopbackServer

BUNDLE = "com.example.bench"
LOG = "Documents/sustain/bench.log"
TIMEOUT_S = 15
T = TypeVar("T")
S = TypeVar("S", bound=LoopbackServer)


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


class PhoneThread(Generic[S]):
    """The virtual iPhone (or a `VirtualUsbmuxd`) in a background thread's event loop (main()
    runs its own loop)."""

    def __init__(self, phone: S) -> None:
        self.phone = phone
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> S:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.phone.start(), self.loop).result(TIMEOUT_S)
        return self.phone

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` in the phone's loop (e.g. start a `NetworkLockdownd` beside it)."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(TIMEOUT_S)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` in the phone's loop in the background, until the thread stops."""
        asyncio.run_coroutine_threadsafe(work, self.loop)

    async def call(self, fn: Callable[[], T]) -> T:
        """`fn()` in the phone's loop, awaited from another loop: the simulated phones behind
        the servers are read and driven from that loop only."""

        async def work() -> T:
            return fn()

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work(), self.loop))

    def __exit__(self, *_: object) -> None:
        asyncio.run_coroutine_threadsafe(self.phone.stop(), self.loop).result(TIMEOUT_S)
        asyncio.run_coroutine_threadsafe(_cancel_the_rest(), self.loop).result(TIMEOUT_S)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(TIMEOUT_S)
        self.loop.close()


async def _cancel_the_rest() -> None:
    """Cancel what `spawn` started (and anything else left), before the loop stops."""
    tasks = asyncio.all_tasks() - {asyncio.current_task()}
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class SilentUsbmuxd:
    """A usbmuxd on a loopback port that accepts connections and never answers (a context
    manager): `address` for USBMUXD_SOCKET_ADDRESS, `accepted` set at its first connection."""

    def __enter__(self) -> SilentUsbmuxd:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.accepted = threading.Event()
        self._connections: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()
        return self

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:  # shut down by __exit__
                return
            self._connections.append(connection)
            self.accepted.set()

    def __exit__(self, *_: object) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        self.listener.close()
        self._thread.join(TIMEOUT_S)
        for connection in self._connections:
            connection.close()
