"""The battery: flat while wired (the notebook's phone sat at 95 %), draining unplugged.

Drain is the phone's draw over the battery's energy. With a 12.7 Wh battery, a 2B GPU arm
(2.2 W) plus the lit screen (0.5 W) unplugged for 26 min costs ~9 % (the battery protocol
expects "on the order of 10 %"); idling unplugged with the screen on costs ~4 %/h.
The battery protocol and its figures: docs/domain.md, "Energy".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BatteryParams:
    capacity_wh: float = 12.7
    charge_pct_per_min: float = 1.0
    """How fast a wired phone below its charge limit charges."""
    charge_limit: float = 95.0
    """A wired phone holds here (optimized charging); 100 lets it reach `full`."""


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

    def step(self, dt: float, draw_w: float) -> None:
        """Advance `dt` seconds with the phone drawing `draw_w` (from USB when wired)."""
        p = self.params
        if self.plugged:
            if self.level < p.charge_limit:
                gain = p.charge_pct_per_min * dt / 60.0
                self.level = min(p.charge_limit, self.level + gain)
            return
        used_pct = draw_w * dt / 3600.0 / p.capacity_wh * 100.0
        self.level = max(0.0, self.level - used_pct)
