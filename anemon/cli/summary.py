"""`anemon summary SOURCE... [--format table|md|csv|json]`: the per-arm table."""

from __future__ import annotations

import argparse
from pathlib import Path

from anemon.cli.common import add_warnings_option, report_warnings, write_stdout

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
    from anemon.analysis.summary import summarize

    loaded = list(load_sessions(args.sources))  # every SOURCE read before any output
    sources = [
        render.SourceSummaries(
            str(given),
            summarize(one.session),
            one.device,
            render.title(str(given), one.session, one.device),
        )
        for given, one in zip(args.sources, loaded, strict=True)
    ]
    if args.format == "table":
        from anemon.headless import make_console

        console = make_console()
        for source in sources:
            console.print(render.rich_table(source.summaries, source.source, source.device))
    else:
        text = {
            "md": render.markdown_of_sources,
            "csv": render.to_csv_of_sources,
            "json": render.to_json_of_sources,
        }
        write_stdout(text[args.format](sources))
    for given, one in zip(args.sources, loaded, strict=True):
        report_warnings(str(given), one.warnings, one.listed, listing=args.warnings)
    return 0
