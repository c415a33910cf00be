"""The bench app's process readings and crash reports (line-protocol.md version 3): the
Session's series, `mem_peak_gb`, `cpu_mean_pct`, `gpu_mean_pct` in every summary format,
compare and export, and a crash report's round failed with its reason."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from contextlib import closing

import pytest
from rich.console import Console

from anemon.analysis import compare, render
from anemon.analysis.summary import summarize
from anemon.cli import main
from anemon.events import (
    CrashEvent,
    EndEvent,
    Event,
    LoadEvent,
    StartEvent,
    TelemetryEvent,
    TrialEvent,
)
from anemon.recording.writer import Recorder, make_header
from anemon.store import Session

JETSAM = "jetsam: per-process-limit at 2.2 GB"


def launch(arm: str, at: float, trials: int = 5, every: float = 2.0) -> list[Event]:
    """START, LOAD at +1, then timed trials every `every` s from +2: the span is
    [at + 1, at + 2 + (trials - 1) * every]."""
    events: list[Event] = [
        StartEvent(t=at, wall=at, arm=arm),
        LoadEvent(t=at + 1, wall=at + 1, arm=arm),
    ]
    events += [
        TrialEvent(t=at + 2 + i * every, wall=at + 2 + i * every, arm=arm, trial=i,
                   decode_tps=30.0, gen=10)
        for i in range(trials)
    ]  # fmt: skip
    return events


def reading(t: float, arm: str | None = "a", **fields: float | None) -> TelemetryEvent:
    return TelemetryEvent(t=t, wall=t, arm=arm, source="dvt", pid=412, **fields)


def session_of(*groups: list[Event]) -> Session:
    events = sorted((e for group in groups for e in group), key=lambda e: e.t)
    return Session.from_events(events)


# -- the Session ----------------------------------------------------------------------------


def test_each_arm_keeps_its_readings_and_the_session_the_latest():
    first = [
        reading(2, mem_gb=1.6, cpu_pct=None, gpu_pct=5.0),
        reading(3, mem_gb=1.7, cpu_pct=90.0),
    ]
    unnamed = [reading(13, arm=None, mem_gb=2.1, cpu_pct=80.0)]  # the arm running then
    session = session_of(launch("a", 0), launch("b", 10), first, unnamed)
    a, b = session.arms["a"].process, session.arms["b"].process
    assert list(a["mem_gb"].value) == [1.6, 1.7] and list(a["cpu_pct"].t) == [3.0]
    assert list(b["mem_gb"].value) == [2.1] and not len(b["gpu_pct"].t)
    assert session.process is not None and session.process.mem_gb == 2.1


def test_a_battery_reading_is_no_process_reading():
    session = session_of(launch("a", 0), [TelemetryEvent(t=3, wall=3, arm="a", battery=80.0)])
    assert session.process is None and not len(session.arms["a"].process["mem_gb"].t)


def test_a_crash_is_the_rounds_failure_until_the_next_start():
    crash = CrashEvent(t=12, wall=12, arm="a", report="jetsam", reason=JETSAM, file="J.ips")
    session = session_of(launch("a", 0), [crash])
    assert session.crashes == [crash] and session.arms["a"].crash is crash
    assert list(session.log)[-1] is crash  # the log panel says it (describe.py's words)
    again = session_of(launch("a", 0), [crash], launch("a", 20))
    assert again.arms["a"].crash is None


# -- the summary keys -----------------------------------------------------------------------


def test_the_peak_is_the_largest_footprint_inside_the_spans_only():
    outside = [reading(0.5, mem_gb=2.9), reading(20, mem_gb=3.1)]  # loading; after the trials
    inside = [reading(t, mem_gb=1.5 + t / 100) for t in (2, 5, 9)]
    (s,) = summarize(session_of(launch("a", 0), outside, inside))
    assert s.mem_peak_gb == pytest.approx(1.59)


def test_cpu_and_gpu_means_are_time_weighted_over_the_spans():
    # the span is [1, 10]: 50 % for its first second, 100 % for the other eight; a mean of the
    # readings would say 75
    readings = [reading(1, cpu_pct=50.0, gpu_pct=20.0), reading(2, cpu_pct=100.0, gpu_pct=20.0),
                reading(10, cpu_pct=100.0, gpu_pct=20.0)]  # fmt: skip
    (s,) = summarize(session_of(launch("a", 0), readings))
    assert s.cpu_mean_pct == pytest.approx((75 * 1 + 100 * 8) / 9)
    assert s.gpu_mean_pct == pytest.approx(20.0)


def test_a_first_sample_without_cpu_gives_no_point():
    readings = [reading(1, cpu_pct=None, mem_gb=1.0), reading(2, cpu_pct=60.0),
                reading(10, cpu_pct=60.0)]  # fmt: skip
    (s,) = summarize(session_of(launch("a", 0), readings))
    assert s.cpu_mean_pct == pytest.approx(60.0)  # the held first value, not a 0 at t=1


def test_readings_that_begin_late_or_stop_early_give_the_mean_of_what_they_cover():
    # the span is [1, 10]; a watch that joined the running app reads CPU from t=5 (30 %) to
    # t=7 (50 %): more than 2 x their gap from both ends, which have no value, so the mean is
    # over [5, 7] alone
    readings = [reading(t, cpu_pct=30.0 + (t - 5) * 10) for t in (5, 6, 7)]
    (s,) = summarize(session_of(launch("a", 0), readings))
    assert s.cpu_mean_pct == pytest.approx(40.0)
    assert s.gpu_mean_pct is None  # no GPU reading: still null, never 0


def test_a_single_reading_inside_a_span_is_no_mean():
    (s,) = summarize(session_of(launch("a", 0), [reading(5, cpu_pct=30.0)]))
    assert s.cpu_mean_pct is None


def test_no_readings_are_null_never_zero_in_every_format():
    summaries = summarize(session_of(launch("a", 0)))
    (obj,) = json.loads(render.to_json(summaries))
    assert (obj["mem_peak_gb"], obj["cpu_mean_pct"], obj["gpu_mean_pct"]) == (None, None, None)
    assert list(obj)[-4:] == ["mem_peak_gb", "cpu_mean_pct", "gpu_mean_pct", "summary_version"]
    (row,) = csv.DictReader(io.StringIO(render.to_csv(summaries)))
    assert (row["mem_peak_gb"], row["cpu_mean_pct"], row["gpu_mean_pct"]) == ("", "", "")
    assert "mem peak" not in render.table_columns(summaries)  # no column of n/a


def table_text(summaries, width: int = 260) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(render.rich_table(summaries))
    return console.export_text()


def test_the_table_shows_the_figures_and_n_a_for_an_arm_without():
    readings = [reading(t, mem_gb=1.93, cpu_pct=85.0, gpu_pct=40.0) for t in (1, 5, 10)]
    summaries = summarize(session_of(launch("a", 0), launch("b", 20), readings))
    names = render.table_columns(summaries)
    rows = {row[0]: dict(zip(names, row, strict=True)) for row in render.table_rows(summaries)}
    assert (rows["a"]["mem peak"], rows["a"]["CPU / GPU"]) == ("1.93 GB", "85 / 40 %")
    assert (rows["b"]["mem peak"], rows["b"]["CPU / GPU"]) == ("n/a", "n/a")
    assert "1.93 GB" in table_text(summaries) and "| 1.93 GB |" in render.markdown(summaries)


# -- crash reports --------------------------------------------------------------------------


def crashed(report: str = "jetsam", reason: str = JETSAM) -> list[Event]:
    return [CrashEvent(t=12, wall=12, arm="a", report=report, reason=reason, file="J.ips",
                       footprint_gb=2.2)]  # fmt: skip


def test_a_jetsam_fails_the_round_for_its_reason_in_the_table():
    (s,) = summarize(session_of(launch("a", 0), crashed()))
    assert (s.status, s.status_reason) == ("failed", JETSAM)
    assert f"a failed: {JETSAM}" in table_text([s])


def test_a_jetsam_reason_always_names_jetsam():
    (s,) = summarize(session_of(launch("a", 0), crashed(reason="per-process-limit")))
    assert s.status_reason == "jetsam: per-process-limit"


def test_a_round_done_stays_done_and_the_next_round_is_its_own():
    done = [EndEvent(t=11, wall=11, arm="a", reason="done", trials=5)]
    (s,) = summarize(session_of(launch("a", 0), done, crashed()))
    assert s.status == "done"
    (again,) = summarize(session_of(launch("a", 0), crashed(), launch("a", 20),
                                    [EndEvent(t=40, wall=40, arm="a", reason="done")]))  # fmt: skip
    assert again.status == "done"


# -- compare and export ---------------------------------------------------------------------


def sources(peaks: list[float | None]) -> list[compare.SourceArms]:
    out = []
    for i, peak in enumerate(peaks):
        readings = [] if peak is None else [reading(t, mem_gb=peak) for t in (2, 5)]
        session = session_of(launch("a", 0), readings)
        out.append(compare.SourceArms.of(f"s{i}.jsonl", session, summarize(session)))
    return out


def test_compare_gives_the_peak_its_delta_and_interval():
    comparison = compare.compare(sources([2.0, 2.2, 1.8]))
    (arm,) = comparison.arms
    assert arm.delta_pct["mem_peak_gb"][1] == pytest.approx(10.0)
    assert arm.median is not None and arm.median["mem_peak_gb"] == pytest.approx(2.0)
    names = compare.table_columns(comparison)
    median_row = dict(zip(names, compare.table_rows(comparison)[-1], strict=True))
    assert median_row["mem peak"].startswith("2.00 [") and median_row["mem peak"].endswith("GB")


def test_compare_without_readings_has_no_memory_column():
    assert "mem peak" not in compare.table_columns(compare.compare(sources([None, None])))


def test_export_and_sqlite_carry_the_readings_and_the_keys(tmp_path):
    path = tmp_path / "run.jsonl"
    header = make_header(source="test", device={"kind": "pymobiledevice3", "udid": "X"})
    events = sorted([*launch("a", 0), *(reading(t, mem_gb=1.9, cpu_pct=80.0) for t in (2, 9))],
                    key=lambda e: e.t)  # fmt: skip
    with Recorder(path, header) as recorder:
        for event in events:
            recorder.write(event)
    db = tmp_path / "out.db"
    assert main(["export", str(path), "--format", "sqlite", "-o", str(db)]) == 0
    with closing(sqlite3.connect(db)) as conn:
        arms = conn.execute("SELECT mem_peak_gb, cpu_mean_pct, gpu_mean_pct FROM arms").fetchall()
        rows = conn.execute("SELECT pid, mem_gb, source FROM telemetry ORDER BY t").fetchall()
    assert arms == [(1.9, 80.0, None)] and rows == [(412, 1.9, "dvt"), (412, 1.9, "dvt")]
    # where a reading came from, as the recording kept it: an app gap is not a log gap
    csv_out = tmp_path / "telemetry.csv"
    argv = ["export", str(path), "--table", "telemetry", "--format", "csv", "-o", str(csv_out)]
    assert main(argv) == 0
    table = list(csv.DictReader(io.StringIO(csv_out.read_text())))
    assert [row["source"] for row in table] == ["dvt", "dvt"]
    assert list(table[0])[-1] == "source"  # last: the columns before it keep their places
