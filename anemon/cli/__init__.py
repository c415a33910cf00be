"""The command line (docs/spec/cli.md): one module per command, each with `add_parser` and `run`.

Errors are one line on stderr (a traceback only with --debug, before or after the command,
which changes nothing else: the exit status is the same); usage errors exit 2. A reader
that closes the pipe early (`anemon summary X | head -1`) ends anemon quietly with 141, the
status of a command killed by SIGPIPE.
"""

from __future__ import annotations

import argparse
import atexit
import errno
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from anemon import __version__
from anemon.cli.common import INTERRUPTED, hold_signals
from anemon.errors import USAGE, AnemonError
from anemon.text import printable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
"""numpy's OpenBLAS starts a thread per core when numpy is imported, which took 30-60 ms of
every whole-file command's start here (more on a busy machine); anemon does no linear
algebra. Set before any command imports numpy; a value the user set is kept."""

PIPE_CLOSED = 128 + 13
"""Exit status when stdout's reader went away (128 + SIGPIPE, as a shell reports `yes | head`)."""
INTERNAL = 1
"""Exit status of an unexpected error (a bug): as Python's own for an uncaught exception."""

DESCRIPTION = "Watch, drive, record and replay sustained LLM benchmarks on an iPhone."
"""What `anemon --help` says first (the module docstring above is for developers)."""
COMMANDS = ("demo", "run", "watch", "replay", "summary", "compare", "export", "sessions", "devices",
            "serve", "preflight")  # fmt: skip
"""Each is the module anemon.cli.<name>; imported lazily so `--help` and `summary` start fast."""
FEED_COMMANDS = frozenset({"demo", "run", "watch", "replay"})
"""The commands that run a feed (anemon.feeds.lifecycle.run_feeds): they hold signals until it."""


class _Parser(argparse.ArgumentParser):
    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """argparse's, but words left over are said with the command's help to see (argparse
        says them from the top parser, which knows no command)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(parsed, "command", None)
            see = f"anemon {command} --help" if command else "anemon --help"
            words = printable(" ".join(extras))
            self.exit(USAGE, f"anemon: unrecognized arguments: {words} (see '{see}')\n")
        return parsed

    def error(self, message: str) -> NoReturn:
        # the words may hold what was typed (a path, an option): shown, never acted on
        self.exit(USAGE, f"anemon: {printable(message)} (see 'anemon {self._command()}--help')\n")

    def _command(self) -> str:
        parts = self.prog.split()[1:]
        return " ".join(parts) + " " if parts else ""


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command; given the command line, only of the command it names
    (each command module imports what it needs: `anemon summary` does not import the
    recorder, the devices, sqlite3 or sockets for the other commands' options)."""
    parser = _Parser(prog="anemon", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"anemon {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    named = None if argv is None else _command_named(argv)
    for name in COMMANDS if named is None else (named,):
        importlib.import_module(f"anemon.cli.{name}").add_parser(sub)
    for command in sub.choices.values():
        # `anemon summary X --debug` as `anemon --debug summary X`; SUPPRESS keeps a command
        # without it from resetting the flag given before the command
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"
        )
    return parser


def _command_named(argv: Sequence[str]) -> str | None:
    """The command `argv` runs, when it names one before anything else that is not an option
    of anemon's own (none of which takes a value); None: build every command's parser (a
    top-level --help lists them all, a misspelt command is told the choices)."""
    for word in argv:
        if word in ("-h", "--help"):
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def program() -> NoReturn:
    """The `anemon` command (and `python -m anemon`): `main`, then the process ends without
    the interpreter's teardown (`_end_now`)."""
    status: list[int] = []
    atexit.register(_end_now, status)  # the first registered runs last: after all the others
    status.append(main())
    sys.exit(status[0])


def _end_now(status: list[int]) -> None:
    """Once threads are joined and the other exit handlers ran, end with main's status, not
    freeing every module and object one by one: that took 0.3-0.8 s here after a dashboard was
    gone (the shell's prompt waited for it), ~0.25 s after a command that only imported the
    dashboard. Files are closed by their owners before main returns; what stdout and stderr
    still buffer is flushed here. Anything else (an uncaught exception, a flush that fails)
    leaves Python's own exit to report it as before, as does a tracer or profiler (coverage,
    a debugger), whose own exit handler, registered before this one, runs after it."""
    if not status or sys.gettrace() is not None or sys.getprofile() is not None:
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(status[0])


def main(argv: Sequence[str] | None = None) -> int:
    with hold_signals() as holder:
        words = sys.argv[1:] if argv is None else list(argv)
        args = build_parser(words).parse_args(words)
        if args.command in FEED_COMMANDS:
            return _run(args)
        if holder.take():  # while parsing
            return INTERRUPTED
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    if sys.stdout is None:  # started with stdout closed (`>&-`): no reader, as a closed pipe
        return PIPE_CLOSED
    try:
        return int(args.handler(args) or 0)
    except AnemonError as e:
        if args.debug:
            _print_traceback()
        print(f"anemon: {printable(str(e))}", file=sys.stderr)  # paths as typed: never acted on
        return e.exit_status
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        return _reader_gone(args)
    except PermissionError as e:  # a path the command was given, or a folder on its way
        if args.debug:
            _print_traceback()
        where = printable(str(e.filename)) if e.filename is not None else "a file"
        print(f"anemon: {where}: permission denied; check its permissions", file=sys.stderr)
        return USAGE
    except OSError as e:
        if e.errno in FULL:  # errors naming a file are the commands'; this is stdout's
            print(f"anemon: cannot write the output: {e.strerror}", file=sys.stderr)
            _silence(sys.stdout)  # its buffer must not fail again at interpreter exit
            return USAGE
        if e.errno != errno.EIO:
            return _internal(args, e)
        return _reader_gone(args)  # the terminal hung up (a closed window): as a closed pipe
    except Exception as e:  # a bug: one line, the traceback only with --debug
        return _internal(args, e)


FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""The errors of a disk that takes no more (stdout redirected to a full disk, `/dev/full`)."""


def _reader_gone(args: argparse.Namespace) -> int:
    """stdout's reader went away: nothing more to say; stdout's buffer must not fail again at
    interpreter exit (the recipe of the Python docs, "Note on SIGPIPE")."""
    if args.debug:
        _print_traceback()
    for stream in (sys.stdout, sys.stderr):  # stderr: a hung-up terminal is both
        _silence(stream)
    return PIPE_CLOSED


def _silence(stream: TextIO) -> None:
    """Point `stream` at /dev/null: what is left in its buffer goes nowhere, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # not a real file (a test's capture): nothing to flush
        pass


def _internal(args: argparse.Namespace, e: Exception) -> int:
    if args.debug:
        _print_traceback()
    print(f"anemon: internal error: {type(e).__name__}: {e} (run with --debug for the "
          "traceback, and please report it)", file=sys.stderr)  # fmt: skip
    return INTERNAL


def _print_traceback() -> None:
    import traceback  # --debug only: not imported by every command's start

    traceback.print_exc()
