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
- The phone's system load (`system_load_from`): the battery controller's `PowerTelemetryData`
  (SystemLoad, SystemPowerIn, BatteryPower, mW), in the entry itself or its `BatteryData`, or
  else in the registry entry named AppleSmartBattery (looked up once per reader). Unlike the
  battery current it is what the phone draws whatever feeds it, so it gives energy with the
  cable in; but the phone refreshes it only every 10-60 s, so `PowerReader` records when a
  value last changed (`LoadChanges`): a held value is known for what it is. Strings, bools and
  values out of range (a load over 30 W is not a phone's) are dropped and counted in
  `PowerReader.warnings`, as an absurd power reading is. Whether an iPhone publishes it is
  not verified (docs/devices.md, "Power, Wi-Fi and what the host cannot read").
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anemon.devices.base import Telemetry
from anemon.parsing.ranges import RANGES

if TYPE_CHECKING:
    from anemon.devices.pmd3.connection import Pmd3Connection

MAX_CURRENT_A = 10.0
MIN_VOLTAGE_V = 2.5
MAX_VOLTAGE_V = 5.0
_U64 = 1 << 64
POWER_TELEMETRY = "PowerTelemetryData"
SMART_BATTERY = "AppleSmartBattery"
"""The registry entry public monitors read PowerTelemetryData from (on Macs), by name."""
LOAD_KEYS = (("load_w", "SystemLoad"), ("power_in_w", "SystemPowerIn"),
             ("battery_power_w", "BatteryPower"))  # fmt: skip
"""Telemetry field, PowerTelemetryData key (mW)."""


@dataclass(frozen=True, slots=True)
class PowerReading:
    """One IOPMPowerSource entry as anemon reads it; `warning` says why power was dropped."""

    telemetry: Telemetry
    current_a: float | None = None
    """Battery current, negative while discharging (as IOKit reports it)."""
    voltage_v: float | None = None
    warning: str = ""
    load: SystemLoad | None = None
    """The phone's PowerTelemetryData; None where the registry does not publish it."""


@dataclass(frozen=True, slots=True)
class SystemLoad:
    """PowerTelemetryData as anemon reads it, in W; a value missing or dropped is None."""

    load_w: float | None = None
    power_in_w: float | None = None
    battery_power_w: float | None = None
    dropped: tuple[str, ...] = ()
    """Why values were dropped ("SystemLoad 45000 mW is outside 0 to 30 W")."""

    @property
    def values(self) -> tuple[float | None, float | None, float | None]:
        return self.load_w, self.power_in_w, self.battery_power_w


def system_load_from(entry: Mapping[str, Any]) -> SystemLoad | None:
    """The entry's PowerTelemetryData (itself or under BatteryData); None when it has none."""
    data = entry.get(POWER_TELEMETRY)
    nested = entry.get("BatteryData")
    if not isinstance(data, Mapping) and isinstance(nested, Mapping):
        data = nested.get(POWER_TELEMETRY)
    if not isinstance(data, Mapping):
        return None
    values: dict[str, float | None] = {}
    dropped = []
    for field, key in LOAD_KEYS:
        milliwatts = _signed(data.get(key))
        watts = None if milliwatts is None else milliwatts / 1000
        if watts is not None and not RANGES[field].holds(watts):
            dropped.append(f"{key} {milliwatts:.0f} mW is outside {RANGES[field].describe()}")
            watts = None
        elif watts is None and key in data:
            dropped.append(f"{key} {str(data[key])[:40]!r} is not a number")
        values[field] = watts
    return SystemLoad(**values, dropped=tuple(dropped))


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
    load = system_load_from(entry)
    if load is not None:
        telemetry = dataclasses.replace(
            telemetry, load_w=load.load_w, power_in_w=load.power_in_w,
            battery_power_w=load.battery_power_w,
        )  # fmt: skip
    return PowerReading(telemetry, current, voltage, warning, load)


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


class LoadChanges:
    """When the phone last changed its system load, as the host sees it: at the first reading
    in which any of SystemLoad, SystemPowerIn and BatteryPower differs from the previous one."""

    KEPT = 16
    """Changes kept for the refresh interval."""

    def __init__(self) -> None:
        self._last: tuple[float | None, ...] | None = None
        self._changes: list[float] = []
        self.changed_wall: float | None = None
        """Epoch seconds of the reading that last saw a change (the first reading's, at first)."""

    def seen(self, load: SystemLoad, wall: float) -> float | None:
        """Record one reading's values at `wall`; the time they last changed."""
        if load.values != self._last:
            self._last = load.values
            self.changed_wall = wall
            self._changes = [*self._changes[-self.KEPT :], wall]
        return self.changed_wall

    @property
    def refresh_s(self) -> float | None:
        """The median time between changes, after the first reading (whose value may have been
        published long before); None until two changes were seen."""
        gaps = sorted(b - a for a, b in itertools.pairwise(self._changes[1:]))
        return gaps[len(gaps) // 2] if gaps else None


class PowerReader:
    """IOPMPowerSource over one diagnostics_relay service, kept open and shared by all reads."""

    def __init__(self, connection: Pmd3Connection) -> None:
        self.connection = connection
        self.warnings = 0
        """Absurd readings dropped so far: power, or a system-load value (a string, a load
        over 30 W, ...)."""
        self.last_warning = ""
        self.load_changes = LoadChanges()
        self.opened = 0
        """How many times the diagnostics service was (re)opened."""
        self._diagnostics: Any = None
        self._smart_battery: bool | None = None
        """Whether PowerTelemetryData is read from the AppleSmartBattery entry (None: not
        tried yet; tried once, when the IOPMPowerSource entry has none)."""
        self._lock = asyncio.Lock()

    async def read(self) -> PowerReading:
        """One reading; an absurd one is counted. Raises DeviceError when the phone is away."""
        reading = self.observe(power_from(await self.registry()))
        dropped = reading.load.dropped if reading.load is not None else ()
        if reading.warning or dropped:
            self.warnings += 1
            self.last_warning = reading.warning or dropped[0]
        return reading

    def observe(self, reading: PowerReading) -> PowerReading:
        """`reading` with the time its system load last changed."""
        if reading.load is None:
            return reading
        changed = self.load_changes.seen(reading.load, time.time())
        telemetry = dataclasses.replace(reading.telemetry, load_changed_wall=changed,
                                        load_refresh_s=self.load_changes.refresh_s)  # fmt: skip
        return dataclasses.replace(reading, telemetry=telemetry)

    async def registry(self) -> Mapping[str, Any]:
        """The raw IOPMPowerSource entry ({} when the phone has none), with the
        PowerTelemetryData of AppleSmartBattery where only that entry has it."""
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
                return await self._entry()
            except Exception:
                # The kept connection may have gone stale on its own: one fresh try before
                # calling it a failed read.
                await self._close()
        self._diagnostics = await self._open()
        return await self._entry()

    async def _entry(self) -> Mapping[str, Any]:
        entry = await self._diagnostics.get_battery() or {}
        if system_load_from(entry) is not None or self._smart_battery is False:
            return entry
        try:
            smart = await self._diagnostics.ioregistry(name=SMART_BATTERY) or {}
        except Exception:  # no such entry (an error status): the reading goes on without it
            smart = {}
        data = smart.get(POWER_TELEMETRY) if isinstance(smart, Mapping) else None
        self._smart_battery = isinstance(data, Mapping)
        return {**entry, POWER_TELEMETRY: data} if self._smart_battery else entry

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
