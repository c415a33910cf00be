"""diagnostics_relay: the battery as IORegistry's IOPMPowerSource entry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anemon.devices.virtual.plist_io import PlistService

if TYPE_CHECKING:
    from anemon.devices.virtual.phone import VirtualIPhone

SERVICE_NAME = "com.apple.mobile.diagnostics_relay"


class DiagnosticsRelay(PlistService):
    closing_request = "Goodbye"

    def __init__(self, phone: VirtualIPhone) -> None:
        self.phone = phone

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
        t = self.phone.sim.telemetry()
        percent = round(t.battery_percent)
        return {
            "CurrentCapacity": percent,
            "MaxCapacity": 100,
            "IsCharging": bool(t.charging),
            "ExternalConnected": bool(t.plugged),
            "FullyCharged": percent >= 100,
            "BatteryInstalled": True,
            "Temperature": round(t.temperature_c * 100),  # hundredths of °C, as IOKit reports
            "Voltage": 4000,
            "InstantAmperage": 500 if t.charging else -400,
        }
