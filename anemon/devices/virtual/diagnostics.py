"""diagnostics_relay: the battery as IORegistry's IOPMPowerSource entry, read from the
simulator (its power model: anemon/simulator/power.py, battery.py).

With `system_load_s` the entry also carries the battery controller's `PowerTelemetryData`
(SystemLoad, SystemPowerIn, BatteryPower, mW), as public monitors read it on Macs: the
simulator's power sampled once every `system_load_s` of the phone's time and held in
between, so a client sees the long-held values a real controller publishes. Whether a real
iPhone publishes it is not known (docs/devices.md, "Power, Wi-Fi and what the host cannot
read").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from anemon.devices.virtual.plist_io import PlistService

SERVICE_NAME = "com.apple.mobile.diagnostics_relay"
ENTRY_NAMES = frozenset({"AppleSmartBattery"})
"""What the IOPMPowerSource entry answers to by name (as on a Mac)."""


class SystemLoadData:
    """PowerTelemetryData refreshed on a grid of `refresh_s` seconds of the phone's time: the
    first request in a new period samples the simulator, the rest of it is held."""

    def __init__(self, refresh_s: float) -> None:
        if not refresh_s > 0:
            raise ValueError(f"a system load refresh of {refresh_s} s: give more than 0 s")
        self.refresh_s = refresh_s
        self._period: int | None = None
        self._data: dict[str, int] = {}

    def at(self, now: float, telemetry: Any) -> dict[str, int]:
        period = math.floor(now / self.refresh_s)
        if period != self._period:
            self._period, self._data = period, power_telemetry(telemetry)
        return dict(self._data)


def power_telemetry(t: Any) -> dict[str, int]:
    """The simulator's power as PowerTelemetryData (mW): the load is the phone's whole draw,
    plugged or not; the battery's power is its current x voltage (+ charging, - discharging);
    what comes in from the adapter feeds both while it is plugged in."""
    load = round(t.power_w * 1000)
    battery = round(t.amperage_ma * t.voltage_mv / 1000)
    power_in = load + battery if t.plugged else 0
    return {"SystemLoad": load, "SystemPowerIn": max(0, power_in), "BatteryPower": battery}


class DiagnosticsRelay(PlistService):
    """Reads the battery through `telemetry` (the simulator's `telemetry()`: `SimLike`), and
    with `system_load` its PowerTelemetryData at the phone's time `now()`."""

    closing_request = "Goodbye"

    def __init__(
        self,
        telemetry: Callable[[], Any],
        now: Callable[[], float] = lambda: 0.0,
        system_load: SystemLoadData | None = None,
    ) -> None:
        self.telemetry = telemetry
        self.now = now
        self.system_load = system_load

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request.get("Request")
        if name == "Goodbye":
            return {"Status": "Success"}
        if name != "IORegistry":
            return {"Status": "UnknownRequest"}
        by_class = request.get("EntryClass", "IOPMPowerSource") == "IOPMPowerSource"
        by_name = request.get("EntryName")
        if not by_class or (by_name is not None and by_name not in ENTRY_NAMES):
            return {"Status": "Success", "Diagnostics": {"IORegistry": {}}}
        return {"Status": "Success", "Diagnostics": {"IORegistry": self.power_source()}}

    def power_source(self) -> dict[str, Any]:
        """The simulator's battery as IOKit reports it: |InstantAmperage| x Voltage is the
        phone's power while unplugged, the charge current (positive) while charging."""
        t = self.telemetry()
        percent = round(t.battery_percent)
        capacity = int(t.capacity_mah)
        entry: dict[str, Any] = {
            "CurrentCapacity": percent,
            "MaxCapacity": 100,
            "IsCharging": bool(t.charging),
            "ExternalConnected": bool(t.plugged),
            "FullyCharged": percent >= 100,
            "BatteryInstalled": True,
            "Temperature": round(t.temperature_c * 100),  # hundredths of °C, as IOKit reports
            "Voltage": int(t.voltage_mv),  # mV
            "InstantAmperage": int(t.amperage_ma),  # mA, negative while discharging
            "Amperage": int(t.amperage_ma),
            "AppleRawCurrentCapacity": round(t.battery_percent * capacity / 100),  # mAh
            "NominalChargeCapacity": capacity,  # mAh
            "DesignCapacity": capacity,
        }
        if self.system_load is not None:
            entry["PowerTelemetryData"] = self.system_load.at(self.now(), t)
        return entry
