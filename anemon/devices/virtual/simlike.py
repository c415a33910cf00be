"""What the virtual iPhone's servers read of the simulated phone: `SimLike`.

A module of its own, below the phone and its services alike: each service is given the
simulator (and plain values of the phone: its apps, its model, its clock), never the phone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable


class SimLike(Protocol):
    """`anemon.simulator.SimulatedIPhone`, or a stand-in. `telemetry()` gives the fields of
    `anemon.simulator.PhoneTelemetry`: battery_percent, charging, plugged, temperature_c,
    free_bytes, total_bytes, power_w, amperage_ma, voltage_mv, capacity_mah."""

    now: float
    """The phone's own time, in seconds (what a held system load is refreshed by)."""

    def telemetry(self) -> Any: ...

    def container_files(self, bundle: str) -> Mapping[str, bytes]: ...

    def read_container_file(self, bundle: str, path: str, offset: int, size: int) -> bytes: ...


@runtime_checkable
class SystemLogging(Protocol):
    """A simulator whose own processes log (`SimulatedIPhone.system_log`: osanalyticshelper
    announcing a report), in order, as (process name, message)."""

    system_log: list[tuple[str, str]]
