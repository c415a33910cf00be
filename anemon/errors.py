"""One base error: a message that says what to do, and an exit status."""

from __future__ import annotations

USAGE = 2
"""Exit status for a wrong command line, plan or input file (docs/spec/cli.md)."""


class AnemonError(Exception):
    """An error the user can act on; `str()` is the one line shown on stderr."""

    exit_status = USAGE


class SourceError(AnemonError):
    """A SOURCE that cannot be read: missing, a directory, binary, from a future version."""


class MissingSourceError(SourceError):
    """A SOURCE path with no file there (`watch` waits for one)."""


class NoRecordsError(SourceError):
    """A SOURCE that reads but holds no bench record (START, LOAD, TRIAL, IDLE, END, ERROR)."""


class OutputError(AnemonError):
    """An output file that cannot be written: its directory missing or read-only, or a
    directory where the file should be."""
