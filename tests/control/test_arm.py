"""One arm run driven by a fake host that has only ArmHost's members, in virtual time: the
guard, the launch and its retries, the watchdogs, the app's verdicts, aborts, the battery
prompts. No controller, no plan, no device."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence

import pytest

from anemon.clock import VirtualClock
from anemon.control.arm import ArmHost, ArmLaunch, ArmRun, Command
from anemon.control.battery import Answer, Wait
from anemon.control.outcome import ArmOutcome
from anemon.control.plan import ArmSpec, GuardSpec, ProtocolSpec, parse_plan
from anemon.devices.base import LaunchRefused, Telemetry
from anemon.events import (
    EndEvent,
    ErrorEvent,
    Event,
    GapEvent,
    LoadEvent,
    Phase,
    StartEvent,
    TrialEvent,
)

MODEL = "minicpm5_1b_ane_pal8"
BUNDLE = "com.example.bench"
ENV = {"AB_MODEL": MODEL, "AB_MODE": "sustain"}
PID = 41
GUARDS = GuardSpec(first_trial_timeout_s=300, stall_timeout_s=60, launch_retries=2)
SUSTAIN = ProtocolSpec(seconds=600)


class FakeHost:
    """Exactly ArmHost's members; every call is noted with its session time."""

    __slots__ = ("_app", "_calls", "_clock", "_free", "_gap", "_plugged", "_refusals")

    def __init__(
        self,
        clock: VirtualClock,
        calls: list[tuple],
        *,
        free: float | None = 38.0,
        refusals: Sequence[LaunchRefused] = (),
        gap: bool = False,
        app: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._clock = clock
        self._calls = calls
        self._free = free
        self._refusals = list(refusals)
        self._gap = gap
        self._app = app
        self._plugged = True

    @property
    def gap(self) -> bool:
        return self._gap

    def set_phase(self, phase: Phase, arm: str | None, reason: str = "") -> None:
        self._calls.append((self._clock.now(), "phase", phase, arm, reason))

    def error(self, arm: str | None, message: str) -> None:
        self._calls.append((self._clock.now(), "error", arm, message))

    async def nap(self, seconds: float | None) -> None:
        self._calls.append((self._clock.now(), "nap", seconds))
        assert seconds is not None
        await self._clock.sleep(seconds)

    async def free_gb(self) -> float | None:
        return self._free

    async def ask(self, wait: Wait) -> Answer:
        self._calls.append((self._clock.now(), "ask", wait.prompt, wait.then))
        self._plugged = not self._plugged  # the operator does as asked
        assert wait.done is not None and wait.done(Telemetry(plugged=self._plugged))
        return Answer(wait.then, 0.0)

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        self._calls.append((self._clock.now(), "launch", bundle, dict(env)))
        if self._refusals:
            raise self._refusals.pop(0)
        if self._app is not None:
            asyncio.get_running_loop().create_task(self._app())
        return PID

    async def terminate(self, pid: int) -> None:
        self._calls.append((self._clock.now(), "terminate", pid))


def test_the_fake_host_has_exactly_the_protocols_members():
    protocol = {name for name in vars(ArmHost) if not name.startswith("_")}
    assert protocol == {"gap", "set_phase", "error", "nap", "free_gb", "ask", "launch",
                        "terminate"}  # fmt: skip
    assert {name for name in dir(FakeHost) if not name.startswith("_")} == protocol


def launch_of(
    guards: GuardSpec = GUARDS,
    protocol: ProtocolSpec = SUSTAIN,
    battery_prompts: bool = False,
) -> ArmLaunch:
    return ArmLaunch(ArmSpec(MODEL), 1, BUNDLE, ENV, guards, protocol, battery_prompts)


Operator = Callable[[ArmRun], Awaitable[None]]


def run_arm(
    launch: ArmLaunch | None = None,
    lines: Sequence[tuple[float, Event]] = (),
    *,
    operator: Operator | None = None,
    **host: object,
) -> tuple[ArmOutcome, list[tuple]]:
    """Run one arm to its end; `lines` reach its inbox at their times after the launch."""
    clock = VirtualClock(limit_s=6 * 3600)
    calls: list[tuple] = []

    async def main() -> ArmOutcome:
        run: ArmRun

        async def app() -> None:
            started = clock.now()
            for at, event in lines:
                await clock.sleep(started + at - clock.now())
                run.inbox.put_nowait(event)

        run = ArmRun(FakeHost(clock, calls, app=app, **host), clock, launch or launch_of())
        if operator is not None:
            asyncio.get_running_loop().create_task(operator(run))
        return await run.run()

    return clock.run(main()), calls


def called(calls: list[tuple], what: str) -> list[tuple]:
    return [call[2:] for call in calls if call[1] == what]


def times(calls: list[tuple], what: str) -> list[float]:
    return [call[0] for call in calls if call[1] == what]


def phases(calls: list[tuple]) -> list[tuple[str, str]]:
    return [(phase, reason) for phase, _arm, reason in called(calls, "phase")]


def start(arm: str = MODEL) -> StartEvent:
    return StartEvent(t=0, wall=0, arm=arm)


def trial(n: int, warmup: bool = False) -> TrialEvent:
    return TrialEvent(t=0, wall=0, arm=MODEL, trial=n, warmup=warmup)


def end(reason: str = "done", trials: int | None = 2, arm: str = MODEL) -> EndEvent:
    return EndEvent(t=0, wall=0, arm=arm, reason=reason, trials=trials)


HEALTHY = [
    (1, start()),
    (2, LoadEvent(t=0, wall=0, arm=MODEL, load_s=1.5)),
    (5, trial(0, warmup=True)),
    (10, trial(1)),
    (15, trial(2)),
    (16, end()),
]


def test_a_healthy_launch_goes_through_its_phases_and_is_done():
    outcome, calls = run_arm(lines=HEALTHY)
    assert outcome == ArmOutcome(MODEL, 1, "done", "2 trials")
    assert called(calls, "launch") == [(BUNDLE, ENV)]
    assert phases(calls) == [("launching", ""), ("loading", ""), ("warmup", "loaded in 1.5 s"),
                             ("running", "")]  # fmt: skip
    assert times(calls, "phase") == [0, 0, 2, 5]  # running from the first trial after LOAD
    assert {arm for _phase, arm, _reason in called(calls, "phase")} == {MODEL}
    assert not called(calls, "terminate") and not called(calls, "error")


def test_a_later_round_says_so_when_launching():
    launch = ArmLaunch(ArmSpec(MODEL), 2, BUNDLE, ENV, GUARDS, ProtocolSpec())
    outcome, calls = run_arm(launch, HEALTHY)
    assert outcome.round == 2 and phases(calls)[0] == ("launching", "round 2")


def test_the_previous_processs_last_lines_do_not_count():
    lines = [(0.5, end(arm="previous_arm")), *HEALTHY]
    outcome, calls = run_arm(lines=lines)
    assert outcome.status == "done" and times(calls, "phase")[-1] == 5


def test_without_a_load_line_a_warmup_trial_is_not_yet_running():
    lines = [(1, start()), (5, trial(0, warmup=True)), (10, trial(1)), (11, end(trials=1))]
    outcome, calls = run_arm(lines=lines)
    assert outcome.status == "done"
    assert phases(calls)[-2:] == [("loading", ""), ("running", "")]
    assert times(calls, "phase")[-1] == 10


def test_the_free_disk_guard_fails_the_arm_before_launching():
    outcome, calls = run_arm(free=3.0)
    reason = "free disk 3.0 GB is below min_free_gb = 5"
    assert outcome == ArmOutcome(MODEL, 1, "failed", reason)
    assert called(calls, "error") == [(MODEL, reason)]
    assert not called(calls, "launch") and not called(calls, "terminate")


def test_without_any_free_disk_reading_the_guard_lets_it_run():
    outcome, _ = run_arm(lines=HEALTHY, free=None)
    assert outcome.status == "done"


def busy() -> LaunchRefused:
    return LaunchRefused("Busy", transient=True)


def test_transient_refusals_are_retried_with_backoff():
    outcome, calls = run_arm(lines=HEALTHY, refusals=[busy(), busy()])
    assert outcome.status == "done"
    assert called(calls, "nap") == [(5,), (10,)]
    assert times(calls, "launch") == [0, 5, 15]
    assert phases(calls)[1:3] == [("launching", "refused (Busy); retry 1/2 in 5 s"),
                                  ("launching", "refused (Busy); retry 2/2 in 10 s")]  # fmt: skip


def test_too_many_refusals_fail_the_arm():
    outcome, calls = run_arm(refusals=[busy(), busy(), busy()])
    assert outcome == ArmOutcome(MODEL, 1, "failed", "launch refused 3 times, last: Busy")
    assert len(called(calls, "launch")) == 3 and not called(calls, "terminate")


def test_a_permanent_refusal_is_not_retried():
    outcome, calls = run_arm(refusals=[LaunchRefused("Locked")])
    assert outcome.reason == "launch refused, not retried: Locked"
    assert not called(calls, "nap")


def test_an_abort_while_retrying_ends_it_before_the_next_launch():
    async def abort(run: ArmRun) -> None:
        await asyncio.sleep(2)
        run.command(Command.ABORT_ARM)

    outcome, calls = run_arm(refusals=[busy()], operator=abort)
    assert outcome == ArmOutcome(MODEL, 1, "aborted", Command.ABORT_ARM.value)
    assert len(called(calls, "launch")) == 1


def test_no_first_trial_fails_it_and_stops_the_app():
    lines = [(1, start()), (2, LoadEvent(t=0, wall=0, arm=MODEL))]
    outcome, calls = run_arm(lines=lines)
    reason = "no first trial after 300 s: the arm is dead, not slow"
    assert outcome == ArmOutcome(MODEL, 1, "failed", reason)
    assert called(calls, "error") == [(MODEL, reason)] and times(calls, "error") == [300]
    assert called(calls, "terminate") == [(PID,)] and times(calls, "terminate") == [300]


def test_a_stall_fails_it_from_the_last_line():
    lines = [(1, start()), (5, trial(0, warmup=True)), (20, trial(1))]
    outcome, calls = run_arm(lines=lines)
    assert outcome.reason == "no new log line for 60 s: stalled"
    assert times(calls, "error") == [80]


def test_an_unreachable_log_suspends_the_watchdogs():
    gap_end = GapEvent(t=0, wall=0, state="end")
    outcome, calls = run_arm(lines=[(100, gap_end)], gap=True)
    assert outcome.status == "failed" and times(calls, "error") == [400]  # 300 s after 100


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (ErrorEvent(t=0, wall=0, arm=MODEL, message="boom"), "the app reported an error: boom"),
        (end(reason="thermal"), "the app ended: thermal"),
    ],
)
def test_the_apps_own_verdict_fails_it_and_stops_the_app(line, reason):
    outcome, calls = run_arm(lines=[(1, start()), (4, line)])
    assert outcome == ArmOutcome(MODEL, 1, "failed", reason)
    assert called(calls, "terminate") == [(PID,)]
    assert not called(calls, "error")  # the app's ERROR line is already a record


@pytest.mark.parametrize("command", list(Command))
def test_an_operator_abort_stops_the_app(command):
    async def abort(run: ArmRun) -> None:
        await asyncio.sleep(12)
        run.command(command)

    outcome, calls = run_arm(lines=HEALTHY[:4], operator=abort)
    assert outcome == ArmOutcome(MODEL, 1, "aborted", command.value)
    assert called(calls, "terminate") == [(PID,)] and times(calls, "terminate") == [12]


def test_battery_prompts_ask_to_unplug_then_to_replug_after_the_run():
    launch = launch_of(protocol=ProtocolSpec(seconds=100), battery_prompts=True)
    lines = [(1, start()), (5, trial(1)), *((t, trial(t)) for t in range(20, 200, 20)),
             (200, end())]  # fmt: skip
    outcome, calls = run_arm(launch, lines)
    assert outcome.status == "done"
    asked = called(calls, "ask")
    assert [prompt.split(" now")[0] for prompt, _then in asked] == ["unplug the phone",
                                                                    "replug the phone"]  # fmt: skip
    assert times(calls, "ask") == [0, 160]  # the run's 100 s and a 60 s margin


def test_no_prompts_unless_asked_for():
    _, calls = run_arm(lines=HEALTHY)
    assert not called(calls, "ask")


def test_an_arm_launch_takes_its_part_of_the_plan():
    plan = parse_plan('tag = "x"\n[device]\nkind = "devicectl"\n[[arms]]\nname = "a"\n'
                      'env = { AB_MODEL = "b" }\n')  # fmt: skip
    launch = ArmLaunch.of(plan, plan.arms[0], 3, battery_prompts=True)
    assert (launch.round, launch.bundle, launch.env["AB_MODEL"], launch.env["AB_TAG"]) == (
        3, plan.app.bundle, "b", "x",
    )  # fmt: skip
    assert launch.guards is plan.guards and launch.protocol is plan.protocol
    assert launch.battery_prompts
