"""The dashboard (Textual). The only package that imports Textual; CLI commands call `launch`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from anemon.ui.layouts import LayoutError, resolve

if TYPE_CHECKING:
    from anemon.feeds import Feed
    from anemon.feeds.lifecycle import Ending
    from anemon.feeds.several import SeveralRuns
    from anemon.ui.app import Dashboard
    from anemon.ui.overlay import Overlay

__all__ = ["DashboardView", "LayoutError", "launch", "launch_several"]


def launch(
    feed: Feed,
    layout: str | None = None,
    *,
    save_dir: Path | None = None,
    overlay: Overlay | None = None,
) -> Ending:
    """Show the dashboard on `feed` until the operator quits (or a signal); how it ended.

    `layout` is a built-in name or a .tcss path, checked before the app starts (LayoutError,
    exit 2); None: the default, or the compact layout in a terminal too small for it. The
    feed's lifecycle is `run_feed`'s: a live feed runs beside the app; on quit it is stopped,
    allowed to finish reading what is pending, then closed — as on SIGINT. `overlay`: a
    reference session drawn dimmed under the charts (`replay --overlay`).
    """
    path = resolve(layout or "default")
    from anemon.feeds.lifecycle import run_feed_sync
    from anemon.ui.app import Dashboard

    app = Dashboard(feed, path, save_dir=save_dir, chosen=layout is not None, overlay=overlay)
    return run_feed_sync(feed, DashboardView(app))


def launch_several(several: SeveralRuns, layout: str | None = None) -> Ending:
    """`launch` for several runs at once: a tab per run, an overview strip above the tabs; on
    quit (or a signal) every run is stopped, drained and closed."""
    path = resolve(layout or "default")
    from anemon.feeds.lifecycle import run_feed_sync
    from anemon.ui.several import SeveralDashboard

    app = SeveralDashboard(several, path, chosen=layout is not None)
    return run_feed_sync(several, DashboardView(app))


class DashboardView:
    """The dashboard as the view of `run_feed`: the app runs beside the feed."""

    def __init__(self, app: Dashboard, *, headless: bool = False) -> None:
        self.app = app
        self.headless = headless
        """No terminal (tests)."""

    async def show(self) -> None:
        await self.app.run_async(headless=self.headless)

    def leave(self) -> None:
        self.app.leave()

    def failed(self, error: BaseException) -> None:
        """On screen (and raised again after quit)."""
        if self.app.is_running:
            self.app.notify(f"feed stopped: {error}", severity="error", timeout=30)
