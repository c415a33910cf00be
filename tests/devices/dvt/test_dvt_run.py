"""Whole plans on the pymobiledevice3 backend through DVT, against the virtual iPhone: the real
11.45 client launches, watches and kills the simulated bench app over one DVT connection per
run (fixtures in conftest.py, parameterised by route)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from anemon.analysis.summary import summarize
from anemon.clock import RealClock
from anemon.control.plan import Plan, parse_plan
from anemon.devices.virtual import NetworkLockdownd
from anemon.events import CrashEvent, MarkerEvent, PhaseEvent
from anemon.feeds.plan import PlanRun
from anemon.simulator import SimArmConfig, SimConfig
from anemon.simulator.phone import CRASH_REPORTER
from anemon.store import Session
from tests.devices.dvt.helpers import (
    ARMS,
    DvtPhone,
    outcomes,
    plan_text,
    prompted,
    run_plan,
    run_prepared,
    running,
)


async def test_a_two_arm_sustained_plan_runs_through(dvt_phone: DvtPhone, tmp_path: Path) -> None:
    record = tmp_path / "run.jsonl"
    ran = await run_plan(dvt_phone, parse_plan(plan_text(), "dvt.toml"), record=record)
    result = ran.run.result
    assert result is not None
    assert [(o.arm, o.status) for o in result.outcomes] == [(arm, "done") for arm in ARMS]
    phases = [e.phase for e in ran.of(PhaseEvent)]  # type: ignore[attr-defined]
    assert "cooling" in phases
    assert dvt_phone.dvt_connections == 1


REFUSED_TWICE = SimConfig(arms={ARMS[0]: SimArmConfig(profile=ARMS[0], fault="refuse_launch",
                                                      fault_count=2)})  # fmt: skip


@pytest.mark.parametrize("sim_config", [REFUSED_TWICE])
async def test_a_refused_launch_is_retried_then_accepted(dvt_phone: DvtPhone) -> None:
    ran = await run_plan(dvt_phone, parse_plan(plan_text(), "dvt.toml"))
    assert [status for _, status, _ in outcomes(ran)] == ["done", "done"]
    retries = [e.reason for e in ran.of(PhaseEvent) if "retry" in e.reason]  # type: ignore[attr-defined]
    assert len(retries) == 2
    assert all("the iPhone refused to launch" in r for r in retries)


async def test_the_operator_aborts_an_arm_its_app_is_killed_and_the_next_runs(
    dvt_phone: DvtPhone,
) -> None:
    async def abort(run: PlanRun) -> None:
        await running(run, ARMS[0])
        await run.controller.abort_arm()

    ran = await run_plan(dvt_phone, parse_plan(plan_text(), "dvt.toml"), operator=abort)
    assert [status for _, status, _ in outcomes(ran)] == ["aborted", "done"]
    assert dvt_phone.sim.running() == set()


async def test_an_app_killed_on_the_phone_fails_its_round_at_once(dvt_phone: DvtPhone) -> None:
    """Killed by something else (jetsam without a report, a crash): no END line comes; the
    termination message ends the round, not the stall watchdog (120 s)."""
    killed_at: list[float] = []

    async def kill(run: PlanRun) -> None:
        await running(run, ARMS[0])
        (pid,) = dvt_phone.sim.running()
        killed_at.append(run.clock.now())
        dvt_phone.sim.terminate(pid)

    ran = await run_plan(dvt_phone, parse_plan(plan_text(), "dvt.toml"), operator=kill)
    assert outcomes(ran)[0] == (ARMS[0], "failed", "the app exited on signal 9 without an END line")
    assert outcomes(ran)[1][1] == "done"
    failed = next(e for e in ran.of(PhaseEvent) if e.phase == "aborted")  # type: ignore[attr-defined]
    assert failed.t - killed_at[0] <= 10  # session seconds


async def test_the_phone_vanishing_mid_arm_and_coming_back(dvt_phone: DvtPhone) -> None:
    async def unplug(run: PlanRun) -> None:
        await running(run, ARMS[0])
        dvt_phone.unplug()
        await asyncio.sleep(1.0)  # 20 plan seconds away
        dvt_phone.virtual.attach()

    ran = await run_plan(dvt_phone, parse_plan(plan_text(), "dvt.toml"), operator=unplug)
    assert [status for _, status, _ in outcomes(ran)] == ["done", "done"]
    assert dvt_phone.dvt_connections == 2  # reconnected once, in one place


async def test_the_battery_protocol_over_the_network_connection(dvt_phone: DvtPhone) -> None:
    """The cable comes out when asked; DVT, the log and the power readings go over the network
    (lockdown over TCP); the phone is read unplugged, then plugged back in."""
    over_network = 'connect = "network"\nhost = "{host}"'
    text = plan_text("dvt-net", device=over_network).replace(
        'kind = "sustain"', 'kind = "sustain"\nbattery = "unplugged"'
    )

    async def operator(run: PlanRun) -> None:
        await prompted(run, "unplug")
        dvt_phone.sim.set_plugged(False)
        await prompted(run, "replug")
        dvt_phone.sim.set_plugged(True)

    async with NetworkLockdownd(dvt_phone.virtual) as network:
        plan = parse_plan(text.replace("{host}", network.address), "n.toml")
        run = PlanRun(plan, RealClock(speed=dvt_phone.speed),
                      device=dvt_phone.device(connect="network", host=network.address))  # fmt: skip
        ran = await run_prepared(run, operator)
    assert [status for _, status, _ in outcomes(ran)] == ["done", "done"]
    notes = [e.note for e in ran.of(MarkerEvent)]  # type: ignore[attr-defined]
    assert any(n.startswith("unplug wait: unplugged") for n in notes)
    assert any(n.startswith("replug wait: replugged") for n in notes)
    assert [s.arm for s in summarize(ran.run.session) if s.j_per_token is not None] == list(ARMS)


CALIBRATION = """
tag = "calibration"
[device]
kind = "{kind}"
connect = "network"
host = "{host}"
poll_s = 0.05
[protocol]
battery = "unplugged"
[cooldown]
min_s = 180
until = "none"
cap_s = 600
[sim]
start_thermal = "nominal"
[[arms]]
name = "minicpm5_1b_ane_pal8"
[[arms]]
name = "minicpm5_1b_gpu_int8"
"""
FIGURES = ("decode_mean", "decode_first3", "decode_last3", "thermal_end", "j_per_token")


@pytest.mark.parametrize("speed", [40.0])
async def test_the_calibration_plan_gives_the_simulators_summary_through_dvt(
    dvt_phone: DvtPhone,
) -> None:
    """The notebook's calibration (protocol v1, unplugged over the network) on the `sim`
    backend in virtual time, then on pymobiledevice3 against the virtual iPhone's simulator:
    decode, thermal state and J/token per arm within 5 %."""
    sim_plan = parse_plan(CALIBRATION.format(kind="sim", host="10.0.0.5"), "sim.toml")
    on_sim = {s.arm: s for s in summarize(await asyncio.to_thread(lambda: sim_run(sim_plan)))}

    async def operator(run: PlanRun) -> None:
        await prompted(run, "unplug")
        await asyncio.sleep(5 / dvt_phone.speed)  # as the simulated operator: 5 s after
        dvt_phone.sim.set_plugged(False)
        await prompted(run, "replug")
        await asyncio.sleep(5 / dvt_phone.speed)
        dvt_phone.sim.set_plugged(True)

    async with NetworkLockdownd(dvt_phone.virtual) as network:
        text = CALIBRATION.format(kind="pymobiledevice3", host=network.address)
        run = PlanRun(parse_plan(text, "dvt.toml"), RealClock(speed=dvt_phone.speed),
                      device=dvt_phone.device(connect="network", host=network.address))  # fmt: skip
        ran = await run_prepared(run, operator)
    on_dvt = {s.arm: s for s in summarize(ran.run.session)}
    for arm in ARMS:
        for figure in FIGURES:
            expected, got = getattr(on_sim[arm], figure), getattr(on_dvt[arm], figure)
            assert expected is not None and got is not None, (arm, figure)
            assert got == pytest.approx(expected, rel=0.05), (arm, figure)


def sim_run(plan: Plan) -> Session:
    """The plan on the `sim` backend at speed max (its own loop, in a thread)."""
    from tests.control.helpers import run_plan as run_on_sim

    return run_on_sim(plan).session


JETSAM = SimConfig(arms={ARMS[0]: SimArmConfig(profile=ARMS[0], fault="jetsam", fault_at_s=10)})


@pytest.mark.parametrize("sim_config", [JETSAM])
async def test_a_jetsam_mid_arm_fails_its_round_and_the_next_arm_runs(
    dvt_phone: DvtPhone, tmp_path: Path
) -> None:
    record = tmp_path / "jetsam.jsonl"
    killed_at: list[float] = []

    async def watch_the_kill(run: PlanRun) -> None:
        await running(run, ARMS[0])
        (pid,) = dvt_phone.sim.running()
        while pid in dvt_phone.sim.running():
            await asyncio.sleep(0.01)
        killed_at.append(run.clock.now())

    ran = await run_plan(dvt_phone, parse_plan(plan_text(), "dvt.toml"), record=record,
                         operator=watch_the_kill)  # fmt: skip
    arm, status, reason = outcomes(ran)[0]
    assert (arm, status) == (ARMS[0], "failed")
    assert reason.startswith("jetsam: per-process-limit at ") and reason.endswith(" GB")
    assert outcomes(ran)[1][1] == "done"
    [crash] = ran.of(CrashEvent)
    assert (crash.report, crash.arm) == ("jetsam", ARMS[0])  # type: ignore[attr-defined]
    assert crash.file.startswith("JetsamEvent-")  # type: ignore[attr-defined]
    kept = tmp_path / f"jetsam.{crash.file}"  # type: ignore[attr-defined]
    assert kept.read_bytes() == dvt_phone.sim.container_files(CRASH_REPORTER)[crash.file]  # type: ignore[attr-defined]
    failed = next(e for e in ran.of(PhaseEvent) if e.phase == "aborted")  # type: ignore[attr-defined]
    assert failed.t - killed_at[0] <= 10  # session seconds: not the stall watchdog's 120 s
    summary = {s.arm: s for s in summarize(ran.run.session)}
    assert summary[ARMS[0]].status_reason == reason
