"""A watch of a mirror that does not exist yet says so: a marker "waiting for PATH" (logged and
recorded) and the feed's `status_note`, until the file exists or a line has been read."""

from __future__ import annotations

import asyncio
from pathlib import Path

from anemon.events import MarkerEvent
from anemon.feeds.mirror import WAITING_SOURCE, MirrorFeed
from anemon.pipeline import Pipeline
from anemon.ui.status import status_text

LINE = "TRIAL arm=a trial=0 warmup=0 t=0.0 decode_tps=50 gen=256\n"


def waiting_markers(feed: MirrorFeed) -> list[str]:
    return [m.note for m in feed.session.markers if m.source == WAITING_SOURCE]


async def test_a_missing_mirror_is_waited_for_and_said_so_until_a_line_comes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "later.log"
    feed = MirrorFeed(path, Pipeline(), poll_s=0.02)
    assert feed.status_note == f"waiting for {path}"
    task = asyncio.create_task(feed.run())
    await asyncio.sleep(0.05)
    assert waiting_markers(feed) == [f"waiting for {path}"]
    assert isinstance(feed.session.log[-1], MarkerEvent)  # in the log panel
    shown = status_text(feed.session, feed.title, waiting=feed.status_note).plain
    assert f"waiting for {path}" in shown
    path.write_text(LINE)
    for _ in range(100):
        if feed.session.arms:
            break
        await asyncio.sleep(0.02)
    feed.stop()
    await task
    assert feed.status_note is None
    shown = status_text(feed.session, feed.title, waiting=feed.status_note).plain
    assert "waiting" not in shown


async def test_a_mirror_that_exists_is_not_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "now.log"
    path.write_text("")
    feed = MirrorFeed(path, Pipeline(), poll_s=0.02)
    assert feed.status_note is None
    task = asyncio.create_task(feed.run())
    await asyncio.sleep(0.05)
    feed.stop()
    await task
    assert waiting_markers(feed) == []
