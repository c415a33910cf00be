"""The phone's heat: a fast die node over a slow body node, and the thermal state.

The body (battery/skin) is what `ProcessInfo.thermalState` follows and what the host reads
as the battery temperature; the die is what throttles decode and prefill. Both relax
exponentially toward their equilibrium, so a step of any length is stable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from anemon.simulator.profiles import PathPhysics

STATES = ("nominal", "fair", "serious", "critical")
"""Thermal state names by value (0-3)."""


@dataclass(frozen=True, slots=True)
class ThermalParams:
    """Constants of the thermal model (calibrated to the sustained table of docs/domain.md)."""

    tau_body_s: float = 180.0
    tau_die_s: float = 15.0
    body_rise_k_per_w: float = 7.0
    """Steady-state body temperature above ambient, per watt dissipated in the phone."""
    system_w: float = 0.1
    """The phone doing nothing in particular."""
    screen_w: float = 0.5
    """The lit screen."""
    usb_w: float = 0.45
    """USB charging with the screen on: a heater (the phone idles wired at ~32.4 °C)."""
    usb_screen_off_w: float = 0.2
    up_c: tuple[float, float, float] = (32.0, 36.0, 47.5)
    """Body temperature entering fair, serious, critical."""
    hysteresis_c: float = 1.0
    """How far below an entry threshold the body must cool to leave that state."""
    start_c: tuple[float, float, float, float] = (31.7, 34.0, 38.0, 48.0)
    """Body temperature a phone starts at, per starting state."""


@dataclass(frozen=True, slots=True)
class Heat:
    """What heats the phone over a step (averaged over it)."""

    chip_w: float = 0.0
    """The running arm's draw."""
    die_rise_c: float = 0.0
    """The die's steady-state rise above the body for that draw (path-dependent)."""
    base_w: float = 0.0
    """Screen and USB charging."""


def base_w(params: ThermalParams, screen_on: bool, plugged: bool) -> float:
    """What heats the phone besides the app: the system, the screen, USB charging."""
    watts = params.system_w + (params.screen_w if screen_on else 0.0)
    if plugged:
        watts += params.usb_w if screen_on else params.usb_screen_off_w
    return watts


class HeatAccumulator:
    """Integrates piecewise-constant heat over a grid step, to step the model by its mean."""

    def __init__(self) -> None:
        self._sums = (0.0, 0.0, 0.0)

    def add(self, heat: Heat, seconds: float) -> None:
        c, d, b = self._sums
        self._sums = (c + heat.chip_w * seconds, d + heat.die_rise_c * seconds,
                      b + heat.base_w * seconds)  # fmt: skip

    def mean(self, seconds: float) -> Heat:
        """The mean heat over the last `seconds`, and start over."""
        c, d, b = self._sums
        self._sums = (0.0, 0.0, 0.0)
        return Heat(c / seconds, d / seconds, b / seconds)


def classify(state: int, body_c: float, params: ThermalParams) -> int:
    """The thermal state after `state` at this body temperature, with hysteresis."""
    up = params.up_c
    while state < 3 and body_c >= up[state]:
        state += 1
    while state > 0 and body_c < up[state - 1] - params.hysteresis_c:
        state -= 1
    return state


def _relax(value: float, target: float, dt: float, tau: float) -> float:
    return target + (value - target) * math.exp(-dt / tau)


def _ramp(x: float) -> float:
    x = min(max(x, 0.0), 1.0)
    return x * x * (3.0 - 2.0 * x)  # smoothstep: no kinks at either end


def throttle(path: PathPhysics, die_c: float) -> tuple[float, float]:
    """(decode, prefill) speed factors at this die temperature (1.0 = cool)."""
    x = (die_c - path.throttle_onset_c) / (path.throttle_full_c - path.throttle_onset_c)
    decode = 1.0 - (1.0 - path.decode_floor) * _ramp(x)
    prefill = 1.0 - (1.0 - path.prefill_floor) * _ramp(x / path.prefill_full_at)
    return decode, prefill


class ThermalModel:
    """Body and die temperatures, and the thermal state the app can read."""

    def __init__(self, params: ThermalParams, ambient_c: float, start_state: int) -> None:
        self.params = params
        self.ambient_c = ambient_c
        self.body_c = params.start_c[start_state]
        self.die_c = self.body_c
        self.state = start_state

    def step(self, dt: float, heat: Heat) -> None:
        """Advance `dt` seconds under this (average) heat."""
        p = self.params
        body_eq = self.ambient_c + (heat.chip_w + heat.base_w) * p.body_rise_k_per_w
        self.body_c = _relax(self.body_c, body_eq, dt, p.tau_body_s)
        self.die_c = _relax(self.die_c, self.body_c + heat.die_rise_c, dt, p.tau_die_s)
        self.state = classify(self.state, self.body_c, p)
