"""Reading a SOURCE: a recording (.jsonl, .jsonl.gz) or a raw bench log, told apart by content."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anemon.errors import SourceError
from anemon.events import Event, StartEvent
from anemon.parsing import LineParser
from anemon.recording.codec import from_record
from anemon.recording.writer import FORMAT, VERSION

MAX_LINE = 1 << 20
"""Longer lines are kept truncated, with a marker and a warning."""
_GZIP_MAGIC = b"\x1f\x8b"
_HEAD = 1 << 16
"""Enough for a recording's header line (it carries the plan)."""
_BINARY_PROBE = 8192
"""A NUL byte this near the start means binary data (a model file, an archive), not text."""
MAX_LISTED = 1000
"""Warnings kept with their line (SourceReader.listed); the count goes on past them."""


@dataclass(frozen=True, slots=True)
class LineWarning:
    """One warning of a SOURCE: the line it is on (1 = the first) and what was wrong."""

    line: int
    what: str


@dataclass
class SourceReader:
    """One SOURCE, opened and checked; iterate it once for its events."""

    path: Path
    kind: str
    """"recording" or "log"."""
    header: dict[str, Any] | None
    compressed: bool
    warnings: int = 0
    """Lines that could not be read whole (not JSON, too long) and values that did not parse
    or had the wrong type (the value is left out; the rest of the line is kept)."""
    torn: int = 0
    """A torn last line of a recording (the recorder was killed mid-write): skipped."""
    listed: list[LineWarning] = field(default_factory=list)
    """The first MAX_LISTED warnings, each with its line number, in order."""
    _parser: LineParser = field(init=False)
    _at: int = field(init=False, default=0)
    """The number of the line being read (for a damaged field found while decoding it)."""

    def __post_init__(self) -> None:
        self._parser = LineParser(self.path.name)

    def _warn(self, line: int, what: str, count: int = 1) -> None:
        self.warnings += count
        if len(self.listed) < MAX_LISTED:
            self.listed.append(LineWarning(line, what))

    def _damaged(self, what: str) -> None:
        self._warn(self._at, what)

    @property
    def device_kind(self) -> str | None:
        """The backend a recording was made with: its device's kind, else its plan's."""
        header = self.header or {}
        plan = header.get("plan")
        for device in (
            header.get("device"),
            plan.get("device") if isinstance(plan, dict) else None,
        ):
            kind = device.get("kind") if isinstance(device, dict) else None
            if isinstance(kind, str) and kind:
                return kind
        return None

    @property
    def tag(self) -> str | None:
        """The tag of the plan a recording was made from (a raw log has no header)."""
        plan = (self.header or {}).get("plan")
        tag = plan.get("tag") if isinstance(plan, dict) else None
        return tag if isinstance(tag, str) and tag else None

    def __iter__(self) -> Iterator[Event]:
        with self._open() as stream:
            if self.kind == "recording":
                stream.readline()
                yield from self._recorded(stream)
            else:
                yield from self._logged(stream)

    def _open(self) -> gzip.GzipFile | io.BufferedReader:
        return gzip.open(self.path, "rb") if self.compressed else self.path.open("rb")

    def _lines(self, stream: Iterable[bytes], first: int) -> Iterator[tuple[int, str, bool]]:
        """Numbered decoded lines and whether each had its newline (a torn last line has not)."""
        for number, raw in enumerate(stream, first):
            complete = raw.endswith(b"\n")
            if len(raw) > MAX_LINE:
                cut = len(raw) - MAX_LINE
                self._warn(number, f"line longer than {MAX_LINE} bytes: the last {cut} cut off")
                raw = raw[:MAX_LINE] + f" …[truncated {cut} bytes]".encode()
            yield number, raw.decode("utf-8", errors="replace").rstrip("\r\n"), complete

    def _recorded(self, stream: Iterable[bytes]) -> Iterator[Event]:
        source = self.path.name
        damaged = self._damaged
        for number, text, complete in self._lines(stream, 2):  # line 1 is the header
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except ValueError:
                if complete:
                    self._warn(number, "not JSON: the line is skipped")
                else:  # a torn last line: the recorder was killed mid-write
                    self.torn += 1
                continue
            if isinstance(record, dict):
                self._at = number
                yield from_record(record, source, damaged)
            else:
                self._warn(number, "not a JSON object: the line is skipped")

    def _logged(self, stream: Iterable[bytes]) -> Iterator[Event]:
        timeline = LogTimeline()
        parser = self._parser
        parser.timeline = timeline.place
        seen = 0
        for number, text, _complete in self._lines(stream, 1):
            event = parser.parse(text, t=timeline.t, wall=timeline.wall)
            if parser.warnings != seen:  # the slow path: only for a line with a bad value
                self._warn(number, parser.last_rejected, parser.warnings - seen)
                seen = parser.warnings
            yield event


class LogTimeline:
    """Session times for a raw log: from its timestamps when it has them, else from `t=`.

    A raw log has no session clock of its own. Timestamps (relative to the first) are best;
    without them each launch's `t=` (seconds since the process started) is laid after the
    previous launch, which keeps replays paced like the run.
    """

    def __init__(self) -> None:
        self.t = 0.0
        self.wall = 0.0
        self._first_wall: float | None = None
        self._base = 0.0

    def place(self, t: float, stamp: float | None, cls: type, app_t: float | None) -> float:
        if stamp is not None:
            if self._first_wall is None:
                self._first_wall = stamp
            t = stamp - self._first_wall
            self.wall = stamp
        else:
            if cls is StartEvent:
                self._base = self.t
            if app_t is not None:
                t = self._base + app_t
        self.t = max(self.t, t)
        return self.t


def open_source(path: Path) -> SourceReader:
    """Check a SOURCE and tell what it is; every failure is one SourceError line."""
    head = _read_head(path)
    compressed = head.startswith(_GZIP_MAGIC)
    if compressed:
        head = _read_head(path, gz=True)
    if not head.strip():
        raise SourceError(f"{path}: the file is empty; point anemon at a bench log or recording")
    if is_binary(head):
        raise SourceError(f"{path}: binary data, not a bench log or an anemon recording")
    header = _recording_header(head, path)
    kind = "recording" if header is not None else "log"
    return SourceReader(path, kind, header, compressed)


def is_binary(head: bytes) -> bool:
    """The start of a file (decompressed if it is gzip) holds binary data, not text."""
    return b"\0" in head[:_BINARY_PROBE]


def check_text(path: Path) -> None:
    """Refuse (SourceError) a file that exists but is binary or compressed: `watch` follows
    a text log as it grows, which neither can be."""
    head = _read_head(path)
    if head.startswith(_GZIP_MAGIC) or is_binary(head):
        raise SourceError(f"{path}: binary data, not a bench log; watch follows a text log")


def _read_head(path: Path, gz: bool = False) -> bytes:
    try:
        if gz:
            with gzip.open(path, "rb") as stream:
                return stream.read(_HEAD)
        with path.open("rb") as stream:
            return stream.read(_HEAD)
    except FileNotFoundError:
        raise SourceError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SourceError(f"{path}: is a directory; give a log or recording file") from None
    except PermissionError:
        raise SourceError(f"{path}: permission denied; check the file's permissions") from None
    except (OSError, EOFError) as e:
        raise SourceError(f"{path}: cannot read it ({e})") from e


def _recording_header(head: bytes, path: Path) -> dict[str, Any] | None:
    first = head.split(b"\n", 1)[0].strip()
    if not first.startswith(b"{"):
        return None
    try:
        header = json.loads(first)
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return None
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise SourceError(
            f"{path}: recording format version {version} is newer than this anemon reads "
            f"({VERSION}); upgrade anemon"
        )
    return header
