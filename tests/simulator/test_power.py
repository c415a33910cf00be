"""Device power (docs/domain.md "Energy"): idle 1.0 W with the screen on, an arm's burst power
per compute path (ANE 4.5 W, GPU 6.2 W) at its burst rate, linear in the decode rate, and the
plan's `power_w` override."""

from __future__ import annotations

import pytest

from anemon.simulator import PROFILES, SimArmConfig, SimConfig, SimulatedIPhone
from anemon.simulator.power import PowerParams, power_w
from anemon.simulator.profiles import PATHS

from .logparse import BUNDLE, env, log, run

ANE = "minicpm5_1b_ane_pal8"
GPU = "minicpm5_1b_gpu_int8"


def trial_powers(sim: SimulatedIPhone, environment: dict[str, str]) -> list[tuple[float, float]]:
    """(decode tok/s, power W midway through that trial) for every trial of one launch."""
    pid = sim.launch(BUNDLE, environment)
    seen: list[tuple[float, float]] = []
    while pid in sim.running() and (d := sim.next_change_in()) is not None:
        sim.advance(d / 2)
        midway = sim.telemetry().power_w
        sim.advance(d / 2)
        last = log(sim)[-1]
        if last.kind == "TRIAL":
            seen.append((float(last["decode_tps"]), midway))
    return seen


def test_the_idle_phone_draws_a_watt_with_the_screen_on():
    sim = SimulatedIPhone(SimConfig())
    sim.advance(30)
    assert sim.telemetry().power_w == 1.0
    sim.set_screen_on(False)
    assert sim.telemetry().power_w == 0.5


def test_each_path_has_its_burst_power():
    assert PATHS["ane"].burst_w == 4.5
    assert PATHS["gpu"].burst_w == 6.2
    params = PowerParams()
    assert power_w(params, 4.5, 75.6, 75.6) == pytest.approx(4.5)
    assert power_w(params, 6.2, 64.5, 64.5) == pytest.approx(6.2)
    assert power_w(params, 4.5, 0.0, 75.6) == pytest.approx(1.0)
    assert SimArmConfig(ANE).burst_w == 4.5 and SimArmConfig(GPU).burst_w == 6.2


@pytest.mark.parametrize(("arm", "burst_w"), [(ANE, 4.5), (GPU, 6.2)])
def test_power_is_linear_in_the_decode_rate_as_the_arm_throttles(arm: str, burst_w: float):
    sim = SimulatedIPhone(SimConfig())
    seen = trial_powers(sim, env(arm, AB_SECONDS="600"))
    burst_tps = PROFILES[arm].decode_tps
    for decode, watts in seen:
        assert watts == pytest.approx(1.0 + (burst_w - 1.0) * decode / burst_tps, abs=0.005)
    first, last = seen[1][1], seen[-1][1]
    assert first == pytest.approx(burst_w, rel=0.06)  # cool: about the burst power
    assert last < first - 0.8  # throttled: it draws less


def test_the_plateau_figures_of_the_domain():
    """docs/domain.md: at the sustained plateau the ANE draws ~3.4 W (~0.065 J/token), the GPU
    ~3.8 W (~0.11 J/token)."""
    params = PowerParams()
    ane = power_w(params, 4.5, 52.5, PROFILES[ANE].decode_tps)
    gpu = power_w(params, 6.2, 33.8, PROFILES[GPU].decode_tps)
    assert ane == pytest.approx(3.4, abs=0.1) and ane / 52.5 == pytest.approx(0.065, rel=0.05)
    assert gpu == pytest.approx(3.75, abs=0.1) and gpu / 33.8 == pytest.approx(0.11, rel=0.05)


def test_power_w_overrides_the_burst_power_and_leaves_speeds_and_heat_alone():
    plain = SimulatedIPhone(SimConfig())
    seen_plain = trial_powers(plain, env(ANE, AB_SECONDS="120"))
    config = SimConfig(arms={ANE: SimArmConfig(ANE, power_w=3.0)})
    custom = SimulatedIPhone(config)
    seen = trial_powers(custom, env(ANE, AB_SECONDS="120"))
    assert log(plain) == log(custom)  # the same trials at the same temperatures
    for decode, watts in seen:
        assert watts == pytest.approx(1.0 + 2.0 * decode / PROFILES[ANE].decode_tps, abs=0.005)
    assert [p for _, p in seen] != [p for _, p in seen_plain]


def test_loading_and_a_hung_generation_draw_part_of_the_span():
    config = SimConfig(arms={ANE: SimArmConfig(ANE, fault="hang")})
    sim = SimulatedIPhone(config)
    sim.launch(BUNDLE, env(ANE))
    sim.advance(0.36)  # started, loading
    assert sim.telemetry().power_w == pytest.approx(1.0 + 3.5 * 0.5)
    run(sim, env(ANE))  # relaunch; it hangs after loading
    sim.advance(10)
    assert log(sim)[-1].kind == "LOAD"
    assert sim.telemetry().power_w == pytest.approx(1.0 + 3.5 * 0.3)
    sim.terminate(next(iter(sim.running())))
    assert sim.telemetry().power_w == 1.0


def test_a_negative_override_is_rejected():
    with pytest.raises(ValueError, match="power_w"):
        SimArmConfig(ANE, power_w=-1)
