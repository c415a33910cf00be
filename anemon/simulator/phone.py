"""The simulated iPhone: the facade a Device backend drives in virtual time.

The driver owns the clock: `advance(dt)` moves it, `next_change_in()` says how far it can
jump before anything happens. Heat is integrated on a fixed 1 s grid (with the power averaged
over each step), so the result does not depend on how the driver slices time. Device power
(power.py) is constant between events, so the battery drains by exactly the energy used.
"""

from __future__ import annotations

import functools
import heapq
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from anemon.simulator import lines
from anemon.simulator.battery import Battery
from anemon.simulator.benchapp import AppSetup, BenchApp
from anemon.simulator.config import SimArmConfig, SimConfig
from anemon.simulator.container import Containers
from anemon.simulator.disk import Disk
from anemon.simulator.env import parse_env
from anemon.simulator.faults import LaunchGate
from anemon.simulator.jetsam import JetsamReport, jetsam_report
from anemon.simulator.process import GB, SYSTEM, Usage
from anemon.simulator.thermal import STATES, Heat, HeatAccumulator, ThermalModel, base_w

STEP_S = 1.0
"""The thermal grid."""
EPS = 1e-9
FIRST_PID = 1001


@dataclass(frozen=True, slots=True)
class PhoneTelemetry:
    """What the phone reports. `thermal` is the app's to read: host backends must not expose it."""

    battery_percent: float
    charging: bool
    plugged: bool
    temperature_c: float
    """Battery temperature."""
    free_bytes: int
    total_bytes: int
    thermal: int
    power_w: float
    """What the whole phone draws now (power.py), plugged or not."""
    amperage_ma: int
    """The battery's current (IOPMPowerSource `InstantAmperage`): negative discharging, with
    |amperage| x voltage = power_w; positive charging (the charger's current, not the load)."""
    voltage_mv: int
    capacity_mah: int
    """The battery's full charge capacity (`NominalChargeCapacity`)."""


@dataclass(frozen=True, slots=True)
class AppExit:
    """How a launch of the app ended, as the kernel tells it."""

    code: int | None
    """Its exit status when it ended by itself (0 after its END line), else None."""
    signal: int | None
    """The signal that killed it (9: killed by the host, or by jetsam), else None."""
    reason: str = ""
    """What killed it, when the kernel did: jetsam's "per-process-limit"."""


CRASH_REPORTER = "CrashReporter"
"""The key of the phone's CrashReporter folder among the containers: `container_files`
(CRASH_REPORTER) are its reports, e.g. JetsamEvent-*.ips."""


SIGKILL = 9


class SimulatedIPhone:
    """A phone with the bench app installed, deterministic for a given config and driving."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.now = 0.0
        self.screen_on = config.screen_on
        self.low_power = config.low_power
        """Low Power Mode (Settings > Battery): the host may read it, the bench does not."""
        start = STATES.index(config.start_thermal)
        self.thermal = ThermalModel(config.thermal, config.ambient_c, start)
        self.battery = Battery(config.battery, config.battery_percent, config.plugged)
        self.linked = config.plugged
        """The USB cable's data link is in (the host reaches the phone over USB)."""
        self.disk = Disk(config.free_gb, config.total_gb, config.cold_cache)
        self.gate = LaunchGate(config)
        self._containers = Containers()
        self._arm_launches: dict[str, int] = {}
        self._apps: dict[int, BenchApp] = {}
        self._exits: dict[int, AppExit] = {}
        self.forced_thermal: int | None = None
        """The thermal state a condition forces on what the app reads (DVT's ConditionInducer),
        whatever the heat; None: the heat decides."""
        self.system_log: list[tuple[str, str]] = []
        """(process, message) of what the phone's own processes logged (osanalyticshelper's
        report lines), in order."""
        self._jetsams = 0
        self._unlimited: set[int] = set()
        """Apps whose memory limit a developer tool waived (DVT)."""
        self._launches = 0
        self._grid_t = 0.0
        self._heat_sum = HeatAccumulator()
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._timer_seq = 0

    # -- host-side controls ---------------------------------------------------------------

    def install(self, bundle: str) -> None:
        """(Re)install: kills the running app; launches are refused for a few seconds."""
        for pid in [p for p, a in self._apps.items() if a.setup.bundle == bundle]:
            self.terminate(pid)
        self.gate.installed(self.now)

    def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        """Start the app; its pid. Raises SimLaunchRefused. Replaces a running instance."""
        params = parse_env(env)
        arm = self.config.arm(params.arm, params.model) if params.arm else None
        self.gate.check(self.now, params.arm if params.mode != "idle" else None, arm)
        for pid in [p for p, a in self._apps.items() if a.setup.bundle == bundle]:
            self.terminate(pid)
        pid = FIRST_PID + self._launches
        self._launches += 1
        rng = random.Random(f"{self.config.seed}:{self._launches}")
        setup = AppSetup(pid, bundle, params, arm, self.config.os_build, self.now)
        self._apps[pid] = BenchApp(setup, rng)
        if params.arm and params.mode != "idle":
            self._arm_launched(params.arm, arm)
        return pid

    def _arm_launched(self, name: str, arm: SimArmConfig | None) -> None:
        """An `unplug` fault pulls the cable once, on the arm's first launch."""
        count = self._arm_launches[name] = self._arm_launches.get(name, 0) + 1
        if arm is not None and arm.fault == "unplug" and count == 1:
            self._after(arm.fault_at_s, lambda: self.set_plugged(False))
            self._after(arm.fault_at_s + arm.unplug_s, lambda: self.set_plugged(True))

    def terminate(self, pid: int) -> None:
        """Kill the app (it writes nothing more); a pid that already exited is ignored."""
        app = self._apps.pop(pid, None)
        if app is None:
            return
        self._exits[pid] = AppExit(code=None, signal=SIGKILL)
        if app.phase == "loading" and self.config.busy_after_kill_mid_load_s > 0:
            self.gate.busy_for(self.now, self.config.busy_after_kill_mid_load_s)
        app.killed(self)

    def running(self) -> set[int]:
        return set(self._apps)

    def pid_of(self, bundle: str) -> int:
        """The pid of the running app of `bundle`, 0 if none runs."""
        return next((p for p, a in self._apps.items() if a.setup.bundle == bundle), 0)

    def log_path(self, pid: int) -> str | None:
        """The container path the running app `pid` writes its log to (None: not running)."""
        app = self._apps.get(pid)
        return app.setup.params.log_path if app else None

    def usage(self) -> list[Usage]:
        """Every process's readings now: the running apps, then the phone's own (process.py)."""
        apps = [app.usage(self.now) for app in self._apps.values()]
        return apps + [Usage(p.pid, p.name, round(p.footprint_gb * GB), p.cpu_pct, 0.0)
                       for p in SYSTEM]  # fmt: skip

    def waive_memory_limit(self, pid: int) -> bool:
        """No jetsam for the running app `pid` from now on (what Xcode's tools may ask);
        whether it runs."""
        if pid not in self._apps:
            return False
        self._unlimited.add(pid)
        return True

    def exit_of(self, pid: int) -> AppExit | None:
        """How the launch `pid` ended (None: still running, or never launched)."""
        return self._exits.get(pid)

    @property
    def plugged(self) -> bool:
        """On the charger (an `unplug` fault or `set_plugged(False)` takes it off)."""
        return self.battery.plugged

    def set_plugged(self, plugged: bool) -> None:
        """The cable in or out: its charge and its USB link together."""
        self.battery.plugged = plugged
        self.linked = plugged

    def operator_after(self, delay: float, plugged: bool) -> None:
        """The battery protocol's simulated operator (devices/sim), `delay` seconds from now:
        unplugging takes the charge away and leaves the USB link in (the host still reaches
        the phone); plugging back in puts the whole cable in."""
        self._after(delay, lambda: self._operated(plugged))

    def _operated(self, plugged: bool) -> None:
        if plugged:
            self.set_plugged(True)
        else:
            self.battery.plugged = False

    @property
    def thermal_state(self) -> int:
        """What the app reads (`ProcessInfo.thermalState`): forced, or the heat's."""
        return self.thermal.state if self.forced_thermal is None else self.forced_thermal

    def force_thermal(self, state: int | None) -> None:
        """Report `state` (0-3) to the app from now on, whatever the heat (None: stop)."""
        if state is not None and not 0 <= state < len(STATES):
            raise ValueError(f"thermal state {state}: 0 to {len(STATES) - 1}")
        self.forced_thermal = state

    def set_screen_on(self, on: bool) -> None:
        self.screen_on = on

    def set_locked(self, locked: bool) -> None:
        self.gate.locked = locked

    def os_update(self) -> None:
        """Every compile cache goes cold: the next load of each arm compiles on device."""
        self.disk.invalidate()

    # -- the container ----------------------------------------------------------------------

    def container_files(self, bundle: str) -> Mapping[str, bytes]:
        """Path in the app's container (e.g. "Documents/sustain/<tag>.log") -> content."""
        return self._containers.files(bundle)

    def read_container_file(
        self, bundle: str, path: str, offset: int = 0, size: int | None = None
    ) -> bytes:
        """Bytes of a container file from `offset` (`size` at most). FileNotFoundError."""
        return self._containers.read(bundle, path, offset, size)

    # -- readings -----------------------------------------------------------------------------

    @property
    def power_w(self) -> float:
        """What the phone draws now: the base (screen) and the running apps (power.py)."""
        params = self.config.power
        return params.base_w(self.screen_on) + sum(a.power_w(params) for a in self._apps.values())

    def telemetry(self) -> PhoneTelemetry:
        b = self.battery
        power = self.power_w
        return PhoneTelemetry(
            battery_percent=round(b.level, 2),
            charging=b.state == "charging",
            plugged=b.plugged,
            temperature_c=round(self.thermal.body_c, 2),
            free_bytes=self.disk.free_bytes(self.now),
            total_bytes=self.disk.total_bytes,
            thermal=self.thermal_state,
            power_w=round(power, 3),
            amperage_ma=round(b.current_ma(power)),
            voltage_mv=round(b.voltage_v * 1000.0),
            capacity_mah=round(b.params.capacity_mah),
        )

    # -- the AppHost side (benchapp.py) -----------------------------------------------------

    def sense(self) -> lines.Sensors:
        b = self.battery
        free = self.disk.free_gb(self.now)
        return lines.Sensors(self.thermal_state, self.thermal.die_c, b.level, b.state, free)

    def write(self, bundle: str, path: str, line: str) -> None:
        self._containers.append(bundle, path, line.encode() + b"\n")

    # -- virtual time ---------------------------------------------------------------------------

    def advance(self, dt: float) -> None:
        """Move virtual time by `dt` seconds; the app writes its lines as they happen."""
        if dt < 0:
            raise ValueError("time only moves forward")
        target = self.now + dt
        while True:
            t_event, action = self._next_event()
            t_grid = self._grid_t + STEP_S
            if t_grid <= t_event and t_grid <= target + EPS:
                self._integrate_to(t_grid)
                self._close_step()
            elif t_event <= target + EPS and action is not None:
                self._integrate_to(t_event)
                action()
            else:
                break
        self._integrate_to(target)

    def next_change_in(self) -> float | None:
        """Seconds until the app writes a line or the phone's plug state changes; None if
        nothing is scheduled (nothing running, or the running app is hung)."""
        t_event, action = self._next_event()
        return None if action is None else max(0.0, t_event - self.now)

    def _after(self, delay: float, action: Callable[[], None]) -> None:
        self._timer_seq += 1
        heapq.heappush(self._timers, (self.now + delay, self._timer_seq, action))

    def _next_event(self) -> tuple[float, Callable[[], None] | None]:
        best: tuple[float, Callable[[], None] | None] = (float("inf"), None)
        for app in self._apps.values():
            if app.next_at is not None and app.next_at < best[0]:
                best = (app.next_at, functools.partial(self._fire, app))
        if self._timers and self._timers[0][0] < best[0]:
            best = (self._timers[0][0], self._fire_timer)
        return best

    def _fire(self, app: BenchApp) -> None:
        app.fire(self)
        if app.exited:
            self._apps.pop(app.pid, None)
            self._exits[app.pid] = AppExit(code=0, signal=None)

    def _fire_timer(self) -> None:
        heapq.heappop(self._timers)[-1]()

    def _heat(self) -> Heat:
        base = base_w(self.config.thermal, self.screen_on, self.battery.plugged)
        chip = [a.heat for a in self._apps.values()]
        return Heat(sum(h.chip_w for h in chip), sum(h.die_rise_c for h in chip), base)

    def _integrate_to(self, t: float) -> None:
        seconds = t - self.now
        if seconds <= 0:
            return
        self._heat_sum.add(self._heat(), seconds)
        self.battery.step(seconds, self.power_w)
        self.now = t

    def _close_step(self) -> None:
        self.thermal.step(STEP_S, self._heat_sum.mean(STEP_S))
        self._grid_t += STEP_S
        limit = self.config.memory_limit_gb * GB
        for app in list(self._apps.values()):
            if app.pid not in self._unlimited and app.usage(self.now).footprint_bytes > limit:
                self._jetsam(app)

    def _jetsam(self, app: BenchApp) -> None:
        """Killed over the memory limit: no line of its own, a report in the CrashReporter
        folder and osanalyticshelper's line about it."""
        killed = app.usage(self.now)
        del self._apps[app.pid]
        self._exits[app.pid] = AppExit(code=None, signal=SIGKILL, reason="per-process-limit")
        app.killed(self)
        self._jetsams += 1
        others = [u for u in self.usage() if u.pid != killed.pid]
        report: JetsamReport = jetsam_report(
            killed, others, wall_s=self.config.epoch_s + self.now,
            os_version=f"iPhone OS ({self.config.os_build})", count=self._jetsams,
        )  # fmt: skip
        name = report.name
        while name in self._containers.files(CRASH_REPORTER):  # two in one second
            name = name.replace(".ips", "-1.ips")
        self._containers.append(CRASH_REPORTER, name, report.data)
        self.system_log.append(("osanalyticshelper", report.log_line))
