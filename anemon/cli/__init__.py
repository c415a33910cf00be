"""The command line (docs/spec/cli.md): one module per command, each with `add_parser` and `run`.

Errors are one line on stderr (a traceback only with --debug); usage errors exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from anemon import __version__
from anemon.cli.common import INTERRUPTED
from anemon.errors import USAGE, AnemonError

COMMANDS = ("demo", "run", "watch", "replay", "summary", "export", "devices")
"""Each is the module anemon.cli.<name>; imported lazily so `--help` and `summary` start fast."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(USAGE, f"anemon: {message} (see 'anemon {self._command()}--help')\n")

    def _command(self) -> str:
        parts = self.prog.split()[1:]
        return " ".join(parts) + " " if parts else ""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="anemon", description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--version", action="version", version=f"anemon {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"anemon.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"anemon.cli.{name}":
                raise
            continue  # a command not built yet
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except AnemonError as e:
        if args.debug:
            raise
        print(f"anemon: {e}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        return INTERRUPTED
