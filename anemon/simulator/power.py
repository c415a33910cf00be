"""Device power: what the whole phone draws, the figure the host reads as battery current x
voltage (docs/domain.md, "Energy").

An arm decoding at its burst rate (its cool decode tok/s) draws its path's burst power (ANE
~4.5 W, GPU ~6.2 W, whole phone with the screen on); the idle phone with the screen on ~1.0 W;
in between, power is linear in the decode rate:

    power = idle + (burst - idle) x decode rate / burst rate

So a throttled arm draws less, but not in proportion: the idle share is paid per second, and
energy per token rises as the decode rate falls. Loading and a hung generation draw the same
fractions of the arm's span as they heat the phone (benchapp.py). This is the electrical draw
only; the heat the thermal model integrates (thermal.py, `ArmProfile.heat_w`) is calibrated on
its own, to the thermal states of the sustained table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PowerParams:
    idle_w: float = 1.0
    """The whole phone, screen on, nothing running but the idle app."""
    screen_w: float = 0.5
    """The screen's part of `idle_w` (screen off: idle_w - screen_w)."""

    def base_w(self, screen_on: bool) -> float:
        """The phone with no arm running."""
        return self.idle_w if screen_on else max(0.0, self.idle_w - self.screen_w)

    def arm_w(self, burst_w: float, share: float) -> float:
        """What a running arm adds to the base: `share` of its span above idle (1.0 = decoding
        at the burst rate; decode rate / burst rate while it runs slower)."""
        return max(0.0, burst_w - self.idle_w) * max(0.0, share)


def power_w(params: PowerParams, burst_w: float, decode_tps: float, burst_tps: float) -> float:
    """The phone's power (screen on) while an arm decodes at `decode_tps` (the formula above)."""
    return params.base_w(True) + params.arm_w(burst_w, decode_tps / burst_tps)
