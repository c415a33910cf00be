"""The cooldown between two launches (protocol v2): at least `min_s`, and until thermal <=
`until`, capped at `cap_s`.

The decisions are pure and tested without a device: where the thermal reading comes from
(`choose_reading`) and whether the gate opens now (`Gate`). A `Cooldown` is one cooldown as
it runs: it launches the thermal probe, follows the readings, decides every few seconds and
makes each step a CooldownEvent, through the few things its `CooldownHost` lends it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from anemon.clock import Clock
from anemon.control.plan import CooldownSpec
from anemon.devices.base import DeviceError, Telemetry
from anemon.events import THERMAL_NAMES, CooldownEvent, Event, IdleEvent, Phase, TrialEvent

COOLDOWN_STEP_S = 5.0
"""How often a cooldown decides again (each step is a CooldownEvent)."""
SOURCE = "controller"
"""The source of the events a cooldown emits."""

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


# -- one cooldown as it runs ----------------------------------------------------------------


class CooldownHost(Protocol):
    """What a cooldown needs from the controller running it, and nothing more."""

    @property
    def aborting(self) -> bool:
        """The operator aborted the session: the cooldown ends at its next step."""
        ...

    @property
    def telemetry(self) -> Telemetry | None:
        """The latest host telemetry (its battery temperature is the "host" reading)."""
        ...

    def set_phase(self, phase: Phase, arm: str | None, reason: str = "") -> None: ...

    def emit_now(self, make: Callable[..., Event], /, **fields: Any) -> None:
        """Put an event happening now on the session's pipeline (`Pipeline.emit_now`)."""
        ...

    async def nap(self, seconds: float | None) -> None:
        """Wait `seconds`; an operator action (skip, extend, abort ...) wakes it early."""
        ...

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        """Start the app; the pid. Raises DeviceError."""
        ...

    async def terminate(self, pid: int) -> None:
        """Stop the app; a failure is noted, never raised."""
        ...


@dataclass(frozen=True, slots=True)
class Probe:
    """The app launched in idle mode during a cooldown: its IDLE lines give the thermal state."""

    bundle: str
    env: Mapping[str, str]


class Cooldown:
    """One cooldown before `arm` is launched; `await run()` returns once the gate opens.

    Its time counts from its creation. The controller forwards the app's IDLE and TRIAL
    events (`observe`) and the operator's skip and extend; `over` is true once it decided.
    """

    def __init__(
        self,
        spec: CooldownSpec,
        arm: str,
        host: CooldownHost,
        clock: Clock,
        *,
        probe: Probe | None,
        last_trial: int | None = None,
    ) -> None:
        self.gate = Gate(spec.min_s, spec.cap_s, spec.until)
        self.arm = arm
        self.host = host
        self.clock = clock
        self.probe = probe
        """Launched unless the gate goes by time alone (`until = "none"`); None: never."""
        self.started = clock.now()
        self.idle_thermal: int | None = None
        """The latest IDLE line's thermal state during this cooldown."""
        self.trial_thermal = last_trial
        """The latest TRIAL line's (the arm's last, unless more of its log comes late)."""
        self.over = False

    def elapsed(self) -> float:
        return self.clock.now() - self.started

    def observe(self, event: Event) -> None:
        """An event of the app's log: IDLE and TRIAL lines carry thermal readings."""
        if isinstance(event, IdleEvent) and event.thermal is not None:
            self.idle_thermal = event.thermal
        elif isinstance(event, TrialEvent) and event.thermal is not None:
            self.trial_thermal = event.thermal

    def reading(self) -> Reading:
        """The thermal reading the gate goes by now (and where it comes from)."""
        telemetry = self.host.telemetry
        temperature = telemetry.temperature_c if telemetry else None
        return choose_reading(self.idle_thermal, temperature, self.trial_thermal)

    def skip(self) -> None:
        self.gate.skipped = True

    def extend(self, seconds: float) -> None:
        self.gate.extend(self.elapsed(), seconds)

    async def run(self) -> None:
        gate = self.gate
        rule = f"at least {gate.min_s:g} s, until {gate.until}, cap {gate.cap_s:g} s"
        self.host.set_phase("cooling", self.arm, rule)
        wanted = self.probe if gate.until != "none" else None
        probe = await self._start_probe(wanted) if wanted is not None else None
        try:
            while True:
                elapsed = self.elapsed()
                reading = self.reading()
                verdict = (
                    "aborted" if self.host.aborting else gate.verdict(elapsed, reading.thermal)
                )
                self._step(elapsed, reading, verdict)
                if verdict is not None:
                    return
                await self.host.nap(gate.next_check_in(elapsed, COOLDOWN_STEP_S))
        finally:
            self.over = True
            if probe is not None:
                await self.host.terminate(probe)

    def _step(self, elapsed: float, reading: Reading, verdict: str | None) -> None:
        gate = self.gate
        self.host.emit_now(CooldownEvent, arm=self.arm, source=SOURCE,
                           elapsed_s=round(elapsed, 3), min_s=gate.min_s, cap_s=gate.cap_s,
                           until=gate.until, thermal=reading.thermal, basis=reading.basis,
                           done=verdict is not None, reason=verdict or "")  # fmt: skip

    async def _start_probe(self, probe: Probe) -> int | None:
        """Launch the app in idle mode for thermal readings; None (host or time) if refused."""
        try:
            return await self.host.launch(probe.bundle, probe.env)
        except DeviceError as e:
            self.host.set_phase("cooling", self.arm, f"no thermal probe ({e}): host or time")
            return None
