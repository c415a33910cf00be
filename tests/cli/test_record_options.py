"""--record onto an existing file, --append, --force, and a full disk while recording (issue
15, classes 3 and 4), through the command line."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from anemon.cli import main
from anemon.recording.codec import SESSION_KIND
from anemon.recording.reader import open_source
from anemon.recording.writer import Recorder
from tests.control.helpers import one_arm
from tests.recorded import recorded, wait_for

SHORT = one_arm("short")
EXISTS = "exists; use --append to add to it or --force to replace it\n"


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    path = tmp_path / "short.toml"
    path.write_text(SHORT)
    return path


def trial_line(i: int) -> str:
    return f"TRIAL arm=a trial={i} warmup=0 t={i} decode_tps=50 gen=64\n"


def kinds(path: Path) -> list[str | None]:
    return [json.loads(line).get("kind") for line in path.read_text().splitlines()]


@pytest.mark.parametrize("command", ["run", "demo", "watch"])
def test_record_onto_an_existing_file_is_refused_and_leaves_it(tmp_path, plan, capsys, command):
    record = tmp_path / "precious.jsonl"
    record.write_text("precious\n")
    (tmp_path / "m").write_text("START arm=a\n")
    args = {"run": ["run", str(plan)], "demo": ["demo"], "watch": ["watch", str(tmp_path / "m")]}
    code = main([*args[command], "--headless", "--speed", "max", "--record", str(record)]
                if command != "watch" else
                [*args[command], "--headless", "--record", str(record)])  # fmt: skip
    assert code == 2
    assert capsys.readouterr().err == f"anemon: {record} {EXISTS}"
    assert record.read_text() == "precious\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "--append"], "--append needs --record FILE"),
        (["demo", "--force"], "--force needs --record FILE"),
        (["demo", "--append", "--force", "--record", "x.jsonl"], "exclude each other"),
    ],
)
def test_append_and_force_that_cannot_apply_are_usage_errors(tmp_path, capsys, argv, message):
    os.chdir(tmp_path)
    assert main([*argv, "--headless", "--speed", "max"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "anemon-recordings").exists() and not (tmp_path / "x.jsonl").exists()


def test_force_replaces_and_append_adds_a_readable_session(tmp_path, plan, capsys):
    record = tmp_path / "r.jsonl"
    record.write_text("old\n")
    run = ["run", str(plan), "--headless", "--speed", "max", "--record", str(record)]
    assert main([*run, "--force"]) == 0
    first = kinds(record)
    assert first[0] is None and not record.read_text().startswith("old")
    assert main([*run, "--append"]) == 0
    assert f"appending to {record}" in capsys.readouterr().err
    both = kinds(record)
    assert both[: len(first)] == first and both[len(first)] == SESSION_KIND
    reader = open_source(record)
    events = list(reader)
    assert reader.warnings == 0
    times = [e.t for e in events]
    assert times == sorted(times)  # the second session goes on after the first
    assert main(["summary", str(record), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["arm"] for r in rows] == ["minicpm5_1b_ane_pal8"]


def test_two_runs_in_one_second_record_to_two_files(tmp_path, plan):
    os.chdir(tmp_path)
    run = ["run", str(plan), "--headless", "--speed", "max"]
    assert main(run) == 0 and main(run) == 0
    made = sorted(p.name for p in (tmp_path / "anemon-recordings").iterdir())
    assert len(made) == 2 and all(name.startswith("short-") for name in made)


class FullDisk:
    """A recording file with room for `room` more writes, then ENOSPC (a full disk)."""

    def __init__(self, file, room: int) -> None:
        self.file, self.room = file, room

    def write(self, text: str) -> int:
        if self.room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= 1
        return self.file.write(text)

    def __getattr__(self, name):
        return getattr(self.file, name)


def test_a_full_disk_ends_the_run_with_one_line_and_exit_2(tmp_path, plan, capsys, monkeypatch):
    record = tmp_path / "r.jsonl"
    begin = Recorder.begin

    def begin_then_fill(self, header):
        begin(self, header)
        self._file = FullDisk(self._file, 20)

    monkeypatch.setattr(Recorder, "begin", begin_then_fill)
    code = main(["run", str(plan), "--headless", "--speed", "max", "--record", str(record)])
    err = capsys.readouterr().err
    assert code == 2
    line = f"anemon: recording: no space left on device writing {record}; the session stopped\n"
    assert err.endswith(line) and err.count("no space left") == 1
    written = record.read_text().splitlines()
    assert len(written) == 21  # the header and the 20 events that fitted, each whole
    assert all(json.loads(text) for text in written)


# -- issue 21, part 2: one recording, two sessions; files compared by identity ---------------


def watch_argv(mirror: Path, *record: str) -> list[str]:
    return [sys.executable, "-m", "anemon", "watch", str(mirror), "--headless", "--poll", "0.1",
            "--record", *record]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("how", ["--append", "--force"])
def test_a_second_session_on_a_recording_being_written_is_refused(tmp_path, how):
    """`watch --record X` in one process, `--record X --append` (or `--force`) in another: the
    second overwrote the first's lines (or garbled them). Now it is one line, exit 2, and
    every trial the first read is in X once."""
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first_log.write_text("".join(trial_line(i) for i in range(5)))
    second_log.write_text("".join(trial_line(i) for i in range(100, 105)))
    record = tmp_path / "shared.jsonl"
    first = subprocess.Popen(watch_argv(first_log, str(record)), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert wait_for(lambda: len(recorded(record, "trial")) == 5), "the first never recorded"
        second = subprocess.run(  # a timeout: accepted, the watch would never end
            watch_argv(second_log, str(record), how), capture_output=True, text=True, timeout=60
        )  # fmt: skip
        with first_log.open("a") as log:
            log.write("".join(trial_line(i) for i in range(5, 10)))
        assert wait_for(lambda: len(recorded(record, "trial")) == 10)
    finally:
        first.send_signal(signal.SIGTERM)
        _, err = first.communicate(timeout=30)
    assert first.returncode == 0, err
    assert second.returncode == 2 and second.stderr == (
        f"anemon: {record}: another session is recording to it; wait for it to end, "
        "or --record another FILE\n"
    )
    assert [e["trial"] for e in recorded(record, "trial")] == list(range(10))
    assert SESSION_KIND not in kinds(record)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["--append", "--force"])
def test_watch_will_not_record_onto_its_log_under_another_name(tmp_path, how):
    """A hard link is the same file: replaced, the bench log was truncated; appended to, it
    read its own lines back."""
    log = tmp_path / "bench.log"
    log.write_text("START arm=a\nTRIAL arm=a trial=1 warmup=0 decode_tps=50\n")
    link = tmp_path / "link.jsonl"
    os.link(log, link)
    before = log.read_bytes()
    done = subprocess.run(watch_argv(log, str(link), how), capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 2 and done.stderr == (
        f"anemon: {link}: is the log being watched; --record another file\n"
    )
    assert log.read_bytes() == before


def test_a_record_path_through_a_file_says_it_is_not_a_folder(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    record = notes / "run.jsonl"
    assert main(["demo", "--headless", "--speed", "max", "--record", str(record)]) == 2
    assert capsys.readouterr().err == (
        f"anemon: cannot record to {record}: {notes} is not a folder; "
        "choose another --record FILE\n"
    )
    assert notes.read_text() == "mine\n"
