"""One base error: a title for the UI, a message that says what to do, an exit status."""

from __future__ import annotations

USAGE = 2
"""Exit status for a wrong command line, plan or input file (docs/spec/cli.md)."""


class AnemonError(Exception):
    """An error the user can act on; `str()` is the one line shown on stderr."""

    title = "anemon"
    exit_status = USAGE


class SourceError(AnemonError):
    """A SOURCE that cannot be read: missing, a directory, binary, from a future version."""

    title = "Cannot read the source"
