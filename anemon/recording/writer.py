"""The Recorder: appends every event to a JSON Lines file, crash-safe to the last line.

A recording is never written over by accident: a new one is created exclusively (a default
name that is taken gets the next free `-N`), an existing one is added to (`append`) or
replaced (`replace`) only when asked. A write that fails (a full disk) closes the file with
what was written so far intact and is one `RecordingError`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import platform
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

from anemon import __version__
from anemon.errors import AnemonError
from anemon.events import Event, PhaseEvent
from anemon.paths import create_new, safe_name
from anemon.recording.codec import to_record
from anemon.text import printable

FORMAT = "anemon-recording"
VERSION = 2
"""2: a recording that closed normally ends with a `summary` event (version 1 files still read)."""
SESSION_KIND = "session"
"""The kind of the line that starts a session appended to an existing recording (`append`):
the new session's header fields; the reader keeps it as an unknown kind."""
DEFAULT_DIR = Path("anemon-recordings")
MAX_TAKEN = 10_000
"""Default names tried (`-2`, `-3`, ...) before giving up: far more than sessions per second."""

Mode = Literal["new", "append", "replace"]
"""new: the file must not exist; append: add a session to an existing recording (a new one
when there is none); replace: write over whatever is there."""


class RecordingError(AnemonError):
    """The recording cannot be opened or written (exit 2): it exists and was not to be
    touched, it is not a recording to append to, or the disk is full."""

    title = "Cannot record"


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


class Recorder:
    """Opens (creates) the file at once; the header is written at `begin` (here when given),
    so a caller can claim the name before it knows the header. `write()` flushes per event and
    fsyncs at phase changes. A file that was claimed but never begun is removed at `close`."""

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
        self.path, self._file = self._open(Path(path), mode, unique)
        if header is not None:
            self.begin(header)

    @property
    def begun(self) -> bool:
        """The header is written: events may follow (a claimed file has none yet)."""
        return self._begun

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

    def write(self, event: Event) -> None:
        if self._file is None:
            return
        record = to_record(event)
        if self.offset:
            record["t"] = event.t + self.offset
        self._write_line(record)
        self.count += 1
        if isinstance(event, PhaseEvent):
            self._sync()

    def close(self) -> None:
        """Sync and close; a write that failed is raised here (once), after the file is closed."""
        file, self._file = self._file, None
        if file is not None:
            try:
                file.flush()
                os.fsync(file.fileno())
            except OSError as e:
                self._failed(e)
            finally:
                _close_quietly(file)
            if not self._begun and self._created:
                self.path.unlink(missing_ok=True)  # claimed, never used: leave no empty file
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
            path.parent.mkdir(parents=True, exist_ok=True)
            if mode == "replace":
                return path, path.open("a", encoding="utf-8")
            if mode == "append" and path.exists():
                return path, self._open_append(path)
            return self._create(path, unique)
        except OSError as e:
            raise RecordingError(_os_message(path, e, "cannot record to")) from e

    def _create(self, path: Path, unique: bool) -> tuple[Path, IO[str]]:
        try:
            created = create_new(path, unique=unique, limit=MAX_TAKEN)
        except FileExistsError:
            if not unique:
                raise RecordingError(exists_message(path)) from None
            raise RecordingError(
                f"{path}: {MAX_TAKEN} recordings of that name exist; use --record"
            ) from None
        self._created = True
        return created

    def _open_append(self, path: Path) -> IO[str]:
        """An existing recording, to add a session to; the new events' `t` goes on after its
        last one. An empty file is a new recording."""
        from anemon.errors import SourceError
        from anemon.recording.reader import open_source

        if path.stat().st_size == 0:
            return path.open("w", encoding="utf-8")
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
        file = path.open("a", encoding="utf-8")
        if not _ends_with_newline(path):  # a torn last line stays one (skipped) line
            file.write("\n")
        return file

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

    def _failed(self, error: OSError) -> None:
        """Stop writing (what is on disk stays as it is) and tell `on_error`. Not raised here:
        the writer is whoever emitted an event (a source, the controller, a key); `close`
        raises it once the session has stopped."""
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
