"""One hostile line must not end a command (issue 15, classes 1, 2 and 7): a number of 5000
digits, `inf`, a terminal escape in a log line, a recording whose version is text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anemon.cli import main
from anemon.recording.codec import VERSION
from anemon.recording.writer import make_header

HUGE = "9" * 5000
LOG = (
    "START arm=a compute=ane\n"
    "TRIAL arm=a trial=1 decode_tps=50 gen=256\n"
    f"TRIAL arm=a trial=2 decode_tps={HUGE} gen=256\n"  # line 3
    "TRIAL arm=a trial=3 decode_tps=inf gen=99999999999999999999999\n"  # line 4: two
    "TRIAL arm=a trial=4 decode_tps=52 gen=256\n"
    "END arm=a reason=done trials=4\n"
)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.log"
    path.write_text(LOG)
    return path


WARNED = "3 warning(s), first at line 3"


@pytest.mark.parametrize(
    "argv",
    [
        ["summary", "--format", "table"],
        ["summary", "--format", "md"],
        ["summary", "--format", "csv"],
        ["summary", "--format", "json"],
        ["export", "--format", "csv"],
        ["export", "--format", "json"],
        ["export", "--format", "md"],
        ["replay", "--headless", "--speed", "max"],
    ],
)
def test_a_5000_digit_number_and_inf_are_warnings_not_failures(capsys, log, argv):
    code, out, err = run(capsys, argv[0], str(log), *argv[1:])
    assert code == 0, err
    assert WARNED in err and "Traceback" not in err and "internal error" not in err
    assert "inf" not in out.lower().replace("info", "")


def test_json_outputs_hold_no_nan_or_infinity(capsys, log):
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in JSON output")

    for command in ("summary", "export"):
        code, out, _ = run(capsys, command, str(log), "--format", "json")
        assert code == 0
        json.loads(out, parse_constant=refuse)
    _, out, _ = run(capsys, "export", str(log), "--format", "json")
    assert [row["decode_tps"] for row in json.loads(out)] == [50.0, None, None, 52.0]


def test_warnings_name_the_range(capsys, log):
    code, _, err = run(capsys, "summary", str(log), "--warnings")
    lines = err.splitlines()
    assert code == 0
    assert lines[0] == f"{log}:3: decode_tps='{HUGE[:40]}…': outside 0 to 1e9 tok/s"
    assert lines[1].startswith(f"{log}:4: decode_tps='inf'") and "gen='9999" in lines[1]


def test_headless_shows_a_terminal_escape_as_text(capsys, tmp_path):
    path = tmp_path / "escape.log"
    path.write_text(
        "START arm=a\n"
        "boot \x1b]52;c;aGk=\x07 \x1b[2J done\n"
        "arm=a ERROR: \x1b]8;;http://x\x07link\n"
        "END arm=a reason=done trials=0\n"
    )
    code, out, _ = run(capsys, "replay", str(path), "--headless", "--speed", "max")
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]52;c;aGk=\\x07" in out and "\\x1b]8;;http://x\\x07link" in out


def test_a_recording_with_huge_and_infinite_values_reads(capsys, tmp_path):
    path = tmp_path / "rec.jsonl"
    trial = '{"kind": "trial", "t": 1, "wall": 2, "arm": "a", "decode_tps": 5.0, "gen": 3}'
    lines = [
        json.dumps(make_header("x")),
        trial,
        trial.replace('"gen": 3', '"gen": ' + HUGE),
        trial.replace("5.0", "Infinity"),
        trial.replace("5.0", "1e999"),
    ]
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "export", str(path), "--format", "csv")
    # The header and all four trials: the 5000-digit `gen` is dropped, its line kept.
    assert code == 0 and out.count("\n") == 5 and "inf" not in out
    assert "3 warning(s)" in err


@pytest.mark.parametrize(
    ("version", "found"), [('"2"', '"2" (a string)'), ("2.5", "2.5 (a number)")]
)
def test_a_recording_version_that_is_not_an_integer_is_one_line_exit_2(
    capsys, tmp_path, version, found
):
    path = tmp_path / "rec.jsonl"
    header = json.dumps(make_header("x")).replace(f'"version": {VERSION}', f'"version": {version}')
    path.write_text(header + "\n")
    code, out, err = run(capsys, "summary", str(path))
    assert code == 2 and out == ""
    assert err.startswith(f"anemon: {path}: recording version is {found}, expected an integer")
    assert len(err.strip().splitlines()) == 1
