"""Bad input: one clear line on stderr, exit 2, never a traceback, never a silent drop."""

from __future__ import annotations

import gzip
import io
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
        assert code == 2 and one_line(err).startswith(
            f"anemon: no bench records in {path}: looked for an anemon recording"
        )
        assert out == ""


def test_recording_without_bench_records(capsys, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text(json.dumps(make_header("x")) + "\n")
    code, out, err = run(capsys, "summary", "--format", "json", str(SPEC), str(path))
    assert code == 2 and one_line(err).startswith(
        f"anemon: no bench records in {path}: looked for an anemon recording"
    )
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


class FullDisk(io.StringIO):
    """A file every write to which fails as on a full disk."""

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")


def test_export_write_that_fails_anyway(capsys, tmp_path, monkeypatch):
    opened = Path.open

    def full(self, mode="r", *args, **kwargs):
        return FullDisk() if "w" in mode else opened(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", full)
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


SAMPLE = Path(__file__).parents[2] / "recordings" / "sim-ab-2b.jsonl"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["demo", "--headless", "--speed", "1e5"], "up to 10,000, or max"),
        (["demo", "--headless", "--speed", "nan"], "not a speed"),
        (["watch", "x.log", "--poll", "-1"], "not a poll interval"),
        (["watch", "x.log", "--poll", "nan"], "not a poll interval"),
        (["watch", "x.log", "--poll", "1e-9"], "0.01 to 3600 s"),
    ],
)  # fmt: skip
def test_a_speed_or_poll_that_would_spin_a_core_is_refused(capsys, argv, said):
    """A speed past the simulator's pace (it outran the signal handlers: Ctrl-C could not stop
    it), a poll interval of nothing: usage errors, before anything starts."""
    from anemon.cli import build_parser

    with pytest.raises(SystemExit) as exit_:  # parsed only: accepted, it would run (and spin)
        build_parser(argv).parse_args(argv)
    assert exit_.value.code == 2 and said in one_line(capsys.readouterr().err)


@pytest.mark.parametrize("how", ["--append", "--force"])
def test_watch_will_not_record_onto_the_log_it_watches(capsys, tmp_path, how):
    """Appended to, the log would read its own lines back without end; replaced, it is lost."""
    log = tmp_path / "bench.log"
    log.write_text("START arm=a\nTRIAL arm=a trial=1 warmup=0 decode_tps=50\n")
    import subprocess
    import sys

    before = log.read_bytes()
    done = subprocess.run(  # a process with a timeout: accepted, it would never end
        [sys.executable, "-m", "anemon", "watch", str(log), "--headless", "--record", str(log),
         how], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "is the log being watched" in one_line(done.stderr)
    assert log.read_bytes() == before


def test_export_will_not_write_over_its_source_nor_replace_a_fifo(capsys, tmp_path):
    import os

    source = tmp_path / "session.jsonl"
    source.write_bytes(SAMPLE.read_bytes())
    code, _, err = run(capsys, "export", str(source), "--format", "csv", "-o", str(source))
    assert code == 2 and "it is the SOURCE" in one_line(err)
    assert source.read_bytes() == SAMPLE.read_bytes()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "export", str(source), "--format", "sqlite", "-o", str(fifo))
    assert code == 2 and "not a regular file" in one_line(err)
    assert fifo.is_fifo()


def test_a_compressed_recording_name_is_refused_not_written_plain(capsys, tmp_path):
    target = tmp_path / "new.jsonl.gz"
    code, _, err = run(capsys, "demo", "--headless", "--speed", "max", "--record", str(target))
    assert code == 2 and "written uncompressed" in one_line(err)
    assert not target.exists()


def test_replay_of_a_source_with_no_bench_record_is_refused(capsys, tmp_path):
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("this is garbage {{{ not json\n")
    code, _, err = run(capsys, "replay", "--headless", str(garbage))
    assert code == 2 and "no bench records" in one_line(err)


def test_what_was_typed_reaches_stderr_escaped(capsys, tmp_path):
    """A path or an option holding terminal control sequences: shown, never acted on."""
    code, _, err = run(capsys, "summary", str(tmp_path / "\x1b[31mred.jsonl"))
    assert code == 2 and "\x1b" not in err and "\\x1b[31mred.jsonl: no such file" in err
    with pytest.raises(SystemExit):
        main(["summary", str(SAMPLE), "--x\x1b]0;title\x07"])
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "--x\\x1b]0;title\\x07" in err


def test_an_output_on_a_full_disk_is_one_line_not_an_internal_error(capsys, monkeypatch):
    import errno
    import io
    import sys

    class FullDisk(io.RawIOBase):
        def writable(self) -> bool:
            return True

        def write(self, data: object) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BufferedWriter(FullDisk())))
    assert main(["summary", str(SAMPLE), "--format", "json"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line == "anemon: cannot write the output: No space left on device"


def test_stdout_closed_from_the_start_is_a_closed_pipe(monkeypatch):
    import sys

    monkeypatch.setattr(sys, "stdout", None)
    assert main(["summary", str(SAMPLE), "--format", "json"]) == 141


def test_a_permission_denied_on_the_way_is_one_line(capsys):
    import argparse

    from anemon.cli import _run

    def denied(args: argparse.Namespace) -> int:
        raise PermissionError(13, "Permission denied", "locked/x.csv")

    assert _run(argparse.Namespace(handler=denied, debug=False)) == 2
    line = one_line(capsys.readouterr().err)
    assert line == "anemon: locked/x.csv: permission denied; check its permissions"


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--headless", "--speed", "max", "--no-record"],
        ["run", str(SAMPLE.parent / "plans" / "sim-ab-2b.toml"), "--headless", "--speed", "max",
         "--no-record"],
    ],
    ids=["demo", "run"],
)  # fmt: skip
def test_a_run_whose_reader_goes_stops_quietly_as_a_closed_pipe(argv):
    """`anemon demo --headless | head -1`: the run stops as a signal stops it and exits 141,
    with no traceback (rich's own exit 1 from inside a task printed one; raised from a
    listener, it could leave the run waiting forever: hence the timeout)."""
    import os
    import subprocess
    import sys
    import threading

    read_end, write_end = os.pipe()

    def head() -> None:  # the first line, then gone, as `head -1` does
        with os.fdopen(read_end, "rb") as pipe:
            pipe.readline()

    reader = threading.Thread(target=head)
    reader.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "anemon", *argv], stdout=write_end, stderr=subprocess.PIPE,
            text=True, timeout=120,
        )  # fmt: skip
    finally:
        os.close(write_end)
        reader.join()
    assert done.returncode == 141, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) <= 1


def test_a_recording_that_cannot_be_created_says_why_and_only_what_helps(capsys, tmp_path):
    """A missing folder on the way is no full disk: the advice is another path, not space."""
    target = tmp_path / "missing" / "deeper" / "r.jsonl"
    target.parent.parent.write_text("a file where a folder should be")
    code, _, err = run(capsys, "demo", "--headless", "--speed", "max", "--record", str(target))
    line = one_line(err)
    assert code == 2 and line.endswith("; choose another --record FILE")
    assert "free the disk" not in line


def test_an_unknown_option_points_at_its_commands_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["summary", str(SAMPLE), "--bogus"])
    line = one_line(capsys.readouterr().err)
    assert exit_.value.code == 2
    assert line == "anemon: unrecognized arguments: --bogus (see 'anemon summary --help')"
