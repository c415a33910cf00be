"""The Recorder: appends every event to a JSON Lines file, crash-safe to the last line."""

from __future__ import annotations

import json
import os
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from anemon import __version__
from anemon.events import Event, PhaseEvent
from anemon.recording.codec import to_record

FORMAT = "anemon-recording"
VERSION = 1


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


class Recorder:
    """Writes the header at open; `write()` flushes per event and fsyncs at phase changes."""

    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        self.count = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = path.open("w", encoding="utf-8")
        self._write_line(header)
        self._sync()

    def write(self, event: Event) -> None:
        if self._file is None:
            return
        self._write_line(to_record(event))
        self.count += 1
        if isinstance(event, PhaseEvent):
            self._sync()

    def close(self) -> None:
        if self._file is not None:
            self._sync()
            self._file.close()
            self._file = None

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write_line(self, obj: dict[str, Any]) -> None:
        assert self._file is not None
        self._file.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._file.flush()

    def _sync(self) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())


def default_path(tag: str, directory: Path | None = None) -> Path:
    """Where a live command records when not told: ./anemon-recordings/<tag>-<time>.jsonl."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return (directory or Path("anemon-recordings")) / f"{tag}-{stamp}.jsonl"
