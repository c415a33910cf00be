"""Devices: one interface (base.py), one subpackage per backend, each holding its connection
in one object: sim/ (the simulated phone), devicectl/ (`Devicectl`), pmd3/ (`Pmd3Connection`);
pulled.py is the follow sim and devicectl share; virtual/ is the virtual iPhone for pmd3."""

from __future__ import annotations

from anemon.devices.base import Device

REAL_KINDS = ("devicectl", "pymobiledevice3")
"""Backends that drive a phone on the desk (the simulator is built from a plan instead)."""


def real_device(kind: str, device_id: str = "", poll_s: float = 2.0) -> Device:
    """A backend for an attached iPhone; imported lazily (pymobiledevice3 is slow to import)."""
    if kind == "devicectl":
        from anemon.devices.devicectl import DevicectlDevice

        return DevicectlDevice(device_id, poll_s=poll_s)
    if kind == "pymobiledevice3":
        from anemon.devices.pmd3 import Pmd3Device

        return Pmd3Device(device_id or None, poll_s=poll_s)
    raise ValueError(f"not a real device backend: {kind}")
