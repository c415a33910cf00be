"""Device power from IORegistry's IOPMPowerSource, over ONE diagnostics_relay connection.

`PowerReader` keeps the diagnostics service open between reads (a reading every second must
not cost a service start each time), reopens it after a drop, and lets one read at a time use
it: the power poll and the slower telemetry poll share it. `power_from` turns the registry
entry into a `Telemetry` (docs/domain.md "Energy"):

- power = |InstantAmperage| x Voltage (mA x mV): the phone's draw while it runs on its
  battery. While it charges the current is the charger's, not the load's: the same product
  is reported with `charging` True, so that energy is withheld downstream (as the simulator
  backend does).
- No current or no voltage (older iOS): power_w None, the rest of the reading kept.
- An absurd reading (|I| > 10 A, or V outside 2.5-5 V) is dropped: power_w None, counted in
  `PowerReader.warnings` (the Device's `power_warnings`) with its reason in `last_warning`.
- battery: AppleRawCurrentCapacity / NominalChargeCapacity (mAh; finer than the gauge's
  whole percent) where both are present, else CurrentCapacity.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anemon.devices.base import Telemetry

if TYPE_CHECKING:
    from anemon.devices.pmd3.connection import Pmd3Connection

MAX_CURRENT_A = 10.0
MIN_VOLTAGE_V = 2.5
MAX_VOLTAGE_V = 5.0
_U64 = 1 << 64


@dataclass(frozen=True, slots=True)
class PowerReading:
    """One IOPMPowerSource entry as anemon reads it; `warning` says why power was dropped."""

    telemetry: Telemetry
    current_a: float | None = None
    """Battery current, negative while discharging (as IOKit reports it)."""
    voltage_v: float | None = None
    warning: str = ""


def power_from(entry: Mapping[str, Any]) -> PowerReading:
    """IOPMPowerSource as a reading; missing or malformed keys stay None, never raise."""
    current_ma = _signed(entry.get("InstantAmperage"))
    voltage_mv = _number(entry.get("Voltage"))
    charging = _flag(entry.get("IsCharging"))
    temperature = _number(entry.get("Temperature"))
    current = None if current_ma is None else current_ma / 1000
    voltage = None if voltage_mv is None else voltage_mv / 1000
    power, warning = None, ""
    if current is not None and voltage is not None:
        if abs(current) > MAX_CURRENT_A:
            warning = f"current {current:.1f} A is beyond {MAX_CURRENT_A:.0f} A"
        elif not MIN_VOLTAGE_V <= voltage <= MAX_VOLTAGE_V:
            warning = f"voltage {voltage:.2f} V is outside {MIN_VOLTAGE_V}-{MAX_VOLTAGE_V:.0f} V"
        else:
            power = abs(current) * voltage
    telemetry = Telemetry(
        battery=_battery(entry),
        charging=charging,
        plugged=_flag(entry.get("ExternalConnected")),
        temperature_c=None if temperature is None else temperature / 100,
        power_w=None if power is None else round(power, 4),
    )
    return PowerReading(telemetry, current, voltage, warning)


def _battery(entry: Mapping[str, Any]) -> float | None:
    raw = _number(entry.get("AppleRawCurrentCapacity"))
    nominal = _number(entry.get("NominalChargeCapacity"))
    if raw is not None and nominal and nominal > 0 and 0 <= raw <= nominal * 1.05:
        return round(min(100.0, 100 * raw / nominal), 2)
    return _number(entry.get("CurrentCapacity"))


def _signed(value: Any) -> float | None:
    """IORegistry integers sometimes arrive as unsigned 64-bit: -400 as 2**64 - 400."""
    if isinstance(value, int) and not isinstance(value, bool) and _U64 // 2 <= value < _U64:
        value -= _U64
    return _number(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _flag(value: Any) -> bool | None:
    return bool(value) if isinstance(value, bool | int) else None


class PowerReader:
    """IOPMPowerSource over one diagnostics_relay service, kept open and shared by all reads."""

    def __init__(self, connection: Pmd3Connection) -> None:
        self.connection = connection
        self.warnings = 0
        """Absurd readings dropped so far."""
        self.last_warning = ""
        self.opened = 0
        """How many times the diagnostics service was (re)opened."""
        self._diagnostics: Any = None
        self._lock = asyncio.Lock()

    async def read(self) -> PowerReading:
        """One reading; an absurd one is counted. Raises DeviceError when the phone is away."""
        reading = power_from(await self.registry())
        if reading.warning:
            self.warnings += 1
            self.last_warning = reading.warning
        return reading

    async def registry(self) -> Mapping[str, Any]:
        """The raw IOPMPowerSource entry ({} when the phone has none)."""
        async with self._lock:
            try:
                return await self._registry()
            except asyncio.CancelledError:
                await self._close()  # cut mid-request: its reply would answer the next one
                raise
            except Exception as e:
                await self._close()
                await self.connection.drop()
                raise self.connection.error(e) from e

    async def _registry(self) -> Mapping[str, Any]:
        if self._diagnostics is not None:
            try:
                return await self._diagnostics.get_battery() or {}
            except Exception:
                # The kept connection may have gone stale on its own: one fresh try before
                # calling it a failed read.
                await self._close()
        self._diagnostics = await self._open()
        return await self._diagnostics.get_battery() or {}

    async def _open(self) -> Any:
        from pymobiledevice3.services.diagnostics import DiagnosticsService

        diagnostics = DiagnosticsService(await self.connection.lockdown())
        await diagnostics.connect()
        self.opened += 1
        return diagnostics

    async def _close(self) -> None:
        diagnostics, self._diagnostics = self._diagnostics, None
        if diagnostics is not None:
            with contextlib.suppress(Exception):
                await diagnostics.close()

    async def close(self) -> None:
        async with self._lock:
            await self._close()
