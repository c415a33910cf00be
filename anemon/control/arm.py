"""One launch of one arm: the free-disk guard, the launch with retries, then supervision of
the app's log (first-trial and stall watchdogs, `ERROR:` lines, END, operator aborts) and,
where the backend sees the app (an `AppWatcher`), of its process: an exit without an END line
ends the round as failed once the log has had EXIT_GRACE_S to bring the END (a last pull) or
a report to say why (jetsam); a crash report naming it ends the round at once.

An `ArmRun` reads its part of the plan from an `ArmLaunch` and asks the controller for the
few things in `ArmHost`, nothing else.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from anemon.clock import Clock, wait_for
from anemon.control.battery import (
    REPLUG,
    REPLUG_MARGIN_S,
    UNPLUG,
    Answer,
    Wait,
    expected_run_s,
    is_plugged,
    is_unplugged,
)
from anemon.control.launch import app_env, backoff_s
from anemon.control.outcome import ArmOutcome
from anemon.control.plan import ArmSpec, GuardSpec, Plan, ProtocolSpec
from anemon.control.watchdog import Watchdog
from anemon.devices.base import AppCrash, AppExit, DeviceError, LaunchRefused
from anemon.events import (
    EndEvent,
    ErrorEvent,
    Event,
    GapEvent,
    LoadEvent,
    Phase,
    RecordEvent,
    StartEvent,
    TrialEvent,
)

EXIT_GRACE_S = 5.0
"""After the app's exit, how long (at least; 2.5 pulls of the log) an END line or a crash
report may still come before the round fails with the exit's reason."""

Inbox = Event | AppExit | AppCrash
"""What the controller hands an arm run: the app's log events, and what the backend saw."""


class Command(enum.Enum):
    """Operator commands delivered to the arm in progress."""

    ABORT_ARM = "the operator aborted the arm"
    ABORT_SESSION = "the operator aborted the session"


class ArmHost(Protocol):
    """What an arm run needs from the controller running it, and nothing more."""

    @property
    def gap(self) -> bool:
        """The app's log cannot be pulled now (the watchdogs wait for it to come back)."""
        ...

    def set_phase(self, phase: Phase, arm: str | None, reason: str = "") -> None: ...

    def error(self, arm: str | None, message: str) -> None:
        """A failure anemon detected itself (watchdog, guard, refusal): an error record."""
        ...

    async def nap(self, seconds: float | None) -> None:
        """Wait `seconds`; an operator action wakes it early."""
        ...

    async def free_gb(self) -> float | None:
        """Free disk now: a fresh host reading, else the last one the log or host gave."""
        ...

    async def ask(self, wait: Wait) -> Answer:
        """Show `wait.prompt` and wait until host telemetry says the operator did it (or the
        operator goes on with k, or the session is aborted)."""
        ...

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        """Start the app; the pid. Raises LaunchRefused, DeviceError."""
        ...

    async def terminate(self, pid: int) -> None:
        """Stop the app; a failure is noted, never raised."""
        ...


@dataclass(frozen=True, slots=True)
class ArmLaunch:
    """One launch of an arm, and all an arm run reads of the plan."""

    arm: ArmSpec
    round: int
    """1-based: which launch of this arm (A-B-A-B rounds)."""
    bundle: str
    env: Mapping[str, str]
    """The app's environment (launch.app_env)."""
    guards: GuardSpec
    protocol: ProtocolSpec
    battery_prompts: bool = False
    """Ask the operator to unplug, then to replug, around the run (the simulator's `unplug`
    fault: a cable pulled mid-arm; the plan's battery protocol asks once for the whole run)."""
    exit_grace_s: float = EXIT_GRACE_S
    """After the app's exit, how long an END line or a crash report may still come."""

    @classmethod
    def of(cls, plan: Plan, arm: ArmSpec, round_: int, *, battery_prompts: bool) -> ArmLaunch:
        grace = max(EXIT_GRACE_S, 2.5 * plan.device.poll_s)
        return cls(arm, round_, plan.app.bundle, app_env(plan, arm), plan.guards,
                   plan.protocol, battery_prompts, grace)  # fmt: skip


class _Ended(Exception):
    """The launch is over before supervision (refused, aborted, guard)."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class ArmRun:
    """Runs one launch on behalf of its host; `inbox` receives the app's log events."""

    def __init__(self, host: ArmHost, clock: Clock, launch: ArmLaunch) -> None:
        self.host = host
        self.clock = clock
        self.launch = launch
        self.arm = launch.arm
        self.round = launch.round
        self.phase: Phase | None = None
        """The last phase this run set."""
        self.inbox: asyncio.Queue[Inbox | Command] = asyncio.Queue()
        self.pid: int | None = None
        self.exited: AppExit | None = None
        """The app's exit, seen by the backend before the round ended."""
        self._exit_deadline: float | None = None
        self.started = False
        """A START line of this launch was seen (earlier lines are the previous process's)."""
        self._aborted: Command | None = None

    def command(self, command: Command) -> None:
        self._aborted = self._aborted or command
        self.inbox.put_nowait(command)

    async def run(self) -> ArmOutcome:
        prompts: asyncio.Task[None] | None = None
        try:
            await self._guard_disk()
            self.pid = await self._start_app()
            if self.launch.battery_prompts:
                prompts = asyncio.create_task(self._battery_prompts())
            status, reason = await self._supervise()
        except _Ended as e:
            status, reason = e.status, e.reason
        finally:
            if prompts is not None:
                prompts.cancel()
                await asyncio.gather(prompts, return_exceptions=True)
        if status != "done" and self.pid is not None and self.exited is None:
            await self.host.terminate(self.pid)
        return ArmOutcome(self.arm.name, self.round, status, reason)

    def _fail(self, reason: str) -> _Ended:
        self.host.error(self.arm.name, reason)
        return _Ended("failed", reason)

    def _phase(self, phase: Phase, reason: str = "") -> None:
        self.phase = phase
        self.host.set_phase(phase, self.arm.name, reason)

    def _check_abort(self) -> None:
        if self._aborted is not None:
            raise _Ended("aborted", self._aborted.value)

    # -- before the launch ------------------------------------------------------------------

    async def _guard_disk(self) -> None:
        free = await self.host.free_gb()
        floor = self.launch.guards.min_free_gb
        if free is not None and free < floor:
            raise self._fail(f"free disk {free:.1f} GB is below min_free_gb = {floor:g}")

    async def _start_app(self) -> int:
        guards = self.launch.guards
        self._phase("launching", f"round {self.round}" if self.round > 1 else "")
        retry = 0
        while True:
            self._check_abort()
            try:
                return await self.host.launch(self.launch.bundle, self.launch.env)
            except LaunchRefused as e:
                if not e.transient:
                    raise self._fail(f"launch refused, not retried: {e}") from e
                if retry >= guards.launch_retries:
                    raise self._fail(f"launch refused {retry + 1} times, last: {e}") from e
                refusal = str(e)
            except DeviceError as e:
                raise self._fail(f"cannot launch: {e}") from e
            retry += 1
            delay = backoff_s(retry)
            retrying = f"retry {retry}/{guards.launch_retries} in {delay:g} s"
            self._phase("launching", f"refused ({refusal}); {retrying}")
            await self.host.nap(delay)

    # -- supervision ------------------------------------------------------------------------

    async def _supervise(self) -> tuple[str, str]:
        guards = self.launch.guards
        dog = Watchdog(self.clock.now(), guards.first_trial_timeout_s, guards.stall_timeout_s)
        if self.host.gap:
            dog.gap("begin", dog.started)
        self._phase("loading")
        while True:
            deadline = self._deadline(dog)
            timeout = None if deadline is None else max(0.0, deadline - self.clock.now())
            try:
                item = await wait_for(self.clock, self.inbox.get(), timeout)
            except TimeoutError:
                raise self._fail(self._timed_out(dog)) from None
            if isinstance(item, Command):
                return "aborted", item.value
            verdict = self._on_item(item, dog)
            if verdict is not None:
                return verdict

    def _deadline(self, dog: Watchdog) -> float | None:
        """The watchdogs' deadline, or the exit's grace if sooner; None while the log cannot
        be pulled (its END may be on the phone: the grace starts again when it is back)."""
        watchdog = dog.deadline()
        if watchdog is None:
            return None
        return watchdog if self._exit_deadline is None else min(watchdog, self._exit_deadline)

    def _timed_out(self, dog: Watchdog) -> str:
        exited, until = self.exited, self._exit_deadline
        if exited is not None and until is not None and self.clock.now() >= until:
            return f"the app {exited.reason} without an END line"
        return dog.reason()

    def _on_item(self, item: Inbox, dog: Watchdog) -> tuple[str, str] | None:
        t = self.clock.now()
        if isinstance(item, AppExit):
            if item.pid == self.pid and self.exited is None:
                self.exited, self._exit_deadline = item, t + self.launch.exit_grace_s
            return None
        if isinstance(item, AppCrash):
            if item.pid is None or item.pid == self.pid:
                self.exited = self.exited or AppExit(self.pid or 0, item.reason)
                raise self._fail(item.reason)
            return None
        if isinstance(item, GapEvent):
            dog.gap(item.state, t)
            if item.state == "end" and self._exit_deadline is not None:
                self._exit_deadline = max(self._exit_deadline, t + self.launch.exit_grace_s)
            return None
        if not isinstance(item, RecordEvent):
            return None
        dog.line(t)
        if isinstance(item, StartEvent):
            self.started = True
        elif not self.started and item.arm != self.arm.name:
            return None  # the previous launch's last lines (launch.Attribution names their arm)
        return self._on_record(item, dog, t)

    def _on_record(self, item: RecordEvent, dog: Watchdog, t: float) -> tuple[str, str] | None:
        if isinstance(item, LoadEvent):
            self._phase("warmup", f"loaded in {item.load_s or 0:g} s")
        elif isinstance(item, TrialEvent):
            dog.trial(t)
            if self.phase != "running" and (not item.warmup or self.phase == "warmup"):
                self._phase("running")
        elif isinstance(item, ErrorEvent):
            return "failed", f"the app reported an error: {item.message}"
        elif isinstance(item, EndEvent):
            if item.reason in (None, "done"):
                return "done", f"{item.trials} trials" if item.trials is not None else ""
            return "failed", f"the app ended: {item.reason}"
        return None

    # -- battery protocol -------------------------------------------------------------------

    async def _battery_prompts(self) -> None:
        """Unplug now; once the arm should be over, replug now (the log is pulled after)."""
        started = self.clock.now()
        unplug = Wait("unplug", UNPLUG, "unplugged", lambda t: is_unplugged(t, usb=True))
        await self.host.ask(unplug)
        due = started + expected_run_s(self.launch.protocol) + REPLUG_MARGIN_S
        await self.clock.sleep(due - self.clock.now())
        await self.host.ask(Wait("replug", REPLUG, "replugged", is_plugged))
