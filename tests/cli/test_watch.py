"""`anemon watch --headless --record` against a hostile mirror: every trial exactly once."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.recorded import recorded, wait_for

pytestmark = pytest.mark.slow
TRIALS = 300


def line(i: int) -> str:
    return f"TRIAL arm=a trial={i} warmup=0 t={i * 4.5} decode_tps={50 + i % 7} gen=256\n"


def refresh(path: Path, content: str, how: str) -> None:
    """Put `content` (the whole log so far) in place the way some mirroring tool would."""
    if how == "append":
        old = path.read_text() if path.exists() else ""
        with path.open("a") as f:
            f.write(content[len(old) :])
    elif how == "rewrite":
        with path.open("r+" if path.exists() else "w") as f:
            f.write(content)
    elif how == "atomic":
        tmp = path.with_suffix(".tmp")
        tmp.write_text(content)
        os.replace(tmp, path)
    elif how == "truncate":
        path.write_text("")
        path.write_text(content)
    elif how == "recreate":
        path.unlink(missing_ok=True)
        path.write_text(content)


def trials(recording: Path) -> list[int]:
    return [event["trial"] for event in recorded(recording, "trial")]


def start_watch(mirror: Path, recording: Path) -> subprocess.Popen[str]:
    """`anemon watch MIRROR --headless --record RECORDING` as a separate process."""
    return subprocess.Popen(
        [sys.executable, "-m", "anemon", "watch", str(mirror), "--headless", "--poll", "0.1",
         "--record", str(recording)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_hostile_mirror_every_trial_exactly_once(tmp_path):
    mirror, recording = tmp_path / "mirror.log", tmp_path / "rec.jsonl"
    proc = start_watch(mirror, recording)
    try:
        rng = random.Random(7)
        content = ""
        for i in range(TRIALS):
            content += line(i)
            if rng.random() < 0.3:  # let some lines pile up between refreshes
                continue
            how = rng.choice(["append", "append", "rewrite", "atomic", "truncate", "recreate"])
            refresh(mirror, content, how)
            time.sleep(rng.choice([0.0, 0.002, 0.01]))
        refresh(mirror, content, "atomic")
        assert wait_for(lambda: TRIALS - 1 in trials(recording)), "watch fell behind"
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert trials(recording) == list(range(TRIALS))
    kinds = [json.loads(x)["kind"] for x in recording.read_text().splitlines()[1:]]
    assert "reset" not in kinds
    assert "recording to" in err
    assert "trial 299" in out  # the headless progress, and the summary at the end
    assert any("│" in row and " 300 " in row for row in out.splitlines())  # the table's trials


def test_sigterm_reads_pending_lines_and_closes_the_recording(tmp_path):
    mirror, recording = tmp_path / "mirror.log", tmp_path / "rec.jsonl"
    mirror.write_text("".join(line(i) for i in range(5)))
    proc = start_watch(mirror, recording)
    try:
        assert wait_for(lambda: len(trials(recording)) == 5)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert trials(recording) == list(range(5))
    assert recording.read_text().endswith("\n")


def test_a_mirror_that_does_not_exist_yet_is_waited_for_and_said_so(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "anemon", "watch", str(tmp_path / "later.log"), "--headless",
         "--no-record"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        first = proc.stderr.readline()  # printed before anything is watched
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert "later.log does not exist yet; waiting for it" in first
    assert proc.returncode == 0


def test_a_mirror_deleted_as_watch_opens_it_is_waited_for(tmp_path, monkeypatch, capsys):
    """A mirroring tool that deletes and writes the log again may do so just as watch starts:
    the file seen a moment ago is gone when opened. That is a mirror being refreshed, not a
    missing file (it exited "no such file")."""
    from anemon.cli import build_parser
    from anemon.cli.watch import _check

    mirror = tmp_path / "mirror.log"
    mirror.write_text(line(0))
    real_open = Path.open

    def deleted_first(path: Path, *args, **kwargs):
        if path == mirror:
            mirror.unlink(missing_ok=True)  # the tool's delete, just before watch's open
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(Path, "open", deleted_first)
    words = ["watch", str(mirror), "--headless", "--no-record"]
    _check(build_parser(words).parse_args(words))
    assert "mirror.log does not exist yet; waiting for it" in capsys.readouterr().err
