"""A recording damaged every way a disk, a kill or a hand edit damages one: truncated at every
byte of its last lines, bytes flipped, field types swapped. Every variant is read to its end
or refused in one line (exit 2), never an exception; whatever is read replays."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from anemon.analysis.load import load_sessions
from anemon.cli import main
from anemon.errors import AnemonError
from tests.fuzz.mutations import hostile_json_line

SAMPLE = Path(__file__).parents[2] / "recordings" / "sim-ab-2b.jsonl"
SEED = 20261201


def _read(path: Path) -> int | None:
    """The events read, or None when the file is refused with a one-line error."""
    try:
        (loaded,) = load_sessions([path])
    except AnemonError as e:
        assert "\n" not in str(e)
        return None
    return sum(loaded.session.counts.values())


def test_truncated_at_every_byte_of_the_last_lines(tmp_path):
    data = SAMPLE.read_bytes()
    start = data.rindex(b"\n", 0, data.rindex(b"\n", 0, len(data) - 1) - 1)  # the last 2 lines
    full = _read(SAMPLE)
    assert full is not None
    path = tmp_path / "cut.jsonl"
    for end in range(start - 200, len(data) + 1):
        path.write_bytes(data[:end])
        read = _read(path)
        assert read is not None and full - 4 <= read <= full, end


def test_flipped_bytes(tmp_path):
    rng = random.Random(SEED)
    data = SAMPLE.read_bytes()
    path = tmp_path / "flipped.jsonl"
    for _ in range(300):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 20)):
            damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(damaged))
        _read(path)


def test_swapped_field_types_and_non_finite_numbers(tmp_path):
    rng = random.Random(SEED)
    header, *lines = SAMPLE.read_text().splitlines()
    path = tmp_path / "swapped.jsonl"
    for _ in range(200):
        damaged = [hostile_json_line(line, rng) if rng.random() < 0.2 else line for line in lines]
        path.write_text("\n".join([header, *damaged]) + "\n")
        assert _read(path) is not None  # damaged fields are dropped, the file still reads


@pytest.mark.parametrize("variant", range(4))
def test_damaged_recordings_replay_and_summarise(variant, tmp_path, capsys):
    rng = random.Random(SEED + variant)
    header, *lines = SAMPLE.read_text().splitlines()
    damaged = [hostile_json_line(line, rng) if rng.random() < 0.3 else line for line in lines]
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join([header, *damaged]) + "\n")
    assert main(["replay", str(path), "--headless", "--speed", "max"]) == 0
    assert "\x1b" not in capsys.readouterr().out
    assert main(["summary", str(path), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err
    assert json.loads(out)
