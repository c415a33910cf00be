"""The controller against the simulator at max speed: protocols, faults, cooldowns, guards."""

from __future__ import annotations

import dataclasses

import pytest

from anemon.analysis.summary import summarize
from anemon.control.outcome import ABORTED, FAILED, OK
from anemon.control.plan import sim_config
from anemon.devices.sim import SimDevice
from anemon.events import (
    THERMAL_NAMES,
    CooldownEvent,
    ErrorEvent,
    GapEvent,
    MarkerEvent,
    PhaseEvent,
    TelemetryEvent,
)
from anemon.simulator import SimulatedIPhone
from tests.control.helpers import TWO_ARMS, plan, run_plan

ANE, GPU = "minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8"
FAIR, SERIOUS = THERMAL_NAMES.index("fair"), THERMAL_NAMES.index("serious")
SHORT = '[protocol]\nseconds = 60\n[cooldown]\nmin_s = 30\nuntil = "none"\ncap_s = 60\n'


def fault(arm: str, kind: str, **more: object) -> str:
    extra = "".join(f"{k} = {v}\n" for k, v in more.items())
    return f'[sim.arms.{arm}]\nfault = "{kind}"\n{extra}'


def by_arm(ran):
    return {s.arm: s for s in summarize(ran.session)}


def phases(ran, arm=None):
    return [e.phase for e in ran.of(PhaseEvent) if arm is None or e.arm == arm]


# -- protocols -------------------------------------------------------------------------------


def test_sustain_runs_every_arm_in_order_and_records_each_step():
    ran = run_plan(plan(TWO_ARMS, s=SHORT))
    assert ran.result.exit_status == OK
    assert [(o.arm, o.status) for o in ran.result.outcomes] == [(ANE, "done"), (GPU, "done")]
    assert phases(ran, ANE)[:5] == ["launching", "loading", "warmup", "running", "done"]
    assert "cooling" in phases(ran, GPU)
    assert ran.of(PhaseEvent)[-1].phase == "done" and ran.of(PhaseEvent)[-1].arm is None
    assert ran.of(TelemetryEvent)  # host telemetry was polled


def test_ab_interleaves_rounds_with_n_trials_each():
    text = TWO_ARMS + '[protocol]\nkind = "ab"\nrounds = 2\ntrials = 5\n'
    ran = run_plan(plan(text, c='[cooldown]\nmin_s = 20\nuntil = "none"\ncap_s = 20\n'))
    assert ran.result.exit_status == OK
    order = [(o.arm, o.round) for o in ran.result.outcomes]
    assert order == [(ANE, 1), (GPU, 1), (ANE, 2), (GPU, 2)]
    for summary in summarize(ran.session):
        assert [r.trials for r in summary.rounds] == [5, 5]
    assert len(ran.of(CooldownEvent)) >= 3


# -- faults ----------------------------------------------------------------------------------


def test_hang_is_caught_by_the_first_trial_watchdog_and_the_queue_goes_on():
    text = TWO_ARMS + "[guards]\nfirst_trial_timeout_s = 300\n"
    ran = run_plan(plan(text, s=SHORT, f=fault(ANE, "hang")))
    hung = ran.outcome(ANE)
    assert hung.status == "failed" and "dead, not slow" in hung.reason
    assert ran.outcome(GPU).status == "done"
    assert ran.result.exit_status == FAILED
    errors = [e for e in ran.of(ErrorEvent) if e.arm == ANE]
    assert errors and errors[0].source == "controller"
    assert errors[0].t >= 300
    assert by_arm(ran)[ANE].errors == 1
    assert not ran.feed.device.running()  # the hung app was terminated


def test_refused_launch_is_retried_with_backoff_then_runs():
    ran = run_plan(plan(TWO_ARMS, s=SHORT, f=fault(ANE, "refuse_launch", fault_count=2)))
    assert ran.outcome(ANE).status == "done"
    retries = [e.reason for e in ran.of(PhaseEvent) if "retry" in e.reason]
    assert [r.split("retry ")[1][:3] for r in retries] == ["1/5", "2/5"]
    assert "in 5 s" in retries[0] and "in 10 s" in retries[1]


def test_busy_is_waited_out():
    ran = run_plan(plan(TWO_ARMS, s=SHORT, f=fault(ANE, "busy", fault_at_s=60)))
    assert ran.outcome(ANE).status == "done"
    retries = [e for e in ran.of(PhaseEvent) if "Busy" in e.reason]
    assert len(retries) == 4  # 5 + 10 + 20 + 40 s > 60 s


def test_too_many_refusals_fail_the_arm():
    text = TWO_ARMS + "[guards]\nlaunch_retries = 1\n"
    ran = run_plan(plan(text, s=SHORT, f=fault(ANE, "refuse_launch", fault_count=3)))
    assert ran.outcome(ANE).status == "failed"
    assert "refused 2 times" in ran.outcome(ANE).reason


def test_a_permanent_refusal_is_never_retried():
    def locked(the_plan, clock):
        config = dataclasses.replace(sim_config(the_plan), locked=True)
        return SimDevice(SimulatedIPhone(config), clock, bundle=the_plan.app.bundle)

    ran = run_plan(plan(TWO_ARMS, s=SHORT), device=locked)
    assert [o.status for o in ran.result.outcomes] == ["failed", "failed"]
    assert "not retried" in ran.outcome(ANE).reason and "Locked" in ran.outcome(ANE).reason
    assert not [e for e in ran.of(PhaseEvent) if "retry" in e.reason]


def test_load_error_with_next_arm_goes_on():
    ran = run_plan(plan(TWO_ARMS, s=SHORT, f=fault(ANE, "load_error")))
    assert ran.outcome(ANE).status == "failed"
    assert "ANE compile failed" in ran.outcome(ANE).reason
    assert ran.outcome(GPU).status == "done"
    assert ran.result.exit_status == FAILED


def test_load_error_with_abort_stops_the_queue():
    text = TWO_ARMS + '[guards]\non_error = "abort"\n'
    ran = run_plan(plan(text, s=SHORT, f=fault(ANE, "load_error")))
    assert [o.arm for o in ran.result.outcomes] == [ANE]
    assert ran.result.skipped == (GPU,)
    assert ran.result.exit_status == FAILED
    assert "not run: " + GPU in ran.of(PhaseEvent)[-1].reason


def test_gpu_timeout_mid_run_is_an_error_for_its_arm():
    ran = run_plan(plan(TWO_ARMS, s=SHORT, f=fault(GPU, "gpu_timeout", fault_at_s=20)))
    assert ran.outcome(ANE).status == "done"
    timeout = ran.outcome(GPU)
    assert timeout.status == "failed" and "Metal GPU Timeout" in timeout.reason
    assert by_arm(ran)[GPU].trials > 0


def test_unplug_is_a_gap_then_the_log_is_backfilled():
    one_arm = f'tag = "battery"\n[[arms]]\nname = "{ANE}"\n'
    ran = run_plan(
        plan(one_arm, p="[protocol]\nseconds = 300\n", f=fault(ANE, "unplug", fault_at_s=20))
    )
    gaps = ran.log_gaps()
    assert [g.state for g in gaps] == ["begin", "end"]
    power_gaps = [g for g in ran.of(GapEvent) if g.source == "sim:power"]
    assert [g.state for g in power_gaps] == ["begin", "end"]  # no power read over no cable
    assert gaps[1].t - gaps[0].t >= 26 * 60 - 5  # the battery protocol's ~26 min away
    assert ran.outcome(ANE).status == "done"
    trials = by_arm(ran)[ANE]
    assert trials.trials > 50
    late = [t for t in ran.session.arms[ANE].columns["t"] if t >= gaps[1].t]
    assert len(late) > 5  # pulled after the replug
    notes = [m.note for m in ran.of(MarkerEvent)]
    assert notes[0].startswith("unplug the phone now") and any("replug" in n for n in notes)
    assert trials.battery_end < trials.battery_start  # it drained while unplugged


# -- cooldown v1 vs v2 and the calibration -----------------------------------------------------

NOTEBOOK = TWO_ARMS + '[sim]\nstart_thermal = "nominal"\n'
V1 = '[cooldown]\nmin_s = 180\nuntil = "none"\ncap_s = 600\n'
V2 = '[cooldown]\nmin_s = 180\nuntil = "fair"\ncap_s = 600\n'


def within(value, expected, tolerance=0.10):
    return abs(value - expected) <= tolerance * abs(expected)


@pytest.fixture(scope="module")
def v1():
    return run_plan(plan(NOTEBOOK, c=V1))


@pytest.mark.parametrize(
    ("arm", "figure", "expected", "tolerance"),
    [
        (ANE, "trials", 133, 0.10),
        (ANE, "decode_mean", 58.9, 0.10),
        (ANE, "decode_first3", 75.8, 0.10),
        (ANE, "decode_last3", 52.5, 0.10),
        (ANE, "prefill_mean", 2655, 0.10),
        (ANE, "serious_at_s", 72, 0.15),  # "serious from ~72 s"
        (GPU, "trials", 78, 0.10),
        (GPU, "decode_mean", 34.6, 0.10),
        (GPU, "decode_first3", 62.8, 0.10),
        (GPU, "decode_last3", 33.8, 0.10),
    ],
)
def test_v1_reproduces_the_notebooks_sustained_table(v1, arm, figure, expected, tolerance):
    assert within(getattr(by_arm(v1)[arm], figure), expected, tolerance)


def test_v1_starts_the_second_arm_still_serious(v1):
    assert by_arm(v1)[GPU].thermal_start == SERIOUS


def test_v1_cools_down_by_time_alone(v1):
    done = [e for e in v1.of(CooldownEvent) if e.done]
    assert [(e.reason, e.basis, e.elapsed_s) for e in done] == [("min", "host", 180)]


def test_v2_starts_the_second_arm_at_fair_or_below():
    ran = run_plan(plan(NOTEBOOK, c=V2))
    assert by_arm(ran)[GPU].thermal_start <= FAIR
    done = next(e for e in ran.of(CooldownEvent) if e.done)
    assert done.reason == "cool" and done.basis == "app" and done.thermal <= FAIR
    assert 180 <= done.elapsed_s < 600


def test_a_cooldown_that_never_cools_enough_stops_at_the_cap():
    text = NOTEBOOK + '[cooldown]\nmin_s = 10\nuntil = "nominal"\ncap_s = 120\n'
    ran = run_plan(plan(text, p="[protocol]\nseconds = 120\n"))
    done = next(e for e in ran.of(CooldownEvent) if e.done)
    assert done.reason == "cap" and done.elapsed_s == 120


# -- guards and operator actions ---------------------------------------------------------------


def test_free_disk_guard_fails_the_arm_before_launching():
    # --force: past the pre-flight disk check (tests/control/test_preflight.py), to the arm's
    ran = run_plan(plan(TWO_ARMS, s=SHORT, g="[sim]\nfree_gb = 3.0\n"), force=True)
    assert all(o.status == "failed" for o in ran.result.outcomes)
    assert "below min_free_gb" in ran.outcome(ANE).reason
    assert "launching" not in phases(ran)


async def _after(feed, seconds, action):
    await feed.clock.sleep(seconds)
    await action()


def test_abort_arm_stops_it_and_the_queue_goes_on():
    ran = run_plan(plan(TWO_ARMS, s=SHORT),
                   operator=lambda f: _after(f, 30, f.controller.abort_arm))  # fmt: skip
    assert ran.outcome(ANE).status == "aborted"
    assert ran.outcome(GPU).status == "done"
    assert ran.result.exit_status == FAILED
    assert "abort arm" in [m.note for m in ran.of(MarkerEvent)]


def test_abort_session_stops_the_app_reads_what_is_pending_and_closes(tmp_path):
    record = tmp_path / "run.jsonl"
    ran = run_plan(plan(TWO_ARMS, s=SHORT), record=record,
                   operator=lambda f: _after(f, 30, f.controller.abort_session))  # fmt: skip
    assert ran.result.exit_status == ABORTED
    assert ran.result.skipped == (GPU,)
    assert not ran.feed.device.running()
    assert ran.of(PhaseEvent)[-1].phase == "aborted"
    lines = record.read_text().splitlines()
    assert '"kind":"phase"' in lines[-2] and '"aborted"' in lines[-2]
    assert '"kind":"summary"' in lines[-1] and '"status":"aborted"' in lines[-1]


COOL_100 = (
    TWO_ARMS + '[protocol]\nseconds = 60\n[cooldown]\nmin_s = 100\nuntil = "none"\ncap_s = 100\n'
)


def test_skip_cooldown_ends_it_at_once():
    async def skip(feed):
        await feed.clock.sleep(60 + 20)  # in the cooldown
        await feed.controller.skip_cooldown()

    ran = run_plan(plan(COOL_100), operator=skip)
    done = next(e for e in ran.of(CooldownEvent) if e.done)
    assert done.reason == "skipped" and done.elapsed_s < 100
    assert done.t == next(m.t for m in ran.of(MarkerEvent) if m.note == "skip cooldown")


def test_extend_cooldown_waits_longer_past_the_cap():
    async def extend(feed):
        await feed.clock.sleep(60 + 20)
        await feed.controller.extend_cooldown(200)

    ran = run_plan(plan(COOL_100), operator=extend)
    done = next(e for e in ran.of(CooldownEvent) if e.done)
    assert done.reason == "min" and done.elapsed_s > 200 and done.cap_s >= done.min_s
    assert "extend cooldown by 200 s" in [m.note for m in ran.of(MarkerEvent)]


def test_skip_and_extend_outside_a_cooldown_only_say_so():
    async def early(feed):
        await feed.clock.sleep(20)  # the first arm is running
        await feed.controller.skip_cooldown()
        await feed.controller.extend_cooldown(60)

    ran = run_plan(plan(COOL_100), operator=early)
    notes = [m.note for m in ran.of(MarkerEvent)]
    assert notes == ["skip cooldown: not cooling", "extend cooldown: not cooling"]
    done = next(e for e in ran.of(CooldownEvent) if e.done)
    assert (done.reason, done.elapsed_s) == ("min", 100)


def test_pause_holds_the_queue_until_resumed_and_markers_are_recorded():
    async def pause(feed):
        await feed.clock.sleep(10)
        await feed.controller.pause_queue()
        await feed.controller.marker("looked at the phone")
        await feed.clock.sleep(1000)
        await feed.controller.resume_queue()

    ran = run_plan(plan(TWO_ARMS, s=SHORT), operator=pause)
    held = [e for e in ran.of(PhaseEvent) if "paused" in e.reason]
    assert held and held[0].phase == "idle"
    gpu_launch = next(e for e in ran.of(PhaseEvent) if e.arm == GPU and e.phase == "launching")
    assert gpu_launch.t >= 1010
    assert "looked at the phone" in [m.note for m in ran.of(MarkerEvent)]
    assert ran.result.exit_status == OK
