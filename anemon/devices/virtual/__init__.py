"""A virtual iPhone on loopback: usbmuxd, lockdownd, diagnostics, house_arrest/AFC, os_trace,
the crash report services, installation_proxy and, on an iOS 16 phone with the developer disk
image, DVT.

For tests and for anyone without a phone: the real pymobiledevice3 client talks to a simulated
phone, through usbmuxd (`VirtualIPhone`, as over USB) and, with `NetworkLockdownd(phone)`
beside it, over the network (lockdown over TCP, as a paired phone on Wi-Fi). Several phones
with distinct UDIDs share one usbmuxd through `VirtualUsbmuxd(phones)`.
`python -m anemon.devices.virtual` runs one (or `--count N` / several `--udid`) and prints what
to export.
"""

from anemon.devices.virtual.afc import AfcStats
from anemon.devices.virtual.lockdownd import NetworkLockdownd
from anemon.devices.virtual.phone import DEFAULT_UDID, VirtualIPhone
from anemon.devices.virtual.usbmuxd import VirtualUsbmuxd

__all__ = [
    "DEFAULT_UDID",
    "AfcStats",
    "NetworkLockdownd",
    "VirtualIPhone",
    "VirtualUsbmuxd",
]
