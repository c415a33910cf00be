"""`anemon export SOURCE --format csv|parquet|json|md [-o OUT]`: every trial as a table."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from anemon.cli.common import add_warnings_option, report_warnings
from anemon.errors import OutputError

FORMATS = ("csv", "parquet", "json", "md")


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("export", help="every trial (and telemetry) as a table")
    parser.add_argument("source", type=Path, metavar="SOURCE")
    parser.add_argument("--format", choices=FORMATS, required=True)
    parser.add_argument("-o", "--output", type=Path, metavar="OUT", help="file (default stdout)")
    add_warnings_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from anemon.analysis.export import export_frame, write_table
    from anemon.analysis.load import load_sessions

    (loaded,) = load_sessions([args.source])
    if args.output is not None:
        check_output(args.output)
    try:
        text = write_table(export_frame(loaded.session), args.format, args.output)
    except OSError as e:  # a disk full, or a race with check_output
        if args.output is None or isinstance(e, BrokenPipeError):
            raise
        raise OutputError(f"cannot write {args.output}: {_reason(e)}") from e
    if text is not None:
        sys.stdout.write(text)
        sys.stdout.flush()  # a closed pipe shows here, inside main(), not at interpreter exit
    report_warnings(str(args.source), loaded.warnings, loaded.listed, listing=args.warnings)
    return 0


def check_output(out: Path) -> None:
    """Refuse, before anything is written, a directory where the file should be or a
    directory that does not exist or cannot be written to."""
    if out.is_dir():
        raise OutputError(f"cannot write {out}: it is a directory; give a file name")
    parent = out.parent
    if not parent.is_dir():
        raise OutputError(f"cannot write {out}: no such directory {parent}")
    if not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise OutputError(f"cannot write {out}: permission denied")


def _reason(e: Exception) -> str:
    return e.strerror.lower() if isinstance(e, OSError) and e.strerror else str(e)
