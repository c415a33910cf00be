"""Fixtures for the device tests: a virtual iPhone on loopback with a stand-in phone behind it
(through usbmuxd, and over the network), the pymobiledevice3 backend pointed at it either way,
and the one fake `xcrun devicectl` on PATH."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from anemon.devices.pmd3 import Pmd3Device
from anemon.devices.virtual import NetworkLockdownd, VirtualIPhone
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
async def network(phone: VirtualIPhone) -> AsyncIterator[NetworkLockdownd]:
    """The same phone's lockdownd over the network (a loopback TCP port)."""
    async with NetworkLockdownd(phone) as lockdownd:
        yield lockdownd


@pytest.fixture
def pmd3(tmp_path: Path) -> Pmd3Device:
    """A backend that polls fast and keeps pymobiledevice3's pair records out of $HOME."""
    return Pmd3Device(poll_s=0.01, reconnect_s=0.01, pairing_records_cache_folder=tmp_path / "pair")


@pytest.fixture
def pmd3_network(network: NetworkLockdownd, tmp_path: Path) -> Pmd3Device:
    """The backend reaching the phone over the network (lockdown over TCP), not usbmuxd."""
    return Pmd3Device(
        connect="network",
        host=network.address,
        poll_s=0.01,
        reconnect_s=0.01,
        pairing_records_cache_folder=tmp_path / "pair",
    )


@pytest.fixture(params=["usb", "network"])
def either(
    request: pytest.FixtureRequest, pmd3: Pmd3Device, network: NetworkLockdownd, tmp_path: Path
) -> Pmd3Device:
    """The backend over usbmuxd, then over the network: a test runs once per path."""
    if request.param == "usb":
        return pmd3
    return Pmd3Device(
        connect="network",
        host=network.address,
        pairing_records_cache_folder=tmp_path / "pair-network",
    )


@pytest.fixture
def fake_xcrun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeXcrun]:
    """A fake `xcrun devicectl` first on PATH (old JSON layout); its apps are killed after."""
    fake = FakeXcrun(tmp_path / "xcrun")
    for name, value in fake.environ().items():
        monkeypatch.setenv(name, value)
    yield fake
    fake.kill_all()
