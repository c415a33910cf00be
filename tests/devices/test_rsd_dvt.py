"""DVT over the iOS 17+ route: the virtual iPhone's DTX server behind its RSD's dtservicehub,
found through the stand-in tunneld, driven by the real pymobiledevice3 client (anemon's whole
plans over it: tests/devices/dvt, route "rsd")."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from anemon.devices.virtual import VirtualIPhone
from anemon.devices.virtual.dvt import SERVICE_NAME as LOCKDOWN_DVT
from anemon.devices.virtual.rsd import DTSERVICEHUB
from anemon.devices.virtual.ticker import advance
from anemon.simulator import SimConfig, SimulatedIPhone
from tests.devices.helpers import BUNDLE
from tests.devices.rsd_route import IOS, found, tunnelled

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
    async with found(ios17.udid) as rsd:
        yield rsd


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
