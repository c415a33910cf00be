"""The SOURCE reader against hostile files: NUL bytes, a byte-order mark, CR-only endings,
binary magic numbers, damaged gzip, unsorted recordings and events without a time."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from anemon.cli import main
from anemon.errors import SourceError
from anemon.events import StartEvent, TextEvent, TrialEvent
from anemon.recording.reader import is_binary, open_source
from anemon.recording.writer import make_header
from anemon.sources.replay import Replayer

RECORDINGS = Path(__file__).parents[2] / "recordings"
LOG = b"START arm=a\nTRIAL arm=a trial=1 decode_tps=50.5\nTRIAL arm=a trial=2 decode_tps=51.5\n"


def trials(path: Path) -> list[int | None]:
    return [e.trial for e in open_source(path) if isinstance(e, TrialEvent)]


# -- text that looks odd is still text ---------------------------------------------------------


def test_nul_bytes_in_a_log_are_data_not_binary(tmp_path: Path) -> None:
    path = tmp_path / "nul.log"
    path.write_bytes(LOG + b"TRIAL arm=a trial=3 note=\0\0\0 decode_tps=52\n" + LOG)
    events = list(open_source(path))
    assert [e.trial for e in events if isinstance(e, TrialEvent)] == [1, 2, 3, 1, 2]
    assert "\0" in events[3].line  # kept as data, shown escaped where a person reads it


def test_a_bom_does_not_hide_a_recordings_header(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    trial = {"kind": "trial", "t": 1.0, "wall": 2.0, "arm": "a", "trial": 1, "decode_tps": 5.0}
    path.write_bytes(b"\xef\xbb\xbf" + (json.dumps(make_header("x")) + "\n").encode()
                     + (json.dumps(trial) + "\n").encode())  # fmt: skip
    reader = open_source(path)
    assert reader.kind == "recording"
    (event,) = list(reader)
    assert isinstance(event, TrialEvent) and event.trial == 1 and reader.warnings == 0


def test_a_bom_before_a_logs_first_line_lets_it_parse(tmp_path: Path) -> None:
    path = tmp_path / "bom.log"
    path.write_bytes(b"\xef\xbb\xbf" + LOG)
    events = list(open_source(path))
    assert isinstance(events[0], StartEvent) and events[0].arm == "a"


def test_cr_only_endings_split_a_log_into_lines(tmp_path: Path) -> None:
    path = tmp_path / "mac.log"
    path.write_bytes(LOG.replace(b"\n", b"\r"))
    assert trials(path) == [1, 2]
    crlf = tmp_path / "dos.log"
    crlf.write_bytes(LOG.replace(b"\n", b"\r\n"))
    assert len(list(open_source(crlf))) == 3  # CRLF is one ending: no empty lines


@pytest.mark.parametrize(
    "head",
    [
        b"PK\x03\x04" + b"x" * 100,
        b"\x89PNG\r\n\x1a\n" + b"x" * 100,
        b"\xcf\xfa\xed\xfe" + b"x" * 100,
        b"\x7fELF" + b"x" * 100,
        (20).to_bytes(8, "little") + b'{"__metadata__": {}}',  # safetensors
        b"\0" * 4000 + b"TRIAL arm=a\n",
        bytes(range(256)) * 8,
    ],
)
def test_binary_data_is_still_binary(tmp_path: Path, head: bytes) -> None:
    assert is_binary(head)
    path = tmp_path / "weights.bin"
    path.write_bytes(head)
    with pytest.raises(SourceError, match="binary"):
        open_source(path)


@pytest.mark.parametrize(
    "head", [LOG * 3 + b"\0" * 10, b"\xef\xbb\xbf" + LOG, "thermal=sérieux\n".encode("latin-1") * 9]
)
def test_text_with_odd_bytes_is_not_binary(head: bytes) -> None:
    assert not is_binary(head)


# -- damaged gzip ------------------------------------------------------------------------------


def gz_log(tmp_path: Path, count: int = 3000) -> tuple[Path, bytes]:
    text = b"".join(
        f"TRIAL arm=a trial={i} decode_tps={50 + i % 7}.5\n".encode() for i in range(count)
    )
    path = tmp_path / "bench.log.gz"
    path.write_bytes(gzip.compress(text))
    return path, text


def test_a_truncated_gzip_yields_what_it_can_and_one_warning(tmp_path: Path) -> None:
    path, _ = gz_log(tmp_path)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    reader = open_source(path)
    got = [e.trial for e in reader if isinstance(e, TrialEvent)]
    assert 100 < len(got) < 3000
    assert got == list(range(len(got))) or got[:-1] == list(range(len(got) - 1))
    (warning,) = reader.listed
    assert "cut short" in warning.what and f"byte {len(whole) // 2}" in warning.what
    assert warning.line >= len(got)


def test_a_corrupted_gzip_yields_what_it_can_and_one_warning(tmp_path: Path) -> None:
    path, _ = gz_log(tmp_path)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(64)  # zeroed: a bad block, or a CRC that fails
    path.write_bytes(bytes(data))
    reader = open_source(path)
    got = [e.trial for e in reader if isinstance(e, TrialEvent)]
    assert 0 < len(got) < 3000
    assert got[:1000] == list(range(1000))  # the part before the damage, whole
    # Deflate finds damage late: lines garbled before it parse badly; one gzip warning last.
    assert [w for w in reader.listed if "gzip" in w.what] == [reader.listed[-1]]


def test_a_corrupted_crc_is_reported(tmp_path: Path) -> None:
    path, _ = gz_log(tmp_path, count=10)
    data = bytearray(path.read_bytes())
    data[-8] ^= 0xFF  # the CRC32 of the trailer
    path.write_bytes(bytes(data))
    reader = open_source(path)
    assert len([e for e in reader if isinstance(e, TrialEvent)]) == 10
    assert len(reader.listed) == 1 and "gzip" in reader.listed[0].what


def test_several_gzip_members_are_read_in_turn(tmp_path: Path) -> None:
    path = tmp_path / "two.log.gz"
    path.write_bytes(gzip.compress(LOG) + gzip.compress(LOG) + b"\0" * 16)
    reader = open_source(path)
    assert [e.trial for e in reader if isinstance(e, TrialEvent)] == [1, 2, 1, 2]
    assert reader.warnings == 0


def test_a_gzip_with_nothing_readable_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.log.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00" + b"\xff" * 40)
    with pytest.raises(SourceError, match="nothing in it could be read"):
        open_source(path)


@pytest.mark.parametrize("command", [["summary"], ["export", "--format", "csv"],
                                     ["replay", "--headless", "--speed", "max"]])  # fmt: skip
def test_commands_read_a_damaged_recording_with_a_warning_and_exit_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str]
) -> None:
    whole = gzip.compress((RECORDINGS / "sim-sustain-1b-v2.jsonl").read_bytes())
    path = tmp_path / "damaged.jsonl.gz"
    path.write_bytes(whole[: len(whole) * 2 // 3])
    assert main([*command, str(path)]) == 0
    err = capsys.readouterr().err
    assert "damaged.jsonl.gz: 1 warning(s)" in err and "Traceback" not in err


def test_a_gzip_bomb_is_read_in_bounded_pieces(tmp_path: Path) -> None:
    path = tmp_path / "bomb.log.gz"
    path.write_bytes(gzip.compress(LOG + b"x" * (20 << 20) + b"\n" + LOG))
    reader = open_source(path)
    assert [e.trial for e in reader if isinstance(e, TrialEvent)] == [1, 2, 1, 2]
    assert reader.warnings == 1  # the 20 MB line, cut


# -- unsorted recordings, events without a time ------------------------------------------------


def unsorted_recording(tmp_path: Path) -> Path:
    lines = [json.dumps(make_header("x"))]
    for index, t in enumerate([5.0, 1.0, None, 3.0, "soon", 9.0, 2.0]):
        record = {"kind": "trial", "wall": 100.0, "arm": "a", "trial": index, "decode_tps": 5.0}
        if t is not None:
            record["t"] = t
        lines.append(json.dumps(record))
    path = tmp_path / "unsorted.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_events_without_t_take_the_previous_ones_and_disorder_is_warned(tmp_path: Path) -> None:
    reader = open_source(unsorted_recording(tmp_path))
    events = list(reader)
    assert [e.t for e in events] == [5.0, 1.0, 5.0, 3.0, 5.0, 9.0, 2.0]
    assert reader.unsorted == 3  # 1.0, 3.0, 2.0 come after a later time
    assert reader.warnings == 5  # and the two events without a usable t
    replayer = Replayer(events, speed=1.0)
    assert replayer.reordered == 3
    assert [e.trial for e in replayer.events] == [1, 6, 3, 0, 2, 4, 5]  # stable by t


def test_an_unsorted_recording_replays_to_its_end(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = unsorted_recording(tmp_path)
    assert main(["replay", "--headless", "--speed", "max", str(path)]) == 0
    assert "unsorted.jsonl: 5 warning(s)" in capsys.readouterr().err


def test_the_replayer_sorts_what_it_is_given_and_finishes() -> None:
    events = [TextEvent(t=t, wall=0.0, line=str(t)) for t in (3.0, 1.0, float("nan"), 2.0)]
    replayer = Replayer(events, speed=1000.0, monotonic=iter(range(0, 10**6, 10)).__next__)
    while not replayer.finished:
        replayer.tick()
    assert [e.line for e in replayer.session.log][-4:] == ["1.0", "nan", "2.0", "3.0"]
