"""How a simulated phone is set up: the `[sim]` section of a plan (docs/spec/plan.md), and more."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from anemon.simulator.battery import BatteryParams
from anemon.simulator.power import PowerParams
from anemon.simulator.profiles import PATHS, PROFILES
from anemon.simulator.thermal import STATES, ThermalParams

FAULTS = ("none", "hang", "load_error", "gpu_timeout", "stall", "refuse_launch", "busy", "unplug",
          "jetsam")  # fmt: skip
"""Fault kinds of `[sim.arms.<name>] fault` (docs/spec/plan.md)."""

BATTERY_PROTOCOL_S = 26 * 60.0
"""How long an `unplug` fault keeps the phone unplugged unless told otherwise."""


@dataclass(frozen=True)
class SimArmConfig:
    """One arm on the simulated phone; keyed in SimConfig.arms by its name (AB_ARM)."""

    profile: str
    """A built-in profile (profiles.PROFILES)."""
    fault: str = "none"
    fault_at_s: float = 0
    """gpu_timeout, stall, jetsam: seconds into the timed trials; unplug: seconds after the launch;
    busy: how long launches stay refused after the first attempt."""
    fault_count: int = 1
    """refuse_launch: how many launches are refused."""
    unplug_s: float = BATTERY_PROTOCOL_S
    """unplug: how long the phone stays unplugged before it is plugged back in."""
    power_w: float = 0.0
    """Device power while decoding at the burst rate (the plan's `[sim.arms.X] power_w`);
    0 = the profile's path's (`PathPhysics.burst_w`)."""

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"unknown simulator profile {self.profile!r}")
        if self.fault not in FAULTS:
            raise ValueError(f"unknown fault {self.fault!r} (one of {', '.join(FAULTS)})")
        if min(self.fault_at_s, self.fault_count, self.unplug_s, self.power_w) < 0:
            raise ValueError("fault_at_s, fault_count, unplug_s and power_w must not be negative")

    @property
    def burst_w(self) -> float:
        """Device power while decoding at the profile's cool speed: the override, or the
        path's."""
        return self.power_w or PATHS[PROFILES[self.profile].compute].burst_w


@dataclass(frozen=True)
class SimConfig:
    """The phone at the start of a run."""

    start_thermal: str = "nominal"
    plugged: bool = True
    free_gb: float = 38.0
    arms: Mapping[str, SimArmConfig] = field(default_factory=dict)
    seed: int = 0
    screen_on: bool = True
    low_power: bool = False
    """Low Power Mode on (the pre-flight checks warn)."""
    ambient_c: float = 25.0
    cold_cache: bool = False
    """After an OS update: each arm's first load compiles on device (slow, eats disk)."""
    locked: bool = False
    """A locked phone refuses launches (10002 "Locked", not transient)."""
    battery_percent: float = 95.0
    total_gb: float = 128.0
    os_build: str = "24A437"
    memory_limit_gb: float = 3.3
    """The per-process memory limit: an app whose footprint passes it is killed by jetsam
    (est.: above every built-in arm, 1.3-2.9 GB plus up to 5 % while generating; a `jetsam`
    fault's leak reaches it)."""
    epoch_s: float = 1_789_466_400.0
    """The phone's wall clock at time 0 (2026-09-15 10:00 UTC): report names and times."""
    busy_after_kill_mid_load_s: float = 0.0
    """Launches refused "Busy" for this long after an app is killed mid-load (0: never)."""
    thermal: ThermalParams = field(default_factory=ThermalParams)
    battery: BatteryParams = field(default_factory=BatteryParams)
    power: PowerParams = field(default_factory=PowerParams)

    def __post_init__(self) -> None:
        if self.start_thermal not in STATES:
            raise ValueError(f"start_thermal must be one of {', '.join(STATES)}")
        object.__setattr__(self, "arms", MappingProxyType(dict(self.arms)))

    def arm(self, name: str, model: str | None = None) -> SimArmConfig | None:
        """The arm launched as `name` (AB_ARM, else AB_MODEL): configured, or the built-in
        profile of `model` (default `name`) as is."""
        if name in self.arms:
            return self.arms[name]
        profile = model or name
        return SimArmConfig(profile=profile) if profile in PROFILES else None
