"""What every foreign format shares: its description, its lines, its JSON, its trials."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from anemon.events import Event, TrialEvent
from anemon.parsing.ranges import in_range
from anemon.sources.lines import LineAssembler
from anemon.text import printable

if TYPE_CHECKING:
    from anemon.parsing.columnar import TrialRun

MAX_LINE = 16 << 20
"""The longest line a format reads by default: a Yardstick run of a day has 86,400 samples
(about 2 MB); far longer lines are not a result (skipped, warned)."""
Warn = Callable[[int, str], None]
"""Count a warning on a line (1 = the first) with what was wrong."""


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a foreign SOURCE."""

    number: int
    text: str
    cut: int
    """Bytes cut off it (longer than its format's `max_line`); 0: whole."""
    complete: bool
    """It had its ending (False: the file stops inside it)."""


Read = Callable[[Iterator[Line], Warn, str], Iterator["Event | TrialRun"]]
"""A format's reader: its lines, the warning counter and the SOURCE's name; events, with a
run's trials as one TrialRun (columns) where it has many."""


@dataclass(frozen=True, slots=True)
class ForeignFormat:
    kind: str
    """The SourceReader's `kind` for it: "yardstick", "llama-bench"."""
    looked_for: str
    """What it is, in words, for a SOURCE that is none of the formats."""
    sniff: Callable[[bytes], bool]
    """Whether the SOURCE's first bytes (decompressed, at most 64 KiB) are this format."""
    read: Read
    max_line: int
    """Longer lines are skipped, with a warning."""


class Lines:
    """The numbered lines of a SOURCE's chunks, each at most `limit` bytes (cut beyond)."""

    def __init__(self, chunks: Iterable[bytes], limit: int) -> None:
        self._chunks = chunks
        self._limit = limit
        self.next_number = 1
        """The number of the line after the last one given."""

    def __iter__(self) -> Iterator[Line]:
        assembler = LineAssembler(self._limit)
        for chunk in self._chunks:
            for text, cut in assembler.feed_counted(chunk):
                yield self._line(text, cut, True)
        last = assembler.finish()
        if last is not None:
            yield self._line(*last, False)

    def _line(self, text: str, cut: int, complete: bool) -> Line:
        line = Line(self.next_number, text, cut, complete)
        self.next_number += 1
        return line


def events_of(items: Iterable[Event | TrialRun], source: str) -> Iterator[Event]:
    """A format's items as events only: each TrialRun as the TrialEvents its columns stand
    for (a replay reads events one at a time)."""
    for item in items:
        if isinstance(item, Event):
            yield item
        else:
            yield from _trial_events(item, source)


def _trial_events(run: TrialRun, source: str) -> Iterator[TrialEvent]:
    fields = {name: values.tolist() for name, values in run.fields.items()}
    ints = {"trial", "gen", "prompt_tokens"}
    for index, t in enumerate(run.t.tolist()):
        values: dict[str, Any] = {
            name: (int(column[index]) if name in ints else column[index])
            for name, column in fields.items()
            if column[index] == column[index]  # NaN: no value
        }
        warmup = bool(values.pop("warmup", 0))
        yield TrialEvent(t=t, wall=values.pop("wall", 0.0), arm=run.arm, source=source,
                         warmup=warmup, **values)  # fmt: skip


def json_line(line: Line, warn: Warn) -> object | None:
    """The JSON value of a line, or None (warned) for one cut, not JSON or torn; a blank line
    is None unwarned. `NaN` and `Infinity` parse (as Python's json does): the format's
    ranges refuse them as values."""
    if line.cut:
        size = line.cut + len(line.text.encode())
        warn(line.number, f"a line of {size} bytes, longer than this format reads: skipped")
        return None
    if not line.text.strip():
        return None
    try:
        return json.loads(line.text)
    except ValueError:
        if line.complete:
            warn(line.number, "not JSON: the line is skipped")
        else:
            warn(line.number, "the file stops inside this line (a torn last line): skipped")
        return None


KEPT_TEXT = 200
"""Characters kept of a value that becomes text (an `extra` key's)."""


def kept_text(value: object) -> str:
    """A value kept as text: itself if it is text, else its JSON; printable and bounded."""
    text = value if isinstance(value, str) else json.dumps(value, allow_nan=True)
    return printable(text)[:KEPT_TEXT]


def epoch(value: object) -> float | None:
    """An ISO-8601 time ("2026-06-04T03:24:05Z") as epoch seconds; None if it is not one."""
    if not isinstance(value, str):
        return None
    try:
        wall = datetime.fromisoformat(value).timestamp()
    except (ValueError, OverflowError, OSError):
        return None
    return wall if in_range("wall", wall) else None
