"""Reading a SOURCE: a recording (.jsonl, .jsonl.gz) or a raw bench log, told apart by content.

A SOURCE is read as a stream, opened once: a pipe, a FIFO or /dev/stdin works as well as a
file. A gzip stream that is cut short or damaged gives what could be read and one warning.
"""

from __future__ import annotations

import gc
import itertools
import json
import math
import os
import stat
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from anemon.errors import MissingSourceError, NoRecordsError, SourceError
from anemon.events import Event, StartEvent
from anemon.parsing import LineParser
from anemon.recording.foreign import FORMATS, LOOKED_FOR, kind_of
from anemon.recording.foreign.base import Lines, events_of
from anemon.sources.lines import BOM, LineAssembler
from anemon.text import printable

if TYPE_CHECKING:
    import numpy as np

    from anemon.parsing.columnar import ColumnarReader, TextRun, TrialRun

MAX_LINE = 1 << 20
"""Longer lines are kept truncated, with a marker and a warning."""
_GZIP_MAGIC = b"\x1f\x8b"
_HEAD = 1 << 16
"""Enough for a recording's header line (it carries the plan)."""
_CHUNK = 1 << 16
_BLOCK = 8192
"""Lines a raw log's columnar path reads at a time, and events of a recording made at a time
for the whole-file commands (`SourceReader.runs`)."""
_BATCH_EVENTS = 65536
"""A recording's events read at a time, the garbage collector paused (`_recorded`)."""
_FIRST_BATCH = 1024
"""The first batch's size, doubled batch by batch up to `_BATCH_EVENTS`: the first events of a
big recording come in ms (a replay's first screen), not after 65,536 were made (~0.4 s)."""
_INFLATE_MAX = 1 << 20
"""Decompressed bytes made at a time from one compressed chunk."""
_BINARY_PROBE = 8192
"""How much of the start `is_binary` judges."""
_CONTROL_SHARE = 0.1
"""More than this share of control bytes in the probe: binary, not text."""
_SUSPICIOUS_SHARE = 0.3
"""More than this share of control bytes and bytes not valid UTF-8 together: binary."""
_MAGIC = (
    b"\x1f\x8b",  # gzip (inside a gzip: not a log)
    b"PK\x03\x04",  # zip (and .npz, .mlpackage archives, ...)
    b"\x89PNG",
    b"\x7fELF",
    b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe",  # Mach-O
    b"\xca\xfe\xba\xbe",  # a universal (fat) Mach-O binary
    b"GGUF",
    b"\x93NUMPY",
    b"SQLite format 3\x00",
    b"\x28\xb5\x2f\xfd",  # zstd
    b"\xfd7zXZ\x00",  # xz
)  # fmt: skip
"""Starts of files that are binary whatever follows."""
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\v\x1b")
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
    """"recording", "log", or a foreign format's kind (`recording.foreign.FORMATS`)."""
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
    stream: _Stream | None = field(default=None, repr=False)
    """The bytes as open_source opened them (a pipe cannot be opened twice); None: the path
    is opened when iterated."""
    unsorted: int = 0
    """Recorded events whose `t` is before an earlier event's (replayed in time order)."""

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

    def close(self) -> None:
        """Let go of the stream opened to tell what the SOURCE is, when it is not read."""
        if self.stream is not None:
            self.stream.close()
            self.stream = None

    def __iter__(self) -> Iterator[Event]:
        return self._events(_BATCH_EVENTS)

    def _events(self, most: int) -> Iterator[Event]:
        """The events; a recording's made `most` at most at a time (`_recorded`)."""
        stream, self.stream = self.stream, None  # once: a second pass opens the path again
        if stream is None:
            stream = _Stream.open(self.path)
        if self.kind in FORMATS:
            yield from events_of(self._foreign(stream), self.path.name)
            return
        numbered = self._lines(stream)
        if self.kind == "recording":
            next(numbered, None)  # the header
            yield from self._recorded(numbered, most)
        else:
            yield from self._logged(numbered)

    def runs(self) -> Iterator[Event | TrialRun | TextRun]:
        """As iterating, except that a raw log's plain TRIAL lines come as TrialRuns, a column
        per field, instead of one event each, and its runs of plain text lines as TextRuns,
        a count (anemon/parsing/columnar.py): for the whole-file commands, which need columns
        and no text. Warnings are the same, in the same order.

        A recording's events are made `_BLOCK` at a time: the whole-file commands pause the
        garbage collector for the whole read (`analysis.load.read_session`), so a bigger
        batch saves nothing, and 65,536 events made at once were a third of a summary's peak
        memory."""
        if self.kind == "recording":
            yield from self._events(_BLOCK)
            return
        stream, self.stream = self.stream, None
        if stream is None:
            stream = _Stream.open(self.path)
        if self.kind in FORMATS:
            yield from self._foreign(stream)
            return
        yield from self._logged_runs(self._line_blocks(stream))

    def _foreign(self, stream: _Stream) -> Iterator[Event | TrialRun]:
        """A foreign format's events (recording/foreign/), a run's many trials as columns."""
        form = FORMATS[self.kind]
        lines = Lines(stream, form.max_line)
        yield from form.read(iter(lines), self._warn, self.path.name)
        if stream.damage is not None:
            self._warn(lines.next_number, f"{stream.damage}: the rest of the file is unreadable")

    def _lines(self, stream: _Stream) -> Iterator[tuple[int, str, bool]]:
        """Numbered decoded lines and whether each had its ending (a torn last line has not).

        Lines end at LF, CRLF or a lone CR; a leading byte-order mark is dropped; NUL bytes
        are kept. Where a damaged gzip stream stops, one warning says so."""
        for number, texts, complete in self._line_blocks(stream):
            for index, text in enumerate(texts):
                yield number + index, text, complete

    def _line_blocks(self, stream: _Stream) -> Iterator[tuple[int, list[str], bool]]:
        """`_lines` a list at a time: the number of the first, the lines, and whether they had
        their ending. A line cut short starts a list, its warning given just before it."""
        lines = LineAssembler(MAX_LINE)
        number = 1  # of the next line
        for chunk in stream:
            texts, cuts = lines.feed_lines(chunk)
            start = 0
            for index, cut in cuts.items():
                if index > start:
                    yield number + start, texts[start:index], True
                self._warn(
                    number + index, f"line longer than {MAX_LINE} bytes: the last {cut} cut off"
                )
                start = index
            if start < len(texts):
                yield number + start, texts[start:] if start else texts, True
            number += len(texts)
        if (last := lines.finish()) is not None:
            yield number, [last[0]], False
            number += 1
        if stream.damage is not None:
            self._warn(number, f"{stream.damage}: the rest of the file is unreadable")

    def _recorded(self, numbered: Iterator[tuple[int, str, bool]], most: int) -> Iterator[Event]:
        """The recording's events, read a batch at a time (`most` at most) with the garbage
        collector paused: each line's dict and event would otherwise set off collections that
        scan every event read so far again and again (a fifth of a 1M-event load)."""
        events = self._recorded_lines(numbered)
        size = min(_FIRST_BATCH, most)
        while True:
            with paused_gc():
                batch = list(itertools.islice(events, size))
            if not batch:
                return
            yield from batch
            size = min(2 * size, most)

    def _recorded_lines(self, numbered: Iterator[tuple[int, str, bool]]) -> Iterator[Event]:
        from anemon.recording.codec import decode, from_record, read_fast  # recordings only

        source = self.path.name
        damaged = self._damaged
        latest = 0.0  # the latest `t` so far: an event without one is placed there
        for number, text, complete in numbered:
            event = read_fast(text, source)  # the common line; None: read and checked below
            if event is not None:
                if event.t < latest:
                    self.unsorted += 1
                    self._warn(number, f"t={event.t:g} is before an earlier event's "
                                       f"t={latest:g}: replayed in time order")  # fmt: skip
                else:
                    latest = event.t
                yield event
                continue
            if not text.strip():
                continue
            try:
                record = decode(text)
            except ValueError:
                if complete:
                    self._warn(number, "not JSON: the line is skipped")
                else:  # a torn last line: the recorder was killed mid-write
                    self.torn += 1
                continue
            if isinstance(record, dict):
                self._at = number
                record = self._placed(record, latest)
                event = from_record(record, source, damaged)
                if event.t < latest:
                    self.unsorted += 1
                    self._warn(number, f"t={event.t:g} is before an earlier event's "
                                       f"t={latest:g}: replayed in time order")  # fmt: skip
                latest = max(latest, event.t)
                yield event
            else:
                self._warn(number, "not a JSON object: the line is skipped")

    def _placed(self, record: dict[str, Any], latest: float) -> dict[str, Any]:
        """A record without a usable `t` takes the latest `t` before it (warned), so an
        event without a time does not jump to the start of a replay."""
        t = record.get("t")
        if isinstance(t, int) and not isinstance(t, bool):
            return record  # any size: the codec checks its range
        if isinstance(t, float) and math.isfinite(t):
            return record
        shown = "no t" if t is None else f"t={json.dumps(t)[:40]} is not a number"
        kind = printable(str(record.get("kind")))[:40]
        self._warn(self._at, f"{kind}: {shown}: placed at the previous event's t")
        return record | {"t": latest}

    def _logged(self, numbered: Iterator[tuple[int, str, bool]]) -> Iterator[Event]:
        timeline = LogTimeline()
        parser = self._parser
        parser.timeline = timeline.place
        seen = 0
        for number, text, _complete in numbered:
            event = parser.parse(text, t=timeline.t, wall=timeline.wall)
            if parser.warnings != seen:  # the slow path: only for a line with a bad value
                self._warn(number, parser.last_rejected, parser.warnings - seen)
                seen = parser.warnings
            yield event

    def _logged_runs(
        self, blocks: Iterator[tuple[int, list[str], bool]]
    ) -> Iterator[Event | TrialRun | TextRun]:
        from anemon.parsing.columnar import ColumnarReader  # numpy: whole-file commands only

        timeline = LogTimeline()
        self._parser.timeline = timeline.place
        columnar = ColumnarReader(self._parser, timeline.place_trials)
        first = 1
        block: list[str] = []
        listed = len(self.listed)
        for number, texts, _complete in blocks:
            # a warning given while reading (a line cut short: it starts `texts`) goes after
            # those of the lines before it, as the per-line path lists them
            if len(self.listed) != listed or len(block) >= _BLOCK:
                yield from self._flush(columnar, timeline, block, first, listed)
                first, block = number, []
            block += texts
            listed = len(self.listed)
        yield from self._flush(columnar, timeline, block, first, listed)

    def _flush(
        self,
        columnar: ColumnarReader,
        timeline: LogTimeline,
        block: list[str],
        first: int,
        listed: int,
    ) -> Iterator[Event | TrialRun | TextRun]:
        """The block's items. A warning listed since `listed` (a line cut short, warned as it
        was read, or damage at the end) goes after those of the block's lines, as the per-line
        path lists them."""
        moved = self.listed[listed:]
        del self.listed[listed:]
        yield from self._block(columnar, timeline, block, first)
        self.listed.extend(moved[: MAX_LISTED - len(self.listed)])

    def _block(
        self, columnar: ColumnarReader, timeline: LogTimeline, block: list[str], first: int
    ) -> Iterator[Event | TrialRun | TextRun]:
        from anemon.parsing.columnar import TextRun
        from anemon.parsing.protocol import plain_text

        parser = self._parser
        text, at, arm = 0, 0.0, None  # plain text lines counted, not yet given
        for item in columnar.block(block):
            if isinstance(item, int) and plain_text(block[item]):
                if not text:  # the first's time and arm are every one's: such lines change
                    at, arm = timeline.t, parser.current_arm  # neither, but a TrialRun does
                text += 1  # before it comes (`ColumnarReader.block`)
                continue
            if text:
                yield TextRun(text, at, arm)
                text = 0
            if not isinstance(item, int):
                yield item
                continue
            seen = parser.warnings
            event = parser.parse(block[item], t=timeline.t, wall=timeline.wall)
            if parser.warnings != seen:
                self._warn(first + item, parser.last_rejected, parser.warnings - seen)
            yield event
        if text:
            yield TextRun(text, at, arm)


@contextmanager
def paused_gc() -> Iterator[None]:
    """No garbage collection within (many new objects, no cycles among them): the whole-file
    commands read a SOURCE so (each collection would scan every object read so far)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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

    def place_trials(self, app_t: np.ndarray) -> np.ndarray:
        """`place` for a run of TRIAL lines without timestamps: each at the launch's base plus
        its `t=` (NaN: none, where it stays at the time so far), never before the one before."""
        import numpy as np

        own = np.where(np.isnan(app_t), -np.inf, self._base + app_t)
        t = np.maximum.accumulate(np.concatenate(([self.t], own)))[1:]
        if len(t):
            self.t = float(t[-1])
        return t


def no_records(path: Path) -> NoRecordsError:
    """The error of a SOURCE that holds no bench record, saying what was looked for."""
    return NoRecordsError(
        f"no bench records in {path}: looked for an anemon recording, a bench log "
        f"(START, TRIAL, END lines), {LOOKED_FOR}"
    )


def open_source(path: Path) -> SourceReader:
    """Check a SOURCE and tell what it is; every failure is one SourceError line.

    The SOURCE is opened once and read as a stream (what was read to tell what it is is kept
    for the reading), so a pipe, a FIFO or /dev/stdin works as a SOURCE."""
    stream = _Stream.open(path)
    try:
        head = _text_head(stream, path)
        header = _recording_header(head, path)
    except SourceError:
        stream.close()
        raise
    kind = "recording" if header is not None else kind_of(head) or "log"
    return SourceReader(path, kind, header, stream.compressed, stream=stream)


def _text_head(stream: _Stream, path: Path) -> bytes:
    """The start of a SOURCE, refused (SourceError) when it is empty or binary."""
    head = stream.head(_HEAD).removeprefix(BOM)
    if not head.strip():
        if stream.damage is not None:
            raise SourceError(f"{path}: {stream.damage}; nothing in it could be read")
        raise SourceError(f"{path}: the file is empty; point anemon at a bench log or recording")
    if is_binary(head):
        raise SourceError(f"{path}: binary data, not a bench log or an anemon recording")
    return head


def is_binary(head: bytes) -> bool:
    """The start of a file (decompressed if it is gzip) holds binary data, not text.

    Binary: it starts with a known binary magic number (gzip, zip, PNG, ELF, Mach-O, GGUF,
    NumPy, SQLite, zstd, xz), or is a safetensors file (an 8-byte little-endian header length,
    then a JSON object), or in its first 8 KiB more than 10 % of the bytes are NUL or other
    control bytes (tab, line endings, form feed and ESC excepted), or more than 30 % are
    control bytes and bytes that are not valid UTF-8 together. So a log with a few NUL bytes
    or a byte-order mark, or mis-encoded (Latin-1) text, is text; a file of mostly NULs (a
    sparse file, UTF-16) or random bytes is not.
    """
    head = head.removeprefix(BOM)
    if head.startswith(_MAGIC) or _is_safetensors(head):
        return True
    probe = head[:_BINARY_PROBE]
    if not probe:
        return False
    controls = sum(1 for byte in probe if byte < 0x20 and byte not in _TEXT_CONTROLS)
    controls += probe.count(0x7F)
    decoded = probe.decode("utf-8", errors="replace")
    invalid = decoded.count("\ufffd") - probe.count("\ufffd".encode())
    size = len(probe)
    return controls > _CONTROL_SHARE * size or controls + invalid > _SUSPICIOUS_SHARE * size


def _is_safetensors(head: bytes) -> bool:
    size = int.from_bytes(head[:8], "little")
    return len(head) > 10 and head[8:10] == b'{"' and 0 < size < 1 << 30


def check_text(path: Path) -> None:
    """Refuse (SourceError) a file that exists but is binary or compressed: `watch` follows
    a text log as it grows, which neither can be."""
    stream = _Stream.open(path, inflate=False)
    try:
        head = stream.head(_HEAD)
    finally:
        stream.close()
    if stream.compressed or is_binary(head):
        raise SourceError(f"{path}: binary data, not a bench log; watch follows a text log")


class _Stream:
    """A SOURCE's bytes as chunks, decompressed if they are gzip, from one open file.

    `head` reads ahead (kept, and given again first when iterated), so a pipe is told apart
    and then read in one pass. A gzip stream cut short or damaged ends early, and `damage`
    says where; nothing raises past the first read."""

    def __init__(self, path: Path, file: BinaryIO, inflate: bool) -> None:
        self._path = path
        self._file = file
        self.damage: str | None = None
        self._consumed = 0  # bytes read from the file
        first = _read_some(file, path)
        self._consumed = len(first)
        self.compressed = first.startswith(_GZIP_MAGIC)
        raw = self._raw(first)
        self._chunks = self._inflate(raw) if self.compressed and inflate else raw
        self._ahead: list[bytes] = []

    @classmethod
    def open(cls, path: Path, inflate: bool = True) -> _Stream:
        try:
            file = path.open("rb")
        except OSError as e:
            raise _source_error(path, e) from None
        try:
            mode = _fstat_mode(file)
            if stat.S_ISDIR(mode):
                raise SourceError(f"{path}: is a directory; give a log or recording file")
            return cls(path, file, inflate)
        except BaseException:
            file.close()
            raise

    def head(self, size: int) -> bytes:
        """The first `size` bytes (fewer if the stream is shorter), read ahead and kept."""
        have = sum(len(chunk) for chunk in self._ahead)
        while have < size and (chunk := next(self._chunks, None)) is not None:
            self._ahead.append(chunk)
            have += len(chunk)
        return b"".join(self._ahead)[:size]

    def __iter__(self) -> Iterator[bytes]:
        ahead, self._ahead = self._ahead, []
        yield from ahead
        yield from self._chunks

    def close(self) -> None:
        self._file.close()

    def _raw(self, first: bytes) -> Iterator[bytes]:
        try:
            if first:
                yield first
            while chunk := self._file.read(_CHUNK):
                self._consumed += len(chunk)
                yield chunk
        except OSError as e:  # an I/O error mid-read: what was read is kept
            self.damage = f"cannot read past byte {self._consumed} ({e.strerror or e})"
        finally:
            self._file.close()

    def _inflate(self, raw: Iterator[bytes]) -> Iterator[bytes]:
        """Decompressed chunks; every gzip member in turn (as gzip does); trailing zeros
        ignored. Damage and a stream cut short stop it, with `damage` saying where."""
        inflater = zlib.decompressobj(wbits=31)
        started = False  # the current member has had input
        for chunk in raw:
            data = chunk
            while data:
                started = True
                before = inflater.copy()  # to salvage what precedes damage in `data`
                try:
                    out = inflater.decompress(data, _INFLATE_MAX)  # bounded: no bomb
                except zlib.error as e:
                    yield from _salvage(before, data)
                    self.damage = self._where(f"damaged gzip data ({e})")
                    return
                if out:
                    yield out
                data = inflater.unconsumed_tail
                if inflater.eof:
                    data, started = inflater.unused_data, False
                    if data and not data.startswith(_GZIP_MAGIC):
                        if data.strip(b"\0"):
                            self.damage = self._where("data after the end of the gzip stream")
                            return
                        data = b""
                    inflater = zlib.decompressobj(wbits=31)
        if started and not inflater.eof and self.damage is None:
            self.damage = f"the gzip stream is cut short (the file ends at byte {self._consumed})"

    def _where(self, what: str) -> str:
        return f"{what} within the first {self._consumed} bytes of the file"


def _salvage(inflater: Any, data: bytes) -> Iterator[bytes]:
    """What `inflater` makes of `data` byte by byte until the damage (a bad block, or a
    trailer whose check fails after all the member's data came out whole)."""
    for index in range(len(data)):
        try:
            out = inflater.decompress(data[index : index + 1])
        except zlib.error:
            return
        if out:
            yield out


def _read_some(file: BinaryIO, path: Path) -> bytes:
    """The first chunk: at least the 2 bytes of a gzip magic, unless the stream is shorter."""
    data = b""
    try:
        while len(data) < len(_GZIP_MAGIC) and (part := file.read(_CHUNK)):
            data += part
    except OSError as e:
        raise _source_error(path, e) from None
    return data


def _fstat_mode(file: BinaryIO) -> int:
    return os.fstat(file.fileno()).st_mode


def _source_error(path: Path, error: OSError) -> SourceError:
    if isinstance(error, FileNotFoundError):
        return MissingSourceError(f"{path}: no such file")
    if isinstance(error, IsADirectoryError):
        return SourceError(f"{path}: is a directory; give a log or recording file")
    if isinstance(error, PermissionError):
        return SourceError(f"{path}: permission denied; check the file's permissions")
    return SourceError(f"{path}: cannot read it ({error.strerror or error})")


def _recording_header(head: bytes, path: Path) -> dict[str, Any] | None:
    first = head.split(b"\n", 1)[0].strip()
    if not first.startswith(b"{"):
        return None
    from anemon.recording.codec import FORMAT, VERSION, shown_with_kind  # recordings only

    try:
        header = json.loads(first)
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return None
    version = header.get("version")
    if type(version) is not int:  # true is an int to isinstance; "2" and 2.5 are not versions
        found = "missing" if "version" not in header else shown_with_kind(version)
        raise SourceError(
            f"{path}: recording version is {found}, expected an integer; "
            "the header is damaged or the file was not written by anemon"
        )
    if version > VERSION:
        raise SourceError(
            f"{path}: recording format version {version} is newer than this anemon reads "
            f"({VERSION}); upgrade anemon"
        )
    if version < 1:  # versions count from 1: no anemon wrote this one
        raise SourceError(
            f"{path}: recording version is {version}, expected 1 to {VERSION}; "
            "the header is damaged or the file was not written by anemon"
        )
    return header
