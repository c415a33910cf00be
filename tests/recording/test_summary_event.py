"""Recording version 2: the closing `summary` event, written when a live feed closes normally,
read back by the reader without warnings, never counted as a bench record."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from anemon.analysis.load import load_sessions
from anemon.analysis.summary import summarize
from anemon.cli import main
from anemon.errors import NoRecordsError
from anemon.events import MarkerEvent, SummaryEvent, UnknownEvent
from anemon.feeds.live import LiveFeed, closing_summary
from anemon.pipeline import Pipeline
from anemon.recording.codec import VERSION, from_record, to_record
from anemon.recording.reader import open_source
from anemon.recording.writer import Recorder, make_header
from anemon.store import Session
from tests.recording.helpers import lines, make_recording, session_events


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The bundled demo plan on the simulator, recorded (once for the module)."""
    path = tmp_path_factory.mktemp("demo") / "demo.jsonl"
    assert main(["demo", "--headless", "--speed", "max", "--record", str(path)]) == 0
    return path


def test_a_demo_recording_is_version_2_and_ends_with_its_summary(demo):
    records = lines(demo)
    assert records[0]["version"] == VERSION == 2
    last = records[-1]
    assert last["kind"] == "summary" and last["status"] == "done"
    assert last["tag"] == "demo-sustain-1b" and last["created"] == records[0]["created"]
    assert (last["device"], last["udid"], last["backend"]) == (
        "Simulated iPhone", "SIM-00008130", "sim"
    )  # fmt: skip
    starts = [r for r in records if r.get("kind") == "start"]
    assert last["os_build"] == starts[0]["os"]
    timed = [r for r in records if r.get("kind") == "trial" and not r.get("warmup")]
    assert last["trials"] == len(timed)
    assert [a["arm"] for a in last["arms"]] == sorted({r["arm"] for r in starts})
    assert last["t"] == max(r["t"] for r in records[1:-1])  # a replay is no longer for it


def test_the_summary_is_the_one_summary_computes_from_the_events(demo):
    (loaded,) = load_sessions([demo])
    assert loaded.warnings == 0
    recorded = lines(demo)[-1]["arms"]
    assert recorded == json.loads(json.dumps([s.to_json() for s in summarize(loaded.session)]))


def test_the_summary_is_not_a_record(demo, tmp_path):
    """The Session counts it and nothing else; a file of a header and a summary has no records."""
    session = Session.from_events(open_source(demo))
    assert session.counts["summary"] == 1 and len(session.log) < session.version
    without = tmp_path / "without.jsonl"
    without.write_text("".join(demo.read_text().splitlines(keepends=True)[:-1]))
    assert summarize(session) == summarize(Session.from_events(open_source(without)))
    only = tmp_path / "only.jsonl"
    only.write_text("".join(demo.read_text().splitlines(keepends=True)[:: len(lines(demo)) - 1]))
    assert [r["kind"] for r in lines(only)[1:]] == ["summary"]
    with pytest.raises(NoRecordsError):
        list(load_sessions([only]))


def test_a_summary_event_round_trips_through_the_codec():
    session = Session.from_events(session_events(("a", "b"), "22B83", "tag"))
    event = closing_summary(session, status="aborted", tag="tag", created="2026-01-01T00:00:00")
    back = from_record(json.loads(json.dumps(to_record(event))))
    assert isinstance(back, SummaryEvent) and back == replace(event, source="")
    assert back.os_build == "22B83" and back.trials == 6 and [a["arm"] for a in back.arms] == [
        "a", "b"
    ]  # fmt: skip


def test_a_damaged_summary_field_is_left_out_with_a_warning():
    said: list[str] = []
    record = {"kind": "summary", "t": 1, "wall": 1, "status": "done", "arms": "all of them",
              "trials": "many"}  # fmt: skip
    event = from_record(record, damaged=said.append)
    assert isinstance(event, SummaryEvent) and event.arms == () and event.trials == 0
    assert len(said) == 2 and any("arms=" in s for s in said)
    missing = from_record({"kind": "summary", "t": 1, "wall": 1})  # no status: kept as it was
    assert isinstance(missing, UnknownEvent)


def test_nan_inside_the_arms_is_written_as_null():
    event = SummaryEvent(t=0, wall=0, status="done", arms=({"arm": "a", "j": float("nan")},))
    text = json.dumps(to_record(event), allow_nan=False)
    assert json.loads(text)["arms"] == [{"arm": "a", "j": None}]


def test_a_version_1_recording_still_reads(tmp_path):
    path = make_recording(tmp_path / "old.jsonl", version=1, summary=False)
    reader = open_source(path)
    assert reader.header["version"] == 1
    session = Session.from_events(reader)
    assert reader.warnings == 0 and len(session.arms) == 2


def _live(tmp_path: Path, name: str = "watch.jsonl") -> tuple[LiveFeed, Path]:
    path = tmp_path / name
    feed = LiveFeed("watch", Pipeline(recorder=Recorder(path, make_header(source="watch"))))
    return feed, path


def test_a_watch_says_incomplete_when_an_arm_has_no_end(tmp_path):
    feed, path = _live(tmp_path)
    for event in session_events(("a",), "22A100", "t")[:-1]:  # no END
        feed.pipeline.emit(event)
    feed.close()
    last = lines(path)[-1]
    assert last["kind"] == "summary" and last["status"] == "incomplete"
    assert last["tag"] == "t" and last["os_build"] == "22A100" and "device" not in last


def test_a_watch_of_finished_arms_is_done(tmp_path):
    feed, path = _live(tmp_path)
    for event in session_events(("a", "b"), "22A100", "t"):
        feed.pipeline.emit(event)
    feed.close()
    assert lines(path)[-1]["status"] == "done"


def test_a_plan_run_aborted_by_a_signal_says_aborted(tmp_path):
    from anemon.clock import VirtualClock
    from anemon.feeds.plan import PlanRun
    from tests.control.helpers import TWO_ARMS, plan

    record = tmp_path / "aborted.jsonl"
    clock = VirtualClock(limit_s=3600)
    feed = PlanRun(plan(TWO_ARMS), clock, record=record)
    feed.stop("SIGTERM")
    try:
        clock.run(feed.run())
    finally:
        feed.close()
    last = lines(record)[-1]
    assert last["kind"] == "summary" and last["status"] == "aborted"


def test_a_recording_that_failed_to_write_gets_no_summary(tmp_path):
    """The disk filled: the file ends where it did; nothing is written after the failure."""
    feed, path = _live(tmp_path)
    feed.pipeline.emit(session_events(("a",), "x", "t")[0])
    recorder = feed.pipeline.recorder
    assert recorder is not None
    recorder._failed(OSError(28, "No space left on device"))
    before = path.read_text()
    with pytest.raises(Exception, match="no space left"):
        feed.close()
    assert path.read_text() == before and "summary" not in before


def test_a_recording_claimed_but_never_begun_gets_no_summary(tmp_path):
    path = tmp_path / "claimed.jsonl"
    feed = LiveFeed("watch", Pipeline(recorder=Recorder(path)))
    feed.close()
    assert not path.exists()


def test_an_appended_session_ends_with_its_own_summary(tmp_path, demo):
    path = tmp_path / "both.jsonl"
    shutil.copy(demo, path)
    feed = LiveFeed("watch", Pipeline(recorder=Recorder(path, make_header("w"), mode="append")))
    feed.pipeline.emit(MarkerEvent(t=1, wall=1, note="second session"))
    feed.close()
    records = lines(path)
    kinds = [r.get("kind") for r in records]
    assert kinds.count("summary") == 2 and kinds[-1] == "summary" and "session" in kinds
    assert records[-1]["status"] == "incomplete" and records[-1]["arms"] == []
    assert records[-1]["t"] >= records[-2]["t"]  # after the first session, as every event
