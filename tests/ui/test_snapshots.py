"""Each layout on fixed data, fixed clock, fixed size (textual pinned in pyproject.toml).

Review every `--snapshot-update` in its HTML report before committing it.
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from .helpers import MakeApp
from .sample import MARKUP_LINE, replay_feed, sustained

SIZES = {"default": (120, 40), "compact": (80, 24), "wall": (160, 50), "ab": (120, 40)}


async def draw_now(pilot: Pilot) -> None:
    """Draw every panel before the screenshot instead of waiting for the redraw timer."""
    pilot.app.redraw(force=True)
    await pilot.pause()


@pytest.mark.parametrize("layout", list(SIZES))
def test_layout(layout: str, make_app: MakeApp, snap_compare) -> None:
    assert snap_compare(make_app(layout), terminal_size=SIZES[layout], run_before=draw_now)


def test_default_paused_after_seeking_back(make_app: MakeApp, snap_compare) -> None:
    """The timeline, the table and the charts after a seek back rebuilt the Session."""
    assert snap_compare(
        make_app(),
        terminal_size=SIZES["default"],
        press=["space", "shift+left", "shift+left", "left"],
        run_before=draw_now,
    )


def test_log_shows_markup_and_escapes_literally(make_app: MakeApp, snap_compare) -> None:
    """The session up to just after a line full of Rich markup and ANSI escapes."""
    events = sustained()
    end = next(i for i, e in enumerate(events) if getattr(e, "line", None) == MARKUP_LINE)
    app = make_app(feed=replay_feed(events[: end + 2]))
    assert snap_compare(app, terminal_size=SIZES["default"], run_before=draw_now)
