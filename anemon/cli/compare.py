"""`anemon compare SOURCE SOURCE... [--by arm|compute] [--format table|md|csv|json]`: arms
side by side across sessions (docs/spec/cli.md "v2: compare")."""

from __future__ import annotations

import argparse
from pathlib import Path

from anemon.cli.common import add_warnings_option, report_warnings, write_stdout
from anemon.errors import AnemonError

FORMATS = ("table", "md", "csv", "json")


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "compare", help="arms side by side across sessions, with changes against the first"
    )
    parser.add_argument("sources", nargs="+", type=Path, metavar="SOURCE")
    parser.add_argument("--by", choices=("arm", "compute"), default="arm",
                        help="match arms by name (default) or by compute (ane, gpu)")  # fmt: skip
    parser.add_argument("--format", choices=FORMATS, default="table")
    add_warnings_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if len(args.sources) < 2:
        raise AnemonError(
            "compare needs at least two SOURCEs (see 'anemon compare --help'); "
            "for one, use 'anemon summary'"
        )
    from anemon.analysis import compare
    from anemon.analysis.load import load_sessions
    from anemon.analysis.summary import summarize

    # every SOURCE read before any output
    loaded = list(load_sessions(args.sources, rows=False, charts=False))
    sources = [
        compare.SourceArms.of(
            str(given), one.session, summarize(one.session, one.readings), one.device
        )
        for given, one in zip(args.sources, loaded, strict=True)
    ]
    comparison = compare.compare(sources, by=args.by)
    if args.format == "table":
        from anemon.headless import make_console

        console = make_console()
        console.print(compare.rich_table(comparison, console.width))
    else:
        write_stdout(compare.FORMATS[args.format](comparison))
    for given, one in zip(args.sources, loaded, strict=True):
        report_warnings(str(given), one.warnings, one.listed, listing=args.warnings)
    return 0
