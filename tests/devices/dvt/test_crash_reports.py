"""The app's crash and jetsam reports on the pymobiledevice3 backend, against the virtual
iPhone's CrashReporter folder, on both routes: the reports written after a time that name the
app (pre-flight's `crash reports`, `CrashReports`), and a jetsam during a run that names the
app by its executable alone (a pid anemon did not launch) recognised as the app's."""

from __future__ import annotations

import asyncio
import datetime
import itertools
import json

import pytest

from anemon.devices.base import AppCrash, DeviceError
from anemon.simulator import SimulatedIPhone
from anemon.simulator.jetsam import jetsam_report
from anemon.simulator.phone import CRASH_REPORTER
from anemon.simulator.process import Usage
from tests.devices.dvt.helpers import ARMS, DvtPhone
from tests.devices.helpers import BUNDLE, TIMEOUT_S

T0 = 1_795_000_000.0
"""When the last session of the tag was written (epoch seconds)."""
GB = 1_000_000_000
COPY_MOBILE = {"lockdown": "com.apple.crashreportcopymobile",
               "rsd": "com.apple.crashreportcopymobile.shim.remote"}  # fmt: skip


def jetsam(sim: SimulatedIPhone, wall_s: float, process: str = "BenchApp") -> str:
    """A JetsamEvent that killed `process` (pid 4001: not one anemon launched) at `wall_s`,
    written into the phone's CrashReporter folder; its file name."""
    killed = Usage(4001, process, int(2.2 * GB), 0.0, 0.0)
    springboard = Usage(61, "SpringBoard", int(0.2 * GB), 2.5, 0.0)
    report = jetsam_report(killed, [springboard], wall_s=wall_s, os_version="iPhone OS (20H1)",
                           count=1)  # fmt: skip
    sim._containers.append(CRASH_REPORTER, report.name, report.data)
    return report.name


def crashed(sim: SimulatedIPhone, name: str, wall_s: float) -> None:
    """The app's own crash report (bug_type 309) at `wall_s`, naming it by its bundle id."""
    when = datetime.datetime.fromtimestamp(wall_s, tz=datetime.UTC)
    header = {"bug_type": "309", "timestamp": f"{when:%Y-%m-%d %H:%M:%S}.00 +0000",
              "name": "BenchApp", "bundleID": BUNDLE}  # fmt: skip
    body = {"pid": 4002, "procName": "BenchApp", "exception": {"type": "EXC_CRASH"}}
    data = (json.dumps(header) + "\n" + json.dumps(body)).encode()
    sim._containers.append(CRASH_REPORTER, name, data)


async def test_the_reports_naming_the_app_since_a_time(dvt_phone: DvtPhone) -> None:
    sim = dvt_phone.sim
    old = jetsam(sim, T0 - 600)
    new = jetsam(sim, T0 + 60)
    jetsam(sim, T0 + 120, process="MobileMail")  # another app's
    crashed(sim, "BenchApp-2026-11-17-100000.ips", T0 + 180)
    sim._containers.append(CRASH_REPORTER, "JetsamEvent-garbled.ips", b"not json")
    sim._containers.append(CRASH_REPORTER, "Retired.log", b"not a report")
    device = dvt_phone.device()
    async with asyncio.timeout(TIMEOUT_S):
        since = await device.reports(BUNDLE, since=T0)
        every = await device.reports(BUNDLE)
    assert sorted(since) == [("BenchApp-2026-11-17-100000.ips", T0 + 180), (new, T0 + 60)]
    assert sorted(every) == sorted([(old, T0 - 600), *since])


async def test_no_report_for_an_app_the_phone_does_not_have(dvt_phone: DvtPhone) -> None:
    jetsam(dvt_phone.sim, T0 + 60)
    async with asyncio.timeout(TIMEOUT_S):
        assert await dvt_phone.device().reports("com.example.absent") == []


async def test_a_phone_away_is_one_device_error_for_the_check_to_say(dvt_phone: DvtPhone) -> None:
    device = dvt_phone.device()
    dvt_phone.unplug()
    async with asyncio.timeout(TIMEOUT_S):
        with pytest.raises(DeviceError):
            await device.reports(BUNDLE, since=T0)


async def test_a_jetsam_during_a_run_is_the_apps_by_its_executable(dvt_phone: DvtPhone) -> None:
    """The report lists the app by name under a pid anemon did not launch (relaunched by the
    system, say): only the executable's name, from installation_proxy, tells it is the app."""
    device = dvt_phone.device()
    news = device.watch(BUNDLE)
    copy_mobile = COPY_MOBILE[dvt_phone.route]
    try:
        async with asyncio.timeout(TIMEOUT_S):
            pid = await device.launch(BUNDLE, {"AB_MODEL": ARMS[0], "AB_MODE": "sustain"})
            crash = asyncio.ensure_future(_first_crash(news))
            while not dvt_phone.virtual.service_starts[copy_mobile]:
                await asyncio.sleep(0.01)
            for second in itertools.count():  # until one comes after the watch's first listing
                jetsam(dvt_phone.sim, T0 + second)
                if (await asyncio.wait({crash}, timeout=0.2))[0]:
                    break
            found = crash.result()
    finally:
        await news.aclose()  # type: ignore[attr-defined]
    assert (found.report, found.process, found.pid) == ("jetsam", "BenchApp", 4001)
    assert found.pid != pid and found.reason == "jetsam: per-process-limit at 2.2 GB"


async def _first_crash(news: object) -> AppCrash:
    async for item in news:  # type: ignore[attr-defined]
        if isinstance(item, AppCrash):
            return item
    raise AssertionError("the watch ended")
