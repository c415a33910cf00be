"""The controller's pure parts: the cooldown gate, the readings, the watchdog, the clock."""

from __future__ import annotations

import asyncio

import pytest

from anemon.clock import RealClock, VirtualClock, VirtualTimeExceeded, VirtualTimeLoop, wait_for
from anemon.control.cooldown import Gate, choose_reading, host_thermal
from anemon.control.launch import app_env, backoff_s, probe_env
from anemon.control.plan import parse_plan
from anemon.control.watchdog import Watchdog


def test_gate_v2_waits_for_min_and_cool_and_stops_at_the_cap():
    gate = Gate(min_s=180, cap_s=600, until="fair")
    assert gate.verdict(100, 0) is None  # cool, but not min_s yet
    assert gate.verdict(200, 2) is None  # min_s, but serious
    assert gate.verdict(200, 1) == "cool"
    assert gate.verdict(600, 2) == "cap"
    assert gate.verdict(600, None) == "cap"  # no reading: only the cap proves anything


def test_gate_v1_is_time_alone_and_operator_can_skip_or_extend():
    gate = Gate(min_s=180, cap_s=600, until="none")
    assert gate.verdict(179.9, 3) is None and gate.verdict(180, 3) == "min"
    gate.extend(150, 100)
    assert (gate.min_s, gate.cap_s) == (280, 600)
    gate.extend(550, 100)
    assert (gate.min_s, gate.cap_s) == (650, 650)
    gate.skipped = True
    assert gate.verdict(0, 3) == "skipped"
    assert Gate(10, 20, "none").next_check_in(8, 5) == 2


def test_readings_prefer_idle_lines_then_host_then_the_last_trial():
    assert choose_reading(1, 40.0, 2) == choose_reading(1, None, None)
    assert choose_reading(None, 37.0, 1).basis == "host"
    assert choose_reading(None, 37.0, 1).thermal == 2
    assert choose_reading(None, None, 2).basis == "app"
    assert choose_reading(None, None, None).basis == "time"
    assert [host_thermal(c) for c in (31.9, 32.0, 36.0, 45.0)] == [0, 1, 2, 3]


def test_watchdog_first_trial_then_stall_and_gaps_suspend_it():
    dog = Watchdog(started=10, first_trial_s=100, stall_s=20)
    assert dog.deadline() == 110 and "dead, not slow" in dog.reason()
    dog.gap("begin", 50)
    assert dog.deadline() is None
    dog.gap("end", 80)
    assert dog.deadline() == 140  # 30 s away do not count
    dog.trial(90)
    assert dog.deadline() == 110 and "stalled" in dog.reason()


def test_app_env_and_backoff():
    text = 'tag = "x"\n[device]\nkind = "devicectl"\n[[arms]]\nname = "a"\n'
    plan = parse_plan(text + 'env = { AB_MODEL = "b", X = "1" }\n')
    env = app_env(plan, plan.arms[0])
    assert env["AB_MODEL"] == "b" and env["X"] == "1" and env["AB_TAG"] == "x"
    assert env["AB_MODE"] == "sustain" and env["AB_SECONDS"] == "600"
    assert env["AB_LOG"] == "Documents/sustain/x.log"
    assert probe_env(plan)["AB_MODE"] == "idle" and "AB_MODEL" not in probe_env(plan)
    assert [backoff_s(n) for n in range(1, 8)] == [5, 10, 20, 40, 80, 120, 120]


def test_virtual_time_jumps_to_timers():
    clock = VirtualClock()

    async def main() -> float:
        await clock.sleep(3600)
        with pytest.raises(TimeoutError):
            await wait_for(clock, asyncio.Event().wait(), 50)
        return clock.now()

    wall0 = clock.wall()
    assert clock.run(main()) == 3650
    assert clock.wall() == pytest.approx(wall0 + 3650)


def test_wait_for_returns_what_came_before_the_limit():
    clock = VirtualClock()

    async def main() -> str:
        async def answer() -> str:
            await clock.sleep(10)
            return "answer"

        return await wait_for(clock, answer(), 50)

    assert clock.run(main()) == "answer"
    assert clock.now() == 10


def test_virtual_time_has_a_limit():
    clock = VirtualClock(limit_s=10)
    with pytest.raises(VirtualTimeExceeded):
        clock.run(asyncio.sleep(100))


def test_a_scaled_clock_divides_waits_and_multiplies_time_by_its_speed():
    # The host's time is a virtual loop's, so the test is exact (no real-time threshold).
    loop = VirtualTimeLoop()
    clock = RealClock(speed=10.0, monotonic=loop.time)
    try:
        loop.run_until_complete(clock.sleep(20.0))
    finally:
        loop.close()
    assert loop.time() == pytest.approx(2.0)  # 20 session seconds are 2 host seconds
    assert clock.now() == pytest.approx(20.0)


def test_a_clock_refuses_a_speed_that_is_not_finite_and_positive():
    for speed in (0.0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="finite and > 0"):
            RealClock(speed)
