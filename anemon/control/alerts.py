"""Alerts (plan `[alerts]`, docs/spec/plan.md v2): conditions worth interrupting the operator.

`Alerts` listens to the pipeline's events, as the controller does. When a condition is met it
emits an `alert` event (shown as a toast and a mark on the timeline, rung with the terminal
bell, recorded) and runs the plan's hook. Each condition fires at most once per arm: no storms.

- `thermal`: a TRIAL or IDLE line reports that state or a hotter one;
- `decode_drop_pct`: a timed trial decodes below the arm's burst (the median of its first
  minute of timed trials) by that share;
- `battery_floor_pct`, `disk_floor_gb`: a reading (the app's or the host's) at or below it;
- `charging_changed`: the phone starts or stops charging while an arm runs;
- `crash` (v3, on by default): a crash or jetsam report names the bench app (a `crash` event).

The hook is an argument list run without a shell, with ANEMON_ALERT, ANEMON_ARM, ANEMON_VALUE,
ANEMON_THRESHOLD and ANEMON_TAG in its environment, in its own session: its process group (the
hook and anything it started) is killed after `hook_timeout_s`, when the session is aborted (a
signal, X), and what is left of it when the run ends. It is waited for in a thread with a
real-time timeout: at `--speed max` the loop's own time is virtual and would time every hook
out at once. A hook that fails or times out is a marker; it never stops a run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import statistics
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from anemon.control.plan import AlertSpec
from anemon.events import (
    THERMAL_NAMES,
    AlertEvent,
    CrashEvent,
    Event,
    MarkerEvent,
    PhaseEvent,
    ReadingsEvent,
    RecordEvent,
    StartEvent,
    TelemetryEvent,
    TrialEvent,
)
from anemon.pipeline import Pipeline
from anemon.text import printable

SOURCE = "alerts"
BURST_S = 60.0
"""The burst is the median decode of an arm's first minute of timed trials."""
ARM_PHASES = frozenset({"launching", "loading", "warmup", "running"})
"""The phases in which an arm runs (charging changes count only then)."""
STDERR_TAIL = 300
"""Characters of a failed hook's stderr kept in its marker."""


@dataclass
class _Burst:
    """One arm's burst: the decodes of its first minute, then their median."""

    first_t: float
    decodes: list[float] = field(default_factory=list)
    median: float | None = None


class Alerts:
    """The plan's alerts on one pipeline; `drain()` waits for the hooks still running."""

    def __init__(self, spec: AlertSpec, pipeline: Pipeline, *, tag: str) -> None:
        self.spec = spec
        self.pipeline = pipeline
        self.tag = tag
        self.fired: set[tuple[str, str | None]] = set()
        """(condition, arm) pairs that have fired."""
        self.hooks: list[asyncio.Task[None]] = []
        self._started: list[Hook] = []
        """Every hook started: their process groups are killed when the run ends."""
        self._arm: str | None = None
        self._running = False
        self._charging: bool | None = None
        self._bursts: dict[str, _Burst] = {}
        if spec.any:
            pipeline.subscribe(self._on_event)

    # -- conditions ------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, PhaseEvent):
            self._running = event.phase in ARM_PHASES
            self._arm = event.arm if self._running else self._arm
            return
        if isinstance(event, AlertEvent | MarkerEvent):
            return
        if isinstance(event, RecordEvent) and event.arm is not None:
            self._arm = event.arm
        arm = event.arm or self._arm
        if isinstance(event, ReadingsEvent):
            self._thermal(event, arm)
            self._levels(event.battery, event.free_gb, arm)
            if event.battery_state in ("charging", "unplugged", "full"):
                self._charging_now(event.battery_state == "charging", arm)
        if isinstance(event, TrialEvent):
            self._decode(event, arm)
        if isinstance(event, StartEvent):
            self._levels(None, event.free_gb, arm)
        if isinstance(event, TelemetryEvent):
            self._levels(event.battery, event.free_gb, arm)
            if event.charging is not None:
                self._charging_now(event.charging, arm)
        if isinstance(event, CrashEvent) and self.spec.crash:
            self._crash(event, arm)

    def _thermal(self, event: ReadingsEvent, arm: str | None) -> None:
        wanted = self.spec.thermal
        if wanted == "none" or event.thermal is None:
            return
        if event.thermal >= THERMAL_NAMES.index(wanted):
            state = THERMAL_NAMES[event.thermal]
            self._fire("thermal", arm, state, wanted, f"thermal state {state} (alert at {wanted})")

    def _levels(self, battery: float | None, free_gb: float | None, arm: str | None) -> None:
        floor = self.spec.battery_floor_pct
        if floor > 0 and battery is not None and battery <= floor:
            self._fire("battery_floor", arm, battery, floor,
                       f"battery {battery:.0f} % (floor {floor:g} %)")  # fmt: skip
        disk = self.spec.disk_floor_gb
        if disk > 0 and free_gb is not None and free_gb <= disk:
            self._fire("disk_floor", arm, round(free_gb, 2), disk,
                       f"free disk {free_gb:.1f} GB (floor {disk:g} GB)")  # fmt: skip

    def _charging_now(self, charging: bool, arm: str | None) -> None:
        before, self._charging = self._charging, charging
        if not self.spec.charging_changed or before is None or before == charging:
            return
        if self._running:
            what = "charging" if charging else "not charging"
            change = "started" if charging else "stopped"
            self._fire("charging", arm, what, None, f"the phone {change} charging mid-arm")

    def _decode(self, event: TrialEvent, arm: str | None) -> None:
        share = self.spec.decode_drop_pct
        decode = event.decode_tps
        if share <= 0 or event.warmup or decode is None or arm is None:
            return
        burst = self._bursts.setdefault(arm, _Burst(event.t))
        if burst.median is None:
            if event.t - burst.first_t < BURST_S:
                burst.decodes.append(decode)
                return
            burst.median = statistics.median(burst.decodes or [decode])
        floor = burst.median * (1 - share / 100)
        if decode < floor:
            drop = 100 * (1 - decode / burst.median) if burst.median else 100.0
            self._fire("decode_drop", arm, round(decode, 2), round(floor, 2),
                       f"decode {decode:.1f} tok/s, {drop:.0f} % below the burst "
                       f"{burst.median:.1f} (alert at {share:g} %)")  # fmt: skip

    def _crash(self, event: CrashEvent, arm: str | None) -> None:
        """Once per arm, as every condition: its first report is the one that ended it."""
        said = printable(event.reason or event.file)
        self._fire("crash", arm, event.report, None, f"the app's {event.report} report: {said}")

    # -- firing ----------------------------------------------------------------------------

    def _fire(
        self, alert: str, arm: str | None, value: float | str, threshold: float | str | None,
        note: str,
    ) -> None:  # fmt: skip
        if (alert, arm) in self.fired:
            return
        self.fired.add((alert, arm))
        fields = {"arm": arm, "source": SOURCE, "alert": alert, "value": value,
                  "threshold": threshold, "note": note}  # fmt: skip
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.pipeline.emit_now(AlertEvent, **fields)
            return
        # After the event that met the condition has reached every listener: views show the
        # reading, then the alert about it.
        loop.call_soon(self._raise, fields)

    def _raise(self, fields: dict[str, Any]) -> None:
        """The alert on the pipeline, and its hook started."""
        event = self.pipeline.emit_now(AlertEvent, **fields)
        if self.spec.hook:
            self.hooks.append(asyncio.get_running_loop().create_task(self._hook(event)))

    async def _hook(self, event: AlertEvent) -> None:
        hook = Hook.start(self.spec.hook, hook_env(event, self.tag), self.spec.hook_timeout_s)
        failed = hook if isinstance(hook, str) else await self._wait(hook)
        if failed is not None:
            note = f"alert hook for {event.alert}: {failed}"
            self.pipeline.emit_now(MarkerEvent, arm=event.arm, source=SOURCE, note=note)

    async def _wait(self, hook: Hook) -> str | None:
        self._started.append(hook)
        try:
            return await asyncio.to_thread(hook.wait)
        except asyncio.CancelledError:  # the run was cut: its thread ends with the group
            hook.kill("killed: the run ended")
            raise

    def stop(self) -> None:
        """The session is aborted: kill every hook's process group now (`drain` then ends at
        once)."""
        for hook in self._started:
            hook.kill("killed: the session was aborted")

    async def drain(self) -> None:
        """Wait for the hooks still running (each is bounded by its timeout), then kill what
        they left running (a background child): nothing of a hook outlives the run."""
        try:
            while self.hooks:
                hooks, self.hooks = self.hooks, []
                await asyncio.gather(*hooks, return_exceptions=True)
        finally:
            for hook in self._started:
                hook.kill("killed: the run ended")


def hook_env(event: AlertEvent, tag: str) -> dict[str, str]:
    """The hook's environment: anemon's own plus what the alert was."""
    env = dict(os.environ)
    env.update({
        "ANEMON_ALERT": event.alert,
        "ANEMON_ARM": event.arm or "",
        "ANEMON_VALUE": _text(event.value),
        "ANEMON_THRESHOLD": _text(event.threshold),
        "ANEMON_TAG": tag,
    })  # fmt: skip
    return env


def _text(value: float | str | None) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else f"{value:g}"


class Hook:
    """One run of the hook in its own session (so its own process group): the group, the hook
    and whatever it started, lives at most `timeout_s` real seconds, and never past the run
    (`kill`). `wait` blocks: run it in a thread."""

    def __init__(
        self, process: subprocess.Popen[bytes], stderr: IO[bytes], timeout_s: float
    ) -> None:
        self.process = process
        self._stderr = stderr
        self._why: str | None = None
        """Why the group was killed, once it was."""
        # A timer thread, not the loop: at --speed max the loop's time is virtual.
        timed_out = f"timed out after {timeout_s:g} s (killed)"
        self._deadline = threading.Timer(timeout_s, self.kill, (timed_out,))
        self._deadline.daemon = True
        self._deadline.start()

    @classmethod
    def start(cls, argv: Sequence[str], env: Mapping[str, str], timeout_s: float) -> Hook | str:
        """The hook started (no shell, stdin and stdout closed), or why it could not be."""
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 (`wait` closes it)
        try:
            process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=stderr, env=dict(env),
                                       start_new_session=True)  # fmt: skip
        except OSError as e:
            stderr.close()
            return f"could not start {printable(argv[0])}: {e.strerror or e}"
        return cls(process, stderr, timeout_s)

    def wait(self) -> str | None:
        """Until the hook itself has exited: None when it exited 0 (what it started may live on
        until the timeout or the run's end), else what went wrong."""
        with self._stderr:
            status = self.process.wait()
            if self._why is not None:
                return self._why
            if status == 0:
                return None
            self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, self._stderr.tell() - STDERR_TAIL))
            tail = self._stderr.read().decode("utf-8", errors="replace").strip()
        said = f": {printable(tail.splitlines()[-1])}" if tail else ""
        return f"exited with status {status}{said}"

    def kill(self, why: str) -> None:
        """Kill the hook's whole process group now, if anything of it is left."""
        self._deadline.cancel()
        if self.process.poll() is None:
            self._why = self._why or why
        # The group outlives its leader while a child it started runs (its pgid stays taken).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
