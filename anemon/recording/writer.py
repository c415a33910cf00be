"""The Recorder: appends every event to a JSON Lines file, crash-safe to the last line.

A recording is never written over by accident: a new one is created exclusively (a default
name that is taken gets the next free `-N`), an existing one is added to (`append`) or
replaced (`replace`) only when asked, and never while another session writes it (an advisory
lock, held as long as the file is open; every file is opened for appending). What is written
reaches the disk at every phase change and at most SYNC_S seconds after it was written. A
write that fails (a full disk) closes the file with what was written so far intact and is one
`RecordingError`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import platform
import stat
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

from anemon import __version__
from anemon.errors import AnemonError, SourceError
from anemon.events import Event, PhaseEvent
from anemon.paths import create_new, not_a_folder, safe_name
from anemon.recording.codec import FORMAT, SESSION_KIND, VERSION, to_record
from anemon.recording.reader import open_source
from anemon.text import printable

if sys.platform != "win32":
    import fcntl

DEFAULT_DIR = Path("anemon-recordings")
MAX_TAKEN = 10_000
"""Default names tried (`-2`, `-3`, ...) before giving up: far more than sessions per second."""
SYNC_S = 5.0
"""The longest an event written stays in the OS's cache only (fsynced by a thread of the
Recorder's own): what a power loss can cost of a session with no phase changes (a watch)."""
MAX_REOPEN = 3
"""Opens of a name whose file was replaced between the open and the lock before giving up."""

Mode = Literal["new", "append", "replace"]
"""new: the file must not exist; append: add a session to an existing recording (a new one
when there is none); replace: write over whatever is there."""


class RecordingError(AnemonError):
    """The recording cannot be opened or written (exit 2): it exists and was not to be
    touched, it is not a recording to append to, or the disk is full."""


def make_header(
    source: str, device: dict[str, Any] | None = None, plan: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "anemon": __version__,
        "host": platform.node(),
        "source": source,
        "device": device,
        "plan": plan,
    }


def exists_message(path: Path) -> str:
    return f"{path} exists; use --append to add to it or --force to replace it"


def busy_message(path: Path) -> str:
    return (f"{path}: another session is recording to it; wait for it to end, "
            "or --record another FILE")  # fmt: skip


def keep_beside(recording: Path, name: str, data: bytes) -> None:
    """Copy `data` (a crash report named `name` on the phone) next to `recording`, as
    `<recording's stem>.<name>`; never over an existing file (`-2`, `-3`, ... instead).
    OSError when it cannot be written."""
    stem = recording.name.removesuffix(".gz").removesuffix(".jsonl")
    _, out = create_new(recording.with_name(f"{stem}.{safe_name(name, 'crash.ips')}"))
    with out:
        out.write(data.decode("utf-8", errors="replace"))


class Recorder:
    """Opens (creates) the file at once; the header is written at `begin` (here when given),
    so a caller can claim the name before it knows the header. `write()` flushes per event and
    fsyncs at phase changes (other events within SYNC_S, from a thread). The file is locked
    while open (a second writer is refused). A file claimed but never begun is removed at
    `close`."""

    def __init__(
        self,
        path: Path,
        header: dict[str, Any] | None = None,
        *,
        mode: Mode = "new",
        unique: bool = False,
    ) -> None:
        """`unique`: `path` is a default name; when it is taken, the next free `-N` is used."""
        self.count = 0
        self.offset = 0.0
        """Added to every event's `t`: an appended session goes on after the file's last event."""
        self.error: RecordingError | None = None
        """Why writing failed (the file is closed then; what was written before is intact)."""
        self.on_error: list[Callable[[RecordingError], None]] = []
        """Told once when a write fails: the session cannot go on unrecorded (the feed stops)."""
        self._reported = False
        self._appending = False
        self._created = False
        """The file is new: removed at `close` if the session never began."""
        self._replacing = mode == "replace"
        """The old content goes at `begin`, not before: a run that never starts keeps it."""
        self._begun = False
        self.header: dict[str, Any] | None = None
        """What `begin` wrote (an appended session's own header fields)."""
        self._file: IO[str] | None = None
        self._syncer: _Syncer | None = None
        """Puts what was written on disk every SYNC_S (from `begin` until the file closes)."""
        self.path, self._file = self._open(Path(path), mode, unique)
        if header is not None:
            self.begin(header)

    @property
    def writable(self) -> bool:
        """Begun, not closed, and no write has failed: a closing summary can still go in."""
        return self._begun and self._file is not None and self.error is None

    @property
    def appending(self) -> bool:
        """This session is added to an existing recording."""
        return self._appending

    def begin(self, header: dict[str, Any]) -> None:
        """The header line, or, appending to a recording, a `session` line with the same fields."""
        if self._begun:
            return
        self._begun = True
        self.header = dict(header)
        if self._replacing and self._file is not None:
            self._truncate()
        if self._appending:
            wall = datetime.now(UTC).timestamp()
            self._write_line({"kind": SESSION_KIND, "t": self.offset, "wall": wall, "arm": None,
                              **header})  # fmt: skip
        else:
            self._write_line(header)
        self._sync()
        if self.error is not None:  # nothing has started: say so at once
            self._reported = True
            raise self.error
        if self._file is not None:
            self._syncer = _Syncer(self._file.fileno(), SYNC_S)

    def write(self, event: Event) -> None:
        self._check_syncer()
        if self._file is None:
            return
        record = to_record(event)
        if self.offset:
            record["t"] = event.t + self.offset
        self._write_line(record)
        self.count += 1
        if isinstance(event, PhaseEvent):
            self._sync()
        elif self._syncer is not None:
            self._syncer.dirty = True

    def close(self) -> None:
        """Sync and close; a write that failed is raised here (once), after the file is closed."""
        if (error := self._stop_syncer()) is not None:
            self._failed(error)
        file, self._file = self._file, None
        if file is not None:
            try:
                file.flush()
                os.fsync(file.fileno())
            except OSError as e:
                self._failed(e)
            finally:
                if not self._begun and self._created:
                    _discard(self.path, file)  # claimed, never used: leave no empty file
                else:
                    _close_quietly(file)
        if self.error is not None and not self._reported:
            self._reported = True
            raise self.error

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- opening ---------------------------------------------------------------------------

    def _open(self, path: Path, mode: Mode, unique: bool) -> tuple[Path, IO[str]]:
        if path.is_dir():
            raise RecordingError(f"{path}: is a directory; --record takes a file name")
        try:
            _make_folder(path)
            path, file = self._take(path, mode, unique)
        except OSError as e:
            raise RecordingError(_os_message(path, e, "cannot record to")) from e
        try:
            if mode == "append" and os.fstat(file.fileno()).st_size:
                self._join(path, file)
        except BaseException as e:
            _close_quietly(file)
            if isinstance(e, OSError):
                raise RecordingError(_os_message(path, e, "cannot append to")) from e
            raise
        return path, file

    def _take(self, path: Path, mode: Mode, unique: bool) -> tuple[Path, IO[str]]:
        """The file opened for appending and locked, still the one at its name: a file that
        was removed or replaced between the open and the lock (its owner discarding it) is
        opened again, so no session ever writes to a file no name leads to."""
        for _ in range(MAX_REOPEN):
            taken, file, created = self._opened(path, mode, unique)
            if not _lock(file):
                _close_quietly(file)
                raise RecordingError(busy_message(taken))
            if _still_named(file, taken):
                self._created = created
                return taken, file
            _close_quietly(file)
        raise RecordingError(f"{path}: replaced while being opened, again and again; "
                             "--record another FILE")  # fmt: skip

    def _opened(self, path: Path, mode: Mode, unique: bool) -> tuple[Path, IO[str], bool]:
        """(name, file, created): new, or (append, replace) the existing file when there is one."""
        if mode == "new":
            return (*self._create(path, unique), True)
        try:
            return (*create_new(path, unique=False), True)
        except FileExistsError:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)  # no O_CREAT: gone is opened again
            return path, os.fdopen(fd, "a", encoding="utf-8"), False

    def _create(self, path: Path, unique: bool) -> tuple[Path, IO[str]]:
        try:
            return create_new(path, unique=unique, limit=MAX_TAKEN)
        except FileExistsError:
            if not unique:
                raise RecordingError(exists_message(path)) from None
            raise RecordingError(
                f"{path}: {MAX_TAKEN} recordings of that name exist; use --record"
            ) from None

    def _join(self, path: Path, file: IO[str]) -> None:
        """Add a session to the (locked) recording `file`; the new events' `t` goes on after
        its last one. (An empty file is a new recording: nothing to join.)"""
        try:
            reader = open_source(path)
        except SourceError as e:
            raise RecordingError(f"cannot append: {e}") from None
        reader.close()  # only its head was needed
        if reader.kind != "recording" or reader.compressed:
            what = "compressed" if reader.compressed else "a raw log, not an anemon recording"
            raise RecordingError(f"{path}: {what}; --append adds only to an uncompressed "
                                 "recording (use another --record FILE)")  # fmt: skip
        self.offset = _last_t(path)
        self._appending = True
        if not _ends_with_newline(path):  # a torn last line stays one (skipped) line
            file.write("\n")

    # -- writing ---------------------------------------------------------------------------

    def _write_line(self, obj: dict[str, Any]) -> None:
        if self._file is None:
            return
        try:
            self._file.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
            self._file.flush()
        except OSError as e:
            self._failed(e)

    def _truncate(self) -> None:
        assert self._file is not None
        try:
            if os.fstat(self._file.fileno()).st_size:  # not a device (/dev/null, /dev/full)
                self._file.truncate(0)
        except OSError as e:
            self._failed(e)

    def _sync(self) -> None:
        if self._file is None:
            return
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as e:
            self._failed(e)

    def _check_syncer(self) -> None:
        """An fsync of the syncer failed: writing stops, as when a write fails."""
        if self._syncer is not None and self._syncer.error is not None:
            self._failed(self._syncer.error)

    def _stop_syncer(self) -> OSError | None:
        """End the syncer's thread; what its last fsync failed with, if one did."""
        syncer, self._syncer = self._syncer, None
        if syncer is None:
            return None
        syncer.stop()
        return syncer.error

    def _failed(self, error: OSError) -> None:
        """Stop writing (what is on disk stays as it is) and tell `on_error`. Not raised here:
        the writer is whoever emitted an event (a source, the controller, a key); `close`
        raises it once the session has stopped."""
        self._stop_syncer()  # before the descriptor it fsyncs is closed
        file, self._file = self._file, None
        if file is not None:
            _close_quietly(file)
        if self.error is not None:
            return
        what = (
            f"no space left on device writing {self.path}"
            if error.errno in (errno.ENOSPC, errno.EDQUOT)
            else f"cannot write {self.path} ({error.strerror or error})"
        )
        self.error = RecordingError(f"recording: {printable(what)}; the session stopped")
        for listener in self.on_error:
            listener(self.error)


class _Syncer:
    """fsyncs a descriptor every `every_s` when something was written since the last time, in
    a thread: the session's event loop never waits for the disk, and nothing written stays
    longer than `every_s` in the OS's cache only. A failure is kept for the writer to act on
    (its listeners run on the writer's side)."""

    def __init__(self, fd: int, every_s: float) -> None:
        self.dirty = False
        """Set by the writer after each line; cleared here before each fsync, so a line
        written during one is synced by the next."""
        self.error: OSError | None = None
        self._fd = fd
        self._every = every_s
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="anemon-fsync", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(self._every):
            if not self.dirty:
                continue
            self.dirty = False
            try:
                os.fsync(self._fd)
            except OSError as e:
                self.error = e
                return

    def stop(self) -> None:
        """Return once the thread has ended (an fsync under way finishes first)."""
        self._stopped.set()
        self._thread.join()


def _make_folder(path: Path) -> None:
    """The folder `path` goes in, made when missing; a file where a folder should be is said
    as such (mkdir would say "File exists")."""
    blocking = not_a_folder(path)
    if blocking is not None:
        raise RecordingError(
            f"cannot record to {path}: {blocking} is not a folder; choose another --record FILE"
        )
    path.parent.mkdir(parents=True, exist_ok=True)


def _lock(file: IO[str]) -> bool:
    """Take the recording's advisory lock (held until the file is closed); False when another
    session holds it. Only regular files are locked (two sessions may record to /dev/null).
    Where there is no such lock (Windows), or the file system has none, nothing is locked:
    every writer appends, so none writes over another's lines, but theirs may interleave."""
    if sys.platform == "win32" or not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
        return True
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # a file system without locks (some network or FUSE ones): go on unlocked
        pass
    return True


def _still_named(file: IO[str], path: Path) -> bool:
    """`file` is still the one at `path` (not removed nor replaced since it was opened)."""
    try:
        return os.path.samestat(os.fstat(file.fileno()), os.stat(path))
    except FileNotFoundError:
        return False


def _discard(path: Path, file: IO[str]) -> None:
    """Remove a claimed file that was never begun, before closing it lets its lock go: a
    session that opens it meanwhile finds it gone (`_still_named`) and opens the name again.
    Windows cannot remove an open file (nor locks it): there, after the close."""
    if sys.platform == "win32":
        _close_quietly(file)
        path.unlink(missing_ok=True)
        return
    try:
        path.unlink(missing_ok=True)
    finally:
        _close_quietly(file)


def _close_quietly(file: IO[str]) -> None:
    """Close a file whose buffer may not fit on the disk: what is unwritten is lost, not raised
    (the error that got us here is already being reported)."""
    with contextlib.suppress(OSError):
        file.close()  # the descriptor is closed even when the last flush fails


def _os_message(path: Path, error: OSError, doing: str) -> str:
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{doing} {path}: no space left on device; free the disk or --record elsewhere"
    return f"{doing} {path}: {error.strerror or error}; choose another --record FILE"


def _last_t(path: Path, tail: int = 1 << 16) -> float:
    """The largest `t` among the last complete lines of a recording (0 when none has one)."""
    with path.open("rb") as stream:
        size = stream.seek(0, os.SEEK_END)
        stream.seek(max(0, size - tail))
        lines = stream.read().split(b"\n")
    best = 0.0
    for raw in lines[1:] if size > tail else lines:  # the first may be cut by the seek
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        t = record.get("t") if isinstance(record, dict) else None
        if isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t):
            best = max(best, float(t))
    return best


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as stream:
        stream.seek(-1, os.SEEK_END)
        return stream.read(1) == b"\n"


def default_path(tag: str, directory: Path | None = None) -> Path:
    """Where a live command records when not told: ./anemon-recordings/<tag>-<time>.jsonl,
    the tag made a safe file name. Open it with `Recorder(..., unique=True)`: a name already
    taken (two sessions in the same second) becomes `-2`, `-3`, ..."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return (directory or DEFAULT_DIR) / f"{safe_name(tag)}-{stamp}.jsonl"
