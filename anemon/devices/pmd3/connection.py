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
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

from anemon.devices.base import DeviceError
from anemon.devices.pmd3 import dvt
from anemon.devices.pmd3.errors import (
    PairingNeeded,
    UsbmuxdBadReply,
    UsbmuxdSilent,
    ios_major,
    translate,
    usbmux_address_label,
)

T = TypeVar("T")
LOCKDOWN_PORT = 62078
"""lockdownd's port on the phone, over USB and over the network."""
ANSWER_S = 10.0
"""How long (real seconds) usbmuxd may take to list its devices, and usbmuxd or the phone's
lockdownd over the network to open a lockdown session: pymobiledevice3 waits forever on a
daemon that accepts a connection and never answers."""
MUX_FIELDS = (("devid", "DeviceID", int), ("serial", "SerialNumber", str),
              ("connection_type", "ConnectionType", str))  # fmt: skip
"""What pymobiledevice3 reads of each device usbmuxd lists (its field, usbmuxd's name, type)."""


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
        self._tunnelling = asyncio.Lock()
        self._close_rsd: dvt.Closer | None = None

    async def lockdown(self) -> Any:
        """The cached lockdown client, (re)connected on demand: callers that ask at the same
        time (the follow, the power reader, the telemetry) share one connection."""
        async with self._connecting:
            if self._lockdown is None:
                self._lockdown = await self.open_lockdown()
            return self._lockdown

    async def open_lockdown(self) -> Any:
        """A new lockdown client for this device (never waits on the Trust dialog, nor longer
        than ANSWER_S on a daemon that does not answer)."""
        _import_before_the_bound()
        if self.host:
            silent = f"the iPhone at {self.host}"
            lockdown = await answered(self._open_tcp(), silent, "check --host / device.host")
        else:
            lockdown = await answered(self._open_usbmux(), *_silent_usbmuxd(self.usbmux_address))
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

        # pymobiledevice3 lists the devices again on its way, and fails on one it cannot read
        await checked_devices(self.usbmux_address)
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
        async with self._tunnelling:  # callers at once (DVT, crash reports) share one tunnel
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


async def answered(work: Awaitable[T], who: str, advice: str) -> T:
    """`await work`, given up after ANSWER_S: `who` accepted the connection and did not
    answer (UsbmuxdSilent, transient: a follow retries)."""
    try:
        async with asyncio.timeout(ANSWER_S) as bound:
            return await work
    except TimeoutError:
        if not bound.expired():
            raise
    raise UsbmuxdSilent(
        f"{who} accepted the connection but did not answer in {ANSWER_S:g} s: {advice}",
        transient=True,
    )


def _silent_usbmuxd(address: str | None) -> tuple[str, str]:
    where = usbmux_address_label(address)
    return (
        f"usbmuxd at {where}",
        "restart usbmuxd, or point USBMUXD_SOCKET_ADDRESS at one that answers",
    )


async def list_devices(usbmux_address: str | None = None) -> list[Any]:
    """The devices usbmuxd lists (pymobiledevice3's MuxDevices), bounded by ANSWER_S and
    checked (`checked_devices`)."""
    _import_before_the_bound()
    return await answered(checked_devices(usbmux_address), *_silent_usbmuxd(usbmux_address))


def _import_before_the_bound() -> None:
    """What the bounded calls import, imported before ANSWER_S starts: an import (about a
    second) is no daemon's answer, and pymobiledevice3 leaks the socket of a connect it is
    cancelled in."""
    import pymobiledevice3.lockdown
    import pymobiledevice3.pair_records
    import pymobiledevice3.usbmux  # noqa: F401


async def checked_devices(usbmux_address: str | None) -> list[Any]:
    """usbmuxd's device list; one entry anemon cannot read refuses the whole reply in one
    line naming the field (pymobiledevice3 would fail on it in every later connection, with
    an AttributeError)."""
    from pymobiledevice3.usbmux import list_devices as listed

    where = usbmux_address_label(usbmux_address)
    refused = f"usbmuxd at {where} sent a device list anemon cannot read"
    advice = "restart usbmuxd, or point USBMUXD_SOCKET_ADDRESS at a real one"
    try:
        devices = await listed(usbmux_address=usbmux_address)
    except KeyError as e:  # pymobiledevice3 reading an entry
        raise UsbmuxdBadReply(f"{refused}: a device without {e}; {advice}") from e
    except (TypeError, AttributeError) as e:
        raise UsbmuxdBadReply(f"{refused}: DeviceList is not a list of devices; {advice}") from e
    except Exception as e:
        raise translate(e, address=usbmux_address) from e
    for device in devices:
        for attribute, name, kind in MUX_FIELDS:
            if problem := _unreadable(getattr(device, attribute), kind):
                raise UsbmuxdBadReply(f"{refused}: a device's {name} {problem}; {advice}")
    return devices


def _unreadable(value: object, kind: type) -> str | None:
    """What is wrong with a listed device's field, or None."""
    if value == "":
        return "is empty"
    if isinstance(value, kind) and not isinstance(value, bool):
        return None
    wanted = "an integer" if kind is int else "a string"
    return f"is {type(value).__name__} {repr(value)[:40]}, not {wanted}"


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
