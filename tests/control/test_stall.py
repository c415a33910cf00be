"""The stall watchdog end to end: an app that stops writing mid-run, on the simulator at max
speed (virtual time)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from anemon.analysis.summary import summarize
from anemon.control.outcome import FAILED
from anemon.control.plan import sim_config
from anemon.devices.sim import SimDevice
from anemon.events import ErrorEvent, PhaseEvent, TrialEvent
from anemon.simulator import SimulatedIPhone
from tests.control.helpers import TWO_ARMS, plan, run_plan

ANE, GPU = "minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8"
STALL_AT_S, STALL_TIMEOUT_S = 120, 60
RUN = '[protocol]\nseconds = 600\n[cooldown]\nmin_s = 30\nuntil = "none"\ncap_s = 60\n'
STALL = f'[sim.arms.{ANE}]\nfault = "stall"\nfault_at_s = {STALL_AT_S}\n'
STALLED = f"no new log line for {STALL_TIMEOUT_S} s: stalled"


class Watched(SimDevice):
    """The simulated phone, noting which app was launched and whether it was alive when
    terminated."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.pids: dict[str, int] = {}
        self.terminated: list[tuple[int, bool, float]] = []

    async def launch(self, bundle: str, env: Mapping[str, str]) -> int:
        pid = await super().launch(bundle, env)
        self.pids.setdefault(env.get("AB_MODEL", "probe"), pid)
        return pid

    async def terminate(self, pid: int) -> None:
        self.sync()
        alive = pid in self.phone.running()
        await super().terminate(pid)
        self.terminated.append((pid, alive, self.clock.now()))


def watched(the_plan, clock) -> Watched:
    phone = SimulatedIPhone(sim_config(the_plan))
    return Watched(phone, clock, bundle=the_plan.app.bundle, poll_s=the_plan.device.poll_s)


def run(on_error: str = "next-arm", stall: str = STALL):
    guards = f'[guards]\nstall_timeout_s = {STALL_TIMEOUT_S}\non_error = "{on_error}"\n'
    return run_plan(plan(TWO_ARMS, p=RUN, g=guards, s=stall), device=watched)


def ane_trials(ran) -> list[TrialEvent]:
    return [e for e in ran.of(TrialEvent) if e.arm == ANE]


@pytest.mark.parametrize("on_error", ["next-arm", "abort"])
def test_the_stall_watchdog_fails_the_arm_and_terminates_its_app(on_error):
    ran = run(on_error)
    assert (ran.outcome(ANE).status, ran.outcome(ANE).reason) == ("failed", STALLED)
    assert ran.result.exit_status == FAILED
    errors = [e for e in ran.of(ErrorEvent) if e.arm == ANE]
    assert [(e.source, e.message) for e in errors] == [("controller", STALLED)]
    # the deadline runs from the last line seen, which is pulled every poll_s
    last_seen = ane_trials(ran)[-1].t
    assert 0 <= errors[0].t - last_seen - STALL_TIMEOUT_S <= ran.feed.plan.device.poll_s
    device = ran.feed.device
    stalled_pid = device.pids[ANE]
    assert device.terminated[0] == (stalled_pid, True, errors[0].t)  # alive until stopped
    assert stalled_pid not in device.running()
    assert {s.arm: s for s in summarize(ran.session)}[ANE].errors == 1


def test_with_next_arm_the_queue_goes_on():
    ran = run("next-arm")
    assert [(o.arm, o.status) for o in ran.result.outcomes] == [(ANE, "failed"), (GPU, "done")]
    assert ran.result.skipped == ()


def test_with_abort_the_session_ends_after_the_stalled_arm():
    ran = run("abort")
    assert [o.arm for o in ran.result.outcomes] == [ANE]
    assert ran.result.skipped == (GPU,)
    assert GPU not in ran.feed.device.pids
    assert "not run: " + GPU in ran.of(PhaseEvent)[-1].reason


def test_the_stalled_arms_trials_are_those_before_the_stall():
    ran, healthy = run(), run(stall="")
    trials = ane_trials(ran)
    warmup_done = trials[0].app_t
    assert trials[0].warmup and warmup_done is not None
    # exactly the healthy run's trials up to the stall: same timings, speeds, thermal
    every = ane_trials(healthy)
    before = [e for e in every if e.app_t is not None and e.app_t <= warmup_done + STALL_AT_S]
    assert [e.line for e in trials] == [e.line for e in before]
    assert len(before) < len(every)
    summary = {s.arm: s for s in summarize(ran.session)}[ANE]
    assert summary.trials == len(trials) - 1 >= 10  # the warm-up is not counted


def test_a_stalled_run_is_the_same_every_time():
    first, second = run(), run()
    assert first.result == second.result
    assert [(e.t, e.line) for e in first.of(TrialEvent)] == [
        (e.t, e.line) for e in second.of(TrialEvent)
    ]
    assert [(e.t, e.message) for e in first.of(ErrorEvent)] == [
        (e.t, e.message) for e in second.of(ErrorEvent)
    ]
