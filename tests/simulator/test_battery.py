"""Battery: flat while wired, draining unplugged at the battery protocol's rate."""

from __future__ import annotations

from anemon.simulator import SimConfig, SimulatedIPhone
from anemon.simulator.battery import BatteryParams

from .logparse import env, log, run

GPU_2B = "minicpm5_2b_gpu_int8"
BATTERY_PROTOCOL_S = 26 * 60


def test_battery_stays_at_95_while_wired():
    sim = SimulatedIPhone(SimConfig(plugged=True))
    run(sim, env("minicpm5_1b_ane_pal8", AB_SECONDS="600"))
    trials = [r for r in log(sim) if r.kind == "TRIAL"]
    assert {r["battery"] for r in trials} == {"95"}
    assert {r["battery_state"] for r in trials} == {"charging"}
    telemetry = sim.telemetry()
    assert telemetry.battery_percent == 95.0
    assert telemetry.charging and telemetry.plugged


def test_26_minutes_of_a_2b_gpu_arm_unplugged_cost_about_10_percent():
    sim = SimulatedIPhone(SimConfig(plugged=False))
    run(sim, env(GPU_2B, AB_SECONDS=str(BATTERY_PROTOCOL_S)))
    drop = 95.0 - sim.telemetry().battery_percent
    assert 7.0 <= drop <= 13.0
    trials = [r for r in log(sim) if r.kind == "TRIAL"]
    assert {r["battery_state"] for r in trials} == {"unplugged"}
    levels = [int(r["battery"]) for r in trials]
    assert levels == sorted(levels, reverse=True)
    assert levels[0] - levels[-1] >= 7
    assert not sim.telemetry().charging


def test_idling_unplugged_drains_far_less_than_running_an_arm():
    idle = SimulatedIPhone(SimConfig(plugged=False))
    idle.advance(BATTERY_PROTOCOL_S)
    assert 0.5 < 95.0 - idle.telemetry().battery_percent < 3.0


def test_a_replugged_phone_charges_back_up_to_its_limit():
    sim = SimulatedIPhone(SimConfig(plugged=False, battery_percent=80.0))
    sim.set_plugged(True)
    sim.advance(60)
    assert 80.5 < sim.telemetry().battery_percent < 95.0
    sim.advance(3600)
    assert sim.telemetry().battery_percent == 95.0


def test_a_phone_allowed_to_charge_to_100_reports_full():
    config = SimConfig(battery_percent=99.5, battery=BatteryParams(charge_limit=100.0))
    sim = SimulatedIPhone(config)
    sim.advance(60)
    run(sim, env("minicpm5_1b_ane_pal8", "ab", AB_TRIALS="1"))
    assert {r["battery_state"] for r in log(sim) if r.kind == "TRIAL"} == {"full"}
    assert not sim.telemetry().charging
