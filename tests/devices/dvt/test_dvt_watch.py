"""What the pymobiledevice3 backend sees of the app over the run's DVT connection, against the
virtual iPhone: process telemetry (sysmontap, graphics), sysmontap going silent (a gap, not a
crash), absurd samples and unreadable messages dropped and counted, and a condition held for
the run (a forced serious state holds the cooldown gate to its cap) and cleared when Ctrl-C or
SIGTERM stops it. The fixtures are test_dvt_run's, parameterised by route."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from anemon.clock import RealClock
from anemon.control.plan import parse_plan
from anemon.devices.virtual.dvt import Instruments
from anemon.events import CooldownEvent, GapEvent, TelemetryEvent
from anemon.feeds.lifecycle import run_feeds
from anemon.feeds.plan import PlanRun
from anemon.feeds.runs import Runs
from tests.devices.dvt.helpers import (
    ARMS,
    TIMEOUT_S,
    DvtPhone,
    Ran,
    outcomes,
    plan_text,
    run_plan,
    running,
)

APP = "pymobiledevice3:app"


def app_telemetry(ran: Ran) -> list[TelemetryEvent]:
    return [e for e in ran.of(TelemetryEvent) if e.source == APP]  # type: ignore[misc]


async def test_the_apps_cpu_memory_and_gpu_come_per_arm(dvt_phone: DvtPhone) -> None:
    ran = await run_plan(dvt_phone, parse_plan(plan_text(), "dvt.toml"))
    assert [status for _, status, _ in outcomes(ran)] == ["done", "done"]
    samples = app_telemetry(ran)
    for arm in ARMS:
        mine = [e for e in samples if e.arm == arm]
        memory = [e.mem_gb for e in mine if e.mem_gb is not None]
        assert memory and all(0 < gb < 4 for gb in memory), arm  # loading, then loaded
        assert 1 < max(memory) < 4, arm
        assert any(e.cpu_pct is not None and e.cpu_pct > 0 for e in mine), arm
        assert any(e.gpu_pct is not None for e in mine), arm
        assert len({e.pid for e in mine if e.mem_gb is not None}) == 1  # the arm's process
    gpu = {arm: max(e.gpu_pct or 0 for e in samples if e.arm == arm) for arm in ARMS}
    assert gpu[ARMS[1]] > gpu[ARMS[0]]  # the GPU arm works the GPU
    assert dvt_phone.devices[0].watch_warnings == 0


async def test_sysmontap_silent_for_a_while_is_a_gap_not_a_crash(dvt_phone: DvtPhone) -> None:
    """The phone sends no row for a while mid-arm (as a busy phone may): a gap in the app's
    telemetry with its reason, then rows again; the arm is done."""
    misbehaving = instruments(dvt_phone).misbehaving

    async def mute(run: PlanRun) -> None:
        await running(run, ARMS[0])
        misbehaving.silent = True
        await asyncio.sleep(0.6)  # three times the watch's silence (below)
        misbehaving.silent = False

    dvt_phone.silent_s = 0.2
    ran = await run_plan(dvt_phone, parse_plan(plan_text(), "dvt.toml"), operator=mute)
    assert [status for _, status, _ in outcomes(ran)] == ["done", "done"]
    assert misbehaving.withheld > 0
    gaps = [e for e in ran.of(GapEvent) if e.source == f"{APP}:sysmontap"]
    pairs = [(g.state, g.reason) for g in gaps]  # type: ignore[attr-defined]
    # the muted 0.6 s is one gap; a loaded machine may pause a row past 0.2 s elsewhere too
    assert pairs and pairs == [("begin", "sysmontap silent for 0.2 s"),
                               ("end", "sysmontap back")] * (len(pairs) // 2)  # fmt: skip
    after = [e for e in app_telemetry(ran) if e.t > gaps[-1].t and e.mem_gb is not None]
    assert after  # it came back


@pytest.mark.parametrize(
    ("spoilt", "warning"),
    [("absurd", "absurd "), ("garbled", "sysmontap: a message anemon cannot read (")],
)
async def test_absurd_samples_and_unreadable_messages_are_dropped_and_counted(
    dvt_phone: DvtPhone, spoilt: str, warning: str
) -> None:
    misbehaving = instruments(dvt_phone).misbehaving

    async def spoil(run: PlanRun) -> None:
        await running(run, ARMS[0])
        setattr(misbehaving, spoilt, 3)

    ran = await run_plan(dvt_phone, parse_plan(plan_text(), "dvt.toml"), operator=spoil)
    assert [status for _, status, _ in outcomes(ran)] == ["done", "done"]
    assert getattr(misbehaving, spoilt) == 0  # all three were sent
    device = dvt_phone.devices[0]
    assert device.watch_warnings == 3
    assert device.warnings.last.startswith(warning)
    samples = app_telemetry(ran)
    assert any(e.mem_gb is not None for e in samples)  # the rest still came
    for e in samples:
        assert e.mem_gb is None or e.mem_gb > 0
        assert e.cpu_pct is None or e.cpu_pct < 1600


def instruments(phone: DvtPhone) -> Instruments:
    assert phone.virtual.instruments is not None
    return phone.virtual.instruments


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
async def test_a_condition_is_forced_for_the_run_and_cleared_on_ctrl_c_and_sigterm(
    dvt_phone: DvtPhone, tmp_path: Path, stop: str
) -> None:
    text = plan_text(device='condition = "ThermalSerious"')
    clock = RealClock(speed=dvt_phone.speed)
    run = PlanRun(parse_plan(text, "c.toml"), clock, device=dvt_phone.device())
    conditions = instruments(dvt_phone).conditions
    forced: list[str] = []

    async def terminate() -> None:
        await running(run, ARMS[0])
        forced.append(conditions.profile)
        os.kill(os.getpid(), getattr(signal, stop))

    stopping = asyncio.create_task(terminate())
    try:
        async with asyncio.timeout(TIMEOUT_S):
            ending = await run_feeds(Runs.one(run))
    finally:
        stopping.cancel()
        await asyncio.gather(stopping, return_exceptions=True)
    assert ending.signal == stop
    assert forced == ["ThermalSerious"]
    assert conditions.profile == ""  # the virtual phone has none active
    notes = [e.note for e in run.session.markers if e.source == "controller"]  # type: ignore[attr-defined]
    assert "condition ThermalSerious forced (DVT ConditionInducer), held for the run" in notes
    assert notes[-1] == "condition ThermalSerious cleared"


async def test_a_forced_serious_state_makes_the_cooldown_gate_wait_to_its_cap(
    dvt_phone: DvtPhone,
) -> None:
    forced = await run_plan(
        dvt_phone, parse_plan(plan_text(device='condition = "ThermalSerious"'), "c.toml")
    )
    assert [status for _, status, _ in outcomes(forced)] == ["done", "done"]
    (gate,) = [e for e in forced.of(CooldownEvent) if e.done]  # type: ignore[attr-defined]
    assert (gate.reason, gate.thermal) == ("cap", 2) and gate.elapsed_s >= 60.0  # serious
    assert instruments(dvt_phone).conditions.profile == ""  # cleared at the run's end
