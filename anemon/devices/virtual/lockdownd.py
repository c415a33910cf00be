"""lockdownd (device port 62078): device values, a session without TLS, and StartService.

The session is answered without `EnableSessionSSL`, so the client never needs the pair
record's certificates. Started services get a one-shot virtual port that the client then
reaches through usbmuxd's Connect.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anemon.devices.virtual.plist_io import PlistService

if TYPE_CHECKING:
    from anemon.devices.virtual.phone import VirtualIPhone

LOCKDOWN_PORT = 62078
DISK_USAGE = "com.apple.disk_usage"
BATTERY = "com.apple.mobile.battery"


class Lockdownd(PlistService):
    def __init__(self, phone: VirtualIPhone) -> None:
        self.phone = phone

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request.get("Request")
        reply: dict[str, Any] = {"Request": name}
        if name == "QueryType":
            reply["Type"] = "com.apple.mobile.lockdown"
        elif name == "GetValue":
            reply.update(self._get_value(request.get("Domain"), request.get("Key")))
        elif name == "StartSession":
            reply["SessionID"] = "VIRTUAL-SESSION"  # no EnableSessionSSL: plain text from here on
        elif name == "StopSession":
            reply["Result"] = "Success"
        elif name == "StartService":
            reply.update(self._start_service(str(request.get("Service", ""))))
        else:
            reply["Error"] = "UnsupportedRequest"
        return reply

    def _get_value(self, domain: str | None, key: str | None) -> dict[str, Any]:
        values = self._domain(domain)
        if values is None:
            return {"Error": "MissingValue"} if key else {}
        if key is None:
            return {"Value": values}
        if key not in values:
            return {"Error": "MissingValue"}
        return {"Value": values[key]}

    def _domain(self, domain: str | None) -> dict[str, Any] | None:
        phone = self.phone
        telemetry = phone.sim.telemetry()
        if domain is None:
            return phone.device_values()
        if domain == DISK_USAGE:
            return {
                "AmountDataAvailable": int(telemetry.free_bytes),
                "TotalDataAvailable": int(telemetry.free_bytes),
                "TotalDiskCapacity": int(telemetry.total_bytes),
                "TotalDataCapacity": int(telemetry.total_bytes),
            }
        if domain == BATTERY:
            return {
                "BatteryCurrentCapacity": round(telemetry.battery_percent),
                "BatteryIsCharging": bool(telemetry.charging),
                "ExternalConnected": bool(telemetry.plugged),
            }
        return None

    def _start_service(self, service: str) -> dict[str, Any]:
        handler = self.phone.service_handler(service)
        if handler is None:
            # What a real phone says for DVT without the developer disk image, or on iOS 17+.
            return {"Error": "InvalidService"}
        return {"Service": service, "Port": self.phone.open_port(handler)}
