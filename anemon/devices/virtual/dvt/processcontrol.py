"""`com.apple.instruments.server.services.processcontrol`: launch, signal and watch the app.

A launch starts the simulated bench app with the environment it was given (the simulator the
`sim` backend drives), which writes its log into the container AFC serves; a refused launch is
an ERROR with the NSError a real phone gives (refusals.py). While the connection lasts, the
phone tells the host what each app it launched prints (`outputReceived:fromProcess:atTime:`,
each line of its log) and when it ends (`processWithPID:terminatedWithExitCode:
orCrashingSignal:`, an exit code or the signal that killed it), looked at every `poll_s`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from anemon.devices.virtual.dvt import refusals
from anemon.devices.virtual.dvt.connection import Channel, Refused, arguments, unknown
from anemon.devices.virtual.dvt.wire import Malformed
from anemon.devices.virtual.os_trace import BenchLog
from anemon.devices.virtual.simlike import SimLike
from anemon.simulator import SimLaunchRefused
from anemon.simulator.phone import AppExit
from anemon.simulator.process import Usage

IDENTIFIER = "com.apple.instruments.server.services.processcontrol"
OUTPUT = "outputReceived:fromProcess:atTime:"
TERMINATED = "processWithPID:terminatedWithExitCode:orCrashingSignal:"
LAUNCH = "launchSuspendedProcessWithDevicePath:bundleIdentifier:environment:arguments:options:"


@runtime_checkable
class Processes(SimLike, Protocol):
    """What DVT needs of the simulator (`anemon.simulator.SimulatedIPhone`): its processes,
    what they use (process.py) and the thermal state a condition forces."""

    def launch(self, bundle: str, env: Mapping[str, str]) -> int: ...

    def terminate(self, pid: int) -> None: ...

    def running(self) -> set[int]: ...

    def pid_of(self, bundle: str) -> int: ...

    def log_path(self, pid: int) -> str | None: ...

    def exit_of(self, pid: int) -> AppExit | None: ...

    def usage(self) -> list[Usage]: ...

    def waive_memory_limit(self, pid: int) -> bool: ...

    def force_thermal(self, state: int | None) -> None: ...

    @property
    def screen_on(self) -> bool: ...


class ProcessControl:
    """One channel's process control over `sim`, whose installed apps are `bundles`."""

    def __init__(
        self,
        channel: Channel,
        sim: Processes,
        bundles: frozenset[str],
        clock: Callable[[], float],
        poll_s: float,
    ) -> None:
        self.channel, self.sim, self.bundles = channel, sim, bundles
        self.clock = clock
        """The phone's time in Unix seconds (the time of an output line)."""
        self.poll_s = poll_s
        self._watched: dict[int, BenchLog | None] = {}
        self._watching = False

    async def call(self, selector: str, args: list[Any]) -> Any:
        if selector == LAUNCH:
            return self._launch(*_launch_args(args))
        if selector == "sendSignal:toPid:":
            signal, pid = arguments(args, int, int)
            self._signal(pid, signal)
            return None
        if selector == "killPid:":
            (pid,) = arguments(args, int)
            self._signal(pid, 9)
            return None
        if selector == "processIdentifierForBundleIdentifier:":
            (bundle,) = arguments(args, str)
            return self.sim.pid_of(bundle)
        if selector in ("startObservingPid:", "stopObservingPid:"):
            return None
        if selector == "requestDisableMemoryLimitsForPid:":
            (pid,) = arguments(args, int)
            return self.sim.waive_memory_limit(pid)
        raise unknown(selector)

    def close(self) -> None:
        """Nothing held: what watches the app is the channel's (it stops with it)."""

    # -- calls ------------------------------------------------------------------------------

    def _launch(self, bundle: str, env: Mapping[str, str]) -> int:
        if bundle not in self.bundles:
            raise Refused(refusals.not_installed(bundle))
        try:
            pid = self.sim.launch(bundle, {str(k): str(v) for k, v in env.items()})
        except SimLaunchRefused as e:
            raise Refused(refusals.launch_refusal(e, bundle)) from e
        path = self.sim.log_path(pid)
        self._watched[pid] = BenchLog(self.sim, bundle, path) if path else None
        if not self._watching:
            self._watching = True
            self.channel.every(self.poll_s, self._report)
        return pid

    def _signal(self, pid: int, signal: int) -> None:
        """Only SIGKILL-like signals end the simulated app; any other is delivered to no effect."""
        if signal in (9, 15) and pid in self.sim.running():
            self.sim.terminate(pid)

    # -- what the phone says on its own -----------------------------------------------------

    def _report(self) -> None:
        running = self.sim.running()
        for pid, log in list(self._watched.items()):
            for line in log.new_lines() if log else ():
                self.channel.dispatch(OUTPUT, line + "\n", pid, self.clock())
            if pid not in running:
                del self._watched[pid]
                ended = self.sim.exit_of(pid) or AppExit(code=None, signal=9)
                self.channel.dispatch(TERMINATED, pid, ended.code, ended.signal)


def _launch_args(args: list[Any]) -> tuple[str, Mapping[str, Any]]:
    if len(args) != 5 or not isinstance(args[1], str):
        raise Malformed(f"a launch with {len(args)} arguments")
    env = args[2] if args[2] is not None else {}
    if not isinstance(env, dict):
        raise Malformed(f"a launch environment of type {type(env).__name__}")
    return args[1], env
