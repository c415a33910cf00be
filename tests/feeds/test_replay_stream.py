"""`anemon replay` of a big recording: it starts from its head and reads the rest as it plays,
behind the dashboard (every event kept, for seeks) or headless (played events let go)."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest

from anemon.analysis import load
from anemon.analysis.load import BENCH_KINDS
from anemon.analysis.summary import summarize
from anemon.cli import main
from anemon.feeds import replay
from anemon.feeds.replay import ReplayFeed, head_of
from anemon.feeds.runs import Runs
from anemon.recording.reader import open_source
from anemon.recording.writer import make_header
from anemon.sources.replay import CHUNK
from anemon.ui.app import Dashboard
from anemon.ui.layouts import resolve

TRIALS = 3 * CHUNK + 100


def big_recording(tmp_path: Path, trials: int = TRIALS) -> Path:
    lines = [json.dumps(make_header("x"))]
    lines.append(json.dumps({"kind": "start", "t": 0.0, "wall": 100.0, "arm": "a"}))
    for i in range(trials):
        lines.append(json.dumps({"kind": "trial", "t": 1.0 + i, "wall": 101.0 + i, "arm": "a",
                                 "trial": i, "decode_tps": 40.0 + i % 7}))  # fmt: skip
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_headless_replay_holds_a_few_chunks_of_a_big_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = big_recording(tmp_path)
    monkeypatch.setattr(replay, "HEAD", 100)
    held: list[int] = []
    played = ReplayFeed._played

    def spy(self: ReplayFeed, event: object) -> None:
        held.append(len(self.replay.events))
        played(self, event)  # type: ignore[arg-type]

    monkeypatch.setattr(ReplayFeed, "_played", spy)
    assert main(["replay", str(path), "--headless", "--speed", "max"]) == 0
    assert len(held) == TRIALS + 1  # every event played, to the summary
    assert max(held) <= 3 * CHUNK  # not the whole recording at once
    out = capsys.readouterr().out
    assert f"│ {TRIALS:,} " in out or f"│ {TRIALS} " in out  # the summary counts every trial


def test_a_streamed_replay_is_the_replay_of_the_whole_recording(tmp_path: Path) -> None:
    path = big_recording(tmp_path)
    whole = ReplayFeed.open(path, speed=math.inf)
    whole.replay.seek(whole.replay.duration)
    reader = open_source(path)
    events = iter(reader)
    head = head_of(events, BENCH_KINDS, size=100)
    assert head is not None and len(head) == 100
    feed = ReplayFeed.stream(reader, head, events, headless=True, speed=math.inf)
    assert feed.title == str(path) and not feed.finished
    asyncio.run(feed.run())
    assert feed.finished
    assert summarize(feed.session) == summarize(whole.session)


def test_a_source_whose_bench_records_come_late_is_read_to_them(tmp_path: Path) -> None:
    path = tmp_path / "late.log"
    path.write_text("noise\n" * 300 + "START arm=a\nTRIAL arm=a trial=0 decode_tps=4\n")
    events = iter(open_source(path))
    head = head_of(events, BENCH_KINDS, size=10)
    assert head is not None and len(head) == 301 and head[-1].kind == "start"
    assert head_of(iter(open_source(tmp_path / "late.log")), {"end"}) is None


async def test_the_dashboard_shows_a_big_recording_and_loads_the_rest_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = big_recording(tmp_path)
    reader = open_source(path)
    events = iter(reader)
    head = head_of(events, BENCH_KINDS, size=100)
    assert head is not None
    feed = ReplayFeed.stream(reader, head, events, headless=False, speed=math.inf)
    app = Dashboard(Runs.one(feed), resolve("default"))
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(600):  # the rest read by a thread; the app's timer takes it
            if feed.finished:
                break
            await pilot.pause(0.05)
        assert feed.finished and len(feed.session.arms["a"]) == TRIALS
        feed.replay.toggle_pause()
        await pilot.press("home")  # every event kept: a seek back plays from the start
        await pilot.pause()
        assert len(feed.session.arms["a"]) == 0


def test_a_big_recordings_first_events_come_before_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from anemon.recording import codec

    path = big_recording(tmp_path, 70_000)
    read = codec.read_fast
    lines: list[str] = []

    def counted(text: str, source: str) -> object:
        lines.append(text)
        return read(text, source)

    monkeypatch.setattr(codec, "read_fast", counted)
    events = iter(open_source(path))
    assert next(events).kind == "start"
    assert len(lines) <= 4096  # a first batch, not the reader's 65,536 (~0.4 s of CPU)
    assert sum(1 for _ in events) == 70_000  # then the rest, every event


@pytest.mark.parametrize("name", ["sim-sustain-1b-v2.jsonl", "sim-battery-1b.jsonl"])
def test_a_headless_replay_lets_go_of_the_readings_it_has_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Headless, the figures' readings are read as they are played and the session's rows of
    them let go (`analysis.load.read_readings`): the summaries are the whole replay's."""
    monkeypatch.setattr(load, "READ_EVERY", 7)
    path = Path(__file__).resolve().parents[2] / "recordings" / name
    whole = ReplayFeed.open(path, speed=math.inf)
    whole.replay.seek(whole.replay.duration)
    reader = open_source(path)
    events = iter(reader)
    head = head_of(events, BENCH_KINDS, size=100)
    assert head is not None
    feed = ReplayFeed.stream(reader, head, events, headless=True, speed=math.inf)
    held: list[bool] = []  # whether the 7th latest reading was still held, as events played

    def seventh_latest_held(event: object) -> None:
        if len(feed.session.telemetry) >= 7:
            held.append(_held(feed, len(feed.session.telemetry) - 7))

    feed.subscribe(seventh_latest_held)
    asyncio.run(feed.run())
    assert len(held) > 100 and not any(held)  # read and let go as they came
    readings = feed.readings()
    assert readings is not None and readings.read == len(whole.session.telemetry) > 100
    assert summarize(feed.session, readings) == summarize(whole.session)
    with pytest.raises(IndexError, match="released"):
        feed.session.telemetry[0]
    assert ReplayFeed.open(path).readings() is None  # a dashboard's: it keeps its rows


def _held(feed: ReplayFeed, index: int) -> bool:
    try:
        feed.session.telemetry[index]
    except IndexError:
        return False
    return True
