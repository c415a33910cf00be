"""`anemon export SOURCE --format csv|parquet|json|md|sqlite [-o OUT]`: every trial as a table
(sqlite: a database of the session, its arms, rounds, trials and telemetry)."""

from __future__ import annotations

import argparse
import os
import sqlite3
from pathlib import Path

from anemon.cli.common import add_warnings_option, report_warnings, write_stdout
from anemon.errors import AnemonError, OutputError
from anemon.paths import not_a_folder, same_file

FORMATS = ("csv", "parquet", "json", "md", "sqlite")
TABLES = ("trials", "telemetry")
"""`--table`: `anemon.analysis.export.TABLES` (not imported: pandas stays out of `--help`)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("export", help="every trial (or telemetry reading) as a table")
    parser.add_argument("source", type=Path, metavar="SOURCE")
    parser.add_argument("--format", choices=FORMATS, required=True)
    parser.add_argument("-o", "--output", type=Path, metavar="OUT",
                        help="file (default stdout; parquet and sqlite need one)")  # fmt: skip
    parser.add_argument("--table", choices=TABLES, default="trials",
                        help="the rows: every trial (default) or the host's telemetry readings; "
                        "sqlite has both")  # fmt: skip
    add_warnings_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from anemon.analysis.export import table_parts, write_sqlite, write_table
    from anemon.analysis.load import load_sessions
    from anemon.analysis.render import title

    if args.format == "sqlite" and args.output is None:  # before reading anything
        raise AnemonError("--format sqlite writes a database file: give it one with -o OUT.db")
    rows = args.format == "sqlite" or args.table == "telemetry"  # their tables are the rows
    figures = args.format == "sqlite"  # its arms table; the others write rows only
    (loaded,) = load_sessions([args.source], rows=rows, charts=False, figures=figures)
    if args.output is not None:
        check_output(args.output, args.source, database=args.format == "sqlite")
    try:
        if args.format == "sqlite":
            text = None
            write_sqlite(loaded, args.output, str(args.source))
        else:
            heading = f"{title(str(args.source), loaded.session, loaded.device)} · {args.table}"
            parts = table_parts(loaded.session, args.table)
            text = write_table(parts, args.format, args.output, heading)
    except (OSError, sqlite3.Error) as e:  # a disk full, or a race with check_output
        if args.output is None or isinstance(e, BrokenPipeError):
            raise
        raise OutputError(f"cannot write {args.output}: {_reason(e)}") from e
    if text is not None:
        write_stdout(text)
    report_warnings(str(args.source), loaded.warnings, loaded.listed, listing=args.warnings)
    return 0


def check_output(out: Path, source: Path, *, database: bool = False) -> None:
    """Refuse, before anything is written, a directory where the file should be, a folder
    that does not exist or cannot be written to, and the SOURCE itself (the same file under
    any name: a hard link too). `database`: OUT must be a regular file (a FIFO or a device
    cannot hold one; the other formats stream into those)."""
    try:
        if out.is_dir():
            raise OutputError(f"cannot write {out}: it is a directory; give a file name")
        parent = out.parent
        if (blocking := not_a_folder(out)) is not None:
            raise OutputError(f"cannot write {out}: {blocking} is not a folder")
        if not parent.is_dir():
            raise OutputError(f"cannot write {out}: no such directory {parent}")
        exists = out.exists()
        if same_file(out, source):
            raise OutputError(f"cannot write {out}: it is the SOURCE; give another file name")
        if exists and database and not out.is_file():
            raise OutputError(f"cannot write {out}: not a regular file; give a file name")
    except PermissionError:  # a folder on the way that may not be searched
        raise OutputError(f"cannot write {out}: permission denied") from None
    folder = os.path.dirname(os.path.realpath(out))  # where the new file is made (replacing)
    if not os.access(folder, os.W_OK) or (exists and not os.access(out, os.W_OK)):
        raise OutputError(f"cannot write {out}: permission denied")


def _reason(e: Exception) -> str:
    return e.strerror.lower() if isinstance(e, OSError) and e.strerror else str(e)
