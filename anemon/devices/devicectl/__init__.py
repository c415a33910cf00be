"""The `devicectl` backend: Apple's `xcrun devicectl` (Xcode 15+, macOS) as a subprocess.

device.py is the Device; runner.py its connection (`Devicectl`); json.py and errors.py read
what devicectl writes and map its failures to typed DeviceErrors.
"""

from anemon.devices.devicectl.device import DevicectlDevice, list_attached, make_device
from anemon.devices.devicectl.runner import Devicectl

__all__ = ["Devicectl", "DevicectlDevice", "list_attached", "make_device"]
