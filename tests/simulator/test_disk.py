"""Free disk and compile caches: a cold load is slow and eats disk; warm loads are quick."""

from __future__ import annotations

import pytest

from anemon.simulator import PROFILES, SimConfig, SimulatedIPhone

from .logparse import BUNDLE, env, log, run

ANE = "minicpm5_1b_ane_pal8"
GB = 1e9


def loads(sim: SimulatedIPhone) -> list[tuple[float, str]]:
    return [(float(r["load_s"]), r["cold"]) for r in log(sim) if r.kind == "LOAD"]


def test_warm_loads_are_quick_and_leave_disk_alone():
    sim = SimulatedIPhone(SimConfig(free_gb=38.0))
    for _ in range(5):
        run(sim, env(ANE, "ab", AB_TRIALS="1"))
    assert all(0.06 <= s <= 0.4 and cold == "0" for s, cold in loads(sim))
    assert sim.telemetry().free_bytes == 38 * GB
    starts = [r for r in log(sim) if r.kind == "START"]
    assert {r["free_gb"] for r in starts} == {"38.0"}


def test_a_cold_load_takes_the_cold_time_and_eats_disk_once():
    sim = SimulatedIPhone(SimConfig(cold_cache=True, free_gb=38.0))
    profile = PROFILES[ANE]
    sim.launch(BUNDLE, env(ANE, "ab", AB_TRIALS="1"))
    sim.advance(profile.load_cold_s / 2)
    halfway = sim.telemetry().free_bytes / GB
    assert 38.0 - profile.cache_gb < halfway < 38.0
    while (d := sim.next_change_in()) is not None:
        sim.advance(d)
    run(sim, env(ANE, "ab", AB_TRIALS="1"))
    (cold_s, first), (warm_s, second) = loads(sim)
    assert first == "1" and cold_s == pytest.approx(profile.load_cold_s, rel=0.05)
    assert second == "0" and warm_s < 0.5
    assert sim.telemetry().free_bytes / GB == pytest.approx(38.0 - profile.cache_gb)


def test_cold_caches_of_every_arm_eat_about_20_gb():
    """After an OS update the dead cache took free disk from 38 to 18.5 GB."""
    sim = SimulatedIPhone(SimConfig(cold_cache=True, free_gb=38.0))
    for name in PROFILES:
        pid = run(sim, env(name, "ab", AB_TRIALS="1"))
        sim.terminate(pid)  # the hanging arm never exits by itself
    assert sim.telemetry().free_bytes / GB == pytest.approx(18.5, rel=0.10)
    free = [float(r["free_gb"]) for r in log(sim) if r.kind == "START"]
    assert free[0] == 38.0 and free == sorted(free, reverse=True)


def test_an_os_update_makes_every_cache_cold_again():
    sim = SimulatedIPhone(SimConfig())
    run(sim, env(ANE, "ab", AB_TRIALS="1"))
    sim.os_update()
    run(sim, env(ANE, "ab", AB_TRIALS="1"))
    run(sim, env(ANE, "ab", AB_TRIALS="1"))
    assert [cold for _, cold in loads(sim)] == ["0", "1", "0"]


def test_a_compile_killed_midway_keeps_what_it_wrote_and_stays_cold():
    sim = SimulatedIPhone(SimConfig(cold_cache=True, free_gb=38.0))
    profile = PROFILES["minicpm5_2b_ane_6bit"]
    pid = sim.launch(BUNDLE, env(profile.name))
    sim.advance(profile.load_cold_s / 4)
    sim.terminate(pid)
    after_kill = sim.telemetry().free_bytes / GB
    assert after_kill == pytest.approx(38.0 - profile.cache_gb / 4, abs=0.05)
    sim.advance(60)
    assert sim.telemetry().free_bytes / GB == after_kill
    run(sim, env(profile.name, "ab", AB_TRIALS="1"))
    assert [cold for _, cold in loads(sim)] == ["1"]
    assert sim.telemetry().free_bytes / GB == pytest.approx(after_kill - profile.cache_gb)
