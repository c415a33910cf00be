"""The Controller: an asyncio state machine that runs a plan's arms on a Device.

It follows the app's log (device.follow_log → LineFeed → pipeline) and reacts to the parsed
events; every transition, retry, countdown step and decision it makes is an event on the same
pipeline (phase, cooldown, error, marker, gap), so the recording, the charts and the status
line all show it. Operator actions are plain async methods the UI, the keys and the signal
handlers call alike.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anemon.clock import Clock, wait_for
from anemon.control.alerts import Alerts
from anemon.control.arm import ArmHost, ArmLaunch, ArmRun, Command
from anemon.control.battery import (
    FORCED,
    NO_KEYS,
    REPLUG_MARGIN_S,
    SIMULATED_OPERATOR,
    UNANSWERED,
    Answer,
    BatteryHost,
    BatteryProtocol,
    Ending,
    Prompt,
    Wait,
    expected_run_s,
)
from anemon.control.cooldown import Cooldown, CooldownHost, Probe
from anemon.control.launch import Attribution, probe_env
from anemon.control.outcome import ArmOutcome, RunResult
from anemon.control.plan import ArmSpec, Plan
from anemon.control.preflight import History, run_checks
from anemon.devices import reads_power
from anemon.devices.base import (
    AppCrash,
    AppExit,
    AppGap,
    AppNews,
    AppWatcher,
    Conditioner,
    Device,
    DeviceError,
    DeviceInfo,
    Installer,
    Operator,
    Telemetry,
)
from anemon.events import (
    ErrorEvent,
    Event,
    GapEvent,
    IdleEvent,
    MarkerEvent,
    Phase,
    PhaseEvent,
    RecordEvent,
    TrialEvent,
)
from anemon.pipeline import LineFeed, Pipeline, poll_power, read_telemetry
from anemon.recording.writer import keep_beside

TELEMETRY_S = 10.0
"""How often host telemetry is read."""
ASKING_TELEMETRY_S = 2.0
"""How often while the operator is asked to unplug or replug (the wait ends on a reading)."""
CONTROLLER = "controller"
OPERATOR = "operator"


@dataclass(frozen=True, slots=True)
class Launch:
    """One launch of the schedule: an arm and which round of it."""

    arm: ArmSpec
    round: int


@dataclass(slots=True)
class _Asking:
    """A wait in progress (`ask`); `went_on`: the operator pressed k."""

    wait: Wait
    went_on: bool = False


def schedule(plan: Plan) -> tuple[Launch, ...]:
    """sustain: each arm once; ab: A-B-A-B ... for `rounds` rounds."""
    rounds = plan.protocol.rounds if plan.protocol.kind == "ab" else 1
    return tuple(Launch(arm, r) for r in range(1, rounds + 1) for arm in plan.arms)


class Controller:
    """Runs one plan; `await run()` returns how every arm ended.

    The operator's actions are the async methods under "operator actions"; views read `phase`,
    `arm`, `prompt`, `paused`, `aborting` and `telemetry`. An arm run sees the controller only
    as its ArmHost, a cooldown only as its CooldownHost, the battery protocol only as its
    BatteryHost (`ask` and the methods at the end).
    """

    def __init__(
        self,
        plan: Plan,
        device: Device,
        pipeline: Pipeline,
        clock: Clock,
        *,
        mirror: Path,
        beside: Path | None = None,
        battery_prompts: bool | None = None,
        force: bool = False,
        preflight: bool = True,
        keys: bool = True,
    ) -> None:
        self.plan = plan
        self.device = device
        self.pipeline = pipeline
        self.clock = clock
        self.mirror = mirror
        self.beside = beside
        """The recording: a crash report naming the app is copied next to it (None: not kept)."""
        self.battery_prompts = battery_prompts
        """Prompt unplug/replug around each arm; None: for sim arms with the unplug fault
        (unless the battery protocol asks once for the whole run)."""
        self.force = force
        """Go on when a check fails (pre-flight, the battery protocol's waits): `--force`."""
        self.preflight = preflight
        """Make the pre-flight checks before the first launch."""
        self.keys = keys
        """Someone can press k (the dashboard); False (headless): a wait only k can end is not
        waited for (`ask`)."""
        self.device_info: DeviceInfo | None = None
        """The device's answer to `connect` (the feed's); None: the checks ask it again."""
        self.history = History()
        """The last recording with this plan's tag (the pre-flight OS build and footprint)."""
        self.stopped = ""
        """Why the run stopped before its first launch (a failed pre-flight check, a wait
        nobody can end), or ""."""
        self._unanswered = False
        """The run stopped at a wait only k could end, with nothing to read k (exit 2)."""
        self._answers: list[Answer] = []
        """How the operator's waits ended (`ask`), in order."""
        self.source = f"{device.kind}:{plan.log_path}"
        self.app_source = f"{device.kind}:app"
        """What the backend sees of the app (AppWatcher): its telemetry, crash reports, gaps."""
        self.attribution = Attribution()
        self.feed = LineFeed(pipeline, self.source, self.attribution.arm_of)
        self.phase: Phase = "idle"
        self.arm: str | None = None
        self.prompt: Prompt | None = None
        """What the operator is asked to do now (battery protocol, `ask`), else None."""
        self.paused = False
        """The queue is held (`pause_queue`): no further arm starts until resumed."""
        self.aborting = False
        self.gap = False
        self.telemetry: Telemetry | None = None
        self._run: ArmRun | None = None
        self._cooldown: Cooldown | None = None
        self._wake = asyncio.Event()
        self._asking: _Asking | None = None
        self._stirred = asyncio.Event()
        """Set by each telemetry reading and by the operator's k and abort (`ask` waits on it)."""
        self._poll_now = asyncio.Event()
        self._arms_over = asyncio.Event()
        battery: BatteryHost = self
        usb = plan.device.connect == "usb"
        self._battery = BatteryProtocol(plan.protocol.battery, battery, usb=usb, kind=device.kind,
                                        observable=bool(reads_power(device.kind)))  # fmt: skip
        self._trial_thermal: int | None = None
        """The thermal state of the latest TRIAL line (a cooldown's reading of last resort)."""
        pipeline.subscribe(self._on_event)
        self.alerts = Alerts(plan.alerts, pipeline, tag=plan.tag)

    # -- the run ----------------------------------------------------------------------------

    async def run(self) -> RunResult:
        tasks = [
            asyncio.create_task(self._follow()),
            asyncio.create_task(self._poll_telemetry()),
            asyncio.create_task(poll_power(self.pipeline, self.device, self.clock,
                                           self.plan.device.power_s, lambda: self.arm)),
        ]  # fmt: skip
        if isinstance(self.device, AppWatcher):
            tasks.append(asyncio.create_task(self._watch_app(self.device)))
        outcomes: list[ArmOutcome] = []
        launches = schedule(self.plan)
        replug: asyncio.Task[None] | None = None
        try:
            installed = await self._install()
            if installed and not self.aborting:
                await self._battery.before()
            cleared = installed and not self.aborting and not self.stopped
            cleared = cleared and await self._preflight()
            cleared = cleared and await self._hold_condition()
            for index, launch in enumerate(launches if cleared else ()):
                if not await self._before(launch, first=index == 0):
                    break
                if index == len(launches) - 1 and self._battery.unplugged:
                    replug = asyncio.create_task(self._replug_when_due())
                outcome = await self._launch(launch)
                outcomes.append(outcome)
                if outcome.status == "failed" and self.plan.guards.on_error == "abort":
                    break
            self._arms_over.set()
            if replug is not None:
                if self.prompt is not None:  # asked beside the last launch, still waiting
                    self.set_phase("idle", None, self.prompt.question)
                await replug
            await self._battery.replug(arms_over=True)  # if the last launch never came
            await self.clock.sleep(self.plan.device.poll_s * 1.5)  # one more pull
        finally:
            if replug is not None:
                tasks.append(replug)
            await self._release_condition()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.alerts.drain()
        skipped = tuple(launch.arm.name for launch in launches[len(outcomes) :])
        result = RunResult(tuple(outcomes), self.aborting, skipped, self._unanswered)
        self._finish(result)
        return result

    async def _before(self, launch: Launch, *, first: bool) -> bool:
        """Hold while paused, cool down; False if the session is over."""
        while self.paused and not self.aborting:
            self.set_phase("idle", None, "queue paused by the operator")
            await self.nap(None)
        if not first and not self.aborting:
            await self._cool(launch.arm)
        return not self.aborting

    async def _launch(self, launch: Launch) -> ArmOutcome:
        host: ArmHost = self
        prompts = self._prompts_for(launch.arm)
        arm_launch = ArmLaunch.of(self.plan, launch.arm, launch.round, battery_prompts=prompts)
        run = self._run = ArmRun(host, self.clock, arm_launch)
        try:
            outcome = await run.run()
        finally:
            self._run = None
        self.set_phase("done" if outcome.status == "done" else "aborted", launch.arm.name,
                       outcome.describe())  # fmt: skip
        return outcome

    async def _preflight(self) -> bool:
        """The pre-flight checks, recorded; False: one failed and the run stops (no --force)."""
        if not self.preflight:
            return True
        went_on = any(a.ending != "unplugged" for a in self._answers)
        result = await run_checks(self.plan, self.device, info=self.device_info,
                                  history=self.history, operator_went_on=went_on)  # fmt: skip
        self.pipeline.emit_now(result.event, forced=self.force)
        if not result.failed:
            return True
        failed = "; ".join(f"{c.check}: {c.note or c.reading}" for c in result.failed)
        if self.force:
            self.note(f"pre-flight failed ({failed}); going on (--force)")
            return True
        self.stopped = (f"pre-flight failed ({failed}): nothing was launched; "
                        "anemon run --force goes on anyway")  # fmt: skip
        self.error(None, self.stopped)
        return False

    async def _install(self) -> bool:
        if not self.plan.app.install:
            return True
        if not isinstance(self.device, Installer):
            self.error(None, f"the {self.device.kind} backend cannot install apps (app.install)")
            return False
        self.set_phase("installing", None, self.plan.app.install)
        try:
            await self.device.install(Path(self.plan.app.install))
        except DeviceError as e:
            self.error(None, f"install failed: {e}")
            return False
        settle = self.plan.guards.settle_after_install_s
        self.set_phase("installing", None, f"installed; settling {settle:g} s before launching")
        await self.nap(settle)
        return not self.aborting

    async def _hold_condition(self) -> bool:
        """The plan's `device.condition`, forced for the whole run (a marker); False: the
        backend refused it and the run stops before its first launch."""
        profile = self.plan.device.condition
        if not profile:
            return True
        if not isinstance(self.device, Conditioner):
            self.stopped = (f"the {self.device.kind} backend cannot force a condition "
                            f"(device.condition = {profile!r})")  # fmt: skip
        else:
            try:
                self.note(await self.device.hold_condition(profile))
                return True
            except DeviceError as e:
                self.stopped = f"cannot force the condition {profile}: {e}"
        self.error(None, self.stopped)
        return False

    async def _release_condition(self) -> None:
        """Clear the held condition: at the run's end and on every way out of it."""
        if not self.plan.device.condition or not isinstance(self.device, Conditioner):
            return
        try:
            said = await self.device.release_condition()
        except DeviceError as e:
            said = f"could not clear the condition {self.plan.device.condition}: {e} (the phone "
            said += "clears it when the connection closes)"
        if said:
            self.note(said)

    def _finish(self, result: RunResult) -> None:
        if result.aborted:
            self.set_phase("aborted", None, "session aborted by the operator")
            return
        if self.stopped:
            self.set_phase("aborted", None, self.stopped)
            return
        done = sum(o.status == "done" for o in result.outcomes)
        parts = [f"{done} of {len(result.outcomes) + len(result.skipped)} launches completed"]
        parts += [o.describe() for o in result.failures]
        if result.skipped:
            parts.append("not run: " + ", ".join(result.skipped))
        self.set_phase("done", None, "; ".join(parts))

    # -- cooldown ---------------------------------------------------------------------------

    async def _cool(self, arm: ArmSpec) -> None:
        """Cool down before launching `arm`."""
        host: CooldownHost = self
        probe = Probe(self.plan.app.bundle, probe_env(self.plan))
        cooldown = self._cooldown = Cooldown(
            self.plan.cooldown,
            arm.name,
            host,
            self.clock,
            probe=probe,
            last_trial=self._trial_thermal,
        )
        try:
            await cooldown.run()
        finally:
            self._cooldown = None

    def _cooling(self) -> Cooldown | None:
        """The cooldown still deciding, if any."""
        cooldown = self._cooldown
        return cooldown if cooldown is not None and not cooldown.over else None

    # -- operator actions -------------------------------------------------------------------

    async def abort_arm(self) -> None:
        """Stop the arm in progress (its app is terminated); the queue goes on."""
        self.marker_now("abort arm" if self._run else "abort arm: no arm is running")
        if self._run is not None:
            self._run.command(Command.ABORT_ARM)
        self._wake.set()

    async def abort_session(self) -> None:
        self.request_abort_session()

    def request_abort_session(self, why: str = "abort session") -> None:
        """Synchronous, for signal handlers: stop the app, read what is pending, finish."""
        if self.aborting:
            return
        self.aborting = True
        self.marker_now(why)
        self.alerts.stop()
        if self._run is not None:
            self._run.command(Command.ABORT_SESSION)
        self._wake.set()
        self._stirred.set()

    async def skip_cooldown(self) -> None:
        """`k`: end the cooldown now; while the operator is asked to unplug or replug, go on
        without waiting for the phone (where the host cannot tell, `k` confirms it was done)."""
        cooldown = self._cooling()
        if cooldown is not None:
            cooldown.skip()
            self.marker_now("skip cooldown")
            self._wake.set()
            return
        asking = self._asking
        if asking is None:
            self.marker_now("skip cooldown: not cooling")
            return
        asking.went_on = True
        wait = asking.wait
        self.marker_now(f"k: {wait.then}" if wait.done is None else f"k: go on ({wait.name} wait)")
        self._stirred.set()

    async def extend_cooldown(self, seconds: float) -> None:
        cooldown = self._cooling()
        if cooldown is None:
            self.marker_now("extend cooldown: not cooling")
            return
        cooldown.extend(seconds)
        self.marker_now(f"extend cooldown by {seconds:g} s")
        self._wake.set()

    async def pause_queue(self) -> None:
        """Start no further arm after the one in progress, until resumed."""
        self.paused = True
        self.marker_now("pause the queue after this arm")

    async def resume_queue(self) -> None:
        self.paused = False
        self.marker_now("resume the queue")
        self._wake.set()

    async def marker(self, note: str) -> None:
        self.marker_now(note)

    def marker_now(self, note: str, source: str = OPERATOR) -> None:
        self.pipeline.emit_now(MarkerEvent, arm=self.arm, source=source, note=note)

    # -- battery protocol -------------------------------------------------------------------

    def _prompts_for(self, arm: ArmSpec) -> bool:
        if self.battery_prompts is not None:
            return self.battery_prompts
        if self.plan.protocol.battery == "unplugged":
            return False  # the protocol asks once for the whole run
        sim = self.plan.sim.arms.get(arm.name)
        return self.device.kind == "sim" and sim is not None and sim.fault == "unplug"

    async def _replug_when_due(self) -> None:
        """Beside the last launch: ask for the replug once it should be over (over USB its log
        cannot be pulled, so it cannot end, before the replug), or as soon as it is."""
        due = expected_run_s(self.plan.protocol) + REPLUG_MARGIN_S
        with contextlib.suppress(TimeoutError):
            await wait_for(self.clock, self._arms_over.wait(), due)
        await self._battery.replug(arms_over=self._arms_over.is_set())

    async def ask(self, wait: Wait) -> Answer:
        """Show `wait.prompt` (a marker) and wait until host telemetry says it was done, the
        operator goes on (k), the session is aborted, or it times out with `force`; telemetry
        is read every ASKING_TELEMETRY_S meanwhile. The ending is a marker."""
        asking = self._asking = _Asking(wait)
        self.prompt = wait.asked
        self.marker_now(wait.prompt, source="prompt")
        await self._operate(wait)
        self._poll_now.set()
        try:
            answer = self._without_keys(wait) or await self._answer(asking)
        finally:
            self.prompt = None
            self._asking = None
        self.marker_now(answer.note(wait), source=CONTROLLER)
        if wait.name == "unplug":
            self._answers.append(answer)
        return answer

    async def _operate(self, wait: Wait) -> None:
        """A backend that plays the operator (the simulator) is told what is asked, and says
        what it does."""
        if wait.cable is not None and isinstance(self.device, Operator):
            said = await self.device.operate(wait.cable)
            if said:
                self.marker_now(said, source=SIMULATED_OPERATOR)

    def _without_keys(self, wait: Wait) -> Answer | None:
        """A wait only k can end, where nothing reads k: not waited for. `--force` goes on at
        once (as at the timeout), else the session stops (exit 2). None: it can be waited for."""
        if wait.done is not None or self.keys:
            return None
        said = NO_KEYS.format(name=wait.name, kind=self.device.kind)
        if self.force:
            self.note(f"{said}: going on at once (--force)")
            return Answer(FORCED, 0.0)
        self._unanswered = True
        self.stopped = f"{said}: run without --headless, or with --force to go on at once"
        self.error(None, self.stopped)
        return Answer(UNANSWERED, 0.0)

    async def _answer(self, asking: _Asking) -> Answer:
        wait = asking.wait
        started = self.clock.now()
        timed_out = False
        while True:
            waited = self.clock.now() - started
            ending = self._ending(asking)
            if ending is not None:
                return Answer(ending, waited, timed_out)
            if wait.timeout_s is not None and not timed_out and waited >= wait.timeout_s:
                timed_out = True
                self.error(None, wait.late)
                if self.force:
                    return Answer(FORCED, waited, timed_out)
            left = None if timed_out or wait.timeout_s is None else wait.timeout_s - waited
            self._stirred.clear()
            with contextlib.suppress(TimeoutError):
                await wait_for(self.clock, self._stirred.wait(), left)

    def _ending(self, asking: _Asking) -> Ending | None:
        done = asking.wait.done
        if self.aborting:
            return "aborted"
        if asking.went_on:
            return "confirmed (k)" if done is None else "skipped (k)"
        if done is not None and done(self.telemetry):
            return asking.wait.then
        return None

    # -- the log and telemetry --------------------------------------------------------------

    async def _follow(self) -> None:
        stream = self.device.follow_log(self.plan.app.bundle, self.plan.log_path, self.mirror)
        async for batch in stream:
            self.feed.feed_items(batch)

    async def _watch_app(self, watcher: AppWatcher) -> None:
        """What the backend sees of the app, for the whole run: samples and gaps recorded,
        crash reports recorded and copied beside the recording, exits and crashes handed to
        the arm in progress (arm.py ends its round)."""
        async for news in watcher.watch(self.plan.app.bundle):
            self._on_news(news)

    def _on_news(self, news: AppNews) -> None:
        source = self.app_source
        if isinstance(news, AppGap):
            self.pipeline.emit_now(news.event, arm=self.arm, source=source)
            return
        if isinstance(news, AppExit | AppCrash) and self._run is not None:
            self._run.inbox.put_nowait(news)
        if isinstance(news, AppCrash):
            self._keep(news)
            self.pipeline.emit_now(news.event, arm=self.arm, source=source)
        elif not isinstance(news, AppExit):
            run = self._run  # an arm's process; the cooldown's probe is no arm's
            arm = run.arm.name if run is not None and run.pid == news.pid else None
            self.pipeline.emit_now(news.event, arm=arm, source=source)

    def _keep(self, crash: AppCrash) -> None:
        """Copy the report next to the recording (`<recording>.<report name>`)."""
        if self.beside is None:
            return
        try:
            keep_beside(self.beside, crash.file, crash.data)
        except OSError as e:
            self.note(f"could not copy the crash report {crash.file}: {e.strerror or e}")

    async def _poll_telemetry(self) -> None:
        while True:
            self.telemetry = await read_telemetry(self.pipeline, self.device, CONTROLLER, self.arm)
            self._stirred.set()
            self._poll_now.clear()
            every = ASKING_TELEMETRY_S if self.prompt is not None else TELEMETRY_S
            with contextlib.suppress(TimeoutError):
                await wait_for(self.clock, self._poll_now.wait(), every)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, GapEvent) and event.source == self.source:
            self.gap = event.state == "begin"
        if not isinstance(event, RecordEvent | GapEvent) or event.source != self.source:
            return
        if isinstance(event, TrialEvent) and event.thermal is not None:
            self._trial_thermal = event.thermal
        if self._cooldown is not None and isinstance(event, IdleEvent | TrialEvent):
            self._cooldown.observe(event)
        if self._run is not None:
            self._run.inbox.put_nowait(event)

    # -- what an arm run (ArmHost) and a cooldown (CooldownHost) are lent ------------------

    def set_phase(self, phase: Phase, arm: str | None, reason: str = "") -> None:
        self.phase, self.arm = phase, arm
        self.pipeline.emit_now(PhaseEvent, arm=arm, source=CONTROLLER, phase=phase, reason=reason)

    def emit_now(self, make: Callable[..., Event], /, **fields: Any) -> None:
        self.pipeline.emit_now(make, **fields)

    def note(self, text: str) -> None:
        """A marker of the controller's own."""
        self.marker_now(text, source=CONTROLLER)

    async def reading(self) -> Telemetry | None:
        """Host telemetry read now (and recorded); None: the host cannot read it."""
        self.telemetry = await read_telemetry(self.pipeline, self.device, CONTROLLER, self.arm)
        return self.telemetry

    def error(self, arm: str | None, message: str) -> None:
        """A failure anemon detected itself (watchdog, guard, refusal): an error record."""
        self.pipeline.emit_now(ErrorEvent, arm=arm, source=CONTROLLER, message=message,
                               line=f"anemon: ERROR: {message}")  # fmt: skip

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        if self._run is not None:  # an arm's launch, not the cooldown's probe
            self.attribution.launched(self._run.arm.name, env)
        return await self.device.launch(bundle, env)

    async def terminate(self, pid: int) -> None:
        try:
            await self.device.terminate(pid)
        except DeviceError as e:
            self.marker_now(f"could not stop pid {pid}: {e}", source=CONTROLLER)

    async def nap(self, seconds: float | None) -> None:
        """Wait `seconds` (None: until woken); an operator action wakes it early."""
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await wait_for(self.clock, self._wake.wait(), seconds)

    async def free_gb(self) -> float | None:
        """Free disk now: the guard must not go by a stale reading, so telemetry is read
        anew; without one, the last free disk the log or the host gave."""
        with contextlib.suppress(DeviceError):
            self.telemetry = await self.device.telemetry()
        free = self.telemetry.free_gb if self.telemetry is not None else None
        return free if free is not None else self.pipeline.session.free_gb.last()
