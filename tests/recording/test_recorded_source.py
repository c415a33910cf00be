"""Telemetry and gap events keep their `source` in a recording (v3): after replay the app's
readings (DVT) are told from the host's, and a gap of a stream about the app reads as an app
gap, not as a gap of the log. A recording without it reads as before: the file's name."""

from __future__ import annotations

import json

import pytest

from anemon.analysis.describe import describe
from anemon.events import GapEvent, MarkerEvent, TelemetryEvent
from anemon.recording import codec
from anemon.recording.reader import open_source
from anemon.recording.writer import Recorder, make_header

APP = "pymobiledevice3:app"
LOG = "pymobiledevice3:Documents/sustain/s.log"
EVENTS = [
    TelemetryEvent(t=1.0, wall=1.0, source="controller", battery=90.0, power_w=3.1),
    TelemetryEvent(t=1.5, wall=1.5, arm="a", source=APP, pid=42, cpu_pct=97.0, mem_gb=1.7),
    GapEvent(
        t=2.0,
        wall=2.0,
        arm="a",
        source=f"{APP}:sysmontap",
        state="begin",
        reason="sysmontap silent for 10 s",
    ),
    GapEvent(t=3.0, wall=3.0, arm="a", source=LOG, state="begin", reason="unplugged"),
    MarkerEvent(t=4.0, wall=4.0, source="operator", note="a note"),
]


def recorded(tmp_path, events=EVENTS):
    path = tmp_path / "rec.jsonl"
    with Recorder(path, make_header(source="test")) as recorder:
        for event in events:
            recorder.write(event)
    return path


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "general"])
def test_telemetry_and_gaps_keep_their_source_through_a_recording(tmp_path, monkeypatch, fast):
    if not fast:  # every line through from_record's checks (the reader imports it when it reads)
        monkeypatch.setattr(codec, "read_fast", lambda text, source="": None)
    back = list(open_source(recorded(tmp_path)))
    assert back[:4] == EVENTS[:4]
    assert back[4].source == "rec.jsonl"  # a marker's source is the file's, as before


def test_an_app_gap_replays_as_an_app_gap(tmp_path):
    app_gap, log_gap = list(open_source(recorded(tmp_path)))[2:4]
    assert describe(app_gap).text == "app sysmontap gap begin: sysmontap silent for 10 s"
    assert describe(log_gap).text == "gap begin: unplugged"


def test_a_recording_without_sources_reads_as_before(tmp_path):
    path = recorded(tmp_path)
    lines = path.read_text().splitlines()
    old = [lines[0]] + [json.dumps({k: v for k, v in json.loads(line).items() if k != "source"})
                        for line in lines[1:]]  # fmt: skip
    path.write_text("\n".join(old) + "\n")
    back = list(open_source(path))
    assert [e.source for e in back] == ["rec.jsonl"] * len(EVENTS)
    assert describe(back[2]).text == "gap begin: sysmontap silent for 10 s"
    assert back[1].mem_gb == 1.7


@pytest.mark.parametrize("source", [7, None, ["x"]])
def test_a_damaged_source_is_the_files(source):
    record = {"kind": "gap", "t": 1.0, "wall": 1.0, "state": "begin", "source": source}
    told: list[str] = []
    event = codec.from_record(record, "rec.jsonl", told.append)
    assert event.source == "rec.jsonl" and event.state == "begin"


def test_a_recorded_source_is_text_never_markup_or_control_characters():
    record = {"kind": "gap", "t": 1.0, "wall": 1.0, "state": "end", "source": "x\x1b[2J:app:s"}
    event = codec.from_record(record, "rec.jsonl")
    assert "\x1b" not in event.source
