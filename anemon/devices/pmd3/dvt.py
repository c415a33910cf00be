"""How DVT is reached from iOS 17 on: the RSD tunnel (session.py holds the DVT connection).

Before iOS 17 DVT is a lockdown service (needs the developer disk image mounted); from 17 on
it is only reachable through an RSD tunnel: in-process over USB on 17.4+
(`UserspaceRsdTunnel`), or the `pymobiledevice3 remote tunneld` daemon on 17.0-17.3.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from anemon.devices.base import DeviceError
from anemon.devices.pmd3.errors import translate

Closer = Callable[[], Awaitable[None]]
TUNNELD_ADDRESS = "ANEMON_TUNNELD_ADDRESS"
"""`HOST:PORT` of a tunneld that does not listen where the real one does (127.0.0.1:49151):
the virtual iPhone's stand-in (docs/devices.md, the virtual iPhone's "iOS 17+ route")."""


async def open_rsd(udid: str) -> tuple[Any, Closer]:
    """An RSD for iOS 17+: in-process tunnel first, then a running tunneld; and how to close it."""
    from pymobiledevice3.exceptions import UserspaceTunnelUnavailableError
    from pymobiledevice3.remote.userspace_tunnel import UserspaceRsdTunnel

    tunnel = UserspaceRsdTunnel(serial=udid, autopair=False, remotepairing_fallback=False)
    try:
        return await tunnel.aopen(), tunnel.aclose
    except UserspaceTunnelUnavailableError:
        pass  # iOS 17.0-17.3: no CoreDeviceProxy
    except Exception as e:
        raise translate(e, udid=udid, product_version="17") from e
    rsd = await tunneld_rsd(udid)
    return rsd, rsd.close


async def tunneld_rsd(udid: str) -> Any:
    """The RSD a running `pymobiledevice3 remote tunneld` holds for `udid`.

    The look-up is a short blocking HTTP request to tunneld on localhost (5 s cap).
    """
    from pymobiledevice3.exceptions import RSDRequiredError
    from pymobiledevice3.tunneld.api import get_tunneld_device_by_udid

    address = tunneld_address()
    try:
        rsd = await get_tunneld_device_by_udid(udid, address)
        if rsd is None:
            raise RSDRequiredError(udid, "17")
    except Exception as e:
        raise translate(e, udid=udid, product_version="17") from e
    return rsd


def tunneld_address() -> tuple[str, int]:
    """Where tunneld listens: `ANEMON_TUNNELD_ADDRESS` (HOST:PORT) if set, else its fixed port.
    A value that is not HOST:PORT is refused in one line."""
    from pymobiledevice3.tunneld.api import TUNNELD_DEFAULT_ADDRESS

    given = os.environ.get(TUNNELD_ADDRESS, "").strip()
    if not given:
        return TUNNELD_DEFAULT_ADDRESS
    host, _, port = given.removeprefix("[").rpartition(":")
    if not host or not port.isdigit():
        raise DeviceError(f"{TUNNELD_ADDRESS}={given!r} is not HOST:PORT (e.g. 127.0.0.1:49151)")
    return host.removesuffix("]"), int(port)
