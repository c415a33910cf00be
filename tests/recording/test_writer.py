"""The Recorder never overwrites, never collides, keeps names inside their folder, and a full
disk is one error with what was written intact (issue 15, classes 3, 4 and 5)."""

from __future__ import annotations

import errno
import gzip
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.events import MarkerEvent, PhaseEvent, TrialEvent
from anemon.paths import MAX_NAME, safe_name
from anemon.recording.codec import SESSION_KIND
from anemon.recording.reader import open_source
from anemon.recording.writer import (
    Recorder,
    RecordingError,
    default_path,
    make_header,
)

TRIAL = TrialEvent(t=5.0, wall=2.0, arm="a", line="TRIAL arm=a", trial=1, decode_tps=70.0)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- names -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tag", ["../../etc/x", "/abs", "a/b", "..", ".", "a\0b", "t" * 300, "", "\x1b[2J", "a\\b"]
)
def test_a_default_name_stays_in_its_folder(tmp_path, tag):
    path = default_path(tag, tmp_path)
    assert path.parent == tmp_path
    assert path.name.endswith(".jsonl") and not path.name.startswith(".")
    assert len(path.name) <= MAX_NAME + len("-20250101-000000.jsonl")
    with Recorder(path, make_header("x"), unique=True) as recorder:
        recorder.write(TRIAL)
    assert recorder.path.parent == tmp_path and recorder.path.exists()


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_safe_name_is_one_plain_entry(text):
    name = safe_name(text)
    assert name and name not in (".", "..") and not name.startswith(".")
    assert "/" not in name and "\\" not in name and "\0" not in name
    assert len(name) <= MAX_NAME and name == Path(name).name
    assert all(c.isascii() and (c.isalnum() or c in "._-") for c in name)


def test_safe_name_keeps_a_plain_tag():
    assert safe_name("sustain-1b_v2.3") == "sustain-1b_v2.3"


def test_default_names_in_one_second_never_collide(tmp_path):
    path = default_path("t", tmp_path)
    recorders = [Recorder(path, make_header(str(i)), unique=True) for i in range(5)]
    for r in recorders:
        r.close()
    names = [r.path.name for r in recorders]
    assert len(set(names)) == 5
    assert names[1:] == [f"{path.stem}-{n}.jsonl" for n in range(2, 6)]
    assert [lines(r.path)[0]["source"] for r in recorders] == ["0", "1", "2", "3", "4"]


# -- an existing file ------------------------------------------------------------------------


def test_an_existing_file_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("precious\n")
    with pytest.raises(RecordingError, match=r"r\.jsonl exists; use --append to add to it or "
                       r"--force to replace it$"):  # fmt: skip
        Recorder(path, make_header("x"))
    assert path.read_text() == "precious\n"


def test_replace_writes_over_it(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("old\n")
    with Recorder(path, make_header("x"), mode="replace") as recorder:
        recorder.write(TRIAL)
    assert [r.get("kind") for r in lines(path)] == [None, "trial"]


def test_a_claimed_recording_that_never_began_is_removed_and_a_replaced_one_kept(tmp_path):
    new = tmp_path / "new.jsonl"
    Recorder(new).close()
    assert not new.exists()
    old = tmp_path / "old.jsonl"
    old.write_text("kept\n")
    Recorder(old, mode="replace").close()
    assert old.read_text() == "kept\n"


def test_append_adds_a_session_that_readers_read(tmp_path):
    path = tmp_path / "r.jsonl"
    with Recorder(path, make_header("first")) as first:
        first.write(TRIAL)
    with Recorder(path, make_header("second"), mode="append") as second:
        assert second.appending
        second.write(PhaseEvent(t=1.0, wall=3.0, phase="running"))
        second.write(TRIAL)
    records = lines(path)
    assert records[0]["source"] == "first"
    assert records[2]["kind"] == SESSION_KIND and records[2]["source"] == "second"
    assert records[2]["t"] == 5.0  # the appended session goes on after the last event
    assert [r["t"] for r in records[3:]] == [6.0, 10.0]
    reader = open_source(path)
    events = list(reader)
    assert [e.kind for e in events] == ["trial", "unknown", "phase", "trial"]
    assert reader.warnings == 0 and [e.t for e in events] == sorted(e.t for e in events)


def test_append_after_a_torn_line_starts_on_a_new_line(tmp_path):
    path = tmp_path / "r.jsonl"
    with Recorder(path, make_header("first")) as first:
        first.write(TRIAL)
    with path.open("a") as f:
        f.write('{"kind":"tri')  # killed mid-write
    with Recorder(path, make_header("second"), mode="append") as second:
        second.write(TRIAL)
    text = path.read_text().splitlines()
    assert text[2] == '{"kind":"tri' and json.loads(text[3])["kind"] == SESSION_KIND
    assert [e.kind for e in open_source(path)] == ["trial", "unknown", "trial"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"TRIAL arm=a\n", "a raw log, not an anemon recording"),
        (gzip.compress(json.dumps(make_header("x")).encode() + b"\n"), "compressed"),
    ],
)
def test_append_refuses_what_is_not_a_plain_recording(tmp_path, content, message):
    path = tmp_path / "r.jsonl"
    path.write_bytes(content)
    with pytest.raises(RecordingError, match=message):
        Recorder(path, make_header("x"), mode="append")
    assert path.read_bytes() == content


def test_append_to_a_missing_file_makes_a_new_recording(tmp_path):
    path = tmp_path / "r.jsonl"
    with Recorder(path, make_header("x"), mode="append") as recorder:
        recorder.write(TRIAL)
    assert lines(path)[0]["format"] == "anemon-recording"


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(RecordingError, match="is a directory"):
        Recorder(tmp_path, make_header("x"), mode="replace")


# -- a full disk -----------------------------------------------------------------------------


class FullAfter:
    """A file that takes `room` more writes, then fails as a full disk does."""

    def __init__(self, file, room: int) -> None:
        self.file = file
        self.room = room

    def write(self, text: str) -> int:
        if self.room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= 1
        return self.file.write(text)

    def __getattr__(self, name):
        return getattr(self.file, name)


def test_a_full_disk_is_one_error_and_the_earlier_lines_stay(tmp_path):
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path, make_header("x"))
    told = []
    recorder.on_error.append(told.append)
    recorder.write(TRIAL)
    recorder._file = FullAfter(recorder._file, 1)
    recorder.write(MarkerEvent(t=6.0, wall=3.0, note="fits"))
    recorder.write(TRIAL)  # no room: told, not raised (the writer is whoever emitted)
    recorder.write(TRIAL)  # nothing more is written
    assert len(told) == 1
    assert str(told[0]) == f"recording: no space left on device writing {path}; the session stopped"
    with pytest.raises(RecordingError) as e:
        recorder.close()
    assert e.value is told[0]
    recorder.close()  # said once
    assert [r.get("kind") for r in lines(path)] == [None, "trial", "marker"]


@pytest.mark.parametrize("log", ["Documents/..", "Documents/.", "a/../../x.log", "/"])
def test_a_plan_runs_mirror_stays_in_its_folder(log):
    from anemon.clock import RealClock
    from anemon.control.plan import parse_plan
    from anemon.feeds.plan import PlanRun

    plan = parse_plan(f'tag = "x"\n[app]\nlog = "{log}"\n[[arms]]\nname = "minicpm5_1b_ane_pal8"\n')
    feed = PlanRun(plan, RealClock())
    try:
        mirror = feed.controller.mirror
        assert mirror.parent == feed._mirror_dir and mirror.name not in ("", ".", "..")
    finally:
        feed.close()
