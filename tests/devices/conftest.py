"""Fixtures for the device tests: a virtual iPhone on loopback with a stand-in phone behind it,
the pymobiledevice3 backend pointed at it, and the one fake `xcrun devicectl` on PATH."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from anemon.devices.pmd3 import Pmd3Device
from anemon.devices.virtual import VirtualIPhone
from tests.devices.fake_xcrun import FakeXcrun
from tests.devices.helpers import BUNDLE, StandInPhone


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


@pytest.fixture
def fake_xcrun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeXcrun]:
    """A fake `xcrun devicectl` first on PATH (old JSON layout); its apps are killed after."""
    fake = FakeXcrun(tmp_path / "xcrun")
    for name, value in fake.environ().items():
        monkeypatch.setenv(name, value)
    yield fake
    fake.kill_all()
