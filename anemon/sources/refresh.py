"""The one rule for a refreshed log (docs/spec/cli.md, "The mirror"): what the file is now to
what was read of it. The mirror tailer and the pymobiledevice3 follow both apply it, each to
its own bytes (a local file, or what AFC read), so a refresh means the same on every path.

What was read is kept as a `Seen`: the offset, the file's first bytes, the bytes just before
the offset and a checkpoint every 64 KiB. `judge` compares them with the file:

- the same log, grown (or unchanged): its head and the bytes before the offset are ours:
  read on from the offset (the cost: the new bytes and two windows, never the file);
- a rewrite in progress: shorter, and still a prefix of what was read: wait;
- the same log changed before the offset (rotated: its first lines dropped; or rewritten with
  an earlier line changed): the last lines read are found in it, at a line start, whole or as
  its first bytes: read on after them, and say so (`resume`, with what was skipped);
- another log: none of that: read it from its start (`reset`).

A run of NUL bytes at the end of the file is not written yet (a copy taken mid-write, a writer
that preallocates its log): it is neither read nor compared, and waited for. NULs followed by
other bytes are data, as in any line (line-protocol.md, "Lines").
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass
from typing import Literal, Protocol

from anemon.sources.lines import ENDING

WINDOW = 4096  # bytes compared at the head, before the offset, and before each checkpoint
CHECKPOINT_EVERY = 64 * 1024
SCAN_CHUNK = 1 << 20  # bounds memory while a changed file is searched or a NUL run measured


class Source(Protocol):
    """The file as it is now, read at any position (a short read at its end)."""

    def read_at(self, position: int, length: int) -> bytes: ...


class NotFetched(LookupError):
    """A `Snapshot` was asked for bytes it does not hold: fetch the whole file and judge again."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Parts of a file fetched beforehand (over AFC), as a `Source` of a file of `size` bytes."""

    size: int
    parts: tuple[tuple[int, bytes], ...]
    """(position, bytes) pairs: what was fetched."""

    def read_at(self, position: int, length: int) -> bytes:
        length = min(length, self.size - position)
        if length <= 0:
            return b""
        for start, data in self.parts:
            if start <= position and position + length <= start + len(data):
                return data[position - start : position - start + length]
        raise NotFetched(position)


@dataclass(frozen=True)
class _Checkpoint:
    end: int  # an offset, a multiple of CHECKPOINT_EVERY
    digest: bytes  # hash of the WINDOW bytes just before `end`


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class Seen:
    """What a follower has consumed of the current log, kept so that checks cost O(1).

    `offset` counts every byte consumed, including those of an incomplete last line: those
    bytes stay in the follower's LineAssembler rather than being re-read, so a check costs
    O(new bytes) even while a long line is being written. `line_end` is the offset just after
    the last complete line.

    The head and the tail (the last WINDOW bytes before `offset`) are kept as raw bytes, not
    hashes: comparing 4 KiB costs what hashing it does, and raw bytes let the tail slide
    forward without re-reading, let a file shorter than the head be compared, and are what is
    looked for in a file changed before the offset (the last lines read).

    To decide whether a file shorter than `offset` is a prefix of what was read (a rewrite in
    progress) without reading it all, a checkpoint is kept every 64 KiB: the hash of the
    WINDOW bytes before it. A shorter file is a prefix if its head matches, the last
    checkpoint at or below its size matches, and, if it reaches into our tail, those bytes
    match. At most ~64 KiB just below its end go unchecked, for at most 12 KiB read per check
    and ~40 bytes of memory per 64 KiB read. A misjudgement only delays the verdict: it comes
    as soon as the file grows past `offset` (the tail no longer matches) or its head changes.
    """

    __slots__ = ("checkpoints", "head", "line_end", "offset", "tail")

    def __init__(self) -> None:
        self.offset = 0
        self.line_end = 0
        self.head = b""
        self.tail = b""
        self.checkpoints: list[_Checkpoint] = []

    @property
    def tail_start(self) -> int:
        return self.offset - len(self.tail)

    def advance(self, chunk: bytes) -> None:
        """Account for `chunk`, the bytes read at `offset`."""
        span = self.tail + chunk  # the bytes from tail_start to offset + len(chunk)
        self._add_checkpoints(span, self.tail_start)
        if len(self.head) < WINDOW:
            self.head += chunk[: WINDOW - len(self.head)]
        last = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if last >= 0:
            self.line_end = self.offset + last + 1
        self.tail = span[-WINDOW:]
        self.offset += len(chunk)

    def _add_checkpoints(self, span: bytes, base: int) -> None:
        first = (self.offset // CHECKPOINT_EVERY + 1) * CHECKPOINT_EVERY
        for end in range(first, base + len(span) + 1, CHECKPOINT_EVERY):
            window = span[end - WINDOW - base : end - base]
            self.checkpoints.append(_Checkpoint(end, _digest(window)))

    def checkpoint_at_or_below(self, size: int) -> _Checkpoint | None:
        index = bisect.bisect_right(self.checkpoints, size, key=lambda cp: cp.end)
        return self.checkpoints[index - 1] if index else None

    def last_lines(self) -> bytes:
        """The last complete lines read, from a line start to `line_end`, at most WINDOW
        bytes (empty if no line ended within the tail)."""
        if self.line_end <= self.tail_start:
            return b""
        lines = self.tail[: self.line_end - self.tail_start]
        if self.tail_start == 0:
            return lines
        first = ENDING.search(lines)  # the tail may begin mid-line: from the next line on
        return lines[first.end() :] if first else b""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a follower does with the file: `read` on from its offset, `wait`, `resume` (read
    on from `at`, the new place of its offset, after a `LogReset` saying `reason`), or
    `reset` (read the file from its start). `end`: where the written bytes end."""

    action: Literal["read", "wait", "resume", "reset"]
    end: int = 0
    at: int = 0
    reason: str = ""


_WAIT = Verdict("wait")


def judge(seen: Seen, file: Source, size: int) -> Verdict:
    """The rule (this module's docstring) for `file`, of `size` bytes, against `seen`."""
    return same_log(seen, file, size) or _relocate(seen, file, written_end(file, size, 0))


def same_log(seen: Seen, file: Source, size: int) -> Verdict | None:
    """`read` or `wait` if `file` is the log `seen` was read of, grown or being rewritten;
    None if it changed before the offset (the search for the last lines is left out)."""
    if seen.offset == 0:
        return Verdict("read", written_end(file, size, 0))
    if size >= seen.offset and _head_matches(seen, file, size) and _tail_matches(seen, file):
        return Verdict("read", written_end(file, size, seen.offset))
    end = written_end(file, size, 0)
    return _WAIT if end < seen.offset and _is_prefix(seen, file, end) else None


def written_end(file: Source, size: int, floor: int) -> int:
    """`size` less the run of NULs at the end of the file (not written yet), looked for no
    lower than `floor`: the cost is one byte when the file does not end in a NUL."""
    if size <= floor or file.read_at(size - 1, 1) != b"\0":
        return size
    end = size
    while end > floor:
        start = max(floor, end - SCAN_CHUNK)
        data = file.read_at(start, end - start).rstrip(b"\0")
        if data:
            return start + len(data)
        end = start
    return floor


def _head_matches(seen: Seen, file: Source, size: int) -> bool:
    length = min(len(seen.head), size)
    return file.read_at(0, length) == seen.head[:length]


def _tail_matches(seen: Seen, file: Source) -> bool:
    if seen.offset <= len(seen.head):
        return True  # the tail is within the head, already compared
    return file.read_at(seen.tail_start, len(seen.tail)) == seen.tail


def _is_prefix(seen: Seen, file: Source, size: int) -> bool:
    """Whether a file of `size` bytes, shorter than the offset, is a prefix of what was read:
    its head, the bytes that reach into our tail, and the last checkpoint below its end."""
    if not _head_matches(seen, file, size):
        return False
    start = max(seen.tail_start, len(seen.head))
    if size > start:
        expected = seen.tail[start - seen.tail_start : size - seen.tail_start]
        if file.read_at(start, size - start) != expected:
            return False
    checkpoint = seen.checkpoint_at_or_below(size)
    if checkpoint is None:
        return True  # the head covers everything up to the first checkpoint's window
    return _digest(file.read_at(checkpoint.end - WINDOW, WINDOW)) == checkpoint.digest


def _relocate(seen: Seen, file: Source, end: int) -> Verdict:
    """The file changed before the offset: read on after the last lines read if they are in
    it, else it is another log."""
    lines = seen.last_lines()
    at = (_find_line_run(file, lines, end) or _start_overlap(file, lines, end)) if lines else 0
    if at:
        return Verdict("resume", end, at, _resumed(seen, file, at))
    if not _head_matches(seen, file, end):
        return Verdict("reset", end, reason="the start of the file changed")
    if end >= seen.offset:
        return Verdict("reset", end, reason="the bytes before the read offset changed")
    return Verdict("reset", end, reason="the file shrank and is not a prefix of what was read")


def _find_line_run(file: Source, lines: bytes, end: int) -> int:
    """The position just after the first place `lines` start a line in the file's first
    `end` bytes, or 0; read a chunk at a time."""
    base = 0
    while base < end:
        start = max(base - 1, 0)  # one byte before: does an occurrence start a line?
        block = file.read_at(start, min(end, base + SCAN_CHUNK + len(lines)) - start)
        index = block.find(lines, base - start)
        while index >= 0:
            if start + index == 0 or block[index - 1 : index] in (b"\n", b"\r"):
                return start + index + len(lines)
            index = block.find(lines, index + 1)
        base += SCAN_CHUNK
    return 0


def _start_overlap(file: Source, lines: bytes, end: int) -> int:
    """How many of the file's first bytes are the last of `lines`, from a line start of
    theirs (a log rotated down to fewer bytes than `lines`), longest first; else 0."""
    first = file.read_at(0, min(len(lines), end))
    for ending in ENDING.finditer(lines):
        rest = lines[ending.end() :]
        if rest.strip(b"\r\n") and first.startswith(rest):  # a line, not just an ending
            return len(rest)
    return 0


def _resumed(seen: Seen, file: Source, at: int) -> str:
    """A resume's reason: what happened, and the lines not read again."""
    skipped = _count_lines(file, at)
    moved = at - seen.line_end
    ending = ENDING.search(seen.head)
    first_line = seen.head[: ending.end()] if ending else seen.head
    if file.read_at(0, len(first_line)) == first_line:
        what = f"the log was rewritten with an earlier line changed ({moved:+} bytes)"
    elif moved < 0:
        what = f"the log was rotated (its first {-moved} bytes dropped)"
    else:
        what = f"the log was rewritten from its start ({moved:+} bytes)"
    return (
        f"{what}: read on after the last line read; its {skipped} lines before it were "
        "read already and are not read again"
    )


def _count_lines(file: Source, end: int) -> int:
    """Line endings in the file's first `end` bytes (a CRLF cut between chunks counts two)."""
    count = 0
    for start in range(0, end, SCAN_CHUNK):
        count += len(ENDING.findall(file.read_at(start, min(SCAN_CHUNK, end - start))))
    return count


def seen_up_to(file: Source, at: int) -> Seen:
    """A `Seen` of the file's first `at` bytes, read a chunk at a time (after a resume)."""
    seen = Seen()
    while seen.offset < at:
        chunk = file.read_at(seen.offset, min(SCAN_CHUNK, at - seen.offset))
        if not chunk:
            break  # cut short while read: the next check sorts it out
        seen.advance(chunk)
    return seen
