"""DVT's payloads as anemon reads them: sysmontap rows and graphics samples (the app picked by
its pid, absurd values and malformed rows counted), crash and jetsam reports (which ones are
the app's, and why)."""

from __future__ import annotations

import contextlib
import json
import plistlib

import pytest
from bpylist2 import archiver
from hypothesis import given
from hypothesis import strategies as st

from anemon.devices import reports
from anemon.devices.base import AppSample, exit_reason
from anemon.devices.pmd3 import samples
from anemon.devices.pmd3.keyed_archive import Unreadable

ATTRIBUTES = ["pid", "name", "cpuUsage", "physFootprint"]
APP, SPRINGBOARD = 812, 64


def row(**processes: list[object]) -> dict[str, object]:
    return {"Type": 7, "Processes": {int(pid[1:]): values for pid, values in processes.items()}}


def test_the_apps_row_is_picked_by_its_pid():
    sample = row(p64=[64, "SpringBoard", 3.0, 90e6], p812=[812, "Bench", 184.5, 1.62e9])
    read = samples.process_sample(sample, ATTRIBUTES, APP)
    assert read == samples.Read(AppSample(APP, cpu_pct=184.5, mem_gb=1.62))


def test_a_first_sample_has_no_cpu():
    read = samples.process_sample(row(p812=[812, "Bench", None, 1.3e9]), ATTRIBUTES, APP)
    assert read.sample == AppSample(APP, cpu_pct=None, mem_gb=1.3)


@pytest.mark.parametrize(
    "sample", [{"Type": 33, "SystemCPUUsage": {}}, row(p64=[64, "SpringBoard", 3.0, 9e7]), None]
)
def test_rows_without_the_app_give_nothing(sample: object):
    assert samples.process_sample(sample, ATTRIBUTES, APP) == samples.NOTHING


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ([812, "Bench", 1e6, 1.3e9], "absurd cpu_pct 1e+06 dropped (expected 0 to 1600 %)"),
        ([812, "Bench", 50.0, -4096], "absurd mem_gb -4.096e-06 dropped (expected 0 to 64 GB)"),
        ([812, "Bench", 50.0], "sysmontap: a row with 3 values for 4 attributes"),
        ("812", "sysmontap: a row with str values for 4 attributes"),
    ],
)
def test_absurd_and_malformed_samples_are_dropped_with_a_reason(values: object, said: str):
    assert samples.process_sample(row(p812=values), ATTRIBUTES, APP) == samples.Read(warning=said)  # type: ignore[arg-type]


def test_gpu_utilisation_from_graphics():
    assert samples.gpu_sample({"Device Utilization %": 71, "XRVideoCardRunTimeStamp": 5}, APP) == (
        samples.Read(AppSample(APP, gpu_pct=71.0))
    )
    assert samples.gpu_sample({"CoreAnimationFramesPerSecond": 60}, APP) == samples.NOTHING
    assert samples.gpu_sample({"Device Utilization %": 250}, APP).warning.startswith("absurd gpu")


def jetsam(*processes: dict[str, object], largest: str = "") -> bytes:
    header = {"bug_type": "298", "timestamp": "2026-12-02 02:00:00.00 +0000"}
    body = {"memoryStatus": {"pageSize": 16384}, "largestProcess": largest,
            "processes": list(processes)}  # fmt: skip
    return (json.dumps(header) + "\n" + json.dumps(body)).encode()


NAME = "JetsamEvent-2026-12-02-020000.ips"


def test_a_jetsam_that_killed_the_app_names_its_reason_and_footprint():
    data = jetsam({"name": "Bench", "pid": APP, "rpages": 134_277, "reason": "per-process-limit"},
                  {"name": "SpringBoard", "pid": SPRINGBOARD, "rpages": 5000})  # fmt: skip
    crash = reports.app_crash(NAME, data, bundle="com.example.bench", pids=[APP])
    assert crash is not None
    assert (crash.report, crash.reason, crash.process, crash.pid) == (
        "jetsam", "jetsam: per-process-limit at 2.2 GB", "Bench", APP)  # fmt: skip
    assert crash.footprint_gb == pytest.approx(134_277 * 16384 / 1e9)
    assert crash.data == data


def test_a_jetsam_where_the_app_is_the_largest_process_is_the_apps():
    data = jetsam({"name": "Bench", "pid": APP, "rpages": 100_000}, largest="Bench")
    crash = reports.app_crash(NAME, data, bundle="b", pids=[APP])
    assert crash is not None and crash.reason == "jetsam: largest process at 1.6 GB"


def test_a_jetsam_of_other_processes_is_not_the_apps():
    data = jetsam({"name": "Bench", "pid": APP, "rpages": 1000},
                  {"name": "Mail", "pid": 90, "rpages": 9000, "reason": "vm-pageshortage"},
                  largest="Mail")  # fmt: skip
    assert reports.app_crash(NAME, data, bundle="b", pids=[APP]) is None
    assert reports.app_crash(NAME, jetsam({"name": "Bench", "pid": 5, "reason": "x"}),
                             bundle="b", pids=[APP]) is None  # fmt: skip


def test_the_apps_own_crash_report():
    header = {"bug_type": "309", "name": "Bench", "bundleID": "com.example.bench"}
    body = {
        "pid": APP,
        "procName": "Bench",
        "exception": {"type": "EXC_CRASH", "signal": "SIGABRT"},
    }
    data = (json.dumps(header) + "\n" + json.dumps(body)).encode()
    crash = reports.app_crash("Bench-2026-12-02-020000.ips", data, bundle="com.example.bench",
                              pids=[])  # fmt: skip
    assert crash is not None
    assert (crash.report, crash.reason, crash.process) == (
        "crash",
        "crash: EXC_CRASH (SIGABRT)",
        "Bench",
    )
    other = (json.dumps({"bug_type": "309", "name": "Mail"}) + "\n{}").encode()
    assert reports.app_crash("Mail.ips", other, bundle="com.example.bench", pids=[APP]) is None


@pytest.mark.parametrize("data", [b"\xff\xfe not text", b"Incident Identifier: 1\n", b"[1]\n{}"])
def test_a_report_that_is_not_json_is_refused_in_one_line(data: bytes):
    with pytest.raises(reports.NotAReport, match=r"^crash report x.ips is not"):
        reports.app_crash("x.ips", data, bundle="b", pids=[APP])


@pytest.mark.parametrize(
    ("code", "signal", "said"),
    [(None, 9, "exited on signal 9"), (1, None, "exited with code 1"), (0, 0, "exited with code 0"),
     (None, None, "exited"), ("x", True, "exited")],
)  # fmt: skip
def test_an_exit_in_words(code: object, signal: object, said: str):
    assert exit_reason(code, signal) == said


# -- a sysmontap message's bytes, decoded only as far as the app (samples.rows) ---------------

values = st.one_of(
    st.none(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False), st.text(max_size=8)
)
processes = st.dictionaries(st.integers(0, 999), st.lists(values, max_size=4), max_size=12)


def projected(message: object, pid: int) -> list[object]:
    """What `rows` gives of a message, from the message decoded whole."""
    found: list[object] = []
    for whole in message if isinstance(message, list) else [message]:
        listing = whole.get("Processes") if isinstance(whole, dict) else None
        if listing is None:
            found.append({})
        else:
            found.append({"Processes": {pid: listing[pid]} if pid in listing else {}})
    return found


@given(processes, st.integers(0, 999), st.booleans())
def test_rows_read_from_the_bytes_are_the_whole_decode_cut_to_the_app(
    listing: dict[int, list[object]], pid: int, listed: bool
):
    if listed:  # a process of the listing, with its drawn values
        listing.setdefault(pid, [pid, 38.5, 1_990_000_000])
        pid = sorted(listing)[pid % len(listing)]
    message = [{"Type": 7, "Processes": listing, "StartMachAbsTime": 5},
               {"Type": 33, "CPUCount": 6, "System": [1, 2.5, None]}]  # fmt: skip
    data = archiver.archive(message)
    assert samples.rows(data, pid) == projected(archiver.unarchive(data), pid)


def test_a_phones_row_of_hundreds_of_processes_gives_the_apps_sample():
    listing = {p: [p, "daemon", 0.1, 4e6] for p in range(1, 400)}
    listing[APP] = [APP, "Bench", 184.5, 1.62e9]
    rows = samples.rows(archiver.archive([row(), {"Type": 7, "Processes": listing}]), APP)
    assert [samples.process_sample(r, ATTRIBUTES, APP) for r in rows] == [
        samples.NOTHING, samples.Read(AppSample(APP, cpu_pct=184.5, mem_gb=1.62))
    ]  # fmt: skip
    assert [samples.listed(r, APP) for r in rows] == [False, True]


def test_a_row_whose_values_are_not_a_list_is_refused_as_before():
    rows = samples.rows(archiver.archive([row(p812="812")]), APP)  # type: ignore[arg-type]
    said = "sysmontap: a row with str values for 4 attributes"
    assert samples.process_sample(rows[0], ATTRIBUTES, APP) == samples.Read(warning=said)


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"bplist00",
        b"not a plist at all" * 3,
        plistlib.dumps([1, 2], fmt=plistlib.FMT_BINARY),
        plistlib.dumps({"$objects": [], "$top": {}}, fmt=plistlib.FMT_BINARY),
    ],
)
def test_a_payload_that_is_no_keyed_archive_is_unreadable(payload: bytes):
    with pytest.raises(Unreadable):
        samples.rows(payload, APP)


@given(st.data())
def test_a_damaged_message_is_unreadable_or_read_never_an_error(data: st.DataObject):
    whole = bytearray(archiver.archive([row(p64=[64, "SpringBoard", 3.0, 9e7],
                                            p812=[812, "Bench", 50.0, 1.3e9])]))  # fmt: skip
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(whole) - 1))
        whole[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(whole)))
    with contextlib.suppress(Unreadable):
        samples.rows(bytes(whole[:cut] if data.draw(st.booleans()) else whole), APP)
