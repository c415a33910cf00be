"""DVT over the iOS 17+ route: the virtual iPhone's DTX server behind its RSD's dtservicehub,
found through the stand-in tunneld, driven by the real pymobiledevice3 client and by anemon's
backend."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from anemon.devices.base import LaunchRefused
from anemon.devices.pmd3 import Pmd3Device, dvt
from anemon.devices.virtual import VirtualIPhone
from anemon.devices.virtual.dvt import SERVICE_NAME as LOCKDOWN_DVT
from anemon.devices.virtual.rsd import DTSERVICEHUB
from anemon.devices.virtual.ticker import advance
from anemon.simulator import SimArmConfig, SimConfig, SimulatedIPhone
from tests.devices.helpers import BUNDLE
from tests.devices.test_rsd import IOS, tunnelled

TIMEOUT_S = 20
ARM = "minicpm5_1b_ane_pal8"
ENV = {"AB_MODEL": ARM, "AB_MODE": "ab", "AB_TRIALS": "2"}


@pytest.fixture
def sim() -> SimulatedIPhone:
    return SimulatedIPhone(SimConfig())


@pytest.fixture
async def ios17(
    sim: SimulatedIPhone, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[VirtualIPhone]:
    """An iOS 17 phone with the disk image mounted (DVT over RSD only), its time at 20x."""
    phone = VirtualIPhone(sim, bundles=[BUNDLE], product_version=IOS, developer_image=True,
                          console_poll_s=0.02)  # fmt: skip
    async with phone, tunnelled(phone, monkeypatch):
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        ticker = asyncio.create_task(advance([sim], speed=20.0, tick_s=0.02))
        yield phone
        ticker.cancel()
        await asyncio.gather(ticker, return_exceptions=True)


@pytest.fixture
async def client(ios17: VirtualIPhone) -> AsyncIterator[Any]:
    async with asyncio.timeout(TIMEOUT_S):
        connected = await dvt.tunneld_rsd(ios17.udid)
    yield connected
    await connected.close()


async def test_launch_and_kill_over_dtservicehub_with_the_real_client(
    client: Any, sim: SimulatedIPhone, ios17: VirtualIPhone
) -> None:
    from pymobiledevice3.services.dvt.instruments.dvt_provider import DvtProvider
    from pymobiledevice3.services.dvt.instruments.process_control import ProcessControl

    phone = ios17
    async with (
        asyncio.timeout(TIMEOUT_S),
        DvtProvider(client) as provider,
        ProcessControl(provider) as pc,
    ):
        pid = await pc.launch(BUNDLE, environment=dict(ENV))
        assert sim.running() == {pid}
        assert await pc.process_identifier_for_bundle_identifier(BUNDLE) == pid
        await pc.kill(pid)
        assert sim.running() == set()
    assert phone.service_starts[DTSERVICEHUB] == 1
    assert phone.service_starts[LOCKDOWN_DVT] == 0  # an iOS 17 phone has no lockdown DVT
    assert phone.instruments is not None and phone.instruments.stats.malformed == 0


async def test_an_unknown_channel_over_dtservicehub_is_refused(client: Any) -> None:
    from pymobiledevice3.dtx.exceptions import DTXNsError
    from pymobiledevice3.services.dvt.instruments.dvt_provider import DvtProvider
    from pymobiledevice3.services.dvt.instruments.process_control import ProcessControl

    async with asyncio.timeout(TIMEOUT_S), DvtProvider(client) as provider:
        with pytest.raises(DTXNsError, match="not available"):
            await provider.dtx.open_channel("com.apple.instruments.server.services.nothing")
        async with ProcessControl(provider) as pc:  # the connection goes on
            assert await pc.process_identifier_for_bundle_identifier(BUNDLE) == 0


async def test_the_backend_launches_on_an_ios17_phone_through_tunneld_and_rsd(
    ios17: VirtualIPhone, sim: SimulatedIPhone, tmp_path: Path
) -> None:
    """anemon's own path: lockdown says 17.5.1, the in-process tunnel is unavailable, tunneld
    (through the seam) gives the RSD, DVT goes over dtservicehub."""
    phone = ios17
    device = Pmd3Device(pairing_records_cache_folder=tmp_path / "pair")
    async with asyncio.timeout(TIMEOUT_S):
        pid = await device.launch(BUNDLE, ENV)
        assert sim.running() == {pid}
        await device.terminate(pid)
        assert sim.running() == set()
        await device.close()
    assert phone.service_starts[DTSERVICEHUB] >= 1
    assert phone.service_starts[LOCKDOWN_DVT] == 0


async def test_a_refused_launch_over_rsd_then_an_accepted_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sim = SimulatedIPhone(SimConfig(arms={ARM: SimArmConfig(profile=ARM, fault="busy",
                                                            fault_at_s=600)}))  # fmt: skip
    phone = VirtualIPhone(sim, bundles=[BUNDLE], product_version=IOS, developer_image=True)
    async with phone, tunnelled(phone, monkeypatch), asyncio.timeout(TIMEOUT_S):
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        device = Pmd3Device(pairing_records_cache_folder=tmp_path / "pair")
        with pytest.raises(LaunchRefused, match="Busy"):
            await device.launch(BUNDLE, ENV)
        sim.advance(601)
        assert await device.launch(BUNDLE, ENV) in sim.running()
        await device.close()
