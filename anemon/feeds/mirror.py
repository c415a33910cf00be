"""A live mirrored log that something else refreshes (`anemon watch PATH`)."""

from __future__ import annotations

from pathlib import Path

from anemon.events import MarkerEvent
from anemon.feeds.live import LiveFeed
from anemon.pipeline import LineFeed, Pipeline
from anemon.sources.items import LogItem
from anemon.sources.mirror import MirrorTailer

WAITING_SOURCE = "watch"
"""The `source` of the marker a watch records when its mirror does not exist yet."""


class MirrorFeed(LiveFeed):
    """Every complete line of the mirror, once, however it is refreshed; on `stop`, what is
    already written is read before `run` ends. A mirror that does not exist yet is waited for,
    and said so: a marker "waiting for PATH" (in the log panel and the recording) and the
    `status_note`, until the file exists or a line has been read."""

    def __init__(self, path: Path, pipeline: Pipeline, poll_s: float = 1.0) -> None:
        super().__init__(str(path), pipeline)
        self._path = path
        self._tailer = MirrorTailer(path, poll_s=poll_s)
        self._lines = LineFeed(pipeline, path.name)
        self._read = False

    @property
    def status_note(self) -> str | None:
        """ "waiting for PATH" while the mirror does not exist and nothing has been read."""
        if self._read or self._path.exists():
            return None
        return f"waiting for {self._path}"

    async def run(self) -> None:
        if (note := self.status_note) is not None:
            self.pipeline.emit_now(MarkerEvent, source=WAITING_SOURCE, note=note)
        async for batch in self._tailer.follow(self._stop):
            self._feed(batch)

    def _feed(self, batch: list[LogItem]) -> None:
        self._read = True
        self._lines.feed_items(batch)
