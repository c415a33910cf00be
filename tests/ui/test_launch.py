"""The dashboard as the lifecycle's view: a live feed runs beside the app; on quit (or a
signal) it is stopped, drained, then closed; a replay is driven by the app, not run."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from anemon.clock import RealClock
from anemon.control.plan import parse_plan
from anemon.feeds import Feed
from anemon.feeds.lifecycle import Ending, run_feeds
from anemon.feeds.plan import PlanRun
from anemon.feeds.replay import ReplayFeed
from anemon.feeds.runs import Runs
from anemon.ui import DashboardView
from anemon.ui.app import Dashboard
from anemon.ui.layouts import resolve
from tests.control.helpers import one_arm

from .helpers import StepLog
from .sample import sustained

TIMEOUT_S = 30.0


async def show(feed: Feed, then: str | None = "quit") -> tuple[Dashboard, Ending]:
    """Run `feed` in a headless dashboard; once it is up, run the action `then` (None: leave
    the app running)."""
    app = Dashboard(runs := Runs.one(feed), resolve("default"))

    async def when_running() -> None:
        while not app.is_running:
            await asyncio.sleep(0.01)
        if then is not None:
            await app.run_action(then)

    async with asyncio.timeout(TIMEOUT_S):
        operator = asyncio.create_task(when_running())
        ending = await run_feeds(runs, DashboardView(app, headless=True))
        await operator
    return app, ending


async def test_quitting_a_live_dashboard_stops_drains_and_closes() -> None:
    feed = StepLog()
    _, ending = await show(feed)
    assert feed.steps == ["stop (quit)", "drained", "close"]
    assert ending.signal is None


async def test_a_feed_that_fails_says_so_on_screen_and_again_after_quit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Broken(StepLog):
        async def run(self) -> None:
            raise RuntimeError("device gone")

    feed = Broken()
    notes: list[str] = []
    app = Dashboard(runs := Runs.one(feed), resolve("default"))
    monkeypatch.setattr(app, "notify", lambda message, **_: notes.append(message))

    def failures() -> list[str]:  # a headless app is 80x25: it also says how to go compact
        return [note for note in notes if note.startswith("feed stopped")]

    async def quit_once_told() -> None:
        while not failures():
            await asyncio.sleep(0.01)
        app.exit()

    async with asyncio.timeout(TIMEOUT_S):
        quitter = asyncio.create_task(quit_once_told())
        with pytest.raises(RuntimeError, match="device gone"):
            await run_feeds(runs, DashboardView(app, headless=True))
        await quitter
    assert failures() == ["feed stopped: device gone"]
    assert feed.steps == ["close"]


async def test_sigterm_leaves_the_dashboard_and_stops_the_feed() -> None:
    feed = StepLog()
    app = Dashboard(runs := Runs.one(feed), resolve("default"))

    async def terminate_when_running() -> None:
        while not app.is_running:
            await asyncio.sleep(0.01)
        os.kill(os.getpid(), signal.SIGTERM)

    async with asyncio.timeout(TIMEOUT_S):
        sender = asyncio.create_task(terminate_when_running())
        ending = await run_feeds(runs, DashboardView(app, headless=True))
        await sender
    assert ending.signal == "SIGTERM"
    assert feed.steps == ["stop (SIGTERM)", "drained", "close"]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


async def test_the_dashboard_drives_a_replay_itself() -> None:
    class NotRun(ReplayFeed):
        async def run(self) -> None:
            raise AssertionError("a replay shown in the dashboard is played by its timer")

    feed = NotRun(sustained(), "sample", speed=float("inf"))

    async def quit_at_the_end(app: Dashboard) -> None:
        while not feed.replay.finished:
            await asyncio.sleep(0.01)
        app.exit()

    app = Dashboard(runs := Runs.one(feed), resolve("default"))
    async with asyncio.timeout(TIMEOUT_S):
        quitter = asyncio.create_task(quit_at_the_end(app))
        await run_feeds(runs, DashboardView(app, headless=True))
        await quitter
    assert feed.session.counts["trial"] == 62


PLAN = one_arm("q", seconds=600)


async def test_quitting_a_plan_run_aborts_its_session() -> None:
    feed = PlanRun(parse_plan(PLAN, "q.toml"), RealClock(speed=100.0))
    _, ending = await show(feed)
    assert feed.result is not None and feed.result.aborted
    assert feed.result.exit_status == 130
    assert "abort session (quit)" in [marker.note for marker in feed.session.markers]
    assert ending.signal is None


async def test_the_end_of_a_plan_run_says_where_its_recording_is(tmp_path: Path) -> None:
    record = tmp_path / "q.jsonl"
    feed = PlanRun(parse_plan(PLAN.replace("600", "20"), "q.toml"), RealClock(speed=100.0),
                   record=record)  # fmt: skip
    assert feed.record == record and not feed.finished
    app = Dashboard(runs := Runs.one(feed), resolve("default"))

    async def quit_when_done() -> None:
        while not app.pane.run_over:
            await asyncio.sleep(0.01)
        app.exit()

    async with asyncio.timeout(TIMEOUT_S):
        quitter = asyncio.create_task(quit_when_done())
        await run_feeds(runs, DashboardView(app, headless=True))
        await quitter
    assert feed.finished and feed.result is not None and not feed.result.aborted
    assert app.pane.panels.status.note == f"run done, recording at {record}"
    assert not app.check_action("abort_arm", ())
