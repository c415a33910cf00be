"""SOURCEs into Sessions: all of them checked before any is read, so bad input fails fast."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from anemon.recording.reader import open_source
from anemon.store import Session


@dataclass(frozen=True, slots=True)
class Loaded:
    path: Path
    session: Session
    warnings: int
    """Lines that were torn, too long, not JSON, or with values that did not parse."""
    device: str | None = None
    """The device backend a recording was made with ("sim", "devicectl", ...); None for a
    raw log or a recording that does not say."""


def load_sessions(paths: Sequence[Path]) -> Iterator[Loaded]:
    readers = [open_source(path) for path in paths]
    for reader in readers:
        session = Session.from_events(reader)
        yield Loaded(reader.path, session, reader.warnings, reader.device_kind)
