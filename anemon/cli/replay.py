"""`anemon replay SOURCE [--speed X|max] [--headless]`: a recording or raw log, played back."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from anemon.cli.common import add_view_options, speed


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("replay", help="play a recording or a raw log through the dashboard")
    parser.add_argument("source", type=Path, metavar="SOURCE")
    parser.add_argument("--speed", type=speed, default=1.0, help="a factor, or max")
    add_view_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from anemon.feeds import ReplayFeed

    if args.headless:
        from anemon.headless import HeadlessView

        view = HeadlessView()
        feed = ReplayFeed.open(args.source, speed=args.speed, listener=view.handle)
        asyncio.run(feed.run())
        view.finish(feed.session, title=feed.title)
        return 0
    from anemon import ui

    return ui.launch(ReplayFeed.open(args.source, speed=args.speed), args.layout)
