"""`anemon export SOURCE --format csv|parquet|json|md [-o OUT]`: every trial as a table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

FORMATS = ("csv", "parquet", "json", "md")


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("export", help="every trial (and telemetry) as a table")
    parser.add_argument("source", type=Path, metavar="SOURCE")
    parser.add_argument("--format", choices=FORMATS, required=True)
    parser.add_argument("-o", "--output", type=Path, metavar="OUT", help="file (default stdout)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from anemon.analysis.export import export_frame, write_table
    from anemon.analysis.load import load_sessions

    (loaded,) = load_sessions([args.source])
    text = write_table(export_frame(loaded.session), args.format, args.output)
    if text is not None:
        sys.stdout.write(text)
    return 0
