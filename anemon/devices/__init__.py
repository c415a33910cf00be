"""Devices: one interface (base.py), one subpackage per backend, each holding its connection
in one object: sim/ (the simulated phone), devicectl/ (`Devicectl`), pmd3/ (`Pmd3Connection`);
pulled.py is the follow sim and devicectl share; virtual/ is the virtual iPhone for pmd3."""

from __future__ import annotations

from anemon.devices.base import Device
from anemon.errors import AnemonError

REAL_KINDS = ("devicectl", "pymobiledevice3")
POWER_KINDS = frozenset({"sim", "pymobiledevice3"})
"""Backends that read device power (devicectl cannot)."""


def reads_power(kind: str | None) -> bool | None:
    """Whether a backend of this kind reads device power; None: no backend (a mirrored log)."""
    return None if kind is None else kind in POWER_KINDS


"""Backends that drive a phone on the desk (the simulator is built from a plan instead)."""
CONNECTIONS = ("usb", "network")
"""How pymobiledevice3 reaches the phone: through usbmuxd, or lockdown over the network."""


def real_device(
    kind: str,
    device_id: str = "",
    poll_s: float = 2.0,
    *,
    connect: str = "usb",
    host: str = "",
    power_s: float = 1.0,
) -> Device:
    """A backend for an attached iPhone; imported lazily (pymobiledevice3 is slow to import).

    `connect="network"` (pymobiledevice3 only) reaches the phone at `host` (`HOST[:PORT]`)
    over the network; devicectl finds networked phones itself and ignores it. An empty host
    is a usage error (AnemonError): finding the phone by Bonjour is not done.
    """
    if connect not in CONNECTIONS:
        raise AnemonError(f"connect is usb or network, not {connect!r}")
    if kind == "devicectl":
        from anemon.devices.devicectl import DevicectlDevice

        return DevicectlDevice(device_id, poll_s=poll_s)
    if kind == "pymobiledevice3":
        from anemon.devices.pmd3 import Pmd3Device

        if connect == "network" and not host:
            raise AnemonError(
                'device.connect = "network" needs device.host (or --host): the iPhone\'s '
                "address on the network, HOST or HOST:PORT"
            )
        return Pmd3Device(
            device_id or None, connect=connect, host=host, poll_s=poll_s, power_s=power_s
        )
    raise ValueError(f"not a real device backend: {kind}")
