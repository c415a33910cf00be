"""Battery: flat while wired (charging, current positive), draining unplugged by the energy
the phone uses (1 % = 589 J), at the battery protocol's rate."""

from __future__ import annotations

import pytest

from anemon.simulator import SimConfig, SimulatedIPhone
from anemon.simulator.battery import BatteryParams

from .logparse import BUNDLE, env, log, run

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


def test_one_percent_is_about_590_joules():
    params = BatteryParams()
    assert params.joules_per_percent == pytest.approx(590, rel=0.01)
    assert params.capacity_mah == 4250 and params.nominal_v == 3.85


def test_unplugged_the_drop_is_the_energy_used_over_589_j():
    sim = SimulatedIPhone(SimConfig(plugged=False))
    pid = sim.launch(BUNDLE, env("minicpm5_1b_gpu_int8", AB_SECONDS="600"))
    joules = 0.0
    host_joules = 0.0
    while pid in sim.running() and (d := sim.next_change_in()) is not None:
        reading = sim.telemetry()
        joules += sim.power_w * d  # power is constant until the next change
        assert reading.amperage_ma < 0 and not reading.charging and not reading.plugged
        host_w = abs(reading.amperage_ma) * reading.voltage_mv / 1e6  # what a host computes
        assert host_w == pytest.approx(reading.power_w, rel=0.002)
        host_joules += host_w * d
        sim.advance(d)
    drop = 95.0 - sim.battery.level
    assert drop == pytest.approx(joules / BatteryParams().joules_per_percent, rel=1e-6)
    assert host_joules == pytest.approx(joules, rel=0.002)
    assert 3.0 < drop < 6.0  # 10 minutes of a GPU arm: ~2.4 kJ


def test_the_voltage_falls_with_the_level():
    high = SimulatedIPhone(SimConfig(plugged=False, battery_percent=95.0)).telemetry()
    low = SimulatedIPhone(SimConfig(plugged=False, battery_percent=20.0)).telemetry()
    assert 4100 < high.voltage_mv <= 4200 and 3500 < low.voltage_mv < 3700
    assert abs(low.amperage_ma) > abs(high.amperage_ma)  # the same watt at a lower voltage


def test_plugged_it_charges_and_the_current_is_positive():
    sim = SimulatedIPhone(SimConfig(plugged=True, battery_percent=60.0))
    run(sim, env("minicpm5_1b_ane_pal8", AB_SECONDS="120"))
    charging = sim.telemetry()
    assert charging.charging and charging.plugged and charging.amperage_ma > 0
    assert charging.battery_percent > 61.0
    assert charging.amperage_ma == pytest.approx(BatteryParams().charge_ma)  # the charger's
    held = SimulatedIPhone(SimConfig(plugged=True))  # at its 95 % limit
    run(held, env("minicpm5_1b_gpu_int8", AB_SECONDS="120"))
    reading = held.telemetry()
    assert reading.battery_percent == 95.0 and reading.charging and reading.amperage_ma > 0


def test_replugging_turns_the_current_around():
    sim = SimulatedIPhone(SimConfig(plugged=False))
    sim.advance(60)
    assert sim.telemetry().amperage_ma < 0
    sim.set_plugged(True)
    assert sim.telemetry().amperage_ma > 0
    assert sim.telemetry().power_w == 1.0  # the phone's own draw does not change
