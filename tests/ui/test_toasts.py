"""Issue 24: "at 80x24 ... a toast covers the keys help". A toast never covers the keys
help (`?`) nor the footer's keys; one that comes while the help is open is shown once it
closes (if it has not timed out by then)."""

from __future__ import annotations

import pytest
from textual.geometry import Region
from textual.widgets import Footer

from anemon.ui.help import KeysHelp

from .helpers import MakeApp


def shown_toasts(screen) -> list[Region]:
    """Where the screen's toasts are drawn (those it lays out and shows)."""
    return [t.region for t in screen.query("Toast") if t.visible and t.region.area]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_toast_never_covers_the_keys_help_nor_the_footer(
    make_app: MakeApp, size: tuple[int, int]
) -> None:
    app = make_app()
    async with app.run_test(size=size, notifications=True) as pilot:
        app.notify("a toast of several words, long enough to need two lines or three", timeout=60)
        await pilot.pause()
        footer = app.screen.query_one(Footer).region
        shown = shown_toasts(app.screen)  # with the replay's own, if it made one
        assert shown and not any(region.overlaps(footer) for region in shown)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, KeysHelp)
        app.notify("another toast, come while the keys help is open", timeout=60)
        await pilot.pause()
        help_box = app.screen.query_one("VerticalScroll").region
        assert not any(region.overlaps(help_box) for region in shown_toasts(app.screen))
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, KeysHelp)
        assert len(shown_toasts(app.screen)) == len(shown) + 1  # now the help is closed
