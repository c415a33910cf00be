"""The pymobiledevice3 backend's one connection object: lockdown, then the services over it.

`Pmd3Connection` owns what the backend's modules share: which phone (udid, usbmuxd address,
pair records), the lockdown client (connected on demand, dropped after an unplug so that the
next call reconnects), the RSD tunnel the developer services need from iOS 17 on (kept open
until `close`), and the translation of pymobiledevice3's exceptions into DeviceErrors that
name this phone. The follow, the console and the launch receive it (docs/devices.md,
"pymobiledevice3").
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from anemon.devices.base import DeviceError
from anemon.devices.pmd3 import dvt
from anemon.devices.pmd3.errors import PairingNeeded, ios_major, translate


class Pmd3Connection:
    """One iPhone through usbmuxd (the first attached one unless `udid` is given)."""

    def __init__(
        self,
        udid: str | None = None,
        *,
        usbmux_address: str | None = None,
        pairing_records_cache_folder: Path | None = None,
    ) -> None:
        self.udid = udid
        self.usbmux_address = usbmux_address
        """None: `USBMUXD_SOCKET_ADDRESS`, or the system's usbmuxd."""
        self.product_version = ""
        """The iOS version, known once connected."""
        self._pair_dir = pairing_records_cache_folder
        self._lockdown: Any = None
        self._rsd: Any = None
        self._close_rsd: dvt.Closer | None = None

    async def lockdown(self) -> Any:
        """The cached lockdown client, (re)connected on demand."""
        if self._lockdown is None:
            self._lockdown = await self.open_lockdown()
        return self._lockdown

    async def open_lockdown(self) -> Any:
        """A new lockdown client for this device (never waits on the Trust dialog)."""
        from pymobiledevice3.lockdown import create_using_usbmux

        try:
            lockdown = await create_using_usbmux(
                serial=self.udid,
                autopair=False,
                usbmux_address=self.usbmux_address,
                pairing_records_cache_folder=self._pair_dir,
            )
        except Exception as e:
            raise self.error(e) from e
        if not lockdown.paired:
            await lockdown.close()
            raise PairingNeeded(
                "this computer is not paired with the iPhone: unlock it, tap Trust, or run "
                "`pymobiledevice3 lockdown pair`"
            )
        self.udid = self.udid or lockdown.udid  # reconnect to this phone, not another one
        self.product_version = lockdown.product_version
        return lockdown

    async def developer_provider(self) -> Any:
        """What DVT runs over: lockdown before iOS 17; an RSD tunnel from 17 on."""
        lockdown = await self.lockdown()
        if ios_major(self.product_version) < 17:
            return lockdown
        if self._rsd is None:
            self._rsd, self._close_rsd = await dvt.open_rsd(str(self.udid))
        return self._rsd

    async def drop(self) -> None:
        """Forget the lockdown client (after an unplug): the next call reconnects."""
        lockdown, self._lockdown = self._lockdown, None
        if lockdown is not None:
            with contextlib.suppress(Exception):
                await lockdown.close()

    async def close(self) -> None:
        """Drop the lockdown client and close the tunnel."""
        await self.drop()
        if self._close_rsd is not None:
            close, self._close_rsd, self._rsd = self._close_rsd, None, None
            with contextlib.suppress(Exception):
                await close()

    def error(self, e: BaseException, bundle: str | None = None) -> DeviceError:
        """The DeviceError for `e`, naming this phone and its usbmuxd."""
        return translate(
            e,
            address=self.usbmux_address,
            udid=self.udid,
            bundle=bundle,
            product_version=self.product_version,
        )
