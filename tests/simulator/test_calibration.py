"""The notebook's sustained run (docs/domain.md, "Measured figures"), reproduced within ±10 %.

Protocol v1: 1B ANE 8-bit for 600 s from cool, a fixed 180 s idle, then 1B GPU int8 for 600 s
(which therefore starts at serious). Protocol v2: idle until fair, within 3-10 minutes.
"""

from __future__ import annotations

import pytest

from anemon.simulator import SimConfig, SimulatedIPhone

from .logparse import Summary, env, log, run, summarize

ANE = "minicpm5_1b_ane_pal8"
GPU = "minicpm5_1b_gpu_int8"


def near(measured: float, expected: float, tolerance: float = 0.10) -> bool:
    return abs(measured - expected) <= tolerance * abs(expected)


@pytest.fixture(scope="module")
def protocol_v1() -> tuple[Summary, Summary, int]:
    sim = SimulatedIPhone(SimConfig(start_thermal="nominal", plugged=True))
    run(sim, env(ANE, AB_SECONDS="600"))
    sim.advance(180)
    thermal_after_idle = sim.telemetry().thermal
    run(sim, env(GPU, AB_SECONDS="600"))
    records = log(sim)
    return summarize(records, ANE), summarize(records, GPU), thermal_after_idle


def test_ane_arm_from_cool_matches_the_notebook(protocol_v1: tuple[Summary, Summary, int]):
    ane = protocol_v1[0]
    assert near(ane.trials, 133)
    assert near(ane.tokens, 34_048)
    assert near(ane.decode_mean, 58.9)
    assert near(ane.decode_first3, 75.8)
    assert near(ane.decode_last3, 52.5)
    assert near(ane.decode_min, 49.1)
    assert near(ane.decode_max, 77.7)
    assert near(ane.prefill_mean, 2655)
    assert near(ane.prefill_first3, 3900)
    assert near(ane.prefill_last3, 2350)


def test_ane_arm_is_fair_at_start_and_serious_from_about_72_s(
    protocol_v1: tuple[Summary, Summary, int],
):
    ane = protocol_v1[0]
    assert ane.thermals[0] == "fair"
    assert ane.serious_at_s is not None and 55 <= ane.serious_at_s <= 90
    first_serious = ane.thermals.index("serious")
    assert set(ane.thermals[:first_serious]) == {"fair"}
    assert set(ane.thermals[first_serious:]) == {"serious"}


def test_the_ane_plateaus_about_31_percent_below_its_first_minute(
    protocol_v1: tuple[Summary, Summary, int],
):
    ane = protocol_v1[0]
    drop = 1 - ane.decode_last3 / ane.decode_first3
    assert 0.26 <= drop <= 0.36


def test_gpu_arm_after_a_fixed_3_min_idle_matches_the_notebook(
    protocol_v1: tuple[Summary, Summary, int],
):
    gpu = protocol_v1[1]
    assert near(gpu.trials, 78)
    assert near(gpu.tokens, 19_968)
    assert near(gpu.decode_mean, 34.6)
    assert near(gpu.decode_first3, 62.8)
    assert near(gpu.decode_last3, 33.8)
    assert near(gpu.decode_min, 30.4)
    assert near(gpu.decode_max, 66.8)
    assert near(gpu.prefill_mean, 1082)


def test_gpu_arm_starts_at_serious_and_stays_there(protocol_v1: tuple[Summary, Summary, int]):
    _, gpu, thermal_after_idle = protocol_v1
    assert thermal_after_idle == 2
    assert set(gpu.thermals) == {"serious"}


def test_at_serious_the_gpu_runs_at_about_half(protocol_v1: tuple[Summary, Summary, int]):
    gpu = protocol_v1[1]
    assert 0.45 <= gpu.decode_last3 / gpu.decode_first3 <= 0.6


def test_protocol_v2_cools_to_fair_within_3_to_10_minutes():
    sim = SimulatedIPhone(SimConfig())
    run(sim, env(ANE, AB_SECONDS="600"))
    assert sim.telemetry().thermal == 2
    idled = 0
    while sim.telemetry().thermal > 1:
        sim.advance(1)
        idled += 1
        assert idled <= 600
    assert 180 <= idled <= 600
    run(sim, env(GPU, AB_SECONDS="600"))
    gpu = summarize(log(sim), GPU)
    assert gpu.thermals[0] in ("nominal", "fair")
