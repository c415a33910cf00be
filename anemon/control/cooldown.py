"""The cooldown gate of protocol v2: at least `min_s`, and until thermal <= `until`, capped.

Pure decisions, tested without a device: where the thermal reading comes from, and whether
the gate opens now. The controller drives them and makes each step an event.
"""

from __future__ import annotations

from dataclasses import dataclass

from anemon.events import THERMAL_NAMES

HOST_UP_C = (32.0, 36.0, 45.0)
"""Battery temperature (°C) taken as entering fair, serious, critical: the host's estimate
of a state only the app can read, used when the app gives no reading during the cooldown."""


@dataclass(frozen=True, slots=True)
class Reading:
    thermal: int | None
    basis: str
    """"app" (IDLE/TRIAL lines), "host" (battery temperature) or "time" (no reading)."""


def host_thermal(temperature_c: float) -> int:
    """A thermal state estimated from the battery temperature."""
    return sum(temperature_c >= c for c in HOST_UP_C)


def choose_reading(idle: int | None, host_c: float | None, last_trial: int | None) -> Reading:
    """The freshest reading: an IDLE line during this cooldown, else the host's battery
    temperature, else the arm's last TRIAL line (stale, but the app's), else time alone."""
    if idle is not None:
        return Reading(idle, "app")
    if host_c is not None:
        return Reading(host_thermal(host_c), "host")
    if last_trial is not None:
        return Reading(last_trial, "app")
    return Reading(None, "time")


@dataclass
class Gate:
    """One cooldown: its bounds (the operator may extend them) and whether it was skipped."""

    min_s: float
    cap_s: float
    until: str
    skipped: bool = False

    def extend(self, elapsed_s: float, seconds: float) -> None:
        """Wait at least `seconds` more from now, past the cap if need be."""
        self.min_s = max(self.min_s, elapsed_s) + seconds
        self.cap_s = max(self.cap_s, self.min_s)

    def verdict(self, elapsed_s: float, thermal: int | None) -> str | None:
        """Why the gate opens now ("skipped", "cap", "min", "cool"), or None to wait on.

        Without any reading the gate cannot know the phone is cool: it waits for the cap.
        """
        if self.skipped:
            return "skipped"
        if elapsed_s >= self.min_s:
            if self.until == "none":
                return "min"
            if thermal is not None and thermal <= THERMAL_NAMES.index(self.until):
                return "cool"
        return "cap" if elapsed_s >= self.cap_s else None

    def next_check_in(self, elapsed_s: float, step_s: float) -> float:
        """How long to wait before deciding again: a step, or less to land on min/cap."""
        targets = [t - elapsed_s for t in (self.min_s, self.cap_s) if t > elapsed_s]
        return min([step_s, *targets])
