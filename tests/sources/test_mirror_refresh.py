"""Refreshes that change what was already read (issue 21): a log rotated, rewritten with an
earlier line changed, copied mid-write, preallocated. Counted: lines written against lines
delivered, each exactly once, and a `reset` saying what happened when reading goes on."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from anemon.sources import mirror
from anemon.sources.mirror import MirrorTailer
from anemon.sources.refresh import WINDOW, Seen, Source, Verdict
from tests.sources.test_mirror import atomic_write, make_log, resets, texts


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "bench.log"


def line_start(data: bytes, trial: int) -> int:
    return data.index(f"TRIAL trial={trial} ".encode())


def test_a_log_rotated_to_its_tail_reads_each_line_once(log_path: Path) -> None:
    data, lines = make_log("a", 300)  # a size-capped log: 100 lines dropped, 100 appended
    log_path.write_bytes(data[: line_start(data, 200)])
    tailer = MirrorTailer(log_path)
    seen = texts(tailer.check())
    atomic_write(log_path, data[line_start(data, 100) :])
    items = tailer.check()
    seen += texts(items)
    assert len(seen) == 300 and seen == lines
    (reset,) = resets(items)
    dropped = line_start(data, 100)
    assert reset.reason.startswith(f"the log was rotated (its first {dropped} bytes dropped)")
    assert "its 100 lines before it were read already" in reset.reason


def test_a_log_rotated_to_less_than_the_last_lines_compared_reads_each_line_once(
    log_path: Path,
) -> None:
    data, lines = make_log("a", 300)
    log_path.write_bytes(data[: line_start(data, 200)])
    tailer = MirrorTailer(log_path)
    seen = texts(tailer.check())
    kept = data[line_start(data, 197) :]  # 3 lines read kept: fewer bytes than compared
    assert line_start(data, 200) - line_start(data, 197) < WINDOW
    atomic_write(log_path, kept)
    items = tailer.check()
    assert seen + texts(items) == lines
    assert "its 3 lines before it were read already" in resets(items)[0].reason


def test_a_log_rotated_past_everything_read_is_another_log(log_path: Path) -> None:
    data, lines = make_log("a", 300)
    log_path.write_bytes(data[: line_start(data, 200)])
    tailer = MirrorTailer(log_path)
    tailer.check()
    atomic_write(log_path, data[line_start(data, 250) :])
    items = tailer.check()
    assert resets(items) == [items[0]] and texts(items) == lines[250:]


@pytest.mark.parametrize("change", [b"TRIAL trial=50 arm=a edited=yes", b"T"])
def test_a_log_rewritten_with_an_earlier_line_changed_reads_each_line_once(
    log_path: Path, change: bytes
) -> None:
    data, lines = make_log("a", 300)
    log_path.write_bytes(data[: line_start(data, 200)])
    tailer = MirrorTailer(log_path)
    seen = texts(tailer.check())
    start, end = line_start(data, 50), line_start(data, 51)
    edited = data[:start] + change + b"\n" + data[end:]
    log_path.write_bytes(edited)  # rewritten whole in place, one line another length
    items = tailer.check()
    seen += texts(items)
    assert len(seen) == 300 and seen == lines  # the old form of line 50 was read: kept
    (reset,) = resets(items)
    moved = len(change) + 1 - (end - start)
    assert reset.reason.startswith(
        f"the log was rewritten with an earlier line changed ({moved:+} bytes)"
    )
    assert "its 200 lines before it were read already" in reset.reason


def test_an_incomplete_line_is_read_again_from_the_rotated_log(log_path: Path) -> None:
    data, lines = make_log("a", 300)
    cut = line_start(data, 200) + 10  # mid-line: its first bytes are held, not delivered
    log_path.write_bytes(data[:cut])
    tailer = MirrorTailer(log_path)
    seen = texts(tailer.check())
    atomic_write(log_path, data[line_start(data, 100) :])
    seen += texts(tailer.check())
    assert seen == lines  # no torn half line


def test_a_copy_whose_end_is_still_nuls_is_waited_for(log_path: Path) -> None:
    data, lines = make_log("a", 110)
    torn = bytearray(data)
    cut = line_start(data, 107) + 5
    torn[cut:] = bytes(len(data) - cut)  # a copy taken mid-write: its last bytes NULs
    log_path.write_bytes(bytes(torn))
    tailer = MirrorTailer(log_path)
    seen = texts(tailer.check())
    assert seen == lines[:107]
    log_path.write_bytes(data)  # the real copy
    items = tailer.check()
    assert resets(items) == []
    assert seen + texts(items) == lines


def test_a_torn_copy_after_a_whole_one_is_a_rewrite_in_progress(log_path: Path) -> None:
    data, lines = make_log("a", 110)
    log_path.write_bytes(data)
    tailer = MirrorTailer(log_path)
    assert texts(tailer.check()) == lines
    cut = line_start(data, 60)
    atomic_write(log_path, data[:cut] + bytes(len(data) + 50 - cut))  # torn, and longer
    assert tailer.check() == []
    more, more_lines = make_log("a", 5, first=110)
    atomic_write(log_path, data + more)
    assert tailer.check() == more_lines


def test_a_preallocated_log_is_read_as_its_lines_are_written(log_path: Path) -> None:
    data, lines = make_log("a", 200)
    log_path.write_bytes(bytes(len(data) + 10_000))  # zeros past the end, written over
    tailer = MirrorTailer(log_path)
    seen = texts(tailer.check())
    with open(log_path, "r+b") as file:
        for trial in (50, 100, 173):
            file.seek(0)
            file.write(data[: line_start(data, trial) + 7])  # mid-line, too
            file.flush()
            seen += texts(tailer.check())
        file.seek(0)
        file.write(data)
    items = tailer.check()
    seen += texts(items)
    assert resets(items) == [] and len(seen) == 200 and seen == lines
    assert os.path.getsize(log_path) > len(data)


def test_nuls_followed_by_more_bytes_are_data(log_path: Path) -> None:
    log_path.write_bytes(b"a\0b\nc\0\0")
    tailer = MirrorTailer(log_path)
    assert tailer.check() == ["a\0b"]
    with open(log_path, "ab") as file:
        file.write(b"d\n")
    assert tailer.check() == ["c\0\0d"]


OLDER = WINDOW // 20 + 1
"""Lines back from the last line read that are older than the last 4 KiB read (a line of
`Rotating` has at least 20 bytes)."""


class Rotating:
    """One log refreshed at random: appended, copied whole (atomic or in place), copied torn
    (its last bytes NULs), preallocated, rotated (first lines dropped, never past the last line
    read), or rewritten with an earlier line changed (one read, and older than the last 4 KiB
    read). `lines` are the log's lines; `dropped` of them are gone from the file's start."""

    def __init__(self, path: Path, rng: random.Random, total: int) -> None:
        self.path, self.rng = path, rng
        self.lines = [f"TRIAL trial={i} arm=r{'x' * rng.randint(0, 40)}" for i in range(total)]
        self.written = self.dropped = 0
        self.edited: dict[int, str] = {}

    def content(self) -> bytes:
        shown = [self.edited.get(i, self.lines[i]) for i in range(self.dropped, self.written)]
        return "".join(line + "\n" for line in shown).encode()

    def refresh(self, delivered: int) -> None:
        operation = self.rng.choice(["grow", "grow", "torn", "rotate", "edit"])
        if operation == "rotate" and delivered > self.dropped + 1:
            self.dropped = self.rng.randint(self.dropped, delivered - 1)  # keeps one read line
        elif operation == "edit" and delivered - OLDER > self.dropped:
            index = self.rng.randint(self.dropped, delivered - OLDER)
            self.edited[index] = self.lines[index] + " edited" * self.rng.randint(1, 3)
        elif operation != "torn":
            self.written = min(len(self.lines), self.written + self.rng.randint(1, 120))
        data = self.content()
        if operation == "torn":
            cut = self.rng.randint(0, len(data))
            data = data[:cut] + bytes(len(data) - cut + self.rng.randint(0, 3000))
        if self.rng.random() < 0.5:
            atomic_write(self.path, data)
        else:
            with open(self.path, "r+b" if self.path.exists() else "wb") as file:
                file.write(data)
                file.truncate()


@pytest.mark.parametrize("seed", range(12))
def test_any_mix_of_rotations_edits_and_torn_copies_gives_each_line_once(
    log_path: Path, seed: int
) -> None:
    log = Rotating(log_path, random.Random(seed), total=900)
    tailer = MirrorTailer(log_path)
    delivered: list[str] = []
    while len(delivered) < len(log.lines):
        log.refresh(len(delivered))
        delivered += texts(tailer.check())
        if log.written == len(log.lines):
            atomic_write(log_path, log.content())  # at the end, the whole log as it is
            delivered += texts(tailer.check())
    assert delivered == log.lines  # none lost, none twice, an edited line in its first form


def test_a_log_truncated_while_it_is_judged_is_judged_again_not_read_again(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mirror refreshed by truncating and writing it again, caught mid-check: the file was
    whole when opened and a third of it by the comparison. Judged on such bytes it looked like
    another log and was read again from its start (every trial twice); it is judged again."""
    data, lines = make_log("a", 300)
    log_path.write_bytes(data[: line_start(data, 100)])
    tailer = MirrorTailer(log_path)
    seen = texts(tailer.check())
    log_path.write_bytes(data[: line_start(data, 200)])  # refreshed: 100 new lines
    real = mirror.judge

    def truncated_meanwhile(seen: Seen, file: Source, size: int) -> Verdict:
        monkeypatch.setattr(mirror, "judge", real)  # once
        with open(log_path, "r+b") as writer:  # the same file, as a truncating writer has it
            writer.truncate(0)
            writer.write(data[: line_start(data, 30)])
        return real(seen, file, size)

    monkeypatch.setattr(mirror, "judge", truncated_meanwhile)
    first = tailer.check()
    assert first == []  # nothing read from the half-written file
    log_path.write_bytes(data)  # the writer done (and more lines since)
    items = tailer.check()
    seen += texts(items)
    assert seen == lines and not resets(items)
