"""The command line (docs/spec/cli.md): one module per command, each with `add_parser` and `run`.

Errors are one line on stderr (a traceback only with --debug, before or after the command,
which changes nothing else: the exit status is the same); usage errors exit 2. A reader
that closes the pipe early (`anemon summary X | head -1`) ends anemon quietly with 141, the
status of a command killed by SIGPIPE.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from anemon import __version__
from anemon.cli.common import INTERRUPTED, hold_signals
from anemon.errors import USAGE, AnemonError

PIPE_CLOSED = 128 + 13
"""Exit status when stdout's reader went away (128 + SIGPIPE, as a shell reports `yes | head`)."""
INTERNAL = 1
"""Exit status of an unexpected error (a bug): as Python's own for an uncaught exception."""

COMMANDS = ("demo", "run", "watch", "replay", "summary", "compare", "export", "sessions", "devices",
            "serve", "preflight")  # fmt: skip
"""Each is the module anemon.cli.<name>; imported lazily so `--help` and `summary` start fast."""
FEED_COMMANDS = frozenset({"demo", "run", "watch", "replay"})
"""The commands that run a feed (anemon.feeds.lifecycle.run_feed): they hold signals until it."""


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
    for command in sub.choices.values():
        # `anemon summary X --debug` as `anemon --debug summary X`; SUPPRESS keeps a command
        # without it from resetting the flag given before the command
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    with hold_signals() as holder:
        args = build_parser().parse_args(argv)
        if args.command in FEED_COMMANDS:
            return _run(args)
        if holder.take():  # while parsing
            return INTERRUPTED
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.handler(args) or 0)
    except AnemonError as e:
        if args.debug:
            traceback.print_exc()
        print(f"anemon: {e}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        if args.debug:
            traceback.print_exc()
        # The reader went away: nothing more to say; stdout's buffer must not fail again at
        # interpreter exit (the recipe of the Python docs, "Note on SIGPIPE").
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):  # not a real file (a test's capture): nothing to flush
            pass
        return PIPE_CLOSED
    except Exception as e:  # a bug: one line, the traceback only with --debug
        if args.debug:
            traceback.print_exc()
        print(f"anemon: internal error: {type(e).__name__}: {e} (run with --debug for the "
              "traceback, and please report it)", file=sys.stderr)  # fmt: skip
        return INTERNAL
