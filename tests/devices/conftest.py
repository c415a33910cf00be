"""Fixtures for the device tests: a virtual iPhone on loopback, and a tiny stand-in phone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from anemon.devices.pmd3 import Pmd3Device
from anemon.devices.virtual import VirtualIPhone

BUNDLE = "com.example.bench"
LOG = "Documents/sustain/bench.log"


@dataclass
class StandInTelemetry:
    battery_percent: float = 87.4
    charging: bool = True
    plugged: bool = True
    temperature_c: float = 31.25
    free_bytes: int = 38_500_000_000
    total_bytes: int = 128_000_000_000
    thermal: int = 1


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


@pytest.fixture
def stand_in() -> StandInPhone:
    return StandInPhone()


@pytest.fixture
async def phone(
    stand_in: StandInPhone, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[VirtualIPhone]:
    async with VirtualIPhone(stand_in, bundles=[BUNDLE]) as virtual:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", virtual.usbmux_address)
        yield virtual


@pytest.fixture
def pmd3(tmp_path: Path) -> Pmd3Device:
    """A backend that polls fast and keeps pymobiledevice3's pair records out of $HOME."""
    return Pmd3Device(poll_s=0.01, reconnect_s=0.01, pairing_records_cache_folder=tmp_path / "pair")
