"""Each layout on fixed data, fixed clock, fixed size (Textual and the plot libraries at
constraints.txt's versions).

Review every `--snapshot-update` in its HTML report before committing it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot

from anemon.events import Event, TelemetryEvent, TrialEvent
from anemon.feeds.runs import Runs
from anemon.store import Session
from anemon.ui import layouts
from anemon.ui.app import Dashboard
from anemon.ui.charts.chart import Chart
from anemon.ui.overlay import Overlay

from .helpers import MakeApp, settle
from .sample import MARKUP_LINE, replay_feed, sustained

SIZES = {"default": (120, 40), "compact": (80, 24), "wall": (160, 50), "ab": (120, 40)}


async def draw_now(pilot: Pilot) -> None:
    """Draw every panel before the screenshot instead of waiting for the redraw timer; the chart
    canvases sized first (under `snap_compare`, app.run, they stay 1x1 until a layout refresh,
    and the plots would be empty), then wait for the screen to settle."""
    for chart in pilot.app.query(Chart):
        chart.refresh(layout=True)
    await pilot.pause()
    pilot.app.redraw(force=True)
    await settle(pilot)


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


def slower_event(event: Event) -> Event:
    """The reference: decode and prefill 0.8 of the sample's, a thermal state cooler, 0.8
    of its power."""
    if isinstance(event, TrialEvent) and event.decode_tps is not None:
        return replace(event, decode_tps=event.decode_tps * 0.8,
                       prompt_tps=(event.prompt_tps or 0) * 0.8,
                       thermal=max(0, (event.thermal or 0) - 1))  # fmt: skip
    if isinstance(event, TelemetryEvent) and event.power_w is not None:
        return replace(event, power_w=event.power_w * 0.8)
    return event


def test_default_with_an_overlay(tmp_path: Path, snap_compare) -> None:
    """`replay --overlay`: the reference (every decode rate 0.8 of the replayed one's, so
    "vs ref" is +25 %) dimmed under the charts, `o` in the footer."""
    slower = [slower_event(e) for e in sustained()]
    overlay = Overlay.of("runs/reference.jsonl", Session.from_events(slower))
    feed = replay_feed(markers_dir=tmp_path)
    app = Dashboard(Runs.one(feed), layouts.resolve("default"), save_dir=tmp_path, overlay=overlay)
    assert snap_compare(app, terminal_size=SIZES["default"], run_before=draw_now)


@pytest.mark.parametrize("layout", ["default", "wall", "compact"])
def test_process_readings(layout: str, make_app: MakeApp, tmp_path: Path, snap_compare) -> None:
    """The app's memory chart (per arm, each with its decode), GPU %, its CPU and memory in
    the status line, the arms' peak in the tables (compact: text only)."""
    app = make_app(layout, replay_feed(sustained(process=True), markers_dir=tmp_path))
    assert snap_compare(app, terminal_size=SIZES[layout], run_before=draw_now)
