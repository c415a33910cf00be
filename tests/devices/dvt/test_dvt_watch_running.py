"""`anemon watch --device pymobiledevice3` (the feed it builds) samples a bench app someone else
launched, against the virtual iPhone with the real client, on both routes: the app's pid found
by its bundle and found again when it changes, its CPU, memory and GPU as the app's telemetry,
its exit seen by polling the pid (the phone tells only the launching connection), an exit
without END failing the round with its reason, a jetsam report naming it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from anemon.analysis.summary import ArmSummary, summarize
from anemon.events import CrashEvent, ErrorEvent, Event, TelemetryEvent
from anemon.feeds.device import DeviceFeed
from anemon.pipeline import Pipeline
from anemon.recording.writer import Recorder, make_header
from anemon.simulator import SimArmConfig, SimConfig
from anemon.simulator.phone import CRASH_REPORTER
from anemon.store import Session
from tests.devices.dvt.helpers import ARMS, TIMEOUT_S, DvtPhone
from tests.devices.helpers import BUNDLE, LOG

APP = "pymobiledevice3:app"
GRACE_S = 0.3
"""The watch's grace after an exit (real seconds): the END may still be pulled."""


async def watched(
    phone: DvtPhone, tmp_path: Path, operator: Callable[[list[Event]], Coroutine[Any, Any, None]],
    recorder: Recorder | None = None,
) -> list[Event]:  # fmt: skip
    """What the watch's feed emits while `operator(events)` works the phone beside it."""
    pipeline = Pipeline(recorder=recorder)
    feed = DeviceFeed(phone.device(), BUNDLE, LOG, tmp_path / "mirror.log", pipeline,
                      app_grace_s=GRACE_S)  # fmt: skip
    events: list[Event] = []
    pipeline.subscribe(events.append)
    watching = asyncio.create_task(feed.run())
    try:
        async with asyncio.timeout(TIMEOUT_S):
            await operator(events)
    finally:
        feed.stop()
        await watching
    return events


def launch(phone: DvtPhone, arm: str = ARMS[0], seconds: float = 600) -> int:
    """The app launched by someone else (not over the watch's DVT connection)."""
    return phone.sim.launch(BUNDLE, {"AB_ARM": arm, "AB_MODEL": arm, "AB_SECONDS": f"{seconds:g}"})


async def until(test: Callable[[], object]) -> None:
    while not test():
        await asyncio.sleep(0.02)


def sampled(events: list[Event], pid: int) -> list[TelemetryEvent]:
    return [e for e in events if isinstance(e, TelemetryEvent) and e.source == APP
            and e.pid == pid and e.mem_gb is not None]  # fmt: skip


def errors(events: list[Event]) -> list[ErrorEvent]:
    return [e for e in events if isinstance(e, ErrorEvent)]


async def test_the_running_app_is_sampled_its_kill_fails_the_round_and_its_next_pid_is_found(
    dvt_phone: DvtPhone, tmp_path: Path
) -> None:
    pids: list[int] = []

    async def kill_and_relaunch(events: list[Event]) -> None:
        pids.append(launch(dvt_phone))
        await until(lambda: len(sampled(events, pids[0])) >= 3)
        dvt_phone.sim.terminate(pids[0])  # killed on the phone: no termination message here
        await until(lambda: errors(events))
        pids.append(launch(dvt_phone, ARMS[1]))
        await until(lambda: sampled(events, pids[1]))

    events = await watched(dvt_phone, tmp_path, kill_and_relaunch)
    first = sampled(events, pids[0])
    assert all(e.arm == ARMS[0] and 0 < (e.mem_gb or 0) < 4 for e in first)
    assert any(e.cpu_pct is not None and e.cpu_pct > 0 for e in first)
    assert any(isinstance(e, TelemetryEvent) and e.gpu_pct is not None for e in events)
    (error,) = errors(events)
    reason = "the app exited (its pid is gone) without an END line"
    assert (error.arm, error.message) == (ARMS[0], reason)
    assert {e.arm for e in sampled(events, pids[1])} <= {ARMS[1], None}
    summary = {s.arm: s for s in summarize_events(events)}
    assert (summary[ARMS[0]].status, summary[ARMS[0]].status_reason) == ("failed", reason)
    assert dvt_phone.devices[0].watch_warnings == 0


async def test_an_app_replaced_by_the_next_arm_fails_its_own_round_not_the_next(
    dvt_phone: DvtPhone, tmp_path: Path
) -> None:
    """Someone launches the next arm over the running one (its process is killed, no END):
    the next arm's START may be read before the poll sees the old process gone; the failure is
    the old round's, whichever comes first."""
    pids: list[int] = []

    async def replace(events: list[Event]) -> None:
        pids.append(launch(dvt_phone))
        await until(lambda: len(sampled(events, pids[0])) >= 3)
        pids.append(launch(dvt_phone, ARMS[1]))  # replaces the running instance
        await until(lambda: errors(events) and sampled(events, pids[1]))

    events = await watched(dvt_phone, tmp_path, replace)
    (error,) = errors(events)
    assert error.arm == ARMS[0]
    summary = {s.arm: s for s in summarize_events(events)}
    assert summary[ARMS[0]].status == "failed"
    assert summary[ARMS[1]].status != "failed"


async def test_an_app_that_ends_with_its_end_line_and_exits_is_done(
    dvt_phone: DvtPhone, tmp_path: Path
) -> None:
    async def a_short_arm(events: list[Event]) -> None:
        pid = launch(dvt_phone, seconds=30)  # 1.5 s at the test's speed, then END and exit
        await until(lambda: pid not in dvt_phone.sim.running())
        await asyncio.sleep(GRACE_S * 4)  # past the grace an exit without END would get

    events = await watched(dvt_phone, tmp_path, a_short_arm)
    assert errors(events) == []
    (summary,) = summarize_events(events)
    assert summary.status == "done"


JETSAM = SimConfig(arms={ARMS[0]: SimArmConfig(profile=ARMS[0], fault="jetsam", fault_at_s=10)})


@pytest.mark.parametrize("sim_config", [JETSAM])
async def test_a_jetsam_report_names_the_failure(dvt_phone: DvtPhone, tmp_path: Path) -> None:
    async def jetsam(events: list[Event]) -> None:
        pid = launch(dvt_phone)
        await until(lambda: pid not in dvt_phone.sim.running())
        await until(lambda: any(isinstance(e, CrashEvent) for e in events))
        await asyncio.sleep(GRACE_S * 4)

    recording = tmp_path / "rec" / "watch.jsonl"
    with Recorder(recording, make_header(source="test")) as recorder:
        events = await watched(dvt_phone, tmp_path, jetsam, recorder)
    (crash,) = [e for e in events if isinstance(e, CrashEvent)]
    assert (crash.report, crash.arm, crash.source) == ("jetsam", ARMS[0], APP)
    on_phone = dvt_phone.sim.container_files(CRASH_REPORTER)[crash.file]
    assert (recording.with_name(f"watch.{crash.file}")).read_bytes() == on_phone  # beside it
    (summary,) = summarize_events(events)
    assert summary.status == "failed"
    assert summary.status_reason is not None and summary.status_reason.startswith("jetsam: ")


def summarize_events(events: list[Event]) -> list[ArmSummary]:
    session = Session()
    for event in events:
        session.add(event)
    return list(summarize(session))


@pytest.mark.parametrize("value", ["-1", "abc", "0.001", "nan", "inf"])
def test_a_bad_process_s_is_one_line_and_exit_2(value: str, capsys: pytest.CaptureFixture) -> None:
    from anemon.cli import main

    argv = ["watch", "--device", "pymobiledevice3", "--bundle", BUNDLE, "--log", LOG,
            "--process-s", value, "--headless"]  # fmt: skip
    with pytest.raises(SystemExit) as usage:  # argparse's usage error
        main(argv)
    assert usage.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "--process-s" in line and "0.01 to 3600" in line
