"""One launch of one arm: the free-disk guard, the launch with retries, then supervision of
the app's log (first-trial and stall watchdogs, `ERROR:` lines, END, operator aborts)."""

from __future__ import annotations

import asyncio
import enum
from typing import TYPE_CHECKING

from anemon.clock import wait_for
from anemon.control.launch import app_env, backoff_s
from anemon.control.outcome import ArmOutcome
from anemon.control.plan import ArmSpec
from anemon.control.watchdog import Watchdog
from anemon.devices.base import DeviceError, LaunchRefused
from anemon.events import (
    EndEvent,
    ErrorEvent,
    Event,
    GapEvent,
    LoadEvent,
    RecordEvent,
    StartEvent,
    TrialEvent,
)

if TYPE_CHECKING:
    from anemon.control.controller import Controller

REPLUG_MARGIN_S = 60.0
"""Battery protocol: ask for the replug this long after the arm should have finished."""
AB_TRIAL_ESTIMATE_S = 60.0


class Command(enum.Enum):
    """Operator commands delivered to the arm in progress."""

    ABORT_ARM = "the operator aborted the arm"
    ABORT_SESSION = "the operator aborted the session"


class _Ended(Exception):
    """The launch is over before supervision (refused, aborted, guard)."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class ArmRun:
    """Runs one launch on behalf of the Controller; `inbox` receives the arm's events."""

    def __init__(self, controller: Controller, arm: ArmSpec, round_: int) -> None:
        self.c = controller
        self.arm = arm
        self.round = round_
        self.model = arm.model
        self.inbox: asyncio.Queue[Event | Command] = asyncio.Queue()
        self.pid: int | None = None
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
            self.pid = await self._launch()
            if self.c.prompts_for(self.arm):
                prompts = asyncio.create_task(self._battery_prompts())
            status, reason = await self._supervise()
        except _Ended as e:
            status, reason = e.status, e.reason
        finally:
            if prompts is not None:
                prompts.cancel()
                await asyncio.gather(prompts, return_exceptions=True)
        if status != "done" and self.pid is not None:
            await self.c.terminate(self.pid)
        return ArmOutcome(self.arm.name, self.round, status, reason)

    def _fail(self, reason: str) -> _Ended:
        self.c.error(self.model, reason)
        return _Ended("failed", reason)

    def _check_abort(self) -> None:
        if self._aborted is not None:
            raise _Ended("aborted", self._aborted.value)

    # -- before the launch ------------------------------------------------------------------

    async def _guard_disk(self) -> None:
        telemetry = await self.c.fresh_telemetry()
        free = telemetry.free_gb if telemetry and telemetry.free_gb is not None else None
        free = free if free is not None else self.c.last_free_gb()
        floor = self.c.plan.guards.min_free_gb
        if free is not None and free < floor:
            raise self._fail(f"free disk {free:.1f} GB is below min_free_gb = {floor:g}")

    async def _launch(self) -> int:
        guards, env = self.c.plan.guards, app_env(self.c.plan, self.arm)
        self.c.set_phase("launching", self.model, f"round {self.round}" if self.round > 1 else "")
        retry = 0
        while True:
            self._check_abort()
            try:
                return await self.c.device.launch(self.c.plan.app.bundle, env)
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
            self.c.set_phase("launching", self.model,
                             f"refused ({refusal}); retry {retry}/{guards.launch_retries} "
                             f"in {delay:g} s")  # fmt: skip
            await self.c.nap(delay)

    # -- supervision ------------------------------------------------------------------------

    async def _supervise(self) -> tuple[str, str]:
        guards = self.c.plan.guards
        dog = Watchdog(self.c.clock.now(), guards.first_trial_timeout_s, guards.stall_timeout_s)
        if self.c.gap:
            dog.gap("begin", dog.started)
        self.c.set_phase("loading", self.model)
        while True:
            deadline = dog.deadline()
            timeout = None if deadline is None else max(0.0, deadline - self.c.clock.now())
            try:
                item = await wait_for(self.c.clock, self.inbox.get(), timeout)
            except TimeoutError:
                raise self._fail(dog.reason()) from None
            if isinstance(item, Command):
                return "aborted", item.value
            verdict = self._on_item(item, dog)
            if verdict is not None:
                return verdict

    def _on_item(self, item: Event, dog: Watchdog) -> tuple[str, str] | None:
        t = self.c.clock.now()
        if isinstance(item, GapEvent):
            dog.gap(item.state, t)
            return None
        if not isinstance(item, RecordEvent):
            return None
        dog.line(t)
        if isinstance(item, StartEvent):
            self.started = True
        elif not self.started and item.arm != self.model:
            return None  # the end of the previous process's log
        return self._on_record(item, dog, t)

    def _on_record(self, item: RecordEvent, dog: Watchdog, t: float) -> tuple[str, str] | None:
        if isinstance(item, LoadEvent):
            self.c.set_phase("warmup", self.model, f"loaded in {item.load_s or 0:g} s")
        elif isinstance(item, TrialEvent):
            dog.trial(t)
            if self.c.phase != "running" and (not item.warmup or self.c.phase == "warmup"):
                self.c.set_phase("running", self.model)
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
        started = self.c.clock.now()
        await self.c.ask(
            "unplug the phone now (battery protocol)",
            lambda tel: tel is None or tel.plugged is False,
            "unplugged: the log is pulled after the replug",
        )
        protocol = self.c.plan.protocol
        run_s = protocol.seconds
        if protocol.kind == "ab":
            run_s = protocol.trials * AB_TRIAL_ESTIMATE_S
        await self.c.clock.sleep(started + run_s + REPLUG_MARGIN_S - self.c.clock.now())
        await self.c.ask(
            "replug the phone now: the log is pulled once it is back",
            lambda tel: tel is not None and tel.plugged is True,
            "replugged: pulling the log",
        )
