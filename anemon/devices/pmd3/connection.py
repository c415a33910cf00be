"""The pymobiledevice3 backend's one connection object: lockdown, then the services over it.

`Pmd3Connection` owns what the backend's modules share: which phone (udid, usbmuxd address,
pair records), the lockdown client (connected on demand, dropped after an unplug so that the
next call reconnects), the RSD tunnel the developer services need from iOS 17 on (kept open
until `close`), and the translation of pymobiledevice3's exceptions into DeviceErrors that
name this phone. The follow, the console, the power reader and the launch receive it
(docs/devices.md, "pymobiledevice3").

Two ways to reach the phone: through usbmuxd (`host` None: USB, or whatever usbmuxd lists), or
over the network straight to the phone's lockdownd (`host` = its address, `HOST` or
`HOST:PORT`, port 62078 by default): pymobiledevice3's `create_using_tcp`, whose services then
open their own TCP connections to the phone, so the cable can come out. The phone must be
paired with this computer already (over USB, once) and have Wi-Fi connections on
(`pymobiledevice3 lockdown wifi-connections on`). pymobiledevice3 looks the pair record up by
the host name on this path, so anemon looks it up by UDID itself (usbmuxd, then the system's
lockdown folder, then pymobiledevice3's own folder) and hands it over; with no UDID given it
first asks the phone for its UDID over an unpaired connection.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from anemon.devices.base import DeviceError
from anemon.devices.pmd3 import dvt
from anemon.devices.pmd3.errors import PairingNeeded, ios_major, translate

LOCKDOWN_PORT = 62078
"""lockdownd's port on the phone, over USB and over the network."""


class Pmd3Connection:
    """One iPhone through usbmuxd (the first attached one unless `udid` is given), or over the
    network at `host`."""

    def __init__(
        self,
        udid: str | None = None,
        *,
        usbmux_address: str | None = None,
        host: str | None = None,
        pairing_records_cache_folder: Path | None = None,
    ) -> None:
        self.udid = udid
        self.usbmux_address = usbmux_address
        """None: `USBMUXD_SOCKET_ADDRESS`, or the system's usbmuxd."""
        self.host = host or None
        """The phone's network address (`HOST` or `HOST:PORT`): lockdown over TCP, not usbmuxd."""
        self.product_version = ""
        """The iOS version, known once connected."""
        self._pair_dir = pairing_records_cache_folder
        self._lockdown: Any = None
        self._connecting = asyncio.Lock()
        self._rsd: Any = None
        self._close_rsd: dvt.Closer | None = None

    async def lockdown(self) -> Any:
        """The cached lockdown client, (re)connected on demand: callers that ask at the same
        time (the follow, the power reader, the telemetry) share one connection."""
        async with self._connecting:
            if self._lockdown is None:
                self._lockdown = await self.open_lockdown()
            return self._lockdown

    async def open_lockdown(self) -> Any:
        """A new lockdown client for this device (never waits on the Trust dialog)."""
        lockdown = await (self._open_tcp() if self.host else self._open_usbmux())
        if not lockdown.paired:
            await lockdown.close()
            if self.host:
                raise PairingNeeded(
                    f"no pair record for the iPhone at {self.host}: pair it over USB first "
                    "(`pymobiledevice3 lockdown pair`), then turn on "
                    "`pymobiledevice3 lockdown wifi-connections on`"
                )
            raise PairingNeeded(
                "this computer is not paired with the iPhone: unlock it, tap Trust, or run "
                "`pymobiledevice3 lockdown pair`"
            )
        if self.udid and lockdown.udid and lockdown.udid != self.udid:
            await lockdown.close()
            raise DeviceError(f"the iPhone at {self.host} is {lockdown.udid}, not {self.udid}")
        self.udid = self.udid or lockdown.udid  # reconnect to this phone, not another one
        self.product_version = lockdown.product_version
        return lockdown

    async def _open_usbmux(self) -> Any:
        from pymobiledevice3.lockdown import create_using_usbmux

        try:
            return await create_using_usbmux(
                serial=self.udid,
                autopair=False,
                usbmux_address=self.usbmux_address,
                pairing_records_cache_folder=self._pair_dir,
            )
        except Exception as e:
            raise self.error(e) from e

    async def _open_tcp(self) -> Any:
        """Lockdown over TCP at `host`, paired with the record anemon found by UDID."""
        from pymobiledevice3.lockdown import create_using_tcp

        hostname, port = split_host(str(self.host))
        lockdown = None
        try:
            record = await self._pair_record(self.udid) if self.udid else None
            lockdown = await create_using_tcp(
                hostname=hostname,
                autopair=False,
                pair_record=record,
                pairing_records_cache_folder=self._pair_dir,
                port=port,
                keep_alive=True,
            )
            if not lockdown.paired and record is None and lockdown.udid:
                # The UDID was not known: the phone said it; pair this connection with its record.
                lockdown.pair_record = await self._pair_record(lockdown.udid)
                if lockdown.pair_record is not None:
                    await lockdown.validate_pairing()
        except Exception as e:
            if lockdown is not None:
                with contextlib.suppress(Exception):
                    await lockdown.close()
            raise self.error(e) from e
        return lockdown

    async def _pair_record(self, udid: str) -> dict[str, Any] | None:
        """This computer's pair record for `udid`: usbmuxd's, the system's, or pymobiledevice3's."""
        from pymobiledevice3.pair_records import (
            create_pairing_records_cache_folder,
            get_preferred_pair_record,
        )

        folder = create_pairing_records_cache_folder(self._pair_dir)
        record = await get_preferred_pair_record(udid, folder, usbmux_address=self.usbmux_address)
        return dict(record) if record else None

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
        """The DeviceError for `e`, naming this phone and its usbmuxd (or its address)."""
        return translate(
            e,
            address=self.usbmux_address,
            udid=self.udid,
            bundle=bundle,
            product_version=self.product_version,
            host=self.host,
        )


def split_host(host: str) -> tuple[str, int]:
    """("10.0.0.5", 62078) for "10.0.0.5"; a port after the last colon ("HOST:PORT",
    "[::1]:PORT"); a bare IPv6 address keeps lockdownd's port."""
    if host.startswith("["):
        address, _, rest = host[1:].partition("]")
        port = rest.removeprefix(":")
        return address, int(port) if rest.startswith(":") and port.isdigit() else LOCKDOWN_PORT
    name, colon, port = host.rpartition(":")
    if colon and ":" not in name and port.isdigit():
        return name, int(port)
    return host, LOCKDOWN_PORT
