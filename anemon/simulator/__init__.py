"""A simulated iPhone running the bench app, in virtual time.

Pure and deterministic: no asyncio, no real time, no files. A driver owns the clock and
calls `SimulatedIPhone.advance()`; the app appends its log lines (docs/spec/line-protocol.md)
to its container file as they happen. Thermal, device power, battery and disk are calibrated to
the figures of docs/domain.md; docs/devices.md says how the `sim` backend drives it.
"""

from anemon.simulator.battery import BatteryParams
from anemon.simulator.config import FAULTS, SimArmConfig, SimConfig
from anemon.simulator.faults import SimLaunchRefused
from anemon.simulator.phone import PhoneTelemetry, SimulatedIPhone
from anemon.simulator.power import PowerParams
from anemon.simulator.profiles import PROFILES, ArmProfile
from anemon.simulator.thermal import STATES, ThermalParams

__all__ = [
    "FAULTS",
    "PROFILES",
    "STATES",
    "ArmProfile",
    "BatteryParams",
    "PhoneTelemetry",
    "PowerParams",
    "SimArmConfig",
    "SimConfig",
    "SimLaunchRefused",
    "SimulatedIPhone",
    "ThermalParams",
]
