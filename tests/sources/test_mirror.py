"""MirrorTailer: every line of the log once, whatever the way the mirror is refreshed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import pytest

from anemon.sources import mirror
from anemon.sources.items import LogItem, LogReset
from anemon.sources.mirror import MirrorTailer
from anemon.sources.refresh import WINDOW

Probe = Callable[[], None]


def make_log(arm: str, count: int, first: int = 0) -> tuple[bytes, list[str]]:
    """A log of numbered TRIAL lines (some CRLF, some non-ASCII) and the lines it holds."""
    thermal = ["sérieux", "fair", "fair", "fair", "fair"]
    lines = [
        f"TRIAL trial={i} arm={arm} decode_tps={70 + i % 9}.5 thermal={thermal[i % 5]}"
        for i in range(first, first + count)
    ]
    ends = ["\r\n" if i % 7 == 3 else "\n" for i in range(first, first + count)]
    return "".join(line + end for line, end in zip(lines, ends, strict=True)).encode(), lines


def texts(items: list[LogItem]) -> list[str]:
    return [item for item in items if isinstance(item, str)]


def resets(items: list[LogItem]) -> list[LogReset]:
    return [item for item in items if isinstance(item, LogReset)]


def atomic_write(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as file:
        file.write(data)


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "bench.log"


# -- one refresh mode at a time ----------------------------------------------------------------


def test_a_append_reads_each_line_once(log_path: Path) -> None:
    data, lines = make_log("a", 10)
    log_path.write_bytes(data[: data.index(b"trial=4")])
    tailer = MirrorTailer(log_path)
    assert tailer.check() == lines[:4]
    append(log_path, data[data.index(b"trial=4") :])
    assert tailer.check() == lines[4:]
    assert tailer.check() == []


def test_b_rewrite_in_place_with_more_reads_only_the_new_lines(log_path: Path) -> None:
    data, lines = make_log("a", 10)
    log_path.write_bytes(data[: data.index(b"TRIAL trial=6")])
    tailer = MirrorTailer(log_path)
    assert tailer.check() == lines[:6]
    log_path.write_bytes(data)  # truncates, then writes it all again
    assert tailer.check() == lines[6:]


def test_b_rewrite_in_place_without_truncating(log_path: Path) -> None:
    data, lines = make_log("a", 10)
    log_path.write_bytes(data[: data.index(b"TRIAL trial=6")])
    tailer = MirrorTailer(log_path)
    assert tailer.check() == lines[:6]
    with open(log_path, "r+b") as file:
        file.write(data)
    assert tailer.check() == lines[6:]


def test_c_atomic_replace_with_more_reads_only_the_new_lines(log_path: Path) -> None:
    data, lines = make_log("a", 300)  # past the 4 KiB head: the tail comparison counts
    cut = data.index(b"TRIAL trial=200")
    log_path.write_bytes(data[:cut])
    tailer = MirrorTailer(log_path)
    assert tailer.check() == lines[:200]
    atomic_write(log_path, data)
    assert tailer.check() == lines[200:]


def test_d_truncate_waits_then_a_new_log_resets(log_path: Path) -> None:
    old, old_lines = make_log("a", 5)
    new, new_lines = make_log("b", 3)
    log_path.write_bytes(old)
    tailer = MirrorTailer(log_path)
    assert tailer.check() == old_lines
    os.truncate(log_path, 0)
    assert tailer.check() == []  # an empty file may be a rewrite starting: wait
    append(log_path, new)
    items = tailer.check()
    assert resets(items) and items[0] == resets(items)[0]
    assert texts(items) == new_lines


def test_d_truncate_then_the_same_log_again_does_not_reset(log_path: Path) -> None:
    data, lines = make_log("a", 8)
    log_path.write_bytes(data[: data.index(b"TRIAL trial=5")])
    tailer = MirrorTailer(log_path)
    assert tailer.check() == lines[:5]
    os.truncate(log_path, 17)
    assert tailer.check() == []
    append(log_path, data[17:])
    assert tailer.check() == lines[5:]


def test_e_delete_and_recreate_the_same_log_does_not_reset(log_path: Path) -> None:
    data, lines = make_log("a", 8)
    log_path.write_bytes(data[: data.index(b"TRIAL trial=5")])
    tailer = MirrorTailer(log_path)
    assert tailer.check() == lines[:5]
    log_path.unlink()
    assert tailer.check() == []
    assert tailer.missing
    log_path.write_bytes(data)
    assert tailer.check() == lines[5:]
    assert not tailer.missing


def test_e_delete_and_recreate_a_different_log_resets(log_path: Path) -> None:
    old, old_lines = make_log("a", 8)
    new, new_lines = make_log("b", 2)
    log_path.write_bytes(old)
    tailer = MirrorTailer(log_path)
    assert tailer.check() == old_lines
    log_path.unlink()
    assert tailer.check() == []
    log_path.write_bytes(new)
    assert tailer.check() == [LogReset("the start of the file changed"), *new_lines]


def test_f_a_different_log_resets_and_is_read_from_its_start(log_path: Path) -> None:
    old, old_lines = make_log("a", 50)
    new, new_lines = make_log("b", 100)
    log_path.write_bytes(old)
    tailer = MirrorTailer(log_path)
    assert tailer.check() == old_lines
    atomic_write(log_path, new)
    items = tailer.check()
    assert len(resets(items)) == 1 and isinstance(items[0], LogReset)
    assert texts(items) == new_lines
    assert tailer.check() == []


def test_f_same_head_different_history_resets(log_path: Path) -> None:
    """The head matches (first 4 KiB) but the bytes before the offset differ."""
    old, old_lines = make_log("a", 200)
    later, later_lines = make_log("a", 300, first=1000)
    keep = old.index(b"TRIAL trial=120")
    log_path.write_bytes(old)
    tailer = MirrorTailer(log_path)
    assert tailer.check() == old_lines
    atomic_write(log_path, old[:keep] + later)
    items = tailer.check()
    assert items[0] == LogReset("the bytes before the read offset changed")
    assert texts(items) == old_lines[:120] + later_lines


@pytest.mark.parametrize(
    ("shrink_to", "altered_at"),
    [
        (-5, -10),  # within the window before the offset
        (128 * 1024 + 100, 128 * 1024 - 1000),  # within the window of a 64 KiB checkpoint
    ],
)
def test_f_shorter_and_not_a_prefix_resets(log_path: Path, shrink_to: int, altered_at: int) -> None:
    old, old_lines = make_log("a", 3000)  # ~160 KB
    log_path.write_bytes(old)
    tailer = MirrorTailer(log_path)
    assert tailer.check() == old_lines
    shorter = bytearray(old[:shrink_to])
    shorter[altered_at] = ord("#")
    atomic_write(log_path, bytes(shorter))
    items = tailer.check()
    assert items[0] == LogReset("the file shrank and is not a prefix of what was read")
    assert len(resets(items)) == 1


# -- incomplete lines, rewrites in progress, cost ---------------------------------------------


def test_a_line_without_newline_is_not_read_until_it_gets_one(log_path: Path) -> None:
    log_path.write_bytes(b"START arm=a\nTRIAL tri")
    tailer = MirrorTailer(log_path)
    assert tailer.check() == ["START arm=a"]
    append(log_path, b"al=0 decode_tps=7")
    assert tailer.check() == []
    append(log_path, b"5.0\n")
    assert tailer.check() == ["TRIAL trial=0 decode_tps=75.0"]


def test_a_rewrite_in_progress_neither_resets_nor_duplicates(log_path: Path) -> None:
    data, lines = make_log("a", 2000)  # > 64 KiB: checkpoints take part
    cut = data.index(b"TRIAL trial=1500")
    log_path.write_bytes(data[:cut])
    tailer = MirrorTailer(log_path)
    assert tailer.check() == lines[:1500]
    with open(log_path, "wb") as file:
        for partial in (0, 10, 5000, 70_000, cut - 3):  # each a prefix, some mid-line
            file.seek(0)
            file.write(data[:partial])
            file.flush()
            assert tailer.check() == []
        file.write(data[cut - 3 :])
    assert tailer.check() == lines[1500:]


def test_only_the_new_bytes_are_read(log_path: Path) -> None:
    data, lines = make_log("a", 95_000)
    assert len(data) > 5_000_000
    log_path.write_bytes(data)
    tailer = MirrorTailer(log_path)
    assert len(tailer.check()) == len(lines)
    assert tailer.bytes_read == len(data) + 1  # and its last byte: is it a NUL not written yet?
    extra, extra_lines = make_log("a", 18, first=95_000)
    assert 900 < len(extra) <= 1024
    append(log_path, extra)
    before = tailer.bytes_read
    assert tailer.check() == extra_lines
    # the new bytes, plus the head, the window before the offset and the last byte: never the file
    assert tailer.bytes_read - before <= len(extra) + 2 * WINDOW + 1


def test_a_missing_file_is_not_an_error(tmp_path: Path) -> None:
    tailer = MirrorTailer(tmp_path / "nowhere" / "bench.log")
    assert tailer.check() == []
    assert tailer.missing


# -- a hostile mix of refreshes of one growing log --------------------------------------------


class HostileWriter:
    """Refreshes `path` with ever longer prefixes of a log, in every way a mirror tool might,
    calling `probe` (a check) at random moments, including in the middle of a refresh."""

    def __init__(self, path: Path, rng: random.Random, probe: Probe) -> None:
        self.path, self.rng, self._probe = path, rng, probe
        self.modes = [self.append, self.rewrite, self.rewrite_no_truncate, self.atomic]
        self.modes += [self.truncate_rewrite, self.recreate]

    def probe(self) -> None:
        if self.rng.random() < 0.6:
            self._probe()

    def grow(self, data: bytes, old: int, step: int = 3000) -> int:
        new = min(len(data), old + self.rng.randint(0, step))
        self.rng.choice(self.modes)(data, old, new)
        self.probe()
        return new

    def append(self, data: bytes, old: int, new: int) -> None:
        append(self.path, data[old:new])

    def rewrite(self, data: bytes, old: int, new: int) -> None:
        with open(self.path, "wb") as file:
            file.write(data[: self.rng.randint(0, new)])
            file.flush()
            self.probe()
            file.write(data[file.tell() : new])

    def rewrite_no_truncate(self, data: bytes, old: int, new: int) -> None:
        with open(self.path, "r+b") as file:
            file.write(data[:new])

    def atomic(self, data: bytes, old: int, new: int) -> None:
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_bytes(data[:new])
        self.probe()
        os.replace(temporary, self.path)

    def truncate_rewrite(self, data: bytes, old: int, new: int) -> None:
        cut = self.rng.randint(0, old)
        os.truncate(self.path, cut)
        self.probe()
        append(self.path, data[cut:new])

    def recreate(self, data: bytes, old: int, new: int) -> None:
        self.path.unlink()
        self.probe()
        middle = self.rng.randint(0, new)
        self.path.write_bytes(data[:middle])
        self.probe()
        append(self.path, data[middle:new])


@pytest.mark.parametrize("seed", range(6))
def test_hostile_mix_of_refreshes(log_path: Path, seed: int) -> None:
    tailer = MirrorTailer(log_path)
    emitted: list[LogItem] = []
    writer = HostileWriter(log_path, random.Random(seed), lambda: emitted.extend(tailer.check()))

    log, log_lines = make_log("main", 2500)  # ~190 KB: several 64 KiB checkpoints
    log_path.write_bytes(log[:100])
    length = 100
    while length < len(log):
        length = writer.grow(log, length)
    emitted.extend(tailer.check())
    assert emitted == log_lines  # each line exactly once, in order, and no reset

    emitted.clear()
    other, other_lines = make_log("other", 400)
    writer.modes = [writer.rewrite, writer.atomic, writer.truncate_rewrite, writer.recreate]
    writer.rng.choice(writer.modes)(other, 0, 2000)
    writer.modes += [writer.append, writer.rewrite_no_truncate]
    length = 2000
    while length < len(other):
        length = writer.grow(other, length, step=800)
    emitted.extend(tailer.check())
    assert isinstance(emitted[0], LogReset)
    assert emitted[1:] == other_lines


# -- follow() ---------------------------------------------------------------------------------


async def collect(tailer: MirrorTailer, stop: asyncio.Event, count: int) -> list[LogItem]:
    """Items from follow() until `count` lines arrived; fails instead of hanging."""
    items: list[LogItem] = []
    async with asyncio.timeout(10), contextlib.aclosing(tailer.follow(stop)) as batches:
        async for batch in batches:
            assert batch, "follow() yields only non-empty batches"
            items += batch
            if len(texts(items)) >= count:
                break
    return items


async def test_follow_sees_appends_and_an_atomic_replace(log_path: Path) -> None:
    data, lines = make_log("a", 40)
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    log_path.write_bytes(b"")

    async def writer() -> None:
        written = 0
        for index, end in enumerate(ends):
            await asyncio.sleep(0.005)
            if index == 20:
                atomic_write(log_path, data[:end])  # the same log, and one more line
            else:
                append(log_path, data[written:end])
            written = end

    task = asyncio.create_task(writer())
    items = await collect(MirrorTailer(log_path, poll_s=0.2), asyncio.Event(), len(lines))
    await task
    assert items == lines


async def test_follow_waits_for_a_missing_directory(tmp_path: Path) -> None:
    path = tmp_path / "later" / "bench.log"
    data, lines = make_log("a", 5)

    async def writer() -> None:
        await asyncio.sleep(0.1)
        path.parent.mkdir()
        path.write_bytes(data)

    task = asyncio.create_task(writer())
    items = await collect(MirrorTailer(path, poll_s=0.05), asyncio.Event(), len(lines))
    await task
    assert items == lines


async def test_setting_stop_ends_follow_after_reading_pending_lines(log_path: Path) -> None:
    log_path.write_bytes(b"one\n")
    stop = asyncio.Event()
    batches = MirrorTailer(log_path, poll_s=60).follow(stop)
    async with asyncio.timeout(10), contextlib.aclosing(batches):
        assert await anext(batches) == ["one"]
        append(log_path, b"two\nthree\n")
        stop.set()
        rest = [item async for batch in batches for item in batch]
    assert rest == ["two", "three"]


async def test_closing_follow_early_leaves_stop_unset(log_path: Path) -> None:
    log_path.write_bytes(b"one\n")
    stop = asyncio.Event()
    assert await collect(MirrorTailer(log_path), stop, 1) == ["one"]
    assert not stop.is_set()


async def test_an_idle_mirror_is_polled_with_a_stat_not_a_read(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polls (no watcher event) whose stat of the path is unchanged open nothing: the idle
    dashboard's once-a-second re-check is one os.stat; a poll after an append reads it."""
    log_path.write_bytes(b"one\n")
    opened: list[Path] = []
    real_open = mirror._open_regular

    def counted_open(path: Path) -> BinaryIO:
        opened.append(path)
        return real_open(path)

    stop = asyncio.Event()
    polls = 0

    async def times_out(event: asyncio.Event, timeout_s: float) -> bool:
        """Every wait ends by its timeout (the poll path), at once."""
        nonlocal polls
        polls += 1
        if polls == 5:
            append(log_path, b"two\n")
        if polls == 8:
            stop.set()
        await asyncio.sleep(0)
        return False

    async def no_watcher(self: MirrorTailer, wake: asyncio.Event, halt: asyncio.Event) -> None:
        await halt.wait()

    monkeypatch.setattr(mirror, "_open_regular", counted_open)
    monkeypatch.setattr(mirror, "_wait", times_out)
    monkeypatch.setattr(MirrorTailer, "_watch", no_watcher)
    async with asyncio.timeout(10):
        batches = [batch async for batch in MirrorTailer(log_path).follow(stop)]
    assert batches == [["one"], ["two"]]
    assert len(opened) == 3  # the first check, the poll after the append, the last at stop
