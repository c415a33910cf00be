"""One recording, two writers; a power loss; a file where a folder should be (issue 21, part 2):
a second writer is refused while the first records, nothing written is ever written over, and
what was written reaches the disk within SYNC_S without a phase change (a watch)."""

from __future__ import annotations

import errno
import json
import os
import threading
from pathlib import Path

import pytest

from anemon.events import MarkerEvent, TrialEvent
from anemon.recording import writer
from anemon.recording.codec import SESSION_KIND
from anemon.recording.reader import open_source
from anemon.recording.writer import Recorder, RecordingError, make_header
from tests.recorded import wait_for


def trial(i: int) -> TrialEvent:
    return TrialEvent(t=float(i), wall=float(i), arm="a", line=f"TRIAL arm=a trial={i}", trial=i)


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("mode", ["append", "replace"])
def test_a_second_writer_is_refused_while_the_first_records(tmp_path, mode):
    """--record X in one session, --record X --append (or --force) in another: the second is
    one clear error, and the first's lines are all there, once each."""
    path = tmp_path / "shared.jsonl"
    first = Recorder(path, make_header("first"))
    for i in range(3):
        first.write(trial(i))
    with pytest.raises(RecordingError) as refused:
        Recorder(path, make_header("second"), mode=mode)
    assert str(refused.value) == (
        f"{path}: another session is recording to it; wait for it to end, or --record another FILE"
    )
    for i in range(3, 6):
        first.write(trial(i))
    first.close()
    assert [r.get("trial") for r in records(path)] == [None, 0, 1, 2, 3, 4, 5]
    with Recorder(path, make_header("second"), mode="append") as second:  # the lock went
        second.write(trial(6))
    assert [r.get("kind") for r in records(path)][7:] == [SESSION_KIND, "trial"]


def test_a_writer_never_writes_over_lines_another_appended(tmp_path):
    """Where nothing is locked (Windows, a file system without locks) or a script adds to
    the file (`>>`), every writer appends: no one's lines are written over."""
    path = tmp_path / "shared.jsonl"
    with Recorder(path, make_header("first")) as first:
        first.write(trial(0))
        with path.open("a") as other:
            other.write(json.dumps({"kind": "marker", "t": 0.5, "note": "other"}) + "\n")
        first.write(trial(1))
    assert [r.get("trial", r.get("note")) for r in records(path)[1:]] == [0, "other", 1]
    reader = open_source(path)
    assert [e.kind for e in reader] == ["trial", "marker", "trial"] and reader.warnings == 0


def test_a_file_replaced_between_the_open_and_the_lock_is_opened_again(tmp_path, monkeypatch):
    """A claimed file its owner discards (removed under its lock) is not written to: the name
    is opened again, and what this session writes is at the name."""
    path = tmp_path / "r.jsonl"
    path.write_text("")
    lock = writer._lock
    calls = []

    def discarded_first(file):
        calls.append(file)
        if len(calls) == 1:
            path.unlink()  # the owner removed it, then let its lock go
        return lock(file)

    monkeypatch.setattr(writer, "_lock", discarded_first)
    with Recorder(path, make_header("x"), mode="append") as recorder:
        recorder.write(trial(0))
    assert len(calls) == 2
    assert [r.get("trial") for r in records(path)] == [None, 0]


@pytest.fixture
def synced(monkeypatch):
    """fsync calls, as (descriptor, the file's size at the call), with SYNC_S made short;
    `synced.reached(size)` waits (a hang guard only) until an fsync covered `size` bytes."""

    class Synced:
        def __init__(self) -> None:
            self.calls: list[tuple[int, int]] = []
            self.changed = threading.Condition()

        def reached(self, size: int) -> bool:
            with self.changed:
                return self.changed.wait_for(
                    lambda: any(s >= size for _, s in self.calls), timeout=30
                )

    seen = Synced()
    fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        size = os.fstat(fd).st_size
        fsync(fd)
        with seen.changed:
            seen.calls.append((fd, size))
            seen.changed.notify_all()

    monkeypatch.setattr(writer, "SYNC_S", 0.01, raising=False)
    monkeypatch.setattr(os, "fsync", recording_fsync)
    return seen


def test_a_session_without_phase_changes_reaches_the_disk_before_it_closes(tmp_path, synced):
    """A watch has no phase changes: its events were fsynced only at close, so a power loss
    could take the whole session. Now every event is on disk within SYNC_S."""
    path = tmp_path / "watch.jsonl"
    recorder = Recorder(path, make_header("watch"))
    try:
        for i in range(50):
            recorder.write(trial(i))
        written = path.stat().st_size
        assert synced.reached(written), "nothing fsynced the events while the session ran"
        assert len(records(path)) == 51
    finally:
        recorder.close()


@pytest.mark.parametrize("then", ["write", "close"])
def test_an_fsync_that_fails_in_the_background_stops_the_session_once(tmp_path, monkeypatch, then):
    """Said at the next write, or at close (where the kernel, having reported the error once,
    may let the last fsync succeed)."""
    path = tmp_path / "watch.jsonl"
    monkeypatch.setattr(writer, "SYNC_S", 0.01)
    recorder = Recorder(path, make_header("watch"))
    told: list[RecordingError] = []
    recorder.on_error.append(told.append)
    fsync, failures = os.fsync, [OSError(errno.EIO, os.strerror(errno.EIO))]

    def failing_once(fd: int) -> None:
        if failures:
            raise failures.pop()
        fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_once)
    recorder.write(trial(0))
    syncer = recorder._syncer
    assert syncer is not None and wait_for(lambda: syncer.error is not None)
    if then == "write":
        recorder.write(MarkerEvent(t=1.0, wall=1.0, note="not written"))
    with pytest.raises(RecordingError) as raised:
        recorder.close()
    message = f"recording: cannot write {path} (Input/output error); the session stopped"
    assert [str(e) for e in told] == [message] and str(raised.value) == message
    assert [r.get("trial") for r in records(path)] == [None, 0]  # what was written stays


def test_the_fsync_thread_ends_with_the_recording(tmp_path):
    recorder = Recorder(tmp_path / "r.jsonl", make_header("x"))
    recorder.write(trial(0))
    running = {t.name for t in threading.enumerate()}
    recorder.close()
    assert "anemon-fsync" in running
    assert "anemon-fsync" not in {t.name for t in threading.enumerate()}


def test_a_file_where_a_folder_should_be_is_said_so(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    with pytest.raises(RecordingError) as refused:
        Recorder(notes / "run.jsonl", make_header("x"))
    assert str(refused.value) == (
        f"cannot record to {notes / 'run.jsonl'}: {notes} is not a folder; "
        "choose another --record FILE"
    )
    assert notes.read_text() == "mine\n"
