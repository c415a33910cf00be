"""What installation_proxy says of an installed app: its executable's name (`CFBundleExecutable`),
the name the kernel gives its process, which a JetsamEvent lists it by.

Asked with `Lookup` for the one bundle, over the provider the developer services use (lockdown
before iOS 17, the RSD tunnel's `.shim.remote` from 17 on), and remembered: an app keeps its
executable until it is reinstalled with another, which a run does not do.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from anemon.devices.base import DeviceError

if TYPE_CHECKING:
    from anemon.devices.pmd3.connection import Pmd3Connection

EXECUTABLE = "CFBundleExecutable"


class Executables:
    """Each bundle's executable name, asked of the phone the first time it is wanted."""

    def __init__(self, connection: Pmd3Connection) -> None:
        self.connection = connection
        self._names: dict[str, str] = {}

    async def name(self, bundle: str) -> str:
        """`bundle`'s executable name; "" when the phone does not have the app (not
        remembered: `app.install` may install it later). Raises DeviceError."""
        if bundle not in self._names:
            provider = await self.connection.developer_provider()
            try:
                found = await lookup(provider, bundle)
            except Exception as e:
                raise self.connection.error(e, bundle=bundle) from e
            if not found:
                return ""
            self._names[bundle] = found
        return self._names[bundle]

    async def known(self, bundle: str) -> str:
        """`name(bundle)`, or "" when the phone cannot be asked now: a run's watch then knows
        the app by the pids it launched, and asks again at the next report."""
        with contextlib.suppress(DeviceError):
            return await self.name(bundle)
        return ""


async def lookup(provider: Any, bundle: str) -> str:
    """installation_proxy's `CFBundleExecutable` for `bundle` ("": none, or not a string)."""
    from pymobiledevice3.services.installation_proxy import InstallationProxyService

    options = {"BundleIDs": [bundle], "ApplicationType": "Any",
               "ReturnAttributes": ["CFBundleIdentifier", EXECUTABLE]}  # fmt: skip
    async with InstallationProxyService(lockdown=provider) as proxy:
        result = await proxy.lookup(options)
    app = (result or {}).get(bundle)
    name = app.get(EXECUTABLE) if isinstance(app, dict) else None
    return name if isinstance(name, str) else ""
