"""Tail a local mirror file that something else refreshes (docs/ARCHITECTURE.md, "Mirror").

The mirror may be appended to, rewritten whole in place, replaced atomically (temp + rename),
truncated, deleted and recreated, rotated, rewritten with an edit, copied mid-write, or
replaced by a different log. The tailer tells these apart by content, not by events or
inodes: each check applies the rule of `sources.refresh` (a fingerprint of what it has read
against the file as it is now), then reads only the bytes past its offset.

It may also turn hostile: become unreadable, a directory or a FIFO (each a gap, `LogGap`,
until it is a readable file again), or a symlink swapped to another log and back. The
fingerprints of the last few logs are kept, so a log that comes back is read on from where it
was left, never again from its start.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from watchfiles import Change, awatch

from anemon.sources.items import LogGap, LogItem, LogReset
from anemon.sources.lines import DEFAULT_MAX_LINE_BYTES, LineAssembler
from anemon.sources.refresh import Seen, Verdict, judge, same_log, seen_up_to

READ_CHUNK = 1 << 20  # bounds memory while catching up on a large file
DEBOUNCE_MS = 20  # below a step: the changes are yielded at the step after they are seen
STEP_MS = 50
"""watchfiles' pace: a change is yielded within two steps, so an appended line is an event in
under 150 ms (the tail's promise). Its thread wakes (and takes the GIL) every step, changes or
not: 20 wakes a second, about a third of an idle watch's CPU; 200 ms steps would take most of
that away and make a line 200-400 ms late."""
REWATCH_S = 5.0
"""The watcher's timeout: at least this often it checks that its directory is still the
one watched (one renamed away sends no event for the file). The poll reads meanwhile."""
EARLIER_LOGS = 8
"""Logs left for another one (a symlink swapped, a rename) remembered, to resume if back."""
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO must not wait for a writer


class _Unreachable(Exception):
    """The path exists but cannot be read as a file; `str()` says why (a gap's reason)."""


@dataclass(frozen=True)
class _File:
    """An open mirror as the rule's `Source`, counting what is read in its tailer."""

    file: BinaryIO
    tailer: MirrorTailer

    def read_at(self, position: int, length: int) -> bytes:
        """Read up to `length` bytes at `position`: seek + read, never the whole file."""
        self.file.seek(position)
        parts: list[bytes] = []
        while length > 0 and (part := self.file.read(length)):
            parts.append(part)
            length -= len(part)
        data = b"".join(parts)
        self.tailer.bytes_read += len(data)
        return data


class MirrorTailer:
    """Follow a local mirror file, yielding each complete line of the log once.

    `check()` does one comparison and one read; `follow()` calls it whenever the file's
    directory reports a change to the file, and every `poll_s` seconds as a fallback, where
    `recheck()` skips it for a path whose `os.stat` is as it was at the last check.
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
        self._seen = Seen()
        self._lines = LineAssembler(max_line_bytes)
        self._earlier: list[tuple[Seen, LineAssembler]] = []  # most recent last
        self._missing = False
        self._gap: str | None = None  # why the path is unreadable, while a gap is open
        self._stat: _Stat | None = None  # the path's, taken just before the last check
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
        # Before the open: a write after it changes the stat, so the next recheck reads it.
        self._stat = _stat_of(self._path)
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
                items.extend(self._check_open(file))
            except OSError as e:  # an I/O error mid-read: what was read so far is kept
                items.extend(self._open_gap(_why(e)))
        return items

    def recheck(self) -> list[LogItem]:
        """`check()`, unless the path's stat (device, inode, size, mode, mtime, ctime) is what
        it was at the last check: an idle mirror's poll then costs one `os.stat`, no open and
        no read. A gap is checked whole (it closes on a read). A rewrite keeping the size
        within one timestamp tick of that stat is missed here; the watcher's event reads it."""
        if self._gap is None and self._stat is not None and _stat_of(self._path) == self._stat:
            return []
        return self.check()

    def _open_gap(self, reason: str) -> list[LogItem]:
        if self._gap is not None:
            return []
        self._gap = reason
        return [LogGap("begin", reason)]

    def _check_open(self, file: BinaryIO) -> list[LogItem]:
        source = _File(file, self)
        before = _fstat_of(file)
        size = before[2]  # `_Stat`: (device, inode, size, mode, mtime, ctime)
        verdict = judge(self._seen, source, size)
        items: list[LogItem] = []
        if verdict.action == "wait":
            return []
        if verdict.action in ("reset", "resume") and _fstat_of(file) != before:
            # written while judged (truncated and being written again): what was compared may
            # be half of each, so it is judged again at the next check, as a rewrite in
            # progress is; a reset from such a read read the whole log again
            return []
        if verdict.action == "reset":
            items.append(LogReset(self._switch(source, size, verdict)))
        elif verdict.action == "resume":
            items.append(LogReset(verdict.reason, read_on=True))
            self._seen = seen_up_to(source, verdict.at)
            self._lines.drop_incomplete()  # read again from the file as it is now
        items.extend(self._read_new(source, verdict.end))
        return items

    def _switch(self, source: _File, size: int, verdict: Verdict) -> str:
        """Leave the current log for the file's: an earlier log if the file is one (read on
        where it was left), else a new one read from its start; the reset's reason."""
        left = (self._seen, self._lines)
        for index, (seen, lines) in enumerate(reversed(self._earlier)):
            if same_log(seen, source, size) is not None:
                del self._earlier[len(self._earlier) - 1 - index]
                self._remember(left)
                self._seen, self._lines = seen, lines
                return f"an earlier log is back: read on from byte {seen.offset}"
        self._remember(left)
        self._seen = Seen()
        self._lines = LineAssembler(self._max_line_bytes)
        return verdict.reason

    def _remember(self, log: tuple[Seen, LineAssembler]) -> None:
        if log[0].offset:
            self._earlier.append(log)
            del self._earlier[: max(0, len(self._earlier) - EARLIER_LOGS)]

    def _read_new(self, source: _File, end: int) -> list[LogItem]:
        """Read from the offset up to `end` (where the written bytes ended at open), chunk by
        chunk."""
        items: list[LogItem] = []
        while self._seen.offset < end:
            chunk = source.read_at(self._seen.offset, min(READ_CHUNK, end - self._seen.offset))
            if not chunk:
                break  # truncated while we read: the next check sorts it out
            self._seen.advance(chunk)
            items.extend(self._lines.feed(chunk))
        return items

    async def follow(self, stop: asyncio.Event | None = None) -> AsyncIterator[list[LogItem]]:
        """Yield non-empty batches of new lines (and resets) until `stop` is set.

        Checks on every directory event for the file (`check`) and every `poll_s` seconds
        (`recheck`: a stat while nothing changed). When `stop` is set, one last check runs so
        lines already written are not lost.
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
        woken = True  # the first check reads
        try:
            while not stop.is_set():
                wake.clear()  # before the check: an event arriving during it wakes us again
                if batch := self.check() if woken else self.recheck():
                    yield batch
                woken = await _wait(wake, self._poll_s)
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
            rust_timeout=int(max(self._poll_s, REWATCH_S) * 1000),
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


_Stat = tuple[int, int, int, int, int, int]
"""What `recheck` compares: (device, inode, size, mode, mtime ns, ctime ns)."""


def _stat_of(path: Path) -> _Stat | None:
    """The path's stat (following symlinks), None if it cannot be taken (absent, no access)."""
    try:
        return _compared(os.stat(path))
    except OSError:
        return None


def _fstat_of(file: BinaryIO) -> _Stat:
    """An open file's stat, as `_stat_of` gives it."""
    return _compared(os.fstat(file.fileno()))


def _compared(st: os.stat_result) -> _Stat:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns)


def _identity(directory: Path) -> tuple[int, int] | None:
    try:
        stat = directory.stat()
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino)


async def _relay(stop: asyncio.Event, wake: asyncio.Event) -> None:
    await stop.wait()
    wake.set()


async def _wait(event: asyncio.Event, timeout_s: float) -> bool:
    """Whether `event` was set within `timeout_s` (a deadline on this task, not `wait_for`'s
    task of its own: an idle mirror's poll every second)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout_s):
            await event.wait()
    return event.is_set()


async def _finish(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
