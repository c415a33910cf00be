"""What the dashboard tests import (fixtures stay in conftest.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.pilot import Pilot

from anemon.control.battery import Prompt
from anemon.feeds.live import LiveFeed
from anemon.pipeline import Pipeline
from anemon.ui.app import Dashboard

MakeApp = Callable[..., Dashboard]
"""The `make_app` fixture: `make_app(layout="default", feed=None)`."""
DEFAULT_CHARTS = {"decode", "power", "memory", "prefill", "thermal", "battery"}
"""The charts the default layout shows."""


class CallLog:
    """Run controls (the Controller's operator actions) that only note what was called; the
    queue's hold as the Controller keeps it, and a `prompt` a test sets."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.paused = False
        self.prompt: Prompt | None = None

    async def abort_arm(self) -> None:
        self.calls.append("abort_arm")

    async def abort_session(self) -> None:
        self.calls.append("abort_session")

    async def skip_cooldown(self) -> None:
        self.calls.append("skip_cooldown")

    async def extend_cooldown(self, seconds: float) -> None:
        self.calls.append(f"extend_cooldown {seconds:g}")

    async def pause_queue(self) -> None:
        self.calls.append("pause_queue")
        self.paused = True

    async def resume_queue(self) -> None:
        self.calls.append("resume_queue")
        self.paused = False


def live_feed(controls: CallLog | None = None) -> LiveFeed:
    """A live session as the dashboard sees it: events emitted on its pipeline, no replay;
    with `controls`, a plan run's keys."""
    return LiveFeed("fake iPhone", Pipeline(), controls=controls)


class StepLog(LiveFeed):
    """A live feed that notes each step of its lifecycle: stopped (and why), drained, closed."""

    def __init__(self) -> None:
        super().__init__("live", Pipeline())
        self.steps: list[str] = []

    def stop(self, why: str = "quit") -> None:
        self.steps.append(f"stop ({why})")
        super().stop(why)

    async def run(self) -> None:
        await super().run()
        await asyncio.sleep(0)  # reading what is pending
        self.steps.append("drained")

    def close(self) -> None:
        self.steps.append("close")
        super().close()


async def settle(pilot: Pilot, pauses: int = 20) -> None:
    """Pause until the screen stops changing: a chart draws at its new size a refresh after its
    Resized, and its legend is placed a refresh after that draw; under load each can come a
    pause later than on a quiet machine, so a fixed number of pauses is not a settled screen."""
    before = pilot.app.export_screenshot()
    for _ in range(pauses):
        await pilot.pause()
        now = pilot.app.export_screenshot()
        if now == before:
            return
        before = now
