"""The status line's tag: the recording's plan tag when the feed has one, else the START's."""

from __future__ import annotations

from pathlib import Path

from anemon.events import StartEvent
from anemon.feeds.replay import ReplayFeed
from anemon.store import Session
from anemon.ui.status import StatusLine, session_tag, status_text

from .helpers import MakeApp
from .sample import replay_feed

RECORDING = Path(__file__).parents[2] / "recordings" / "sim-sustain-1b-v2.jsonl"


def start(arm: str, t: float, tag: str | None) -> StartEvent:
    return StartEvent(t=t, wall=0.0, arm=arm, tag=tag, line=f"START arm={arm}")


def test_the_tag_is_the_latest_start_lines_when_no_plan_names_it() -> None:
    session = Session()
    assert session_tag(session) is None
    assert "tag —" in status_text(session, "x").plain
    session.add(start("a", 1.0, "first"))
    session.add(start("b", 9.0, None))
    assert "tag first" in status_text(session, "x").plain
    session.add(start("c", 12.0, "second"))
    assert session_tag(session) == "second"
    assert "tag plan-v1" in status_text(session, "x", "plan-v1").plain


def test_a_replay_of_a_recording_carries_its_headers_plan_tag() -> None:
    assert ReplayFeed.open(RECORDING).tag == "sim-sustain-1b-v2"


async def test_the_status_line_shows_the_feeds_tag(make_app: MakeApp) -> None:
    app = make_app(feed=replay_feed(tag="plan-tag"))  # as a recording's header gives it
    async with app.run_test(size=(120, 40)) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert "tag plan-tag" in str(app.query_one(StatusLine).render())


async def test_without_a_feed_tag_the_status_line_shows_the_starts(make_app: MakeApp) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.redraw(force=True)
        await pilot.pause()
        assert "tag sustain-v2" in str(app.query_one(StatusLine).render())
