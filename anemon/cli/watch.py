"""`anemon watch PATH` (a mirror something else refreshes) or `anemon watch --device KIND ...`.

Ends on SIGINT/SIGTERM: pending lines read, recording closed, exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

from anemon.cli.common import add_record_options, add_view_options
from anemon.errors import AnemonError


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("watch", help="follow a mirrored bench log live")
    parser.add_argument("path", type=Path, nargs="?", metavar="PATH", help="the local mirror")
    parser.add_argument("--poll", type=float, default=1.0, metavar="S", help="re-check every S s")
    add_view_options(parser)
    add_record_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.path is None:
        raise AnemonError("watch needs a PATH (the mirrored log) to follow")
    if args.path.is_dir():
        raise AnemonError(f"{args.path}: is a directory; give the mirrored log file")
    feed = _make_feed(args)
    print(_recording_note(feed), file=sys.stderr)
    if not args.headless:
        from anemon import ui

        return ui.launch(feed, args.layout)
    return asyncio.run(_run_headless(feed))


def _make_feed(args: argparse.Namespace):
    from anemon.feeds import MirrorFeed
    from anemon.pipeline import Pipeline
    from anemon.recording.writer import Recorder, default_path, make_header

    recorder = None
    if not args.no_record:
        path = args.record or default_path(args.path.stem)
        recorder = Recorder(path, make_header(source=str(args.path)))
    return MirrorFeed(args.path, Pipeline(recorder=recorder), poll_s=args.poll)


def _recording_note(feed) -> str:
    recorder = feed.pipeline.recorder
    return f"recording to {recorder.path}" if recorder else "not recording (--no-record)"


async def _run_headless(feed) -> int:
    from anemon.headless import HeadlessView

    view = HeadlessView()
    feed.pipeline.subscribe(view.handle)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, feed.stop)
    try:
        await feed.run()
    finally:
        feed.close()
    view.finish(feed.session, title=feed.title)
    return 0
