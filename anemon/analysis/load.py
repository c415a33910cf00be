"""SOURCEs into Sessions: all of them checked before any is read, so bad input fails fast."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from anemon.errors import NoRecordsError
from anemon.recording.reader import LineWarning, SourceReader, open_source
from anemon.store import Session

BENCH_KINDS = ("start", "load", "trial", "idle", "end", "error")
"""The line protocol's records; a SOURCE with none of them is not a bench log."""


@dataclass(frozen=True, slots=True)
class Loaded:
    path: Path
    session: Session
    warnings: int
    """Lines that were torn, too long, not JSON, or with values that did not parse."""
    device: str | None = None
    """The device backend a recording was made with ("sim", "devicectl", ...); None for a
    raw log or a recording that does not say."""
    listed: tuple[LineWarning, ...] = ()
    """The first warnings (recording.reader.MAX_LISTED), each with its line number."""


def load_sessions(paths: Sequence[Path]) -> Iterator[Loaded]:
    """Each SOURCE's session, in order; NoRecordsError for one without a bench record."""
    readers: list[SourceReader] = []
    try:
        readers.extend(open_source(path) for path in paths)
        for reader in readers:
            session = Session.from_events(reader)
            if not any(session.counts[kind] for kind in BENCH_KINDS):
                raise NoRecordsError(f"no bench records in {reader.path}")
            yield Loaded(
                reader.path, session, reader.warnings, reader.device_kind, tuple(reader.listed)
            )
    finally:  # a later SOURCE refused: the earlier ones' streams are closed, not left to gc
        for reader in readers:
            reader.close()
