"""`anemon summary SOURCE... [--format table|md|csv|json]`: the per-arm table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

FORMATS = ("table", "md", "csv", "json")


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("summary", help="the per-arm summary of logs or recordings")
    parser.add_argument("sources", nargs="+", type=Path, metavar="SOURCE")
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from anemon.analysis import render
    from anemon.analysis.load import load_sessions
    from anemon.analysis.summary import summarize
    from anemon.headless import make_console

    for loaded in load_sessions(args.sources):
        summaries = summarize(loaded.session)
        if args.format == "table":
            console = make_console()
            console.print(render.rich_table(summaries, str(loaded.path), loaded.device))
            if loaded.warnings:
                console.print(f"{loaded.warnings} warning(s): lines or values that did not parse")
        elif args.format == "md":
            sys.stdout.write(render.markdown(summaries, loaded.device))
        else:
            text = {"csv": render.to_csv, "json": render.to_json}
            sys.stdout.write(text[args.format](summaries))
            if loaded.warnings:
                print(f"anemon: {loaded.path}: {loaded.warnings} warning(s)", file=sys.stderr)
    return 0
