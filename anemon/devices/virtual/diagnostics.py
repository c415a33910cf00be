"""diagnostics_relay: the battery as IORegistry's IOPMPowerSource entry, read from the
simulator (its power model: anemon/simulator/power.py, battery.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from anemon.devices.virtual.plist_io import PlistService

SERVICE_NAME = "com.apple.mobile.diagnostics_relay"


class DiagnosticsRelay(PlistService):
    """Reads the battery through `telemetry` (the simulator's `telemetry()`: `SimLike`)."""

    closing_request = "Goodbye"

    def __init__(self, telemetry: Callable[[], Any]) -> None:
        self.telemetry = telemetry

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request.get("Request")
        if name == "Goodbye":
            return {"Status": "Success"}
        if name != "IORegistry":
            return {"Status": "UnknownRequest"}
        if request.get("EntryClass", "IOPMPowerSource") != "IOPMPowerSource":
            return {"Status": "Success", "Diagnostics": {"IORegistry": {}}}
        return {"Status": "Success", "Diagnostics": {"IORegistry": self.power_source()}}

    def power_source(self) -> dict[str, Any]:
        """The simulator's battery as IOKit reports it: |InstantAmperage| x Voltage is the
        phone's power while unplugged, the charge current (positive) while charging."""
        t = self.telemetry()
        percent = round(t.battery_percent)
        capacity = int(t.capacity_mah)
        return {
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
