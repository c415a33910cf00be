"""`anemon export SOURCE --format csv|parquet|json|md|sqlite [-o OUT]`: every trial as a table
(sqlite: a database of the session, its arms, rounds, trials and telemetry)."""

from __future__ import annotations

import argparse
import os
import sqlite3
from pathlib import Path

from anemon.cli.common import add_warnings_option, report_warnings, write_stdout
from anemon.errors import AnemonError, OutputError

FORMATS = ("csv", "parquet", "json", "md", "sqlite")


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("export", help="every trial (and telemetry) as a table")
    parser.add_argument("source", type=Path, metavar="SOURCE")
    parser.add_argument("--format", choices=FORMATS, required=True)
    parser.add_argument("-o", "--output", type=Path, metavar="OUT",
                        help="file (default stdout; parquet and sqlite need one)")  # fmt: skip
    add_warnings_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from anemon.analysis.export import export_frame, load_with_header, write_sqlite, write_table
    from anemon.analysis.load import load_sessions

    if args.format == "sqlite" and args.output is None:  # before reading anything
        raise AnemonError("--format sqlite writes a database file: give it one with -o OUT.db")
    if args.format == "sqlite":
        loaded, header = load_with_header(args.source)
    else:
        (loaded,) = load_sessions([args.source])
    if args.output is not None:
        check_output(args.output, args.source, renamed=args.format == "sqlite")
    try:
        if args.format == "sqlite":
            text = None
            write_sqlite(loaded.session, args.output, str(args.source), header)
        else:
            text = write_table(export_frame(loaded.session), args.format, args.output)
    except (OSError, sqlite3.Error) as e:  # a disk full, or a race with check_output
        if args.output is None or isinstance(e, BrokenPipeError):
            raise
        raise OutputError(f"cannot write {args.output}: {_reason(e)}") from e
    if text is not None:
        write_stdout(text)
    report_warnings(str(args.source), loaded.warnings, loaded.listed, listing=args.warnings)
    return 0


def check_output(out: Path, source: Path, *, renamed: bool = False) -> None:
    """Refuse, before anything is written, a directory where the file should be, a directory
    that does not exist or cannot be written to, and the SOURCE itself. `renamed`: OUT is
    written aside and renamed over (the database), so it must be a regular file: renamed over
    a FIFO or a device, a file would take its place."""
    try:
        if out.is_dir():
            raise OutputError(f"cannot write {out}: it is a directory; give a file name")
        parent = out.parent
        if not parent.is_dir():
            raise OutputError(f"cannot write {out}: no such directory {parent}")
        exists = out.exists()
        if exists and out.resolve() == source.resolve():
            raise OutputError(f"cannot write {out}: it is the SOURCE; give another file name")
        if exists and renamed and (out.is_symlink() or not out.is_file()):
            raise OutputError(f"cannot write {out}: not a regular file; give a file name")
    except PermissionError:  # a folder on the way that may not be searched
        raise OutputError(f"cannot write {out}: permission denied") from None
    if not os.access(parent, os.W_OK) or (exists and not os.access(out, os.W_OK)):
        raise OutputError(f"cannot write {out}: permission denied")


def _reason(e: Exception) -> str:
    return e.strerror.lower() if isinstance(e, OSError) and e.strerror else str(e)
