"""The controller's pure parts: the watchdog, the launch environment and backoff, the clock.
(The cooldown gate and readings are in test_cooldown.py.)"""

from __future__ import annotations

import asyncio

import pytest

from anemon.clock import RealClock, VirtualClock, VirtualTimeExceeded, VirtualTimeLoop, wait_for
from anemon.control.launch import app_env, backoff_s, probe_env
from anemon.control.plan import parse_plan
from anemon.control.watchdog import Watchdog


def test_the_first_trial_watchdog_runs_from_the_start():
    dog = Watchdog(started=10, first_trial_s=100, stall_s=20)
    assert dog.deadline() == 110 and "dead, not slow" in dog.reason()


def test_a_gap_suspends_the_watchdog_and_its_length_does_not_count():
    dog = Watchdog(started=10, first_trial_s=100, stall_s=20)
    dog.gap("begin", 50)
    assert dog.deadline() is None
    dog.gap("end", 80)
    assert dog.deadline() == 140  # 30 s away do not count


def test_after_the_first_trial_the_stall_watchdog_runs_from_the_last_line():
    dog = Watchdog(started=10, first_trial_s=100, stall_s=20)
    dog.trial(90)
    assert dog.deadline() == 110 and "stalled" in dog.reason()
    dog.line(100)
    assert dog.deadline() == 120


def test_the_end_of_a_gap_counts_as_a_line():
    dog = Watchdog(started=0, first_trial_s=100, stall_s=20)
    dog.trial(10)
    dog.gap("begin", 15)
    dog.gap("end", 95)
    assert dog.deadline() == 115  # silence while away proves nothing


PLAN = """
tag = "x"
[device]
kind = "devicectl"
[[arms]]
name = "a"
env = { AB_MODEL = "b", X = "1" }
"""


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AB_MODEL", "b"),  # the arm's env wins over its name
        ("AB_ARM", "a"),  # the plan arm's name, whatever its AB_MODEL
        ("X", "1"),
        ("AB_TAG", "x"),
        ("AB_MODE", "sustain"),
        ("AB_SECONDS", "600"),
        ("AB_LOG", "Documents/sustain/x.log"),
    ],
)
def test_app_env(name, value):
    plan = parse_plan(PLAN)
    assert app_env(plan, plan.arms[0])[name] == value


def test_the_probe_runs_in_idle_mode_without_a_model():
    env = probe_env(parse_plan(PLAN))
    assert env["AB_MODE"] == "idle" and "AB_MODEL" not in env
    assert env["AB_LOG"] == "Documents/sustain/x.log"


@pytest.mark.parametrize(
    ("retry", "seconds"), [(1, 5), (2, 10), (3, 20), (4, 40), (5, 80), (6, 120), (7, 120)]
)
def test_backoff(retry, seconds):
    assert backoff_s(retry) == seconds


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


@pytest.mark.parametrize("speed", [0.0, -1.0, float("inf")])
def test_a_clock_refuses_a_speed_that_is_not_finite_and_positive(speed):
    with pytest.raises(ValueError, match="finite and > 0"):
        RealClock(speed)
