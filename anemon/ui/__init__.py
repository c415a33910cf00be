"""The dashboard (Textual). The only package that imports Textual; CLI commands call `launch`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from anemon.ui.layouts import LayoutError, resolve

if TYPE_CHECKING:
    from anemon.feeds.lifecycle import Ending
    from anemon.feeds.runs import Run, Runs
    from anemon.ui.app import Dashboard
    from anemon.ui.overlay import Overlay

__all__ = ["DashboardView", "LayoutError", "launch"]


def launch(
    runs: Runs,
    layout: str | None = None,
    *,
    save_dir: Path | None = None,
    overlay: Overlay | None = None,
) -> Ending:
    """Show the dashboard on `runs` until the operator quits (or a signal); how it ended.

    One run fills the screen; several have a tab each under an overview strip. `layout` is a
    built-in name or a .tcss path, checked before the app starts (LayoutError, exit 2); None:
    the default, or the compact layout in a terminal too small for it. The runs' lifecycle is
    `run_feeds`'s: live feeds run beside the app; on quit they are stopped, allowed to finish
    reading what is pending, then closed — as on SIGINT. `overlay`: a reference session drawn
    dimmed under the charts (`replay --overlay`).
    """
    path = resolve(layout or "default")
    from anemon.feeds.lifecycle import run_feeds_sync
    from anemon.ui.app import Dashboard

    app = Dashboard(runs, path, save_dir=save_dir, chosen=layout is not None, overlay=overlay)
    return run_feeds_sync(runs, DashboardView(app))


class DashboardView:
    """The dashboard as the view of `run_feeds`: the app runs beside the feeds."""

    def __init__(self, app: Dashboard, *, headless: bool = False) -> None:
        self.app = app
        self.headless = headless
        """No terminal (tests)."""

    async def show(self) -> None:
        await self.app.run_async(headless=self.headless)

    def leave(self) -> None:
        self.app.leave()

    def failed(self, run: Run, error: BaseException) -> None:
        """On screen (a lone run's is raised again after quit)."""
        self.app.run_failed(run, error)
