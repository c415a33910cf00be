"""The session index (`anemon sessions DIR`): each recording's header and closing summary.

A recording of version 2 that closed normally ends with a `summary` event (docs/spec/cli.md
"Recordings"), so a recording is listed from its first line and its last line, read
backwards from the end: never every event, however long the session was. A version 1
recording, a session that was killed (no summary) and a compressed recording (which cannot be
read from its end) are listed from their header, with a note saying how to summarize them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from anemon.errors import AnemonError, SourceError
from anemon.events import SUMMARY_VERSION, EndEvent, Event, ReportEvent, StartEvent, SummaryEvent
from anemon.recording.codec import decode, from_record
from anemon.recording.foreign import FORMATS
from anemon.recording.reader import MAX_LINE, SourceReader, open_source
from anemon.text import printable

SUFFIXES = (".jsonl", ".jsonl.gz")
"""The files of DIR that are looked at (recordings are written as .jsonl)."""
_BLOCK = 1 << 16
"""Bytes read at a time, backwards from the end, to find the last line."""


class SessionsError(AnemonError):
    """DIR cannot be listed (exit 2)."""


@dataclass(frozen=True, slots=True)
class ArmEntry:
    """One arm of a session, as its closing summary says."""

    name: str
    status: str | None = None
    j_per_token: float | None = None
    energy_note: str | None = None
    """Why J/token is withheld ("charging", "no power samples", "span too short")."""
    status_reason: str | None = None
    """Why its last round did not end done ("jetsam: per-process-limit at 2.2 GB")."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One recording in the index."""

    path: Path
    version: int
    tag: str | None
    created: datetime | None
    device: str | None
    os_build: str | None
    arms: tuple[ArmEntry, ...] = ()
    status: str | None = None
    trials: int | None = None
    note: str | None = None
    """Why there is no summary (None: there is one)."""
    summary_version: int | None = None
    """The rules of its summary's figures (None: a summary made before version 3)."""
    kind: str = "recording"
    """"recording", or the foreign format it is in (`recording.foreign.FORMATS`)."""

    @property
    def summarized(self) -> bool:
        return self.note is None


@dataclass(frozen=True, slots=True)
class OsChange:
    """The OS build differs from the previous session's with the same tag (by date)."""

    tag: str
    before: str
    after: str
    path: Path
    """The later session's recording."""
    previous: Path

    def message(self) -> str:
        return (
            f"OS build changed {self.before} → {self.after} since the previous session of "
            f"{self.tag}: compile caches rebuild after an OS update"
        )


@dataclass(frozen=True, slots=True)
class Index:
    entries: tuple[Entry, ...]
    """Sorted by date (undated last), then by file name."""
    changes: tuple[OsChange, ...] = ()
    skipped: tuple[tuple[Path, str], ...] = ()
    """Files that are not recordings or cannot be read, with why."""


def no_summary(path: Path) -> str:
    return f"no summary: run `anemon summary {printable(str(path))}`"


def build_index(directory: Path) -> Index:
    """Every recording directly in `directory`; SessionsError when it cannot be listed."""
    entries: list[Entry] = []
    skipped: list[tuple[Path, str]] = []
    for path in recording_files(directory):
        try:
            entries.append(read_entry(path))
        except SourceError as e:
            skipped.append((path, str(e)))
    ordered = tuple(sorted(entries, key=_by_date))
    return Index(ordered, tuple(os_changes(ordered)), tuple(skipped))


def recording_files(directory: Path) -> list[Path]:
    """The .jsonl and .jsonl.gz files directly in `directory`, by name."""
    shown = printable(str(directory))
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        why = "no such directory; give the folder of recordings (default anemon-recordings/)"
        raise SessionsError(f"{shown}: {why}") from None
    except NotADirectoryError:
        why = "not a directory; give the folder of recordings (`anemon summary FILE`: one file)"
        raise SessionsError(f"{shown}: {why}") from None
    except PermissionError:
        raise SessionsError(f"{shown}: permission denied; check the folder's permissions") from None
    except OSError as e:
        raise SessionsError(f"{shown}: cannot list it ({e.strerror or e})") from None
    paths = (directory / name for name in names if name.endswith(SUFFIXES))
    return [path for path in paths if path.is_file()]


def read_entry(path: Path) -> Entry:
    """A recording's entry from its header and last line; SourceError when it is not one."""
    reader = open_source(path)
    if reader.kind in FORMATS:
        return foreign_entry(reader)
    reader.close()  # only the head was read
    header = reader.header
    if header is None:
        raise SourceError(f"{path}: a raw log, not an anemon recording")
    summary: SummaryEvent | None = None
    note = f"compressed: {no_summary(path)}" if reader.compressed else None
    if not reader.compressed:
        summary = last_summary(path)
        if summary is None:
            why = "version 1" if header["version"] < 2 else "the session did not close"
            note = f"{why}: {no_summary(path)}"
    device = header.get("device")
    device = device if isinstance(device, dict) else {}
    base = Entry(
        path=path,
        version=header["version"],
        tag=reader.tag,
        created=_date(header.get("created")),
        device=_text(device.get("name")),
        os_build=_text(device.get("os")),
        note=note,
    )
    return base if summary is None else _with_summary(base, summary)


def foreign_entry(reader: SourceReader) -> Entry:
    """Another tool's file, read whole (one is a few runs: no summary line to read instead):
    its arms, how each ended (END: done, aborted, else failed), their trials and the energy
    their tool reported, the date of its first run."""
    arms: dict[str, ArmEntry] = {}
    trials = 0
    created: datetime | None = None
    os_build: str | None = None
    for item in reader.runs():
        if isinstance(item, StartEvent) and item.arm is not None:
            created = created or datetime.fromtimestamp(item.wall, UTC)
            os_build = os_build or item.os
            arms.setdefault(item.arm, ArmEntry(item.arm))
        elif isinstance(item, ReportEvent) and item.arm in arms:
            arms[item.arm] = replace(arms[item.arm], j_per_token=item.j_per_token,
                                     energy_note=item.energy_note or None)  # fmt: skip
        elif isinstance(item, EndEvent) and item.arm in arms:
            ended = (
                "done"
                if item.reason == "done"
                else "aborted"
                if item.reason == "aborted"
                else "failed"
            )
            arms[item.arm] = replace(arms[item.arm], status=ended)
        elif not isinstance(item, Event):  # a run of trials, as columns
            trials += len(item)
    ends = {arm.status for arm in arms.values()}
    status = next((s for s in ("failed", "aborted") if s in ends), "done" if arms else None)
    return Entry(path=reader.path, version=0, tag=None, created=created, device=None,
                 os_build=os_build, arms=tuple(arms.values()), status=status, trials=trials,
                 summary_version=SUMMARY_VERSION, kind=reader.kind)  # fmt: skip


def _with_summary(entry: Entry, summary: SummaryEvent) -> Entry:
    """The summary's facts over the header's: an appended session's summary is the last one's."""
    return Entry(
        path=entry.path,
        version=entry.version,
        tag=summary.tag or entry.tag,
        created=_date(summary.created) or entry.created,
        device=summary.device or entry.device,
        os_build=summary.os_build or entry.os_build,
        arms=tuple(arm for arm in map(_arm, summary.arms) if arm is not None),
        status=summary.status,
        trials=summary.trials,
        summary_version=summary.summary_version,
    )


def last_summary(path: Path) -> SummaryEvent | None:
    """The closing summary event, if the last line of the file is one."""
    line = last_line(path)
    if line is None:
        return None
    try:
        record = decode(line.decode("utf-8", errors="replace"))
    except ValueError:  # a torn last line: the session was killed
        return None
    if not isinstance(record, dict) or record.get("kind") != SummaryEvent.kind:
        return None
    event = from_record(record, path.name)
    return event if isinstance(event, SummaryEvent) else None


def last_line(path: Path, limit: int = MAX_LINE) -> bytes | None:
    """The last non-blank line, read backwards from the end in blocks; None when it is longer
    than `limit` (no summary is that long: it is not one)."""
    with path.open("rb") as stream:
        position = stream.seek(0, os.SEEK_END)
        tail = b""
        while position > 0:
            step = min(_BLOCK, position)
            position -= step
            stream.seek(position)
            tail = stream.read(step) + tail
            body = tail.rstrip()  # every ASCII space: a line of only whitespace is blank
            cut = max(body.rfind(b"\n"), body.rfind(b"\r"))
            if cut >= 0 or position == 0:
                line = body[cut + 1 :]
                return line if line.strip() and len(line) <= limit else None
            if len(body) > limit:
                return None
    return None


def os_changes(entries: Iterable[Entry]) -> Iterable[OsChange]:
    """Each session (in date order) whose OS build differs from the previous one of its tag."""
    last: dict[str, Entry] = {}
    for entry in entries:
        if entry.tag is None or entry.os_build is None:
            continue
        previous = last.get(entry.tag)
        if previous is not None and previous.os_build != entry.os_build:
            assert previous.os_build is not None
            yield OsChange(entry.tag, previous.os_build, entry.os_build, entry.path, previous.path)
        last[entry.tag] = entry


def _arm(data: Mapping[str, Any]) -> ArmEntry | None:
    name = data.get("arm")
    if not isinstance(name, str):
        return None
    j = data.get("j_per_token")
    if not (isinstance(j, int | float) and not isinstance(j, bool) and math.isfinite(j)):
        j = None
    return ArmEntry(name, _text(data.get("status")), j, _text(data.get("energy_note")),
                    _text(data.get("status_reason")))  # fmt: skip


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _date(value: object) -> datetime | None:
    """An ISO-8601 time, made aware (UTC when it says no zone); None if it is not one."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


_LAST = datetime.max.replace(tzinfo=UTC)


def _by_date(entry: Entry) -> tuple[bool, datetime, str]:
    return (entry.created is None, entry.created or _LAST, entry.path.name)


def entry_json(entry: Entry, changes: Iterable[OsChange] = ()) -> dict[str, object]:
    """One entry as `sessions --format json` writes it (strict JSON: no NaN)."""
    return {
        "path": str(entry.path),
        "kind": entry.kind,
        "version": entry.version,
        "tag": entry.tag,
        "created": entry.created.isoformat() if entry.created else None,
        "device": entry.device,
        "os_build": entry.os_build,
        "arms": [arm.name for arm in entry.arms],
        "status": entry.status,
        "trials": entry.trials,
        "j_per_token": {arm.name: arm.j_per_token for arm in entry.arms},
        "energy_note": {arm.name: arm.energy_note for arm in entry.arms},
        "status_reason": {arm.name: arm.status_reason for arm in entry.arms},
        "summary": entry.summarized,
        "summary_version": entry.summary_version,
        "note": entry.note,
        "warnings": [c.message() for c in changes if c.path == entry.path],
    }
