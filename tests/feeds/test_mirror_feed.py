"""A watch of a mirror that does not exist yet says so: a marker "waiting for PATH" (logged and
recorded) and the feed's `status_note`, until the file exists or a line has been read."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path

from anemon.events import ErrorEvent, MarkerEvent, TrialEvent
from anemon.feeds.mirror import WAITING_SOURCE, MirrorFeed
from anemon.pipeline import Pipeline
from anemon.recording.writer import Recorder, make_header
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


async def test_a_rotated_mirror_records_each_trial_once_and_its_launch_goes_on(
    tmp_path: Path,
) -> None:
    path, recording = tmp_path / "bench.log", tmp_path / "r.jsonl"
    lines = ["START arm=a model=m mode=sustain"]
    lines += [f"TRIAL arm=a trial={i} warmup=0 t={i}.0 decode_tps=50 gen=256" for i in range(300)]
    text = "".join(line + "\n" for line in lines)
    path.write_text(text[: text.index("TRIAL arm=a trial=200 ")])
    pipeline = Pipeline(recorder=Recorder(recording, make_header("test")))
    trials: list[TrialEvent] = []
    errors: list[ErrorEvent] = []
    arrived = asyncio.Event()

    def count(event: object) -> None:
        if isinstance(event, TrialEvent | ErrorEvent):
            (trials if isinstance(event, TrialEvent) else errors).append(event)
            arrived.set()

    async def until(done: Callable[[], bool]) -> None:
        while not done():
            await arrived.wait()
            arrived.clear()

    pipeline.subscribe(count)
    feed = MirrorFeed(path, pipeline, poll_s=0.02)
    task = asyncio.create_task(feed.run())
    async with asyncio.timeout(30):
        await until(lambda: len(trials) >= 200)
        kept, new = text.index("TRIAL arm=a trial=100 "), text.index("TRIAL arm=a trial=200 ")
        rotated = text[kept:new] + "ERROR: out of memory\n" + text[new:]
        (tmp_path / "bench.tmp").write_text(rotated)
        os.replace(tmp_path / "bench.tmp", path)  # size-capped: 100 dropped, 100 appended
        await until(lambda: len(trials) >= 300)
        feed.stop()
        await task
    pipeline.close()
    recorded = [json.loads(line) for line in recording.read_text().splitlines()[1:]]
    kinds = [event["kind"] for event in recorded]
    assert kinds.count("trial") == 300 and len(trials) == 300  # 300 written, 300 recorded
    assert sorted({event["trial"] for event in recorded if event["kind"] == "trial"}) == list(
        range(300)
    )
    (reset,) = [event for event in recorded if event["kind"] == "reset"]
    assert "rotated" in reset["reason"] and "100 lines" in reset["reason"]
    assert errors[0].arm == "a"  # the same log: its launch in progress goes on
