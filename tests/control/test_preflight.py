"""Pre-flight checks (issue 12 part 2): each check's pass, warn and fail on the simulator, and
a run that stops before any launch unless --force."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from anemon.clock import RealClock
from anemon.control.plan import Plan, device_spec
from anemon.control.preflight import History, Preflight, find_history, run_checks
from anemon.devices.base import CrashReports, DeviceError, Telemetry
from anemon.devices.sim import SimDevice, make_device
from anemon.events import ErrorEvent, PhaseEvent, PreflightEvent, StartEvent
from anemon.recording.reader import open_source
from tests.control.helpers import TWO_ARMS, plan, run_plan

SHORT = '[protocol]\nseconds = 60\n[cooldown]\nmin_s = 30\nuntil = "none"\ncap_s = 60\n'


def checks(the_plan: Plan, *, device=None, history: History | None = None, **kw) -> Preflight:
    device = device or make_device(device_spec(the_plan), RealClock())
    return asyncio.run(run_checks(the_plan, device, history=history, **kw))


def verdict(result: Preflight, name: str) -> tuple[str, str, str]:
    check = next(c for c in result.checks if c.check == name)
    return check.status, check.reading, check.note


def test_a_cool_plugged_phone_with_room_passes_every_check():
    result = checks(plan(TWO_ARMS))
    assert [c.check for c in result.checks] == [
        "device", "app", "free disk", "thermal", "battery", "system load", "low power",
        "os build",
    ]  # fmt: skip
    assert result.status == "pass" and not result.failed
    assert verdict(result, "device")[1] == "Simulated iPhone, iPhone (sim), OS 24A437"
    assert verdict(result, "app")[1] == "com.example.bench installed"


def test_a_hot_start_warns_that_the_first_arm_would_start_warm():
    result = checks(plan(TWO_ARMS, s='[sim]\nstart_thermal = "serious"\n'))
    status, reading, note = verdict(result, "thermal")
    assert status == "warn" and reading.startswith("serious")
    assert "cooldown.until = fair" in note
    assert result.status == "warn" and not result.failed


def test_thermal_with_until_none_is_not_gated():
    result = checks(
        plan(TWO_ARMS, s='[sim]\nstart_thermal = "serious"\n[cooldown]\nuntil = "none"')
    )
    assert verdict(result, "thermal")[0] == "pass"


def test_free_disk_below_the_guard_fails_and_below_footprint_headroom_warns():
    low = checks(plan(TWO_ARMS, s="[sim]\nfree_gb = 3.0\n"))
    assert verdict(low, "free disk")[0] == "fail" and low.status == "fail"
    # 3.2 GB free, guard 1 GB: above the guard, below the largest footprint (1.6) + 2 GB
    tight = checks(plan(TWO_ARMS, s="[sim]\nfree_gb = 3.2\n[guards]\nmin_free_gb = 1\n"))
    status, reading, note = verdict(tight, "free disk")
    assert status == "warn" and "largest footprint 1.6 GB" in reading and "+ 2 GB" in note


def test_the_footprint_comes_from_the_last_recording_when_there_is_one():
    the_plan = plan(TWO_ARMS, s="[sim]\nfree_gb = 10.0\n[guards]\nmin_free_gb = 1\n")
    history = History(Path("x.jsonl"), "24A437", footprint_gb=9.0)
    assert verdict(checks(the_plan, history=history), "free disk")[0] == "warn"


def test_charging_fails_when_the_battery_protocol_asks_for_unplugged():
    result = checks(plan(TWO_ARMS, p='[protocol]\nbattery = "unplugged"\n'))
    status, reading, note = verdict(result, "battery")
    assert status == "fail" and "charging" in reading and "unplug" in note
    went_on = checks(plan(TWO_ARMS, p='[protocol]\nbattery = "unplugged"\n'),
                     operator_went_on=True)  # fmt: skip
    assert verdict(went_on, "battery")[0] == "warn"


def test_unplugged_warns_when_the_protocol_asks_for_plugged():
    on_battery = '[protocol]\nbattery = "plugged"\n[sim]\nplugged = false\n'
    network = '[device]\nconnect = "network"\n'
    result = checks(plan(TWO_ARMS, p=on_battery, d=network))
    status, reading, _ = verdict(result, "battery")
    assert status == "warn" and "on battery" in reading
    out_of_reach = checks(plan(TWO_ARMS, p=on_battery))  # over USB, the cable out
    status, reading, _ = verdict(out_of_reach, "battery")
    assert status == "warn" and "cannot reach the phone" in reading


def test_the_system_load_check_says_whether_the_phone_publishes_it(monkeypatch):
    the_plan = plan(TWO_ARMS)
    device = make_device(device_spec(the_plan), RealClock())
    assert verdict(checks(the_plan, device=device), "system load") == (
        "pass", "not published: energy needs the battery protocol", "",
    )  # fmt: skip
    published = Telemetry(battery=80.0, charging=True, load_w=2.345, load_refresh_s=20.4)

    async def telemetry() -> Telemetry:
        return published

    monkeypatch.setattr(device, "telemetry", telemetry)
    status, reading, note = verdict(checks(the_plan, device=device), "system load")
    assert (status, reading) == ("pass", "yes, refreshed every ~20 s (2.35 W now)")
    assert "unverified on a real iPhone" in note


def test_low_power_mode_on_warns():
    the_plan = plan(TWO_ARMS)
    device = make_device(device_spec(the_plan), RealClock())
    device.phone.low_power = True
    status, reading, _ = verdict(checks(the_plan, device=device), "low power")
    assert (status, reading) == ("warn", "Low Power Mode on")


def test_an_app_that_is_not_installed_fails_unless_the_plan_installs_it():
    the_plan = plan(TWO_ARMS)
    device = make_device(device_spec(the_plan), RealClock())
    other = SimDevice(device.phone, device.clock, bundle="com.example.other")
    assert verdict(checks(the_plan, device=other), "app")[0] == "fail"
    installs = plan(TWO_ARMS, a='[app]\ninstall = "Bench.ipa"\n')
    assert verdict(checks(installs, device=other), "app")[0] == "pass"


def test_another_os_build_than_the_last_recording_warns():
    history = History(Path("t-20260101-000000.jsonl"), "23F79")
    status, reading, note = verdict(checks(plan(TWO_ARMS), history=history), "os build")
    assert status == "warn" and reading == "24A437 (was 23F79)" and "caches rebuild" in note


class _Unreadable:
    """A backend like devicectl: it answers, reads no telemetry, cannot inspect apps."""

    kind = "devicectl"

    async def connect(self):
        from anemon.devices.base import DeviceInfo

        return DeviceInfo("devicectl", "U", "Bench iPhone", "22C152")

    async def telemetry(self) -> Telemetry | None:
        return None


def test_what_a_backend_cannot_read_is_said_never_a_crash():
    result = checks(plan(TWO_ARMS, p='[protocol]\nbattery = "unplugged"\n'), device=_Unreadable())
    assert not result.failed
    for name in ("app", "free disk", "thermal", "battery"):
        status, reading, _ = verdict(result, name)
        assert status == "warn" and "not readable with devicectl" in reading, name
    assert verdict(result, "low power") == ("pass", "not readable with devicectl", "")


class _Gone(_Unreadable):
    async def connect(self):
        raise DeviceError("no iPhone attached")


def test_a_device_that_does_not_answer_fails():
    result = checks(plan(TWO_ARMS), device=_Gone())
    assert [(c.check, c.status) for c in result.checks] == [("device", "fail")]
    assert "no iPhone attached" in result.checks[0].note


# -- in a run -----------------------------------------------------------------------------------


def test_a_phone_the_host_cannot_reach_fails_and_the_run_stops_before_launching():
    """`sim.plugged = false` over USB: no link. Each arm used to fail "cannot launch" after the
    whole cooldown cap between them; now the run stops at the pre-flight, at once."""
    off = plan(TWO_ARMS, s=SHORT, g="[sim]\nplugged = false\n")
    status, _, note = verdict(checks(off), "device")
    assert status == "fail" and note.startswith("the host cannot reach the phone: sim.plugged")
    ran = run_plan(off)
    assert ran.result.exit_status == 1 and ran.result.outcomes == ()
    assert "launching" not in [e.phase for e in ran.of(PhaseEvent)]
    assert ran.of(ErrorEvent)[0].message.startswith("pre-flight failed (device: the host cannot")
    assert ran.events[-1].t < 60  # no cooldown cap (60 s) sat out


def test_a_failed_check_stops_the_run_before_any_launch_with_exit_1(tmp_path):
    record = tmp_path / "r.jsonl"
    ran = run_plan(plan(TWO_ARMS, s=SHORT, g="[sim]\nfree_gb = 3.0\n"), record=record)
    assert ran.result.exit_status == 1
    assert ran.result.outcomes == () and len(ran.result.skipped) == 2
    assert "launching" not in [e.phase for e in ran.of(PhaseEvent)]
    assert not ran.of(StartEvent) and not ran.feed.device.phone.running()
    assert "pre-flight failed (free disk" in ran.of(ErrorEvent)[0].message
    assert ran.of(PhaseEvent)[-1].phase == "aborted"
    recorded = [e for e in open_source(record) if isinstance(e, PreflightEvent)]
    assert len(recorded) == 1 and recorded[0].status == "fail" and not recorded[0].forced
    disk = next(c for c in recorded[0].checks if c.check == "free disk")
    assert disk.status == "fail" and disk.reading.startswith("3.0 GB free")


def test_force_goes_on_and_records_that_it_did(tmp_path):
    record = tmp_path / "r.jsonl"
    the_plan = plan(TWO_ARMS, s=SHORT, g="[sim]\nfree_gb = 3.0\n[guards]\nmin_free_gb = 4\n")
    ran = run_plan(the_plan, record=record, force=True)
    assert len(ran.result.outcomes) == 2  # launched (the arm guard then judges each)
    event = ran.of(PreflightEvent)[0]
    assert event.status == "fail" and event.forced
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert any(line.get("kind") == "preflight" and line.get("forced") for line in lines)


def test_a_passing_run_records_its_checks_before_the_first_launch():
    ran = run_plan(plan(TWO_ARMS, s=SHORT))
    kinds = [type(e) for e in ran.events if isinstance(e, PreflightEvent | StartEvent)]
    assert kinds[0] is PreflightEvent and kinds.count(PreflightEvent) == 1
    assert ran.result.exit_status == 0


def test_the_last_recording_with_the_tag_gives_os_build_and_footprint(tmp_path):
    first = tmp_path / "t-1.jsonl"
    run_plan(plan(TWO_ARMS, s=SHORT), record=first)
    history = find_history("t", [tmp_path])
    assert history.path == first.resolve() and history.os == "24A437"
    assert history.footprint_gb == pytest.approx(1.6, abs=0.5)
    assert find_history("t", [tmp_path], exclude=first).path is None
    assert find_history("other", [tmp_path]).path is None


def test_the_newest_by_creation_time_wins_and_missing_folders_are_passed_over(tmp_path):
    newer = tmp_path / "t-new.jsonl"
    run_plan(plan(TWO_ARMS, s=SHORT), record=newer)
    lines = newer.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["created"] = "2020-01-01T00:00:00+00:00"
    header["device"]["os"] = "21A000"
    assert json.loads(lines[-1])["kind"] == "summary"  # without it, the header's facts hold
    older = tmp_path / "t-old.jsonl"  # written last: the newest file, the oldest session
    older.write_text(json.dumps(header) + "\n" + "".join(lines[1:-1]))
    history = find_history("t", [tmp_path / "missing", tmp_path])
    assert history.path == newer.resolve() and history.os == "24A437"
    assert find_history("t", [tmp_path], exclude=newer).os == "21A000"


# -- crash reports (v3): only a backend that can list them --------------------------------------


class _Reporting(_Unreadable, CrashReports):
    """A backend that lists the app's crash reports (as the pymobiledevice3 one does)."""

    def __init__(self, reports=(), error: DeviceError | None = None) -> None:
        self.listed = list(reports)
        self.error = error
        self.asked: list[tuple[str, float | None]] = []

    async def reports(self, bundle: str, since: float | None = None) -> list[tuple[str, float]]:
        self.asked.append((bundle, since))
        if self.error is not None:
            raise self.error
        return self.listed  # all of them, newer or not: the check itself keeps the newer


LAST = History(Path("t-20261201-090000.jsonl"), "22C152", ended=1_000.0)


def test_reports_since_the_last_session_of_the_tag_warn():
    device = _Reporting([("bench-2026-11-30.ips", 900.0), ("JetsamEvent-2026-12-01.ips", 1_500.0)])
    status, reading, note = verdict(checks(plan(TWO_ARMS), device=device, history=LAST),
                                    "crash reports")  # fmt: skip
    assert device.asked == [("com.example.bench", 1_000.0)]  # only the newer are read
    assert status == "warn" and reading.startswith("1 report for the app since t-2026")
    assert "newest JetsamEvent-2026-12-01.ips" in reading and "read the report" in note


def test_only_older_reports_pass_and_no_history_passes_counting_them():
    old = _Reporting([("bench-2026-11-30.ips", 900.0)])
    assert verdict(checks(plan(TWO_ARMS), device=old, history=LAST), "crash reports")[0] == "pass"
    status, reading, note = verdict(checks(plan(TWO_ARMS), device=old), "crash reports")
    assert old.asked[-1] == ("com.example.bench", None)  # no last session: all of them
    assert (status, reading) == ("pass", "1 for the app on the phone")
    assert note == "no earlier recording with this tag"


def test_reports_that_cannot_be_listed_warn_in_one_line():
    device = _Reporting(error=DeviceError("crash report mover refused"))
    assert verdict(checks(plan(TWO_ARMS), device=device, history=LAST), "crash reports") == (
        "warn", "could not be listed", "crash report mover refused"
    )  # fmt: skip


def test_a_backend_without_the_capability_has_no_such_check():
    assert "crash reports" not in [c.check for c in checks(plan(TWO_ARMS)).checks]


def test_the_history_says_when_the_last_session_was_written(tmp_path):
    record = tmp_path / "t.jsonl"
    run_plan(plan(TWO_ARMS, s=SHORT), record=record)
    history = find_history("t", [tmp_path])
    assert history.path == record and history.ended == record.stat().st_mtime
