"""Tail a local mirror file that something else refreshes (docs/ARCHITECTURE.md, "Mirror").

The mirror may be appended to, rewritten whole in place, replaced atomically (temp + rename),
truncated, deleted and recreated, or replaced by a different log. The tailer tells these apart
by content, not by events or inodes: each check compares a fingerprint of what it has read
against the file as it is now, then reads only the bytes past its offset.

It may also turn hostile: become unreadable, a directory or a FIFO (each a gap, `LogGap`,
until it is a readable file again), or a symlink swapped to another log and back. The
fingerprints of the last few logs are kept, so a log that comes back is read on from where it
was left, never again from its start.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import hashlib
import os
import stat
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from watchfiles import Change, awatch

from anemon.sources.items import LogGap, LogItem, LogReset
from anemon.sources.lines import DEFAULT_MAX_LINE_BYTES, LineAssembler

WINDOW = 4096  # bytes compared at the head, before the offset, and before each checkpoint
CHECKPOINT_EVERY = 64 * 1024
READ_CHUNK = 1 << 20  # bounds memory while catching up on a large file
DEBOUNCE_MS = 20  # small: a single append should surface within ~50-100 ms
STEP_MS = 50
EARLIER_LOGS = 8
"""Logs left for another one (a symlink swapped, a rename) remembered, to resume if back."""
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO must not wait for a writer


@dataclass(frozen=True)
class _Checkpoint:
    end: int  # an offset, a multiple of CHECKPOINT_EVERY
    digest: bytes  # hash of the WINDOW bytes just before `end`


@dataclass(frozen=True)
class _Verdict:
    action: Literal["read", "wait", "reset"]
    reason: str = ""


_READ = _Verdict("read")
_WAIT = _Verdict("wait")


class _Unreachable(Exception):
    """The path exists but cannot be read as a file; `str()` says why (a gap's reason)."""


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class _Seen:
    """What the tailer has consumed of the current log, kept so that checks cost O(1).

    `offset` counts every byte consumed, including those of an incomplete last line: those
    bytes stay in the LineAssembler rather than being re-read, so a check costs O(new bytes)
    even while a long line is being written. This is safe because the bytes of a log, once
    written, do not change; if they do, the file is another log and the fingerprint says so.

    The head and the tail (the last WINDOW bytes before `offset`) are kept as raw bytes, not
    hashes: comparing 4 KiB costs what hashing it does, and raw bytes let us slide the tail
    forward without re-reading and compare a file shorter than the head.

    To decide whether a file shorter than `offset` is a prefix of what we read (a rewrite in
    progress) without reading it all, a checkpoint is kept every 64 KiB: the hash of the
    WINDOW bytes before it. A shorter file is a prefix if its head matches, the last
    checkpoint at or below its size matches, and, if it reaches into our tail, those bytes
    match. At most ~64 KiB just below its end go unchecked, for at most 12 KiB read per check
    and ~40 bytes of memory per 64 KiB read. A misjudgement only delays the reset: it comes as
    soon as the file grows past `offset` (the tail no longer matches) or its head changes.
    """

    __slots__ = ("checkpoints", "head", "offset", "tail")

    def __init__(self) -> None:
        self.offset = 0
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


class MirrorTailer:
    """Follow a local mirror file, yielding each complete line of the log once.

    `check()` does one comparison and one read; `follow()` calls it whenever the file's
    directory reports a change to the file, and every `poll_s` seconds as a fallback.
    """

    def __init__(
        self,
        path: Path,
        *,
        poll_s: float = 1.0,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self._path = Path(path)
        self._poll_s = poll_s
        self._max_line_bytes = max_line_bytes
        self._seen = _Seen()
        self._lines = LineAssembler(max_line_bytes)
        self._earlier: list[tuple[_Seen, LineAssembler]] = []  # most recent last
        self._missing = False
        self._gap: str | None = None  # why the path is unreadable, while a gap is open
        self.bytes_read = 0  # every byte read from the file, comparisons included

    @property
    def path(self) -> Path:
        return self._path

    @property
    def offset(self) -> int:
        """Bytes of the current log consumed so far (an incomplete last line included)."""
        return self._seen.offset

    @property
    def missing(self) -> bool:
        """Whether the file was absent at the last check."""
        return self._missing

    @property
    def unreachable(self) -> str | None:
        """Why the path could not be read at the last checks (a gap is open), else None."""
        return self._gap

    def check(self) -> list[LogItem]:
        """Compare the file with what was read, then return its new lines (and any reset).

        A path that exists but cannot be read (no permission, a directory, a FIFO, an I/O
        error) opens a gap, once; the first good read after it closes the gap. A missing
        file is not a gap: deleting and recreating it is one way a mirror is refreshed.
        """
        items: list[LogItem] = []
        try:
            file = _open_regular(self._path)
        except FileNotFoundError:
            self._missing = True  # being recreated, or not mirrored yet: not an error
            return []
        except _Unreachable as e:
            self._missing = False
            return self._open_gap(str(e))
        self._missing = False
        if self._gap is not None:
            items.append(LogGap("end", f"the mirror is readable again (was: {self._gap})"))
            self._gap = None
        with file:
            # One open file for the comparison and the read, so both see the same file.
            try:
                items.extend(self._check_open(file, os.fstat(file.fileno()).st_size))
            except OSError as e:  # an I/O error mid-read: what was read so far is kept
                items.extend(self._open_gap(_why(e)))
        return items

    def _open_gap(self, reason: str) -> list[LogItem]:
        if self._gap is not None:
            return []
        self._gap = reason
        return [LogGap("begin", reason)]

    def _check_open(self, file: BinaryIO, size: int) -> list[LogItem]:
        verdict = self._classify(self._seen, file, size)
        items: list[LogItem] = []
        if verdict.action == "reset":
            items.append(LogReset(self._switch(file, size) or verdict.reason))
        elif verdict.action == "wait":
            return []
        items.extend(self._read_new(file, size))
        return items

    def _switch(self, file: BinaryIO, size: int) -> str | None:
        """Leave the current log for the file's: an earlier log if the file is one (then say
        where it is read on from), else a new one read from its start (None)."""
        left = (self._seen, self._lines)
        for index, (seen, lines) in enumerate(reversed(self._earlier)):
            if self._classify(seen, file, size).action != "reset":
                del self._earlier[len(self._earlier) - 1 - index]
                self._remember(left)
                self._seen, self._lines = seen, lines
                return f"an earlier log is back: read on from byte {seen.offset}"
        self._remember(left)
        self._seen = _Seen()
        self._lines = LineAssembler(self._max_line_bytes)
        return None

    def _remember(self, log: tuple[_Seen, LineAssembler]) -> None:
        if log[0].offset:
            self._earlier.append(log)
            del self._earlier[: max(0, len(self._earlier) - EARLIER_LOGS)]

    def _classify(self, seen: _Seen, file: BinaryIO, size: int) -> _Verdict:
        """Read on, wait for a rewrite in progress, or reset for a different log."""
        if seen.offset == 0:
            return _READ
        if not self._head_matches(seen, file, size):
            return _Verdict("reset", "the start of the file changed")
        if size >= seen.offset:
            if self._tail_matches(seen, file):
                return _READ
            return _Verdict("reset", "the bytes before the read offset changed")
        if self._tail_prefix_matches(seen, file, size) and self._checkpoint_matches(
            seen, file, size
        ):
            return _WAIT
        return _Verdict("reset", "the file shrank and is not a prefix of what was read")

    def _head_matches(self, seen: _Seen, file: BinaryIO, size: int) -> bool:
        length = min(len(seen.head), size)
        return self._read_at(file, 0, length) == seen.head[:length]

    def _tail_matches(self, seen: _Seen, file: BinaryIO) -> bool:
        if seen.offset <= len(seen.head):
            return True  # the tail is within the head, already compared
        return self._read_at(file, seen.tail_start, len(seen.tail)) == seen.tail

    def _tail_prefix_matches(self, seen: _Seen, file: BinaryIO, size: int) -> bool:
        """Where a shorter file reaches into our tail window, its bytes must be ours."""
        start = max(seen.tail_start, len(seen.head))
        if size <= start:
            return True
        expected = seen.tail[start - seen.tail_start : size - seen.tail_start]
        return self._read_at(file, start, size - start) == expected

    def _checkpoint_matches(self, seen: _Seen, file: BinaryIO, size: int) -> bool:
        checkpoint = seen.checkpoint_at_or_below(size)
        if checkpoint is None:
            return True  # the head covers everything up to the first checkpoint's window
        window = self._read_at(file, checkpoint.end - WINDOW, WINDOW)
        return _digest(window) == checkpoint.digest

    def _read_new(self, file: BinaryIO, size: int) -> list[LogItem]:
        """Read from the offset up to `size` (the size seen at open), chunk by chunk."""
        items: list[LogItem] = []
        while self._seen.offset < size:
            length = min(READ_CHUNK, size - self._seen.offset)
            chunk = self._read_at(file, self._seen.offset, length)
            if not chunk:
                break  # truncated while we read: the next check sorts it out
            self._seen.advance(chunk)
            items.extend(self._lines.feed(chunk))
        return items

    def _read_at(self, file: BinaryIO, position: int, length: int) -> bytes:
        """Read up to `length` bytes at `position`: seek + read, never the whole file."""
        file.seek(position)
        parts: list[bytes] = []
        while length > 0 and (part := file.read(length)):
            parts.append(part)
            length -= len(part)
        data = b"".join(parts)
        self.bytes_read += len(data)
        return data

    async def follow(self, stop: asyncio.Event | None = None) -> AsyncIterator[list[LogItem]]:
        """Yield non-empty batches of new lines (and resets) until `stop` is set.

        Checks on every directory event for the file and every `poll_s` seconds. When `stop`
        is set, one last check runs so lines already written are not lost.
        """
        stop = stop if stop is not None else asyncio.Event()
        wake = asyncio.Event()
        # The watcher gets its own stop event: awatch sets its stop event when cancelled,
        # and closing this iterator early must not set the caller's `stop`.
        halt = asyncio.Event()
        tasks = [
            asyncio.create_task(self._watch(wake, halt)),
            asyncio.create_task(_relay(stop, wake)),
        ]
        try:
            while not stop.is_set():
                wake.clear()  # before the check: an event arriving during it wakes us again
                if batch := self.check():
                    yield batch
                await _wait(wake, self._poll_s)
            if batch := self.check():
                yield batch
        finally:
            halt.set()
            await _finish(tasks)

    async def _watch(self, wake: asyncio.Event, halt: asyncio.Event) -> None:
        """Set `wake` on any event for the file, rewatching when its directory comes or goes."""
        directory = self._path.parent
        while not halt.is_set():
            identity = _identity(directory)
            if identity is not None:
                # A directory that vanishes (OSError) or a watcher the OS refuses (RuntimeError,
                # e.g. out of inotify watches) must not end following: polling covers the gap.
                with contextlib.suppress(OSError, RuntimeError):
                    await self._watch_directory(directory, identity, wake, halt)
            await _wait(halt, self._poll_s)

    async def _watch_directory(
        self,
        directory: Path,
        identity: tuple[int, int],
        wake: asyncio.Event,
        halt: asyncio.Event,
    ) -> None:
        changes = awatch(
            directory,
            watch_filter=_named(self._path.name),
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=halt,
            recursive=False,
            rust_timeout=max(int(self._poll_s * 1000), STEP_MS),
            yield_on_timeout=True,  # a chance to notice that the directory went away
        )
        async for batch in changes:
            if batch:
                wake.set()
            if _identity(directory) != identity:
                return  # a watch on a deleted directory stays silent: start over


def _open_regular(path: Path) -> BinaryIO:
    """Open `path` for reading if it is a regular file (following symlinks).

    FileNotFoundError if it is absent (a dangling symlink too); `_Unreachable`, saying why,
    if it exists but cannot be read as a file. Opened non-blocking, so a FIFO is reported
    rather than waited on; a directory opens on POSIX and is told apart by its mode.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise
    except OSError as e:
        raise _Unreachable(_why(e)) from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as e:
        os.close(fd)
        raise _Unreachable(_why(e)) from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise _Unreachable(f"the mirror is {_kind_of(mode)}, not a file")
    return os.fdopen(fd, "rb", buffering=0)


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _why(error: OSError) -> str:
    """A gap's reason for an OSError: what the OS said, without the path (the event has it)."""
    if isinstance(error, PermissionError):
        return "the mirror is not readable (permission denied)"
    if isinstance(error, IsADirectoryError):
        return "the mirror is a directory, not a file"
    return f"the mirror cannot be read ({error.strerror or type(error).__name__})"


def _named(name: str) -> Callable[[Change, str], bool]:
    """A watch filter keeping only events for `name` (compared by name: paths may differ
    in form, e.g. macOS reports /private/var for /var)."""
    return lambda _change, path: Path(path).name == name


def _identity(directory: Path) -> tuple[int, int] | None:
    try:
        stat = directory.stat()
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino)


async def _relay(stop: asyncio.Event, wake: asyncio.Event) -> None:
    await stop.wait()
    wake.set()


async def _wait(event: asyncio.Event, timeout_s: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), timeout_s)


async def _finish(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
