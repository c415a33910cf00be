"""Save an SVG of the dashboard on a recording, taken by the app itself (docs/screenshot.svg).

python -m anemon.ui.screenshot recordings/sim-battery-1b.jsonl docs/screenshot.svg
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from anemon.feeds.replay import ReplayFeed
from anemon.feeds.runs import Runs
from anemon.ui.app import Dashboard
from anemon.ui.charts.chart import Chart
from anemon.ui.layouts import resolve


async def save(source: Path, out: Path, layout: str, size: tuple[int, int]) -> Path:
    """The whole recording played (a fixed clock: nothing depends on when it is taken)."""
    feed = ReplayFeed.open(source, monotonic=lambda: 0.0)
    feed.replay.seek(feed.replay.duration)
    app = Dashboard(Runs.one(feed), resolve(layout))
    async with app.run_test(size=size) as pilot:
        for chart in app.query(Chart):  # the canvases sized before the plots are drawn
            chart.refresh(layout=True)
        await pilot.pause()
        app.redraw(force=True)
        await pilot.pause()
        return Path(app.save_screenshot(out.name, str(out.parent)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--layout", default="default")
    parser.add_argument("--size", default="120x40", help="WIDTHxHEIGHT")
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.split("x"))
    print(asyncio.run(save(args.source, args.out, args.layout, (width, height))))


if __name__ == "__main__":
    main()
