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
from anemon.devices.virtual.dvt import Instruments
from anemon.devices.virtual.rsd import DTSERVICEHUB, VirtualRsd
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
async def served(
    sim: SimulatedIPhone, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[VirtualIPhone, VirtualRsd]]:
    """An iOS 17 phone with the disk image mounted (DVT over RSD only), its time at 20x."""
    phone = VirtualIPhone(sim, bundles=[BUNDLE], product_version=IOS, developer_image=True)
    instruments = Instruments(sim, phone.bundles, phone.sim_time_s, 0.02)
    async with phone, tunnelled(phone, monkeypatch, instruments) as (rsd, _):
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        ticker = asyncio.create_task(advance([sim], speed=20.0, tick_s=0.02))
        yield phone, rsd
        ticker.cancel()
        await asyncio.gather(ticker, return_exceptions=True)


@pytest.fixture
async def client(served: tuple[VirtualIPhone, VirtualRsd]) -> AsyncIterator[Any]:
    async with asyncio.timeout(TIMEOUT_S):
        connected = await dvt.tunneld_rsd(served[0].udid)
    yield connected
    await connected.close()


async def test_launch_and_kill_over_dtservicehub_with_the_real_client(
    client: Any, sim: SimulatedIPhone, served: tuple[VirtualIPhone, VirtualRsd]
) -> None:
    from pymobiledevice3.services.dvt.instruments.dvt_provider import DvtProvider
    from pymobiledevice3.services.dvt.instruments.process_control import ProcessControl

    phone, rsd = served
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
    assert rsd.instruments is not None and rsd.instruments.stats.malformed == 0


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
    served: tuple[VirtualIPhone, VirtualRsd], sim: SimulatedIPhone, tmp_path: Path
) -> None:
    """anemon's own path: lockdown says 17.5.1, the in-process tunnel is unavailable, tunneld
    (through the seam) gives the RSD, DVT goes over dtservicehub."""
    phone, _ = served
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
    phone = VirtualIPhone(sim, bundles=[BUNDLE], product_version=IOS)
    instruments = Instruments(sim, phone.bundles, phone.sim_time_s, 0.02)
    async with phone, tunnelled(phone, monkeypatch, instruments), asyncio.timeout(TIMEOUT_S):
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", phone.usbmux_address)
        device = Pmd3Device(pairing_records_cache_folder=tmp_path / "pair")
        with pytest.raises(LaunchRefused, match="Busy"):
            await device.launch(BUNDLE, ENV)
        sim.advance(601)
        assert await device.launch(BUNDLE, ENV) in sim.running()
        await device.close()
