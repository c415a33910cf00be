"""`anemon summary SOURCE... [--format table|md|csv|json]`: the per-arm table."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.cli.common import add_warnings_option, report_warnings, write_stdout

if TYPE_CHECKING:
    from anemon.analysis.render import SourceSummaries

FORMATS = ("table", "md", "csv", "json")


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("summary", help="the per-arm summary of logs or recordings")
    parser.add_argument("sources", nargs="+", type=Path, metavar="SOURCE")
    parser.add_argument("--format", choices=FORMATS, default="table")
    add_warnings_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from anemon.analysis import render
    from anemon.analysis.load import load_sessions
    from anemon.analysis.summary import each_summary, summarize

    # every SOURCE read before any output
    loaded = list(load_sessions(args.sources, rows=False, charts=False))
    if args.format == "json":  # an arm at a time: 100,000 arms' summaries are never all held
        objects = (
            data
            for given, one in zip(args.sources, loaded, strict=True)
            for data in render.with_source(str(given), each_summary(one.session, one.readings))
        )
        for part in render.json_list(objects):
            write_stdout(part)
    else:
        _write(args.format, [
            render.SourceSummaries(str(given), summarize(one.session, one.readings), one.device,
                                   render.title(str(given), one.session, one.device))
            for given, one in zip(args.sources, loaded, strict=True)
        ])  # fmt: skip
    for given, one in zip(args.sources, loaded, strict=True):
        report_warnings(str(given), one.warnings, one.listed, listing=args.warnings)
    return 0


def _write(form: str, sources: list[SourceSummaries]) -> None:
    """The table, Markdown or CSV of every SOURCE."""
    from anemon.analysis import render

    if form == "table":
        from anemon.headless import make_console

        console = make_console()
        for source in sources:
            render.print_table(console, source.summaries, source.source, source.device)
    else:
        text = {"md": render.markdown_of_sources, "csv": render.to_csv_of_sources}
        write_stdout(text[form](sources))
