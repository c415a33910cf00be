"""Bad input: one clear line on stderr, exit 2, never a traceback, never a silent drop."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from anemon.cli import main
from anemon.recording.writer import make_header


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("command", [["summary"], ["export", "--format", "csv"], ["replay",
                                     "--headless"]])  # fmt: skip
def test_missing_file(capsys, tmp_path, command):
    code, _, err = run(capsys, *command, str(tmp_path / "nope.log"))
    assert code == 2 and "no such file" in one_line(err)


def test_directory(capsys, tmp_path):
    code, _, err = run(capsys, "summary", str(tmp_path))
    assert code == 2 and "is a directory" in one_line(err)


def test_unreadable(capsys, tmp_path, monkeypatch):
    path = tmp_path / "locked.log"
    path.write_text("TRIAL arm=a\n")

    def deny(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "open", deny)  # root reads anything; simulate the denial
    code, _, err = run(capsys, "summary", str(path))
    assert code == 2 and "permission denied" in one_line(err)


def test_empty_file(capsys, tmp_path):
    path = tmp_path / "empty.log"
    path.write_text("")
    code, _, err = run(capsys, "summary", str(path))
    assert code == 2 and "empty" in one_line(err)


@pytest.mark.parametrize("data", [bytes(range(256)) * 40, gzip.compress(b"\0\1\2" * 100)])
def test_binary_file(capsys, tmp_path, data):
    path = tmp_path / "model.bin"
    path.write_bytes(data)
    code, _, err = run(capsys, "summary", str(path))
    assert code == 2 and "binary" in one_line(err)


def test_future_recording_version(capsys, tmp_path):
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps(make_header("x") | {"version": 9}) + "\n")
    code, _, err = run(capsys, "summary", str(path))
    assert code == 2 and "newer" in one_line(err) and "upgrade" in err


def test_ten_megabyte_line_is_kept_truncated_and_warned(capsys, tmp_path):
    path = tmp_path / "huge.log"
    path.write_bytes(
        b"TRIAL arm=a decode_tps=5\n" + b"x" * 10_000_000 + b"\nTRIAL arm=a decode_tps=7\n"
    )
    code, out, err = run(capsys, "summary", "--format", "json", str(path))
    assert code == 0
    (arm,) = json.loads(out)
    assert arm["trials"] == 2  # the lines around it are not lost
    assert "1 warning" in err


def test_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["summary", "--format", "xml", "a.log"])
    assert exit_info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_parquet_without_output_file(capsys, tmp_path):
    path = tmp_path / "b.log"
    path.write_text("TRIAL arm=a decode_tps=5\n")
    code, _, err = run(capsys, "export", str(path), "--format", "parquet")
    assert code == 2 and "-o OUT" in one_line(err)


SPEC = Path(__file__).parents[1] / "data" / "spec_example.log"


def test_text_without_bench_records(capsys, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\nnot a bench line\n")
    for command in (["summary"], ["export", "--format", "csv"]):
        code, out, err = run(capsys, *command, str(path))
        assert code == 2 and one_line(err) == f"anemon: no bench records in {path}"
        assert out == ""


def test_recording_without_bench_records(capsys, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text(json.dumps(make_header("x")) + "\n")
    code, out, err = run(capsys, "summary", "--format", "json", str(SPEC), str(path))
    assert code == 2 and one_line(err) == f"anemon: no bench records in {path}"
    assert out == ""  # nothing printed for the good SOURCE before the bad one


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_to_a_missing_directory(capsys, tmp_path, fmt):
    out = tmp_path / "nope" / f"t.{fmt}"
    code, _, err = run(capsys, "export", str(SPEC), "--format", fmt, "-o", str(out))
    assert code == 2 and one_line(err).startswith(f"anemon: cannot write {out}: ")
    assert "no such directory" in err


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_export_to_a_directory(capsys, tmp_path, fmt):
    code, _, err = run(capsys, "export", str(SPEC), "--format", fmt, "-o", str(tmp_path))
    assert code == 2 and one_line(err).startswith(f"anemon: cannot write {tmp_path}: ")
    assert "is a directory" in err


def test_export_to_an_unwritable_directory(capsys, tmp_path, monkeypatch):
    import os

    monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)  # root may write anywhere
    out = tmp_path / "t.csv"
    code, _, err = run(capsys, "export", str(SPEC), "--format", "csv", "-o", str(out))
    assert code == 2 and one_line(err) == f"anemon: cannot write {out}: permission denied"


def test_export_write_that_fails_anyway(capsys, tmp_path, monkeypatch):
    def full(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    out = tmp_path / "t.md"
    code, _, err = run(capsys, "export", str(SPEC), "--format", "md", "-o", str(out))
    assert code == 2 and one_line(err) == f"anemon: cannot write {out}: no space left on device"


@pytest.mark.parametrize(
    "argv", [["summary"], ["summary", "--format", "json"], ["export", "--format", "csv"]]
)
def test_closed_stdout_pipe_ends_quietly(tmp_path, argv):
    """The reader is gone before anemon writes (`| head -0`): no traceback, status 141."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "anemon", *argv, str(SPEC)],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert done.returncode == 141 and done.stderr == ""


def test_a_reader_gone_in_the_middle_of_a_large_output_is_a_closed_pipe(tmp_path):
    """`anemon export X | head -1`: the reader goes while the output is still being written,
    which CPython's buffered write reports only as a short count. Status 141, not 0 with the
    rest of the table silently dropped."""
    import os
    import subprocess
    import sys
    import threading

    log = tmp_path / "long.log"
    trial = "TRIAL arm=a trial={i} warmup=0 t={i} decode_tps=50.5 prompt_tps=2000 gen=256\n"
    log.write_text("START arm=a\n" + "".join(trial.format(i=i) for i in range(1, 20_001)))
    read_end, write_end = os.pipe()

    def head() -> None:  # the first bytes, then gone: the output is far larger than a pipe
        os.read(read_end, 1)
        os.close(read_end)

    reader = threading.Thread(target=head)
    reader.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "anemon", "export", str(log), "--format", "csv"],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60,
        )  # fmt: skip
    finally:
        os.close(write_end)
        reader.join()
    assert done.returncode == 141 and done.stderr == ""


def test_a_terminal_that_hung_up_ends_quietly_as_a_closed_pipe():
    """stdout a terminal whose other end has gone (a closed window): writes fail with EIO;
    as with a closed pipe, no traceback and status 141."""
    import os
    import subprocess
    import sys

    controller, terminal = os.openpty()
    os.close(controller)  # the window closed: the terminal has hung up
    try:
        done = subprocess.run(
            [sys.executable, "-m", "anemon", "summary", str(SPEC)],
            stdout=terminal, stderr=subprocess.PIPE, text=True, timeout=60,
        )  # fmt: skip
    finally:
        os.close(terminal)
    assert done.returncode == 141 and done.stderr == ""
