"""The controller and a backend that sees the app (an AppWatcher): an exit without an END line
fails the round within seconds, a crash or jetsam report fails it with the report's reason (a
crash event, the report copied beside the recording), the next arm runs; samples and gaps are
recorded; a condition is held for the run and cleared however it ends.

The backend is the simulator with a watch of the tests' own: exits as the simulated processes
stop (polled every second, as the pymobiledevice3 backend polls), and what a test injects.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from anemon.analysis.summary import summarize
from anemon.clock import Clock
from anemon.control.plan import Plan, device_spec
from anemon.devices.base import AppCrash, AppExit, AppGap, AppNews, AppSample
from anemon.devices.sim import SimDevice, SimDeviceSpec
from anemon.devices.sim.device import make_device
from anemon.events import CrashEvent, ErrorEvent, GapEvent, MarkerEvent, PhaseEvent, TelemetryEvent
from anemon.feeds.plan import PlanRun
from tests.control.helpers import TWO_ARMS, Ran, plan, run_plan

ANE, GPU = "minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8"
SHORT = '[protocol]\nseconds = 120\n[cooldown]\nmin_s = 10\nuntil = "none"\ncap_s = 10\n'
JETSAM = b'{"bug_type":"298","timestamp":"2026-12-02 02:00:00.00 +0000"}\n{"processes":[]}\n'


class WatchedSim(SimDevice):
    """The simulator with a watch of the test's own: its processes' exits, and news a test
    puts in `news`."""

    def __init__(self, device: SimDevice) -> None:
        super().__init__(device.phone, device.clock, bundle=device.bundle, poll_s=device.poll_s,
                         power_s=device.power_s)  # fmt: skip
        self.news: asyncio.Queue[AppNews] = asyncio.Queue()
        self.killed: set[int] = set()
        """Processes "the phone" killed (their exit is on signal 9)."""

    def kill(self, pid: int) -> None:
        """Something on the phone kills the app (jetsam, a crash): it writes nothing more."""
        self.sync()
        self.phone.terminate(pid)

    async def watch(self, bundle: str) -> AsyncIterator[AppNews]:
        exited: set[int] = set()
        while True:
            try:
                async with asyncio.timeout(1.0):
                    yield await self.news.get()
                    continue
            except TimeoutError:
                pass
            gone = set(self.launched) - self.running() - exited
            for pid in sorted(gone):
                exited.add(pid)
                yield AppExit(pid, "exited on signal 9" if pid in self.killed else "exited")


def watched(the_plan: Plan, clock: Clock) -> WatchedSim:
    spec = device_spec(the_plan)
    assert isinstance(spec, SimDeviceSpec)
    return WatchedSim(make_device(spec, clock))


async def running(feed: PlanRun, arm: str) -> float:
    """Wait until `arm` is running; the time then."""
    while not (feed.controller.phase == "running" and feed.controller.arm == arm):
        await feed.clock.sleep(1.0)
    return feed.clock.now()


def failed_at(ran: Ran, arm: str) -> float:
    phases = [e for e in ran.of(PhaseEvent) if e.arm == arm and e.phase == "aborted"]
    assert phases, f"{arm} never failed"
    return float(phases[0].t)


async def kill_mid_arm(feed: PlanRun, killed_at: list[float]) -> WatchedSim:
    """20 s into the first arm's run, something on the phone kills its app (jetsam, a crash):
    when, in `killed_at`."""
    device = feed.device
    assert isinstance(device, WatchedSim)
    await running(feed, ANE)
    await feed.clock.sleep(20)
    killed_at.append(feed.clock.now())
    device.killed.add(device.launched[-1])
    device.kill(device.launched[-1])
    return device


def test_an_exit_without_end_fails_the_round_within_seconds_and_the_next_arm_runs():
    killed_at: list[float] = []

    async def jetsam_without_report(feed: PlanRun) -> None:
        await kill_mid_arm(feed, killed_at)

    ran = run_plan(plan(TWO_ARMS, s=SHORT), device=watched, operator=jetsam_without_report)
    outcome = ran.outcome(ANE)
    assert outcome.status == "failed"
    assert outcome.reason == "the app exited on signal 9 without an END line"
    assert failed_at(ran, ANE) - killed_at[0] <= 10  # not the stall watchdog's 120 s
    assert ran.outcome(GPU).status == "done"
    arm = {s.arm: s for s in summarize(ran.session)}[ANE]
    assert (arm.status, arm.status_reason) == ("failed", outcome.reason)


def test_a_normal_exit_before_the_end_line_is_pulled_is_done():
    """The app writes END and exits; its exit is seen before the next pull brings the END."""
    ran = run_plan(plan(TWO_ARMS, s=SHORT), device=watched)
    assert [o.status for o in ran.result.outcomes] == ["done", "done"]
    assert not ran.of(ErrorEvent)


def test_a_jetsam_report_fails_the_round_with_its_reason_and_is_kept_beside_the_recording(
    tmp_path: Path,
):
    record = tmp_path / "run.jsonl"
    killed_at: list[float] = []

    async def jetsam(feed: PlanRun) -> None:
        device = await kill_mid_arm(feed, killed_at)
        pid = device.launched[-1]
        await feed.clock.sleep(2)
        reason = "jetsam: per-process-limit at 2.2 GB"
        device.news.put_nowait(AppCrash("jetsam", reason, "JetsamEvent-2026-12-02-020000.ips",
                                        "BenchApp", JETSAM, pid=pid, footprint_gb=2.2))  # fmt: skip

    ran = run_plan(plan(TWO_ARMS, s=SHORT), device=watched, operator=jetsam, record=record)
    outcome = ran.outcome(ANE)
    assert (outcome.status, outcome.reason) == ("failed", "jetsam: per-process-limit at 2.2 GB")
    assert failed_at(ran, ANE) - killed_at[0] <= 10
    assert ran.outcome(GPU).status == "done"
    [crash] = ran.of(CrashEvent)
    assert (crash.report, crash.arm, crash.footprint_gb) == ("jetsam", ANE, 2.2)
    assert crash.file == "JetsamEvent-2026-12-02-020000.ips"
    assert (tmp_path / "run.JetsamEvent-2026-12-02-020000.ips").read_bytes() == JETSAM
    arm = {s.arm: s for s in summarize(ran.session)}[ANE]
    assert arm.status_reason == "jetsam: per-process-limit at 2.2 GB"


def test_samples_and_gaps_are_recorded_as_the_apps_telemetry():
    async def report(feed: PlanRun) -> None:
        device = feed.device
        assert isinstance(device, WatchedSim)
        await running(feed, ANE)
        pid = device.launched[-1]
        device.news.put_nowait(AppSample(pid, cpu_pct=None, mem_gb=1.4))  # a first sample
        device.news.put_nowait(AppGap("sysmontap", "begin", "sysmontap silent for 10 s"))
        await feed.clock.sleep(12)
        device.news.put_nowait(AppGap("sysmontap", "end", "sysmontap back"))
        device.news.put_nowait(AppSample(pid, cpu_pct=180.0, mem_gb=1.5, gpu_pct=None))

    ran = run_plan(plan(TWO_ARMS, s=SHORT), device=watched, operator=report)
    app = [e for e in ran.of(TelemetryEvent) if e.source == "sim:app"]
    assert [(e.cpu_pct, e.mem_gb, e.arm) for e in app] == [(None, 1.4, ANE), (180.0, 1.5, ANE)]
    gaps = [e for e in ran.of(GapEvent) if e.source == "sim:app:sysmontap"]
    assert [g.state for g in gaps] == ["begin", "end"]
    assert [o.status for o in ran.result.outcomes] == ["done", "done"]  # a gap, not a crash


def test_a_condition_is_said_before_the_first_launch_and_cleared_at_the_end():
    condition = '[device]\ncondition = "ThermalSerious"\n'
    ran = run_plan(plan(TWO_ARMS, s=SHORT, d=condition))
    notes = [m.note for m in ran.of(MarkerEvent) if m.source == "controller"]
    assert notes[0].startswith("simulator: a phone would hold ThermalSerious")
    assert notes[-1] == "simulator: a phone would clear the condition now"


def test_a_condition_is_cleared_when_the_run_is_stopped_by_sigterm():
    import os
    import signal

    async def terminate(feed: PlanRun) -> None:
        await running(feed, ANE)
        os.kill(os.getpid(), signal.SIGTERM)

    condition = '[device]\ncondition = "ThermalSerious"\n'
    ran = run_plan(plan(TWO_ARMS, s=SHORT, d=condition), operator=terminate)
    assert ran.result.aborted
    notes = [m.note for m in ran.of(MarkerEvent) if m.source == "controller"]
    assert notes[-1] == "simulator: a phone would clear the condition now"
    assert next(m for m in ran.of(MarkerEvent) if m.note.startswith("abort session")).t <= (
        next(m for m in ran.of(MarkerEvent) if m.note == notes[-1]).t
    )
