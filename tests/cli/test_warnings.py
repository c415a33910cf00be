"""Warnings name their lines; `--warnings` lists them; `--debug` anywhere, statuses unchanged;
`watch` refuses a binary file in one line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from anemon.cli import main
from anemon.recording.reader import MAX_LISTED, LineWarning, open_source
from anemon.recording.writer import make_header

LOG = (
    "START arm=a compute=ane\n"
    "TRIAL arm=a decode_tps=5 gen=256\n"
    "TRIAL arm=a decode_tps=fast gen=256\n"  # line 3: one bad value
    "TRIAL arm=a decode_tps=7 gen=lots thermal=boiling\n"  # line 4: two
    "END arm=a\n"
)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def recording(tmp_path: Path, *records: object, name: str = "rec.jsonl") -> Path:
    path = tmp_path / name
    lines = [json.dumps(make_header("x"))] + [
        r if isinstance(r, str) else json.dumps(r) for r in records
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


TRIAL = {"kind": "trial", "t": 1, "wall": 2, "arm": "a", "decode_tps": 5.0, "gen": 256}


def test_a_raw_logs_bad_values_are_listed_with_their_line(tmp_path):
    path = tmp_path / "bench.log"
    path.write_text(LOG)
    reader = open_source(path)
    list(reader)
    assert reader.warnings == 3
    assert [w.line for w in reader.listed] == [3, 4]
    assert reader.listed[0] == LineWarning(3, "decode_tps='fast': did not parse")
    assert "gen='lots'" in reader.listed[1].what and "thermal='boiling'" in reader.listed[1].what


def test_a_recordings_bad_lines_and_damaged_fields_are_listed_with_their_line(tmp_path):
    path = recording(
        tmp_path,
        TRIAL,  # line 2
        "{not json",  # line 3
        "",  # line 4, blank: not a warning
        "[1, 2]",  # line 5
        TRIAL | {"decode_tps": "fast"},  # line 6
        TRIAL | {"t": "soon", "thermal": "boiling"},  # line 7: two
    )
    reader = open_source(path)
    assert len(list(reader)) == 3
    assert reader.warnings == 5
    assert [w.line for w in reader.listed] == [3, 5, 6, 7, 7]
    assert "not JSON" in reader.listed[0].what
    assert reader.listed[2].what == 'trial: decode_tps="fast" is not a number: left out'
    assert 't="soon"' in reader.listed[3].what and "thermal" in reader.listed[4].what


def test_a_too_long_line_is_listed(tmp_path):
    path = tmp_path / "huge.log"
    path.write_bytes(b"TRIAL arm=a decode_tps=5\n" + b"x" * 2_000_000 + b"\n")
    reader = open_source(path)
    list(reader)
    (warning,) = reader.listed
    assert warning.line == 2 and "cut off" in warning.what


def test_the_list_is_bounded_the_count_is_not(tmp_path):
    path = tmp_path / "many.log"
    path.write_text("TRIAL arm=a decode_tps=x\n" * (MAX_LISTED + 5))
    reader = open_source(path)
    list(reader)
    assert reader.warnings == MAX_LISTED + 5 and len(reader.listed) == MAX_LISTED


def test_good_lines_list_nothing(tmp_path):
    path = tmp_path / "good.log"
    path.write_text(LOG.replace("fast", "6").replace(" gen=lots thermal=boiling", ""))
    reader = open_source(path)
    list(reader)
    assert reader.warnings == 0 and reader.listed == []


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_summary_counts_warnings_with_the_first_line(capsys, tmp_path, fmt):
    path = tmp_path / "bench.log"
    path.write_text(LOG)
    code, out, err = run(capsys, "summary", "--format", fmt, str(path))
    assert code == 0 and "warning(s)" not in out
    assert err == (f"anemon: {path}: 3 warning(s), first at line 3 (use --warnings to list them)\n")


def test_summary_warnings_lists_each(capsys, tmp_path):
    path = tmp_path / "bench.log"
    path.write_text(LOG)
    code, _, err = run(capsys, "summary", "--format", "json", str(path), "--warnings")
    lines = err.splitlines()
    assert code == 0 and lines[0] == f"{path}:3: decode_tps='fast': did not parse"
    assert lines[1].startswith(f"{path}:4: gen='lots'")
    assert lines[2] == f"anemon: {path}: 3 warning(s)"
    assert len(lines) == 3


def test_export_of_a_damaged_recording_counts_and_lists(capsys, tmp_path):
    path = recording(tmp_path, TRIAL, TRIAL | {"gen": "many"})
    code, out, err = run(capsys, "export", str(path), "--format", "csv")
    assert code == 0 and out.count("\n") == 3  # header and both trials: only the field dropped
    assert err == f"anemon: {path}: 1 warning(s), first at line 3 (use --warnings to list them)\n"
    code, _, err = run(capsys, "export", str(path), "--format", "csv", "--warnings")
    assert err.splitlines()[0] == f'{path}:3: trial: gen="many" is not a whole number: left out'


def test_headless_replay_prints_the_count_at_the_end(capsys, tmp_path):
    path = tmp_path / "bench.log"
    path.write_text(LOG)
    code, out, err = run(capsys, "replay", str(path), "--headless", "--speed", "max")
    assert code == 0 and out
    assert err.splitlines()[-1] == (
        f"anemon: {path}: 3 warning(s), first at line 3 (use --warnings to list them)"
    )


def test_no_warnings_nothing_said(capsys, tmp_path):
    path = recording(tmp_path, TRIAL)
    code, _, err = run(capsys, "summary", str(path), "--warnings")
    assert code == 0 and err == ""


@pytest.mark.parametrize(
    "argv",
    [["--debug", "summary", "{}"], ["summary", "{}", "--debug"], ["summary", "--debug", "{}"]],
)
def test_debug_before_or_after_the_command_same_status(capsys, tmp_path, argv):
    missing = str(tmp_path / "nope.log")
    code, _, err = run(capsys, "summary", missing)
    assert code == 2 and "Traceback" not in err
    code, _, err = run(capsys, *(missing if a == "{}" else a for a in argv))
    assert code == 2  # the same status; the traceback is allowed
    assert "Traceback" in err and err.splitlines()[-1] == f"anemon: {missing}: no such file"


def test_debug_after_the_command_is_the_same_flag(tmp_path):
    from anemon.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["summary", "x", "--debug"]).debug is True
    assert parser.parse_args(["--debug", "summary", "x"]).debug is True
    assert parser.parse_args(["summary", "x"]).debug is False


def test_an_unexpected_error_is_one_line_without_debug(capsys, tmp_path, monkeypatch):
    import anemon.cli.summary as summary

    def broken(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(summary, "run", broken)
    code, _, err = run(capsys, "summary", "x")
    assert code == 1 and len(err.strip().splitlines()) == 1 and "a bug" in err
    assert "Traceback" not in err
    code, _, err = run(capsys, "summary", "x", "--debug")
    assert code == 1 and "Traceback" in err


@pytest.mark.parametrize(
    "data", [bytes(range(256)) * 40, gzip.compress(b"TRIAL arm=a\n" * 10), b"START\n\0\0"]
)
def test_watch_refuses_a_binary_file_in_one_line(capsys, tmp_path, data):
    path = tmp_path / "model.bin"
    path.write_bytes(data)
    record = tmp_path / "rec.jsonl"
    code, out, err = run(capsys, "watch", str(path), "--headless", "--record", str(record))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "binary" in lines[0] and "Traceback" not in err
    assert not record.exists()  # refused before anything started
