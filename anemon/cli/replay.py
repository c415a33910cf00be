"""`anemon replay SOURCE [--speed X|max] [--headless]`: a recording or raw log, played back.

Exit status: 0 played (headless: to its end) or quit; 130 stopped by SIGINT/SIGTERM/SIGHUP
(headless: no summary then), in the dashboard too, and from the first moments after start-up.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from anemon.cli.common import (
    INTERRUPTED,
    add_view_options,
    add_warnings_option,
    report_warnings,
    speed,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("replay", help="play a recording or a raw log through the dashboard")
    parser.add_argument("source", type=Path, metavar="SOURCE")
    parser.add_argument("--speed", type=speed, default=1.0, help="a factor, or max (default 1)")
    add_view_options(parser)
    add_warnings_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from anemon.devices import reads_power
    from anemon.feeds.replay import ReplayFeed
    from anemon.recording.reader import open_source

    if not args.headless:
        from anemon import ui

        ui.resolve(
            args.layout or "default"
        )  # a bad layout is a usage error before the source is read
    # ReplayFeed.open, keeping the reader for its warnings
    reader = open_source(args.source)
    events = list(reader)
    power = reads_power(reader.device_kind)
    feed = ReplayFeed(events, str(args.source), reader.tag, power, speed=args.speed)
    if not args.headless:
        return INTERRUPTED if ui.launch(feed, args.layout).signal else 0
    from anemon.headless import HeadlessView, run_headless

    view = HeadlessView()
    if run_headless(feed, view).signal:
        return INTERRUPTED
    view.finish(feed.session, title=feed.title)
    report_warnings(str(args.source), reader.warnings, reader.listed, listing=args.warnings)
    return 0
