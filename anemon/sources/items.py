"""What every log source yields, one vocabulary for the mirror tailer and every device backend.

A follow yields batches of items: complete lines (text without the newline), and markers for
what happened between them. The pipeline turns lines into events and markers into `gap` and
`reset` events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class LogGap:
    """The device or the file became unreachable (`begin`), or came back (`end`)."""

    state: Literal["begin", "end"]
    reason: str


@dataclass(frozen=True, slots=True)
class LogReset:
    """The log was replaced by another one: what follows is read from its start. Or, with
    `read_on`, the same log changed before what was read (rotated, rewritten with an earlier
    line changed) and is read on after its last line read; `reason` says what was skipped."""

    reason: str
    read_on: bool = False
    """The same log goes on: the launch in progress is not forgotten."""


LogItem = str | LogGap | LogReset
"""A complete log line (without its newline), or a gap/reset marker."""
