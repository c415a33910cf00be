"""Reports naming the app by its executable's name (issue 23): before a run no pid of the app
is known, and a JetsamEvent lists processes by their kernel name, so the name installation_proxy
gives (`CFBundleExecutable`) is what finds the app in it."""

from __future__ import annotations

import json

from anemon.devices import reports
from tests.devices.test_dvt_samples import NAME, jetsam

BUNDLE = "com.example.bench"


def test_a_jetsam_names_the_app_by_its_executable_when_no_pid_is_known():
    app = {"name": "BenchApp", "pid": 4001, "rpages": 134_277, "reason": "per-process-limit"}
    data = jetsam(app, {"name": "SpringBoard", "pid": 61, "rpages": 5000})
    assert reports.app_crash(NAME, data, bundle=BUNDLE, pids=[]) is None  # no pid of it known
    crash = reports.app_crash(NAME, data, bundle=BUNDLE, executable="BenchApp")
    assert crash is not None
    assert (crash.report, crash.process, crash.pid) == ("jetsam", "BenchApp", 4001)
    assert crash.reason == "jetsam: per-process-limit at 2.2 GB"


def test_by_executable_the_app_must_still_be_the_killed_or_largest_process():
    bystander = jetsam({"name": "BenchApp", "pid": 4001, "rpages": 10},
                       {"name": "Mail", "pid": 90, "rpages": 9000, "reason": "vm-pageshortage"},
                       largest="Mail")  # fmt: skip
    assert reports.app_crash(NAME, bystander, bundle=BUNDLE, executable="BenchApp") is None
    largest = jetsam({"name": "BenchApp", "pid": 4001, "rpages": 100_000}, largest="BenchApp")
    crash = reports.app_crash(NAME, largest, bundle=BUNDLE, executable="BenchApp")
    assert crash is not None and crash.reason == "jetsam: largest process at 1.6 GB"
    other = jetsam({"name": "Benchmark", "pid": 4001, "reason": "per-process-limit"})
    assert reports.app_crash(NAME, other, bundle=BUNDLE, executable="BenchApp") is None


def test_a_long_executable_name_is_compared_as_the_kernel_truncates_it():
    executable = "AnemonBenchmarkHarnessForTheLab42"  # 33 characters
    data = jetsam({"name": executable[:32], "pid": 7, "reason": "per-process-limit"})
    assert reports.app_crash(NAME, data, bundle=BUNDLE, executable=executable) is not None


def test_the_apps_own_crash_report_by_its_process_name():
    header = {"bug_type": "309", "name": "BenchApp"}  # no bundleID in this one
    body = {"pid": 4001, "procName": "BenchApp", "exception": {"type": "EXC_BAD_ACCESS"}}
    data = (json.dumps(header) + "\n" + json.dumps(body)).encode()
    assert reports.app_crash("BenchApp-1.ips", data, bundle=BUNDLE) is None
    crash = reports.app_crash("BenchApp-1.ips", data, bundle=BUNDLE, executable="BenchApp")
    assert crash is not None and crash.reason == "crash: EXC_BAD_ACCESS"
