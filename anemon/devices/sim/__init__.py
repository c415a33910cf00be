"""The `sim` backend: the simulated iPhone (anemon/simulator) driven like a real one."""

from anemon.devices.sim.device import (
    SimDevice,
    SimDeviceSpec,
    host_reading,
    list_attached,
    make_device,
)

__all__ = ["SimDevice", "SimDeviceSpec", "host_reading", "list_attached", "make_device"]
