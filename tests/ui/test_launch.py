"""launch/serve: a live feed runs beside the app; on quit it is stopped, drained, then closed."""

from __future__ import annotations

import asyncio

import pytest

from anemon.store import Session
from anemon.ui import finish, serve
from anemon.ui.app import Dashboard
from anemon.ui.layouts import resolve


class StoppableFeed:
    replay = None
    title = "live"

    def __init__(self) -> None:
        self.session = Session()
        self.stopping = asyncio.Event()
        self.steps: list[str] = []

    def marker(self, note: str) -> None:
        pass

    def stop(self) -> None:
        self.steps.append("stop")
        self.stopping.set()

    async def run(self) -> None:
        await self.stopping.wait()
        await asyncio.sleep(0)  # reading what is pending
        self.steps.append("drained")

    def close(self) -> None:
        self.steps.append("close")


async def test_finish_stops_the_feed_and_waits_for_it() -> None:
    feed = StoppableFeed()
    runner = asyncio.create_task(feed.run())
    await finish(feed, runner, timeout=5)
    assert feed.steps == ["stop", "drained"]


async def test_finish_reraises_what_the_feed_failed_with() -> None:
    class Broken(StoppableFeed):
        async def run(self) -> None:
            raise RuntimeError("device gone")

    feed = Broken()
    runner = asyncio.create_task(feed.run())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="device gone"):
        await finish(feed, runner)


async def test_quitting_a_live_dashboard_stops_drains_and_closes() -> None:
    feed = StoppableFeed()
    app = Dashboard(feed, resolve("default"))

    async def quit_when_running() -> None:
        async with asyncio.timeout(10):
            while not app.is_running:
                await asyncio.sleep(0.01)
        await app.run_action("quit")

    quitter = asyncio.create_task(quit_when_running())
    await serve(app, feed, headless=True)
    await quitter
    assert feed.steps == ["stop", "drained", "close"]
