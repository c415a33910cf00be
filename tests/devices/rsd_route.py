"""The iOS 17+ route for the device tests: a virtual iPhone's RSD, listed by a stand-in tunneld
that anemon finds through ANEMON_TUNNELD_ADDRESS (never on the real tunneld's port)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from anemon.devices.pmd3 import dvt
from anemon.devices.virtual import VirtualIPhone
from anemon.devices.virtual.rsd import VirtualRsd
from anemon.devices.virtual.tunneld import VirtualTunneld
from tests.devices.helpers import TIMEOUT_S

IOS = "17.5.1"


@asynccontextmanager
async def tunnelled(
    phone: VirtualIPhone, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[VirtualRsd, VirtualTunneld]]:
    """`phone`'s RSD and the tunneld listing it, while the phone is plugged in."""
    async with VirtualRsd(phone) as rsd, VirtualTunneld() as tunneld:
        tunneld.add(rsd.tunnel(), rsd.up)
        monkeypatch.setenv(dvt.TUNNELD_ADDRESS, tunneld.address)
        yield rsd, tunneld


@asynccontextmanager
async def found(udid: str) -> AsyncIterator[Any]:
    """The real client's RSD for `udid`, as anemon finds it (tunneld through the seam)."""
    async with asyncio.timeout(TIMEOUT_S):
        rsd = await dvt.tunneld_rsd(udid)
    try:
        yield rsd
    finally:
        await rsd.close()
