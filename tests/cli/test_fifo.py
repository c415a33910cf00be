"""A pipe or a FIFO as a SOURCE: read in one pass, never seeked or re-opened. `watch` refuses
a FIFO in one line (it follows a file something refreshes)."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from anemon.cli import main

LOG = "".join(
    f"TRIAL arm={arm} trial={i} decode_tps={50 + i}.5 thermal=fair\n"
    for arm in ("a", "b")
    for i in range(5)
)


def anemon(*argv: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "anemon", *argv], input=stdin, capture_output=True, timeout=60
    )


def test_summary_reads_a_log_piped_to_dev_stdin() -> None:
    done = anemon("summary", "/dev/stdin", "--format", "csv", stdin=LOG.encode())
    assert done.returncode == 0, done.stderr
    rows = done.stdout.decode().splitlines()
    assert len(rows) == 3 and rows[1].split(",")[1:3] == ["a", "5"]


def test_summary_reads_a_gzip_recording_piped_to_dev_stdin() -> None:
    recording = Path(__file__).parents[2] / "recordings" / "sim-sustain-1b-v2.jsonl"
    whole = anemon("summary", str(recording), "--format", "json")
    piped = anemon(
        "summary", "/dev/stdin", "--format", "json", stdin=gzip.compress(recording.read_bytes())
    )
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.replace(b"/dev/stdin", str(recording).encode()) == whole.stdout


def write_later(fifo: Path, data: bytes) -> threading.Thread:
    def writer() -> None:
        with open(fifo, "wb") as file:  # blocks until the reader opens its end
            for start in range(0, len(data), 97):
                file.write(data[start : start + 97])
                file.flush()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("compress", [False, True])
def test_summary_reads_a_fifo_while_another_process_writes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, compress: bool
) -> None:
    fifo = tmp_path / "bench.fifo"
    os.mkfifo(fifo)
    data = gzip.compress(LOG.encode()) if compress else LOG.encode()
    thread = write_later(fifo, data)
    assert main(["summary", str(fifo), "--format", "csv"]) == 0
    thread.join(timeout=10)
    rows = capsys.readouterr().out.splitlines()
    assert [row.split(",")[1:3] for row in rows[1:]] == [["a", "5"], ["b", "5"]]


def test_replay_plays_a_fifo_to_its_end(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    fifo = tmp_path / "bench.fifo"
    os.mkfifo(fifo)
    thread = write_later(fifo, LOG.encode())
    assert main(["replay", "--headless", "--speed", "max", str(fifo)]) == 0
    thread.join(timeout=10)
    assert "Traceback" not in capsys.readouterr().err


def test_watch_refuses_a_fifo_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fifo = tmp_path / "bench.fifo"
    os.mkfifo(fifo)
    assert main(["watch", str(fifo), "--headless", "--no-record"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a regular file" in err[0] and "FIFO" in err[0]
