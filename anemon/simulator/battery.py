"""The battery: its level, and the current and voltage the host reads (IOPMPowerSource).

Unplugged, it drains by the energy the phone uses (power.py): an iPhone 17 Pro's ~4,250 mAh at
~3.85 V, so 1 % = 589 J, and the battery current is what carries that power at the present
voltage (negative: discharging). The host's |current| x voltage is then the phone's power, and
its integral over a run is 589 J per percent the level fell: the energy and the gauge agree.
Idling unplugged with the screen on (1.0 W) costs ~6 %/h; a 2B GPU arm for the battery
protocol's 26 minutes ~10 % (it expects "on the order of 10 %").

Wired, the charger feeds the phone and the battery current is the charge current (positive),
never the load: below its charge limit it charges at `charge_pct_per_min`; at the limit (the
notebook's phone sat at 95 %, optimized charging) it holds, topped up by a trickle too small
to move the gauge. The battery protocol and its figures: docs/domain.md, "Energy".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BatteryParams:
    capacity_mah: float = 4250.0
    nominal_v: float = 3.85
    """Capacity x nominal voltage is the energy: 1 % = 589 J."""
    empty_v: float = 3.5
    full_v: float = 4.2
    """Open-circuit voltage at 0 % and 100 % (linear between: 3.85 V at half charge)."""
    charge_pct_per_min: float = 1.0
    """How fast a wired phone below its charge limit charges."""
    charge_limit: float = 95.0
    """A wired phone holds here (optimized charging); 100 lets it reach `full`."""
    hold_ma: float = 25.0
    """The trickle into a wired battery held at its limit."""

    @property
    def joules_per_percent(self) -> float:
        return self.capacity_mah * 3.6 * self.nominal_v / 100.0

    @property
    def charge_ma(self) -> float:
        """The charge current that adds `charge_pct_per_min`."""
        return self.charge_pct_per_min / 100.0 * self.capacity_mah * 60.0


class Battery:
    """Level in percent, plugged or not."""

    def __init__(self, params: BatteryParams, level: float, plugged: bool) -> None:
        self.params = params
        self.level = level
        self.plugged = plugged

    @property
    def state(self) -> str:
        """`UIDevice.batteryState` as the app logs it."""
        if not self.plugged:
            return "unplugged"
        return "full" if self.level >= 100.0 else "charging"

    @property
    def voltage_v(self) -> float:
        """The cell's voltage at this level."""
        p = self.params
        return p.empty_v + (p.full_v - p.empty_v) * min(max(self.level, 0.0), 100.0) / 100.0

    def current_ma(self, power_w: float) -> float:
        """The battery current while the phone draws `power_w`, IOPMPowerSource's sign:
        negative discharging (the load), positive charging (the charger's, whatever the load);
        0 when full, or empty."""
        p = self.params
        if not self.plugged:
            return -power_w / self.voltage_v * 1000.0 if self.level > 0.0 else 0.0
        if self.level >= 100.0:
            return 0.0
        return p.charge_ma if self.level < p.charge_limit else p.hold_ma

    def step(self, dt: float, power_w: float) -> None:
        """Advance `dt` seconds with the phone drawing `power_w` (from USB when wired)."""
        p = self.params
        if self.plugged:
            if self.level < p.charge_limit:
                gain = p.charge_pct_per_min * dt / 60.0
                self.level = min(p.charge_limit, self.level + gain)
            return
        used_pct = power_w * dt / p.joules_per_percent
        self.level = max(0.0, self.level - used_pct)
