"""The dashboard (Textual). The only package that imports Textual; CLI commands call `launch`."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.ui.layouts import LayoutError, resolve

if TYPE_CHECKING:
    from anemon.feeds import Feed
    from anemon.ui.app import Dashboard

__all__ = ["LayoutError", "launch"]

STOP_TIMEOUT_S = 10.0
"""How long a live feed may take, after quit, to read what is pending."""


def launch(feed: Feed, layout: str = "default", *, save_dir: Path | None = None) -> int:
    """Show the dashboard on `feed` until the operator quits; returns the exit status (0).

    `layout` is a built-in name or a .tcss path, checked before the app starts (LayoutError,
    exit 2). A live feed runs beside the app; on quit it is stopped (`feed.stop()` when it has
    one), allowed to finish reading what is pending, then closed — as on SIGINT.
    """
    path = resolve(layout)
    from anemon.ui.app import Dashboard

    asyncio.run(serve(Dashboard(feed, path, save_dir=save_dir), feed))
    return 0


async def serve(app: Dashboard, feed: Feed, *, headless: bool = False) -> None:
    """Run `app`, with `feed.run()` beside it when live; stop and close the feed after."""
    runner = None
    if feed.replay is None:
        runner = asyncio.create_task(feed.run(), name="anemon-feed")
        runner.add_done_callback(partial_notify(app))
    try:
        await app.run_async(headless=headless)
    finally:
        try:
            if runner is not None:
                await finish(feed, runner)
        finally:
            feed.close()


def partial_notify(app: Dashboard):
    """A live feed that fails while the app runs says so on screen (and again after quit)."""

    def done(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None and app.is_running:
            app.notify(f"feed stopped: {task.exception()}", severity="error", timeout=30)

    return done


async def finish(feed: Feed, runner: asyncio.Task[None], timeout: float = STOP_TIMEOUT_S) -> None:
    """Stop a live feed and let it drain; re-raise what it failed with."""
    stop = getattr(feed, "stop", None)
    if not runner.done():
        if stop is None:
            runner.cancel()
        else:
            stop()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(runner), timeout)
            runner.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await runner
