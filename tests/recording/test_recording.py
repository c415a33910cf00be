"""Recordings: round trip, torn last line, gzip, unknown kinds, future versions."""

from __future__ import annotations

import dataclasses
import gzip
import json

import pytest

from anemon.errors import SourceError
from anemon.events import (
    PHASES,
    CooldownEvent,
    ErrorEvent,
    GapEvent,
    MarkerEvent,
    PhaseEvent,
    TelemetryEvent,
    TrialEvent,
    UnknownEvent,
)
from anemon.recording.codec import from_record, to_record
from anemon.recording.reader import open_source
from anemon.recording.writer import Recorder, make_header

EVENTS = [
    PhaseEvent(t=0.0, wall=1.0, phase="launching", reason="arm a"),
    TrialEvent(
        t=1.5, wall=2.5, arm="a", source="m.log", line="TRIAL arm=a ...", trial=1,
        decode_tps=75.8, prompt_tps=3900.0, gen=256, thermal=2, battery=95.0,
        battery_state="charging", extra={"kv": "fp16"}, app_t=9.6,
    ),
    ErrorEvent(t=2.0, wall=3.0, arm="a", line="ERROR: boom", message="boom"),
    CooldownEvent(t=3.0, wall=4.0, elapsed_s=10, min_s=180, cap_s=600, until="fair", thermal=2,
                  basis="app"),
    MarkerEvent(t=4.0, wall=5.0, note="[bold]not markup[/]"),
    GapEvent(t=5.0, wall=6.0, state="begin", reason="unplugged"),
    TelemetryEvent(t=6.0, wall=7.0, battery=80.0, temperature_c=31.5, free_gb=20.0),
]  # fmt: skip


def record(tmp_path, events=EVENTS, name="rec.jsonl"):
    path = tmp_path / name
    with Recorder(path, make_header(source="test")) as recorder:
        for event in events:
            recorder.write(event)
    return path


def test_a_recording_is_known_by_its_header(tmp_path):
    reader = open_source(record(tmp_path))
    assert reader.kind == "recording"
    assert reader.header["format"] == "anemon-recording" and reader.header["version"] == 2


@pytest.mark.parametrize("index", range(len(EVENTS)), ids=[e.kind for e in EVENTS])
def test_round_trip_keeps_every_field(tmp_path, index):
    path = record(tmp_path)
    back = list(open_source(path))[index]
    # The source is not recorded: a recording's events come from the recording.
    assert back == dataclasses.replace(EVENTS[index], source=path.name)


@pytest.mark.parametrize("phase", PHASES)
def test_every_phase_is_recorded_as_its_name(phase):
    event = PhaseEvent(t=1.0, wall=2.0, phase=phase)
    assert to_record(event)["phase"] == phase
    assert from_record(json.loads(json.dumps(to_record(event)))) == event


def test_a_phase_this_version_does_not_know_is_kept():
    event = from_record({"kind": "phase", "t": 1, "wall": 2, "phase": "calibrating"})
    assert isinstance(event, PhaseEvent) and event.phase == "calibrating"
    assert to_record(event)["phase"] == "calibrating"


def test_lines_use_the_spec_names(tmp_path):
    lines = record(tmp_path).read_text().splitlines()
    header, trial = json.loads(lines[0]), json.loads(lines[2])
    assert set(header) == {"format", "version", "created", "anemon", "host", "source", "device",
                           "plan"}  # fmt: skip
    assert trial["kind"] == "trial" and trial["thermal"] == "serious"
    assert {"t", "wall", "arm", "decode_tps", "prompt_tps", "battery_state"} <= set(trial)


def test_torn_last_line_is_skipped(tmp_path):
    path = record(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[:-20])  # killed mid-write: the last line lost its end
    reader = open_source(path)
    events = list(reader)
    assert len(events) == len(EVENTS) - 1
    assert reader.torn == 1 and reader.warnings == 0


def test_bad_line_inside_is_counted_not_fatal(tmp_path):
    path = record(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(2, "{not json\n")
    lines.insert(3, "[1, 2]\n")
    path.write_text("".join(lines))
    reader = open_source(path)
    assert len(list(reader)) == len(EVENTS)
    assert reader.warnings == 2


def test_gzip_recording_reads_the_same(tmp_path):
    path = record(tmp_path)
    gz = tmp_path / "rec.jsonl.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))

    # a gap recorded without a source reads as the file's, which is the one difference
    def read(p):
        return [to_record(e) | {"source": None} for e in open_source(p)]

    assert read(gz) == read(path)


def test_gzip_raw_log_reads_as_a_log(tmp_path):
    gz = tmp_path / "bench.gz"
    gz.write_bytes(gzip.compress(b"TRIAL arm=a decode_tps=5\n"))
    reader = open_source(gz)
    assert reader.kind == "log"
    assert [e.decode_tps for e in reader] == [5.0]


def read_back(tmp_path, *records: dict) -> list:
    path = record(tmp_path, events=[])
    with path.open("a") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    return list(open_source(path))


def test_an_unknown_kind_is_kept_whole(tmp_path):
    (unknown,) = read_back(tmp_path, {"kind": "vibes", "t": 1, "wall": 2, "arm": "a", "mood": "ok"})
    assert isinstance(unknown, UnknownEvent) and unknown.fields == {"mood": "ok"}
    assert (unknown.t, unknown.wall, unknown.arm) == (1, 2, "a")
    assert to_record(unknown) == {"kind": "vibes", "mood": "ok"}


def test_an_unknown_field_of_a_record_is_kept_in_extra(tmp_path):
    (trial,) = read_back(tmp_path, {"kind": "trial", "t": 1, "wall": 2, "arm": "a",
                                    "decode_tps": 5.0, "power_w": 4.2})  # fmt: skip
    assert isinstance(trial, TrialEvent) and trial.decode_tps == 5.0
    assert dict(trial.extra) == {"power_w": "4.2"}


def test_a_known_kind_with_an_unknown_field_is_still_read_as_its_kind(tmp_path):
    (marker,) = read_back(tmp_path, {"kind": "marker", "t": 2, "wall": 3, "arm": None,
                                     "note": "n", "colour": "red"})  # fmt: skip
    assert isinstance(marker, MarkerEvent) and marker.note == "n"


def test_a_recorded_kind_missing_a_required_field_is_kept_as_unknown():
    event = from_record({"kind": "phase", "t": 1, "wall": 1})
    assert isinstance(event, UnknownEvent) and event.name == "phase"


def test_future_version_is_refused(tmp_path):
    path = tmp_path / "future.jsonl"
    header = make_header(source="x") | {"version": 3}
    path.write_text(json.dumps(header) + "\n")
    with pytest.raises(SourceError, match="version 3 is newer"):
        open_source(path)


def test_flushed_per_event(tmp_path):
    path = tmp_path / "live.jsonl"
    recorder = Recorder(path, make_header(source="x"))
    recorder.write(EVENTS[1])
    assert len(path.read_text().splitlines()) == 2  # readable before close: a crash loses nothing
    recorder.close()


def test_tag_comes_from_the_plan_in_the_header(tmp_path):
    path = tmp_path / "rec.jsonl"
    Recorder(path, make_header(source="x", plan={"tag": "sustain-1b"})).close()
    assert open_source(path).tag == "sustain-1b"


def test_a_recording_without_a_plan_has_no_tag(tmp_path):
    assert open_source(record(tmp_path, name="no-plan.jsonl")).tag is None


def test_a_raw_log_has_no_tag_even_if_its_lines_do(tmp_path):
    log = tmp_path / "bench.log"
    log.write_text("TRIAL arm=a tag=x\n")
    assert open_source(log).tag is None


POWER = TelemetryEvent(
    t=7.0, wall=8.0, battery=79.0, battery_state="unplugged", temperature_c=33.0,
    free_gb=20.0, total_gb=128.0, power_w=3.412, charging=False, plugged=False,
)  # fmt: skip


def test_telemetry_power_charging_and_plugged_round_trip(tmp_path):
    path = record(tmp_path, events=[POWER])
    line = json.loads(path.read_text().splitlines()[1])
    assert (line["power_w"], line["charging"], line["plugged"]) == (3.412, False, False)
    (back,) = open_source(path)
    assert back == dataclasses.replace(POWER, source=path.name)


def test_a_version_1_telemetry_line_without_the_power_fields_still_reads(tmp_path):
    (back,) = read_back(tmp_path, {"kind": "telemetry", "t": 6.0, "wall": 7.0, "arm": None,
                                   "battery": 80.0, "battery_state": "charging",
                                   "temperature_c": 31.5, "free_gb": 20.0})  # fmt: skip
    assert isinstance(back, TelemetryEvent) and back.battery_state == "charging"
    assert (back.power_w, back.charging, back.plugged) == (None, None, None)


@pytest.mark.parametrize(
    ("field", "value"),
    [("power_w", "3.5"), ("power_w", True), ("power_w", [3.5]), ("charging", "yes"),
     ("charging", 1), ("plugged", {"x": 1}), ("battery", "95")],
)  # fmt: skip
def test_a_mistyped_telemetry_value_is_missing_never_an_error(tmp_path, field, value):
    (back,) = read_back(tmp_path, {"kind": "telemetry", "t": 1, "wall": 2, field: value,
                                   "temperature_c": 30.0})  # fmt: skip
    assert isinstance(back, TelemetryEvent) and back.temperature_c == 30.0
    assert getattr(back, field) is None


def test_a_mistyped_trial_value_is_missing_and_counted(tmp_path):
    (back,) = read_back(tmp_path, {"kind": "trial", "t": 1, "wall": 2, "arm": "a",
                                   "decode_tps": "fast", "gen": 256, "warnings": 1})  # fmt: skip
    assert isinstance(back, TrialEvent) and back.decode_tps is None and back.gen == 256
    assert back.warnings == 2


def test_null_fields_read_as_null(tmp_path):
    (back,) = read_back(tmp_path, {"kind": "telemetry", "t": 1, "wall": 2, "power_w": None,
                                   "charging": None})  # fmt: skip
    assert (back.power_w, back.charging) == (None, None)


def test_a_damaged_field_is_told_with_what_was_wrong():
    from anemon.recording.codec import from_record

    told: list[str] = []
    event = from_record({"kind": "trial", "t": 1, "wall": 2, "arm": "a", "decode_tps": "fast",
                         "gen": 256, "thermal": "boiling", "battery_state": "docked"},
                        "x", told.append)  # fmt: skip
    assert isinstance(event, TrialEvent) and event.gen == 256 and event.warnings == 1
    assert event.battery_state is None
    assert told == ['trial: decode_tps="fast" is not a number: left out',
                    'trial: thermal="boiling" is not a thermal state: left out',
                    'trial: battery_state="docked" is not a battery state: left out']  # fmt: skip
    event = from_record({"kind": "trial", "t": 1, "wall": 2, "battery_state": "Charging"}, "x")
    assert isinstance(event, TrialEvent) and event.battery_state == "charging"  # as parsed
    told.clear()
    from_record({"kind": "trial", "t": 0, "wall": 0, "gen": 3}, "x", told.append)
    assert told == []  # zero times are numbers
