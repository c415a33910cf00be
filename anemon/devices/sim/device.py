"""The simulated iPhone as a Device (`device.kind = "sim"`): the same path as a real phone.

The phone (anemon/simulator) is pure and lives in virtual time; this backend moves it to the
session clock before every operation and every pull. That phone object is the backend's whole
connection. The app's container log is copied whole into the local mirror every `poll_s` (as
`devicectl device copy from` does) by the follow the two share (devices/pulled.py). While the
phone is unplugged nothing can be pulled: the follow yields a gap, then, once it is back, the
end of the gap and the backfill. Unless the host reaches it over the network (`network=True`,
a plan's `device.connect = "network"`): then the cable can come out and the phone still
answers, which is how energy is measured (the battery current is the load's only unplugged).
It watches the app as a phone's DVT does (`AppWatcher`, sim/watch.py): samples of its
process, its exits, the crash and jetsam reports naming it.

Nobody can pull a simulated cable, so the backend plays the operator of the battery protocol
(`Operator`): OPERATOR_S after "unplug the phone now" it takes the phone off its charge, and
puts it back after "replug". That operator leaves the USB link in (docs/spec/plan.md): over
USB the host still reaches the phone and reads its power, as it does over the network, where
a real phone over USB would be out of reach. A phone whose cable is out from the start
(`sim.plugged = false`) has no USB link: over USB it cannot be reached.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from anemon.clock import Clock
from anemon.devices.base import (
    AppNews,
    AppWatcher,
    Conditioner,
    DeviceGone,
    DeviceInfo,
    DeviceReport,
    DeviceSpec,
    Inspector,
    Installer,
    LaunchRefused,
    Operator,
    PowerSource,
    Telemetry,
)
from anemon.devices.pulled import follow_pulled
from anemon.devices.sim.watch import SimWatch
from anemon.simulator import SimConfig, SimLaunchRefused, SimulatedIPhone
from anemon.sources.items import LogItem

GB = 1_000_000_000
SIM_UDID = "SIM-00008130"
"""The simulated phone's UDID when the plan gives no `device.id` (several simulated phones in
one `run` each need their own id: it is their UDID)."""
UNPLUGGED = "unplugged: nothing can be pulled until the phone is back on USB"
REPLUGGED = "plugged back in: pulling what was missed"
OPERATOR_S = 5.0
"""The simulated operator unplugs or replugs this long after being asked."""


@dataclass(frozen=True)
class SimDeviceSpec(DeviceSpec):
    """A simulated phone to build: the `[device]` table, and what the simulator needs besides:
    the phone's setup (a plan's `[sim]` table and its arms' settings, as a `SimConfig`) and the
    one app it has. The plan reader builds it from a plan (`anemon.control.plan.device_spec`)."""

    bundle: str = ""
    """The app the simulator has, which `install()` installs ("" = none)."""
    config: SimConfig = field(default_factory=SimConfig)


class SimDevice(Installer, PowerSource, Inspector, Operator, AppWatcher, Conditioner):
    """A Device over a SimulatedIPhone, advanced to `clock.now()` whenever it is used."""

    kind = "sim"

    def __init__(
        self,
        phone: SimulatedIPhone,
        clock: Clock,
        *,
        bundle: str,
        poll_s: float = 2.0,
        network: bool = False,
        power_s: float = 1.0,
        process_s: float = 1.0,
        udid: str = SIM_UDID,
        operator_s: float | None = OPERATOR_S,
    ) -> None:
        self.phone = phone
        self.udid = udid
        self.clock = clock
        self.bundle = bundle
        """What `install()` installs (the simulator has one app)."""
        self.poll_s = poll_s
        self.network = network
        """The host also reaches the phone over the network: unplugged, it still answers."""
        self.power_s = power_s
        self.process_s = process_s
        """How often `watch` reads the app, in session seconds (plan `device.process_s`)."""
        self.launched: list[int] = []
        """The pids of this backend's launches, in order (the watch's: whose exit and reports)."""
        self.dropped = 0
        """Crash reports the watch could not read (`watch_warnings`)."""
        self.operator_s = operator_s
        """The simulated operator does as asked this long after; None: it does nothing (a
        test plays the operator)."""

    def sync(self) -> None:
        """Bring the phone to the session's present."""
        dt = self.clock.now() - self.phone.now
        if dt > 0:
            self.phone.advance(dt)

    @property
    def reachable(self) -> bool:
        """The host can talk to the phone: over its USB link, or over the network."""
        return self.network or self.phone.linked

    async def connect(self) -> DeviceInfo:
        os_build = self.phone.config.os_build
        return DeviceInfo("sim", self.udid, "Simulated iPhone", os_build, "iPhone (sim)")

    async def install(self, app: Path) -> None:
        self._reachable()
        self.phone.install(self.bundle)

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        self._reachable()
        try:
            pid = self.phone.launch(bundle, env)
        except SimLaunchRefused as e:
            raise LaunchRefused(str(e), transient=e.transient, code=e.code) from e
        self.launched.append(pid)
        return pid

    async def terminate(self, pid: int) -> None:
        self._reachable()
        self.phone.terminate(pid)

    async def app_installed(self, bundle: str) -> bool | None:
        """The simulator has one app: the plan's bundle."""
        self._reachable()
        return bundle == self.bundle

    async def low_power(self) -> bool | None:
        self._reachable()
        return self.phone.low_power

    def running(self) -> set[int]:
        self.sync()
        return self.phone.running()

    async def telemetry(self) -> Telemetry | None:
        """What a host reads: nothing while it cannot reach the phone, never thermal state."""
        self.sync()
        if not self.reachable:
            return None
        return host_reading(self.phone)

    async def power(self) -> Telemetry:
        """The battery's power reading, as IOPMPowerSource gives it (no disk figures)."""
        self._reachable()
        reading = host_reading(self.phone)
        return dataclasses.replace(reading, free_gb=None, total_gb=None)

    @property
    def watch_warnings(self) -> int:
        return self.dropped

    def watch(self, bundle: str) -> AsyncIterator[AppNews]:
        """The app's reports, exits and samples every `process_s` (sim/watch.py)."""
        return SimWatch(self, bundle).news()

    def follow_log(self, bundle: str, path: str, mirror: Path) -> AsyncIterator[list[LogItem]]:
        copied: int | None = None  # the size last copied: an unchanged file is not rewritten

        async def pull() -> bool:
            nonlocal copied
            self.sync()
            if not self.reachable:
                raise DeviceGone(UNPLUGGED, transient=True)
            copied = self._pull(bundle, path, mirror, copied)
            return True

        return follow_pulled(
            pull, mirror, poll_s=self.poll_s, back=REPLUGGED, sleep=self.clock.sleep
        )

    def _pull(self, bundle: str, path: str, mirror: Path, copied: int | None) -> int | None:
        """Copy the container file over the mirror (write + rename) when it changed."""
        try:
            data = self.phone.read_container_file(bundle, path)
        except FileNotFoundError:
            return copied  # the app has not written its log yet
        if len(data) == copied:
            return copied
        mirror.parent.mkdir(parents=True, exist_ok=True)
        partial = mirror.with_name(mirror.name + ".part")
        partial.write_bytes(data)
        os.replace(partial, mirror)
        return len(data)

    async def operate(self, plugged: bool) -> str | None:
        """The battery protocol's operator: the charge back in, or out, OPERATOR_S from now."""
        if self.operator_s is None:
            return None
        self.sync()
        self.phone.operator_after(self.operator_s, plugged)
        did = "plugs the phone back in" if plugged else "unplugs the phone"
        link = (
            "" if self.network or plugged else " (its USB link stays in: the host still reaches it)"
        )
        return f"simulated operator: {did} in {self.operator_s:g} s{link}"

    async def hold_condition(self, profile: str) -> str:
        """Forces nothing: says what a phone through DVT would do."""
        return (
            f"simulator: a phone would hold {profile} for the run (DVT ConditionInducer) "
            "and report that thermal state to the app; the simulated one is not forced"
        )

    async def release_condition(self) -> str:
        return "simulator: a phone would clear the condition now"

    async def close(self) -> None:
        return None

    def _reachable(self) -> None:
        self.sync()
        if not self.reachable:
            raise DeviceGone("the simulated phone is unplugged", transient=True)


def host_reading(phone: SimulatedIPhone) -> Telemetry:
    """What a host would read of the simulated phone (never its thermal state). Power is
    |battery current| x voltage, as a host computes it from IOPMPowerSource: the phone's draw
    while unplugged, the charger's current while charging (`charging` says which)."""
    t = phone.telemetry()
    return Telemetry(
        battery=t.battery_percent,
        charging=t.charging,
        plugged=t.plugged,
        temperature_c=t.temperature_c,
        free_gb=t.free_bytes / GB,
        total_gb=t.total_bytes / GB,
        power_w=round(abs(t.amperage_ma) * t.voltage_mv / 1e6, 3),
    )


def make_device(spec: DeviceSpec, clock: Clock) -> SimDevice:
    """The simulated phone `spec` sets up (a plain DeviceSpec: the default phone, no app)."""
    if not isinstance(spec, SimDeviceSpec):
        spec = SimDeviceSpec(**dataclasses.asdict(spec))
    return SimDevice(
        SimulatedIPhone(spec.config),
        clock,
        bundle=spec.bundle,
        poll_s=spec.poll_s,
        network=spec.connect == "network",
        power_s=spec.power_s,
        process_s=spec.process_s,
        udid=spec.id or SIM_UDID,
    )


async def list_attached() -> list[DeviceReport]:
    """The simulator is always there: the default phone, as the host would read it."""
    config = SimConfig()
    info = DeviceInfo("sim", "sim", "Simulated iPhone", f"simulated ({config.os_build})")
    return [DeviceReport(info, host_reading(SimulatedIPhone(config)))]
