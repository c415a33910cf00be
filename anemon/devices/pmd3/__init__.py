"""The `pymobiledevice3` backend: an iPhone through usbmuxd, on macOS, Linux and Windows.

device.py is the Device; connection.py its connection (`Pmd3Connection`: lockdown over usbmuxd
or over the network, tunnel, errors); follow.py mirrors the log over AFC, console.py reads
os_trace, power.py reads device power (IOPMPowerSource), session.py holds the run's one DVT
connection (launch, kill, exits, a condition) and dvt.py reaches it from iOS 17 on, watch.py
sees the app over it (samples.py, reports.py read what comes), install.py installs in a child
process, errors.py says what went wrong. Importing this package does not import
pymobiledevice3: each function imports what it uses.

pymobiledevice3's log records (a refused DTX channel is logged with its traceback) go nowhere:
with no handler Python would print them on stderr, over the dashboard. anemon says what went
wrong itself, in one line.
"""

import logging

from anemon.devices.pmd3.connection import Pmd3Connection
from anemon.devices.pmd3.device import Pmd3Device, list_attached, make_device, telemetry_from
from anemon.devices.pmd3.power import PowerReader, PowerReading, power_from

logging.getLogger("pymobiledevice3").addHandler(logging.NullHandler())

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
