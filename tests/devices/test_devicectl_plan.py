"""A whole plan through the devicectl backend and the fake `xcrun`: install, two arms, two
refused launches retried, the log mirrored, every app stopped at the end and on abort; the
battery protocol, which devicectl cannot see (the operator confirms each step with k)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from anemon.clock import RealClock
from anemon.control.plan import Plan, parse_plan
from anemon.devices.devicectl import DevicectlDevice
from anemon.events import EndEvent, Event, MarkerEvent, PhaseEvent, TrialEvent
from anemon.feeds.plan import PlanRun
from tests.devices.fake_xcrun import FakeXcrun

SPEED = 20.0  # plan seconds per real second: a 10 s settle takes 0.5 s, the stall watchdog 6 s
TIMEOUT_S = 60.0  # an overall bound; never a timing assertion
ARMS = ("minicpm5_1b_ane_pal8", "minicpm5_1b_gpu_int8")


def make_plan(app: Path) -> Plan:
    text = f"""
tag = "dc1"
[device]
kind = "devicectl"
poll_s = 0.02
[app]
install = "{app}"
[protocol]
kind = "ab"
rounds = 1
trials = 5
[cooldown]
min_s = 10
until = "fair"
cap_s = 60
[guards]
settle_after_install_s = 10
launch_retries = 3
[[arms]]
name = "{ARMS[0]}"
[[arms]]
name = "{ARMS[1]}"
"""
    return parse_plan(text, "devicectl.toml")


@pytest.fixture
def app(tmp_path: Path) -> Path:
    bundle = tmp_path / "Bench.app"
    bundle.mkdir()
    return bundle


def start(plan: Plan) -> tuple[PlanRun, list[Event]]:
    run = PlanRun(plan, RealClock(speed=SPEED))
    events: list[Event] = []
    run.pipeline.subscribe(events.append)
    return run, events


def pid_of(call: list[str]) -> int:
    return int(call[call.index("--pid") + 1])


async def test_two_arms_with_two_refusals_retried(fake_xcrun: FakeXcrun, app: Path) -> None:
    fake_xcrun.configure(installed=[], refusals=["none", "Busy"])
    run, events = start(make_plan(app))
    assert isinstance(run.device, DevicectlDevice)
    try:
        async with asyncio.timeout(TIMEOUT_S):
            await run.run()
        mirrored = run.controller.mirror.read_text()
    finally:
        run.close()
    result = run.result
    assert result is not None and result.exit_status == 0
    assert [(o.arm, o.status) for o in result.outcomes] == [(arm, "done") for arm in ARMS]

    launches = fake_xcrun.calls_of("device", "process", "launch")
    assert len(launches) == 2 + 1 + 1 + 1  # arm 1 refused twice, the cooldown probe, arm 2
    assert fake_xcrun.calls_of("device", "install", "app")
    retries = [e.reason for e in events if isinstance(e, PhaseEvent) and "retry" in e.reason]
    assert len(retries) == 2
    assert "right after an install" in retries[0] and "busy" in retries[1]

    container = fake_xcrun.container_file("com.example.bench", "Documents/sustain/dc1.log")
    assert mirrored == container.read_text()
    for arm in ARMS:
        trials = [e for e in events if isinstance(e, TrialEvent) and e.arm == arm]
        assert [e.trial for e in trials] == list(range(6))  # warm-up + 5, each exactly once

    # Every app stopped: the arms ended by themselves, the probe was terminated.
    assert fake_xcrun.running() == set()
    probe_pid = fake_xcrun.launched()[1]
    assert [pid_of(c) for c in fake_xcrun.calls_of("device", "process", "terminate")] == [probe_pid]


async def test_abort_terminates_the_running_app(fake_xcrun: FakeXcrun, app: Path) -> None:
    fake_xcrun.configure(trial_s=0.3)  # slow trials: the arm is still running at the abort
    run, events = start(make_plan(app))
    task = asyncio.create_task(run.run())
    try:
        async with asyncio.timeout(TIMEOUT_S):
            while not any(isinstance(e, TrialEvent) for e in events):
                await asyncio.sleep(0.01)
            await run.controller.abort_session()
            await task
    finally:
        task.cancel()
        run.close()
    result = run.result
    assert result is not None and result.aborted and result.exit_status == 130
    assert [(o.arm, o.status) for o in result.outcomes] == [(ARMS[0], "aborted")]
    assert result.skipped == (ARMS[1],)
    (arm_pid,) = fake_xcrun.launched()
    assert [pid_of(c) for c in fake_xcrun.calls_of("device", "process", "terminate")] == [arm_pid]
    assert fake_xcrun.running() == set()


async def confirm(run: PlanRun, start: str) -> None:
    """The operator does as the prompt asks, then presses k."""
    while (prompt := run.controller.prompt) is None or not prompt.question.startswith(start):
        await asyncio.sleep(0.01)
    await run.controller.skip_cooldown()


async def test_battery_protocol_is_confirmed_with_k(fake_xcrun: FakeXcrun, app: Path) -> None:
    plan = make_plan(app)
    plan = dataclasses.replace(
        plan, protocol=dataclasses.replace(plan.protocol, battery="unplugged")
    )
    run, events = start(plan)

    async def operator() -> None:
        await confirm(run, "unplug")
        await confirm(run, "replug")

    operating = asyncio.create_task(operator())
    try:
        async with asyncio.timeout(TIMEOUT_S):
            await run.run()
            await operating
        mirrored = run.controller.mirror.read_text()
    finally:
        operating.cancel()
        run.close()
    assert run.result is not None and run.result.exit_status == 0
    markers = [e for e in events if isinstance(e, MarkerEvent)]
    prompts = [m for m in markers if m.source == "prompt"]
    assert [m.note.split(" now")[0] for m in prompts] == ["unplug the phone", "replug the phone"]
    assert all("then press k: devicectl cannot tell" in m.note for m in prompts)
    notes = [m.note for m in markers]
    assert notes.count("k: unplugged") == 1 and notes.count("k: replugged") == 1
    endings = [n.split(" after ")[0] for n in notes if " wait: " in n]
    assert endings == ["unplug wait: confirmed (k)", "replug wait: confirmed (k)"]
    launched = next(e for e in events if isinstance(e, PhaseEvent) and e.phase == "launching")
    assert launched.t > prompts[0].t
    # The replug comes after the last arm; the log is pulled after it, whole.
    assert prompts[1].t >= max(e.t for e in events if isinstance(e, EndEvent))
    assert isinstance(events[-1], PhaseEvent) and events[-1].phase == "done"
    container = fake_xcrun.container_file("com.example.bench", "Documents/sustain/dc1.log")
    assert mirrored == container.read_text()


NO_TERMINAL_PLAN = """
tag = "dc-energy"
[device]
kind = "devicectl"
poll_s = 0.02
[protocol]
seconds = 60
battery = "unplugged"
[[arms]]
name = "minicpm5_1b_ane_pal8"
"""


def processes_mentioning(text: str) -> list[int]:
    """Pids whose command line mentions `text` (the process table, not an exit status)."""
    found = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if proc.name.isdigit() and text in (proc / "cmdline").read_bytes().decode(
                errors="replace"
            ):
                found.append(int(proc.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_headless_with_no_terminal_a_wait_only_k_can_end_exits_2_at_once(
    fake_xcrun: FakeXcrun, tmp_path: Path
) -> None:
    """devicectl cannot see the cable, so only k ends the unplug wait, and headless nothing
    reads k: one line, exit 2, nothing launched, nothing left running (it waited forever)."""
    plan = tmp_path / "energy.toml"
    plan.write_text(NO_TERMINAL_PLAN)
    argv = [sys.executable, "-m", "anemon", "run", str(plan), "--headless", "--no-record"]
    ran = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=TIMEOUT_S)  # fmt: skip
    assert ran.returncode == 2, ran.stdout[-2000:] + ran.stderr
    said = ("the unplug wait ends only with k (devicectl cannot tell whether the phone is "
            "plugged in), and headless nothing reads keys: run without --headless, or with "
            "--force to go on at once")  # fmt: skip
    assert f"ERROR: {said}" in ran.stdout and "Traceback" not in ran.stderr
    assert not fake_xcrun.launched() and fake_xcrun.running() == set()
    assert processes_mentioning(str(plan)) == []
    assert processes_mentioning(str(fake_xcrun.root)) == []
