"""A live mirrored log that something else refreshes (`anemon watch PATH`)."""

from __future__ import annotations

from pathlib import Path

from anemon.feeds.live import LiveFeed
from anemon.pipeline import LineFeed, Pipeline
from anemon.sources.mirror import MirrorTailer


class MirrorFeed(LiveFeed):
    """Every complete line of the mirror, once, however it is refreshed; on `stop`, what is
    already written is read before `run` ends."""

    def __init__(self, path: Path, pipeline: Pipeline, poll_s: float = 1.0) -> None:
        super().__init__(str(path), pipeline)
        self._tailer = MirrorTailer(path, poll_s=poll_s)
        self._lines = LineFeed(pipeline, path.name)

    async def run(self) -> None:
        async for batch in self._tailer.follow(self._stop):
            self._lines.feed_items(batch)
