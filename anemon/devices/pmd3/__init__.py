"""The `pymobiledevice3` backend: an iPhone through usbmuxd, on macOS, Linux and Windows.

device.py is the Device; connection.py its connection (`Pmd3Connection`: lockdown over usbmuxd
or over the network, tunnel, errors); follow.py mirrors the log over AFC, console.py reads
os_trace, power.py reads device power (IOPMPowerSource), dvt.py launches and kills, install.py
installs in a child process, errors.py says what went wrong. Importing this package does not
import pymobiledevice3: each function imports what it uses.
"""

from anemon.devices.pmd3.connection import Pmd3Connection
from anemon.devices.pmd3.device import Pmd3Device, list_attached, make_device, telemetry_from
from anemon.devices.pmd3.power import PowerReader, PowerReading, power_from

__all__ = [
    "Pmd3Connection",
    "Pmd3Device",
    "PowerReader",
    "PowerReading",
    "list_attached",
    "make_device",
    "power_from",
    "telemetry_from",
]
