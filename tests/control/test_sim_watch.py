"""The sim backend watches the app (an AppWatcher): a plan with a `jetsam` fault fails its
round at once with the jetsam report's reason (not the stall watchdog's), the report is a
crash event, the next arm runs; every arm carries its process's telemetry."""

from __future__ import annotations

import statistics

from anemon.events import CrashEvent, PhaseEvent, TelemetryEvent
from tests.control.helpers import TWO_ARMS, Ran, plan, run_plan

ANE, GPU = "minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8"
SHORT = '[protocol]\nseconds = 120\n[cooldown]\nmin_s = 10\nuntil = "none"\ncap_s = 10\n'
JETSAM = f'[sim.arms.{ANE}]\nfault = "jetsam"\nfault_at_s = 20\n'


def app_samples(ran: Ran, arm: str) -> list[TelemetryEvent]:
    return [e for e in ran.of(TelemetryEvent)
            if e.source == ran.feed.controller.app_source and e.arm == arm]  # fmt: skip


def test_a_jetsam_fails_the_round_at_once_with_its_report_and_the_next_arm_runs():
    ran = run_plan(plan(TWO_ARMS, s=SHORT, f=JETSAM))
    outcome = ran.outcome(ANE)
    assert outcome.status == "failed"
    assert outcome.reason.startswith("jetsam: per-process-limit at 3.")
    [crash] = ran.of(CrashEvent)
    assert (crash.report, crash.arm, crash.process) == ("jetsam", ANE, "BenchApp")
    assert crash.file.startswith("JetsamEvent-") and crash.reason == outcome.reason
    [aborted] = [e for e in ran.of(PhaseEvent) if e.arm == ANE and e.phase == "aborted"]
    assert aborted.t - crash.t <= 2  # not the stall watchdog's minutes
    last_sample = app_samples(ran, ANE)[-1]
    assert crash.t - last_sample.t <= 1.5 and last_sample.mem_gb is not None
    assert last_sample.mem_gb > 3.0  # the leak, up to the limit
    assert ran.outcome(GPU).status == "done"


def test_every_arm_carries_its_process_telemetry_the_gpu_arm_busier_on_the_gpu():
    ran = run_plan(plan(TWO_ARMS, s=SHORT))
    assert [o.status for o in ran.result.outcomes] == ["done", "done"]
    gpu_pct = {}
    for arm in (ANE, GPU):
        samples = app_samples(ran, arm)
        assert len(samples) > 100  # one a second, over 120 s of trials and the load
        assert len({e.pid for e in samples}) == 1
        assert all(e.cpu_pct is not None and e.mem_gb is not None for e in samples)
        gpu_pct[arm] = statistics.median(e.gpu_pct for e in samples if e.gpu_pct is not None)
    assert gpu_pct[GPU] > 50 > 10 > gpu_pct[ANE]
