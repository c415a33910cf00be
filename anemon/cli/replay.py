"""`anemon replay SOURCE [--speed X|max] [--overlay OTHER] [--headless]`: a recording or raw
log, played back; with `--overlay`, OTHER's arms are the reference (dimmed curves under the
charts, a "vs ref" column in the arms table; headless, a per-arm delta table at the end).

Exit status: 0 played (headless: to its end) or quit; 2 a SOURCE or OTHER that cannot be read
or has no bench record (before anything is shown); 130 stopped by SIGINT/SIGTERM/SIGHUP
(headless: no summary then), in the dashboard too, and from the first moments after start-up.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.cli.common import (
    INTERRUPTED,
    add_view_options,
    add_warnings_option,
    report_warnings,
    speed,
)
from anemon.errors import SourceError

if TYPE_CHECKING:
    from anemon.analysis.load import Loaded
    from anemon.analysis.summary import ArmSummary
    from anemon.headless import HeadlessView
    from anemon.store import Session
    from anemon.ui.overlay import Overlay


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("replay", help="play a recording or a raw log through the dashboard")
    parser.add_argument("source", type=Path, metavar="SOURCE")
    parser.add_argument(
        "--speed",
        type=speed,
        default=1.0,
        metavar="X|max",
        help="a factor up to 10000, or max (default 1)",
    )
    parser.add_argument(
        "--overlay", type=Path, metavar="OTHER",
        help="a recording or raw log drawn dimmed under the charts as the reference, each arm "
             "aligned with the same arm of SOURCE (by name, else by compute); headless: a "
             "table of the changes against it at the end",
    )  # fmt: skip
    add_view_options(parser)
    add_warnings_option(parser)
    parser.set_defaults(handler=run)


def load_overlay(path: Path) -> Loaded:
    """OTHER read whole, as `summary` reads a SOURCE; one that cannot be read, or holds no
    bench record, is a SourceError naming the option (exit 2)."""
    from anemon.analysis.load import load_sessions

    try:
        return next(iter(load_sessions([path], rows=False)))  # drawn: its charts kept
    except SourceError as e:
        raise type(e)(f"--overlay: {e} (OTHER: a recording or a raw bench log)") from None


def run(args: argparse.Namespace) -> int:
    from anemon.analysis.load import BENCH_KINDS
    from anemon.feeds.replay import ReplayFeed, head_of
    from anemon.recording.reader import no_records, open_source

    if not args.headless:
        from anemon import ui

        ui.resolve(
            args.layout or "default"
        )  # a bad layout is a usage error before the source is read
    # streamed from its head (a big recording shows at once), keeping the reader for its warnings
    reader = open_source(args.source)
    events = iter(reader)
    head = head_of(events, BENCH_KINDS)
    if head is None:  # as summary and export say
        raise no_records(reader.path)
    other = load_overlay(args.overlay) if args.overlay is not None else None
    feed = ReplayFeed.stream(reader, head, events, headless=args.headless, speed=args.speed)
    overlay = None
    if other is not None:
        from anemon.ui.overlay import Overlay

        overlay = Overlay.of(str(args.overlay), other.session, other.readings)
    from anemon.feeds.runs import Runs

    if not args.headless:
        return INTERRUPTED if ui.launch(Runs.one(feed), args.layout, overlay=overlay).signal else 0
    from anemon.headless import HeadlessView, make_console, run_headless

    view = HeadlessView(make_console())
    if run_headless(Runs.one(feed), view.console).signal:
        return INTERRUPTED
    summaries = view.finish(feed.session, title=feed.title, readings=feed.readings())
    if overlay is not None:
        print_deltas(view, feed.session, overlay, str(args.source), summaries)
    report_warnings(str(args.source), reader.warnings, reader.listed, listing=args.warnings)
    if other is not None:
        report_warnings(str(args.overlay), other.warnings, other.listed, listing=args.warnings)
    return 0


def print_deltas(
    view: HeadlessView, session: Session, overlay: Overlay, source: str,
    summaries: list[ArmSummary],
) -> None:  # fmt: skip
    """`anemon compare OTHER SOURCE`'s table, OTHER's arms under the names of the SOURCE arms
    they are matched to (by name, else by compute, as in the dashboard): every Δ is SOURCE's
    change against the reference. `summaries`: SOURCE's, as the summary table showed them."""
    from anemon.analysis import compare
    from anemon.ui.overlay import renamed

    sources = [
        compare.SourceArms.of(overlay.name, overlay.session, renamed(overlay, session)),
        compare.SourceArms.of(source, session, summaries),
    ]
    comparison = compare.compare(sources, by="arm")
    view.console.print(compare.rich_table(comparison, view.console.width))
