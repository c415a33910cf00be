"""The Device interface the controller and `watch --device` drive, what a backend builds one
from (`DeviceSpec`) and lists (`DeviceReport`), and its typed errors.

Every backend can launch with an environment, terminate, follow (mirror) a file in the app's
container and read host-side telemetry. Optional capabilities are classes a backend inherits
from, so that it declares them: `Installer`, `ConsoleSource`, `PowerSource`, `Inspector`,
`AppWatcher`, `AppFinder`, `Conditioner`, `CrashReports`. A
caller asks with `isinstance`, which checks the declaration, never the attributes. All of it is
asyncio.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from anemon.errors import AnemonError
from anemon.events import CrashEvent, GapEvent, TelemetryEvent
from anemon.sources.items import LogItem

CONNECTIONS = ("usb", "network")
"""How the host reaches the phone: over USB (usbmuxd), or lockdown over the network."""


@dataclass(frozen=True)
class DeviceSpec:
    """Which backend, and how it reaches the phone: a plan's `[device]` table, or `watch
    --device`'s options. A backend's factory builds its Device from one (`anemon.devices`)."""

    kind: str = "sim"
    """The backend: one of `anemon.devices.DEVICE_KINDS`."""
    id: str = ""
    """UDID or name; empty = the only attached device."""
    poll_s: float = 2.0
    """How often the container log is pulled where the backend copies whole files."""
    connect: str = "usb"
    """One of CONNECTIONS: "usb", or "network" (Wi-Fi lockdown: the cable can be out), for
    the backends that take it (`Backend.connections`; devicectl finds networked phones itself)."""
    host: str = ""
    """The phone's address for connect = "network" ("" = find it)."""
    power_s: float = 1.0
    """How often device power (battery current x voltage) is read."""
    process_s: float = 1.0
    """How often the bench app's CPU, memory and GPU are sampled, where the backend can
    (`AppWatcher`): a phone may deliver them less often."""
    condition: str = ""
    """A ThermalCondition profile ("ThermalSerious") held for the whole run, where the backend
    can (`Conditioner`); "" = none."""


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """What the host can tell about an attached device."""

    kind: str
    """The backend: one of `anemon.devices.DEVICE_KINDS`."""
    udid: str
    name: str
    os: str = ""
    model: str = ""


@dataclass(frozen=True, slots=True)
class Telemetry:
    """Host-side readings (never thermal state: only the app can read that)."""

    battery: float | None = None
    """Percent 0-100."""
    charging: bool | None = None
    plugged: bool | None = None
    temperature_c: float | None = None
    """Battery temperature, the host's only proxy for heat."""
    free_gb: float | None = None
    total_gb: float | None = None
    power_w: float | None = None
    """Device power (battery current x voltage), positive = drawing; None: not read."""
    load_w: float | None = None
    """The phone's own system load (PowerTelemetryData SystemLoad), plugged in or not."""
    power_in_w: float | None = None
    battery_power_w: float | None = None
    load_changed_wall: float | None = None
    """Epoch seconds of the reading at which the phone last changed the three above."""
    load_refresh_s: float | None = None
    """How often the phone refreshed them, as the reads so far saw it (None: not yet seen);
    not recorded (the summary reads the interval from `load_changed_t`)."""

    @property
    def system_load(self) -> str:
        """Whether the phone publishes its system load, in words (`devices`, pre-flight)."""
        if self.load_w is None:
            return "not published: energy needs the battery protocol"
        refresh = self.load_refresh_s
        every = f"refreshed every ~{refresh:.0f} s" if refresh else "refresh not measured yet"
        return f"yes, {every} ({self.load_w:.2f} W now)"

    @property
    def battery_state(self) -> str | None:
        """The protocol's battery_state, as the app would say it."""
        if self.plugged is False:
            return "unplugged"
        if self.charging:
            return "charging"
        return "full" if self.plugged else None

    def event(
        self, *, t: float, wall: float, source: str, arm: str | None = None
    ) -> TelemetryEvent:
        """This reading as a TelemetryEvent (charted, recorded, used by the gates)."""
        return TelemetryEvent(
            t=t, wall=wall, arm=arm, source=source, battery=self.battery,
            battery_state=self.battery_state, temperature_c=self.temperature_c,
            free_gb=self.free_gb, total_gb=self.total_gb, power_w=self.power_w,
            charging=self.charging, plugged=self.plugged, load_w=self.load_w,
            power_in_w=self.power_in_w, battery_power_w=self.battery_power_w,
            load_changed_t=None if self.load_changed_wall is None
            else t - max(0.0, wall - self.load_changed_wall),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class DeviceReport:
    """One attached device as `anemon devices` shows it."""

    info: DeviceInfo
    telemetry: Telemetry | None
    error: str = ""
    """Why telemetry could not be read (locked, not paired, ...), or empty."""


class DeviceError(AnemonError):
    """A device operation failed; `transient` says whether retrying later may succeed."""

    exit_status = 1

    def __init__(self, message: str, *, transient: bool = False, code: int | None = None):
        super().__init__(message)
        self.transient = transient
        self.code = code


class LaunchRefused(DeviceError):
    """The device refused to launch the app (CoreDeviceError 10002 and friends)."""


class DeviceGone(DeviceError):
    """The device went away (unplugged, connection invalidated): reconnect."""


class Device(Protocol):
    """What every backend offers; a capability a backend lacks raises DeviceError."""

    kind: str

    async def connect(self) -> DeviceInfo: ...

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        """Start the app with this environment; the pid. Raises LaunchRefused."""
        ...

    async def terminate(self, pid: int) -> None: ...

    def follow_log(self, bundle: str, path: str, mirror: Path) -> AsyncIterator[list[LogItem]]:
        """Batches of new lines of the container file `path`, mirrored locally to `mirror`.

        Every complete line exactly once; ends when the iterator is closed.
        """
        ...

    async def telemetry(self) -> Telemetry | None: ...

    async def close(self) -> None: ...


class Installer(abc.ABC):
    """A backend that can install an app bundle (.app or .ipa)."""

    @abc.abstractmethod
    async def install(self, app: Path) -> None: ...


class ConsoleSource(abc.ABC):
    """A backend that can stream the console lines (os_trace) of a process on the phone."""

    @abc.abstractmethod
    def console(self, process: str) -> AsyncIterator[str]:
        """The process's lines as they come, live only; ends when the phone goes away."""
        ...


class Inspector(abc.ABC):
    """A backend that can say, before a run, whether the app is installed and whether Low Power
    Mode is on (the pre-flight checks, anemon/control/preflight.py). None: it cannot tell."""

    @abc.abstractmethod
    async def app_installed(self, bundle: str) -> bool | None:
        """Whether `bundle` is installed; raises DeviceError when the phone cannot be asked."""
        ...

    async def low_power(self) -> bool | None:
        """Whether Low Power Mode is on (None: this backend cannot read it)."""
        return None


class CrashReports(abc.ABC):
    """A backend that can list the crash and jetsam reports on the phone (v3: the pre-flight
    checks warn of the app's reports since the last session of the tag)."""

    @abc.abstractmethod
    async def reports(self, bundle: str, since: float | None = None) -> list[tuple[str, float]]:
        """The reports naming `bundle`'s app (its own crash report, or a JetsamEvent where it
        is the killed or largest process), written after `since` (epoch seconds; None: all
        of them): each one's file name and modification time (epoch seconds). Raises
        DeviceError when the phone cannot be asked."""
        ...


class Operator(abc.ABC):
    """A backend that does itself what the battery protocol asks of the operator: the simulator,
    whose cable nobody can pull (anemon/control/battery.py)."""

    @abc.abstractmethod
    async def operate(self, plugged: bool) -> str | None:
        """Plug the phone in (True) or unplug it (False) a few seconds from now; what it says
        it does (a marker), or None when it leaves it to a person (a test plays the operator)."""
        ...


class PowerSource(abc.ABC):
    """A backend that reads device power (battery current x voltage) often, about once a second.

    Callers do not loop themselves: `anemon.pipeline.poll_power` reads `power()` every `power_s`
    and turns each reading into a telemetry event, and a failed read into a gap.
    """

    power_s: float = 1.0
    """How often callers read `power()`, in session seconds (plan `device.power_s`)."""

    @property
    def power_warnings(self) -> int:
        """Absurd readings dropped so far (|current| > 10 A, or voltage outside 2.5-5 V)."""
        return 0

    @abc.abstractmethod
    async def power(self) -> Telemetry | None:
        """One reading: `power_w`, `charging`, `plugged`, `battery`, `temperature_c` (disk None).

        `power_w` is None when the phone reports no current or voltage (older iOS), or when
        the reading was absurd (then counted in `power_warnings`). None: nothing to read this
        time, silently. Raises DeviceError when the phone cannot be read: the poller records a
        gap and keeps trying.
        """
        ...


# -- the app while it runs (AppWatcher) --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppExit:
    """The app's process ended (a termination message, or no longer running)."""

    pid: int
    reason: str
    """In words, as a round's failure reason: "exited on signal 9", "exited with code 1"."""


def exit_reason(code: object, signal: object) -> str:
    """ "exited on signal 9" (a kill, jetsam), "exited with code 1": an
    AppExit's reason from the exit status and signal the phone tells (either may be absent)."""
    if isinstance(signal, int) and not isinstance(signal, bool) and signal > 0:
        return f"exited on signal {signal}"
    if isinstance(code, int) and not isinstance(code, bool):
        return f"exited with code {code}"
    return "exited"


@dataclass(frozen=True, slots=True)
class AppSample:
    """One reading of the app's process (sysmontap) or of the GPU (graphics); None: not in it."""

    pid: int | None
    cpu_pct: float | None = None
    """% of one core, as top shows it (may pass 100)."""
    mem_gb: float | None = None
    """Physical footprint, GB = 10^9 bytes."""
    gpu_pct: float | None = None
    """The GPU's Device Utilization %, the whole phone's."""

    def event(self, *, t: float, wall: float, source: str, arm: str | None) -> TelemetryEvent:
        """This reading as the app's TelemetryEvent (recorded, charted, summarised)."""
        return TelemetryEvent(t=t, wall=wall, arm=arm, source=source, pid=self.pid,
                              cpu_pct=self.cpu_pct, mem_gb=self.mem_gb,
                              gpu_pct=self.gpu_pct)  # fmt: skip


@dataclass(frozen=True, slots=True)
class AppCrash:
    """A new crash or jetsam report on the phone naming the app (anemon.events.CrashEvent)."""

    report: str
    """"crash" (the app's own) or "jetsam" (a JetsamEvent where it was killed or largest)."""
    reason: str
    """As a round's failure reason: "jetsam: per-process-limit at 2.2 GB"."""
    file: str
    """The report's file name on the phone."""
    process: str
    data: bytes
    """The report as the phone has it (copied next to the recording)."""
    pid: int | None = None
    footprint_gb: float | None = None

    def event(self, *, t: float, wall: float, source: str, arm: str | None) -> CrashEvent:
        """This report as a `crash` event (its data is not in it: the file is copied aside)."""
        return CrashEvent(t=t, wall=wall, arm=arm, source=source, report=self.report,
                          reason=self.reason, footprint_gb=self.footprint_gb, file=self.file,
                          process=self.process)  # fmt: skip


@dataclass(frozen=True, slots=True)
class AppGap:
    """A stream about the app went silent or unreachable ("begin"), or came back ("end")."""

    stream: str
    """Which: "exits", "sysmontap", "graphics", "reports"."""
    state: str
    reason: str = ""

    def event(self, *, t: float, wall: float, source: str, arm: str | None) -> GapEvent:
        """This gap as a GapEvent of its own source (`source:stream`: no watchdog waits on it)."""
        return GapEvent(t=t, wall=wall, arm=arm, source=f"{source}:{self.stream}",
                        state=self.state, reason=self.reason)  # fmt: skip


AppNews = AppExit | AppSample | AppCrash | AppGap


class AppWatcher(abc.ABC):
    """A backend that sees the bench app while a run goes: its exit when it happens, its CPU,
    memory and GPU, and the crash and jetsam reports naming it. The controller reads `watch`
    for the whole run (anemon/control/controller.py)."""

    @property
    def watch_warnings(self) -> int:
        """Readings and reports dropped so far (absurd samples, malformed rows, not JSON)."""
        return 0

    @abc.abstractmethod
    def watch(self, bundle: str) -> AsyncIterator[AppNews]:
        """What happens to the app this backend launched, from now on (reports already on
        the phone are not news), until the iterator is closed. Never raises for the phone
        going away: that is an AppGap, and the watch goes on when it is back."""
        ...


class AppFinder(abc.ABC):
    """A backend that sees an app it did not launch (`anemon watch --device`): found by its
    bundle while it runs, its exit seen by polling (no termination message comes for a process
    another connection launched)."""

    @abc.abstractmethod
    def watch_running(self, bundle: str) -> AsyncIterator[AppNews]:
        """As `AppWatcher.watch`, of the process running `bundle` now and of each that runs it
        next: its samples, its exit (`AppExit`), the reports naming it, gaps."""
        ...


class Conditioner(abc.ABC):
    """A backend that can force a device condition (DVT ConditionInducer: a ThermalCondition
    profile makes the phone report that thermal state to the app)."""

    @abc.abstractmethod
    async def hold_condition(self, profile: str) -> str:
        """Force `profile` until `release_condition` or the backend closes; what was done
        (a marker). Raises DeviceError when the phone refuses it."""
        ...

    @abc.abstractmethod
    async def release_condition(self) -> str:
        """Clear the condition held; what was done (a marker), "" if none was held."""
        ...
