"""Thermal model: hysteresis, throttling, the USB heater, ANE vs GPU heat."""

from __future__ import annotations

import itertools

import pytest

from anemon.simulator import SimConfig, SimulatedIPhone
from anemon.simulator.profiles import PATHS
from anemon.simulator.thermal import ThermalParams, classify, throttle

from .logparse import BUNDLE, env, run

PARAMS = ThermalParams()


def states_along(temperatures: list[float], start: int = 0) -> list[int]:
    out, state = [], start
    for t in temperatures:
        state = classify(state, t, PARAMS)
        out.append(state)
    return out


def test_thresholds_rise_through_every_state():
    fair, serious, critical = PARAMS.up_c
    assert states_along([fair - 0.1, fair, serious, critical]) == [0, 1, 2, 3]
    assert classify(0, critical + 1, PARAMS) == 3


@pytest.mark.parametrize("threshold_index", [0, 1, 2])
def test_state_does_not_flap_at_a_threshold(threshold_index: int):
    up = PARAMS.up_c[threshold_index]
    wobble = [up + (0.4 if i % 2 else -0.4) for i in range(40)]
    states = states_along(wobble, start=threshold_index)
    changes = sum(a != b for a, b in itertools.pairwise(states))
    assert states[-1] == threshold_index + 1
    assert changes == 1  # up once, never back down


def test_state_falls_back_only_below_the_hysteresis_band():
    fair = PARAMS.up_c[0]
    assert classify(1, fair - PARAMS.hysteresis_c + 0.01, PARAMS) == 1
    assert classify(1, fair - PARAMS.hysteresis_c - 0.01, PARAMS) == 0


@pytest.mark.parametrize("compute", ["ane", "gpu"])
def test_throttle_is_one_when_cool_falls_monotonically_and_floors(compute: str):
    path = PATHS[compute]
    assert throttle(path, path.throttle_onset_c - 1) == (1.0, 1.0)
    temps = [path.throttle_onset_c + 0.1 * i for i in range(-10, 120)]
    decode = [throttle(path, t)[0] for t in temps]
    assert all(a >= b for a, b in itertools.pairwise(decode))
    hot = throttle(path, path.throttle_full_c + 5)
    assert hot == pytest.approx((path.decode_floor, path.prefill_floor))


def test_the_gpu_throttles_deeper_than_the_ane():
    assert PATHS["gpu"].decode_floor < 0.55 < PATHS["ane"].decode_floor


def after_an_ane_arm(**config: object) -> SimulatedIPhone:
    sim = SimulatedIPhone(SimConfig(**config))  # type: ignore[arg-type]
    run(sim, env("minicpm5_1b_ane_pal8", AB_SECONDS="600"))
    return sim


def seconds_to_fair(sim: SimulatedIPhone) -> int:
    seconds = 0
    while sim.telemetry().thermal > 1:
        sim.advance(1)
        seconds += 1
    return seconds


def test_usb_charging_with_the_screen_on_slows_cooling():
    wired = after_an_ane_arm()
    loose = after_an_ane_arm()
    loose.set_plugged(False)
    loose.set_screen_on(False)
    assert seconds_to_fair(loose) < seconds_to_fair(wired)
    wired.advance(1200)
    loose.advance(1200)
    assert wired.telemetry().temperature_c > loose.telemetry().temperature_c + 3


def test_a_wired_phone_with_the_screen_on_drifts_to_fair_while_idle():
    wired = SimulatedIPhone(SimConfig(start_thermal="nominal"))
    loose = SimulatedIPhone(SimConfig(start_thermal="nominal", plugged=False, screen_on=False))
    wired.advance(1800)
    loose.advance(1800)
    assert wired.telemetry().thermal == 1
    assert loose.telemetry().thermal == 0
    assert loose.telemetry().temperature_c < 30


def test_gpu_heats_the_phone_more_than_ane():
    temps = {}
    for model in ("minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8"):
        sim = SimulatedIPhone(SimConfig())
        sim.launch(BUNDLE, env(model))
        sim.advance(300)
        temps[model] = sim.telemetry().temperature_c
    assert temps["minicpm5_1b_gpu_int8"] > temps["minicpm5_1b_ane_pal8"] + 1


def test_a_hot_room_reaches_serious_sooner():
    def serious_after(ambient: float) -> int:
        sim = SimulatedIPhone(SimConfig(ambient_c=ambient))
        sim.launch(BUNDLE, env("minicpm5_1b_ane_pal8"))
        seconds = 0
        while sim.telemetry().thermal < 2:
            sim.advance(1)
            seconds += 1
        return seconds

    assert serious_after(30.0) < serious_after(25.0)


@pytest.mark.parametrize("state", ["nominal", "fair", "serious", "critical"])
def test_the_phone_starts_in_the_configured_state(state: str):
    sim = SimulatedIPhone(SimConfig(start_thermal=state))
    assert sim.telemetry().thermal == ["nominal", "fair", "serious", "critical"].index(state)
