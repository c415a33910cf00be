"""The fixtures of the DVT tests: a virtual iPhone serving DVT, parameterised by route."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from anemon.devices.virtual import VirtualIPhone
from anemon.devices.virtual.ticker import advance
from anemon.simulator import SimConfig, SimulatedIPhone
from tests.devices.dvt.helpers import ROUTES, SPEED, VERSIONS, DvtPhone
from tests.devices.helpers import BUNDLE
from tests.devices.rsd_route import tunnelled


@pytest.fixture(params=ROUTES)
def route(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def sim_config() -> SimConfig:
    """The simulated phone's setup (a test overrides it for its faults)."""
    return SimConfig()


@pytest.fixture
def speed() -> float:
    """Plan (and simulated) seconds per real second."""
    return SPEED


@pytest.fixture
async def dvt_phone(
    route: str,
    sim_config: SimConfig,
    speed: float,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> AsyncIterator[DvtPhone]:
    sim = SimulatedIPhone(sim_config)
    virtual = VirtualIPhone(sim, bundles=[BUNDLE], product_version=VERSIONS[route],
                            developer_image=True, console_poll_s=0.02)  # fmt: skip
    async with virtual, contextlib.AsyncExitStack() as stack:
        monkeypatch.setenv("USBMUXD_SOCKET_ADDRESS", virtual.usbmux_address)
        ticker = asyncio.create_task(advance([sim], speed=speed, tick_s=0.02))
        phone = DvtPhone(virtual, sim, tmp_path / "pair", route, speed)
        if route == "rsd":
            phone.rsd, _ = await stack.enter_async_context(tunnelled(virtual, monkeypatch))
        try:
            yield phone
        finally:
            ticker.cancel()
            await asyncio.gather(ticker, return_exceptions=True)
            for device in phone.devices:
                await device.close()
