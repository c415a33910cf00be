"""The bench log line protocol, version 1: every line becomes exactly one event; nothing raises.

Grammar (docs/spec/line-protocol.md): `[ISO-8601 timestamp] [[tag]] KIND key=value ...`, a line
containing `ERROR:` is an error record, anything else is a text record.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, get_args, get_type_hints

from anemon.events import (
    EndEvent,
    ErrorEvent,
    Event,
    IdleEvent,
    LoadEvent,
    RecordEvent,
    StartEvent,
    TextEvent,
    TrialEvent,
)
from anemon.parsing import values as v
from anemon.parsing.ranges import RANGES, Range, bounds
from anemon.text import printable

Converter = Callable[[str], Any]
Timeline = Callable[[float, float | None, type, float | None], float]
"""(t given, timestamp of the line or None, event class, the record's `t=`) -> session t."""
Keys = dict[str, tuple[str, Converter, Range | None]]
"""A record's known keys: the event field each fills, how its text is read, and the range a
number read must lie in (anemon/parsing/ranges.py)."""
Schema = tuple[type[RecordEvent], Keys]

_COMMON: Keys = {"tag": ("tag", printable, None), "t": ("app_t", v.to_float, RANGES["app_t"])}
"""Arm names and tags are escaped where they are read, so that every output, file name and
chart legend made from them downstream is literal text (anemon.text.printable)."""
_BY_NAME: dict[str, Converter] = {
    "compute": str.lower,
    "mode": str.lower,
    "battery": v.to_battery,
    "battery_state": v.to_battery_state,
    "thermal": v.to_thermal,
}
"""Keys whose text is read by their own rule; the others by their field's type."""
_BY_TYPE: dict[type, Converter] = {float: v.to_float, int: v.to_int, bool: v.to_bool, str: str}
_NUMERIC = frozenset({v.to_float, v.to_int, v.to_battery, v.to_thermal})
"""Converters that read a number: its field's range applies (a field the table does not list:
any finite number)."""
_RECORD_FIELDS = frozenset(f.name for f in dataclasses.fields(RecordEvent))


def _keys(cls: type[RecordEvent]) -> Keys:
    """A record's keys are its event's own fields: the protocol and the event share names."""
    hints = get_type_hints(cls)
    own = (f.name for f in dataclasses.fields(cls) if f.name not in _RECORD_FIELDS)
    keys: Keys = {}
    for name in own:
        convert = _BY_NAME.get(name) or _by_type(hints[name])
        numeric = convert in _NUMERIC
        keys[name] = (name, convert, bounds(name) if numeric else None)
    return keys | _COMMON


def _by_type(hint: Any) -> Converter:
    """The converter of `float | None`, `int`, ...: by the type that is not None."""
    kinds = [arg for arg in get_args(hint) if arg is not type(None)] or [hint]
    return _BY_TYPE[kinds[0]]


_SCHEMAS: dict[str, Schema] = {
    cls.kind.upper(): (cls, _keys(cls))
    for cls in (StartEvent, LoadEvent, TrialEvent, IdleEvent, EndEvent)
}

_TIMESTAMP = re.compile(
    r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)(?:\s+|$)", re.ASCII
)
_TAG = re.compile(r"\[[^\]\s]*\](?:\s+|$)")
# A token is key="quoted \" value", key=bare, or a bare word without '='.
_TOKEN = re.compile(r'([^\s=]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s"]*))|(\S+)')
_UNESCAPE = re.compile(r"\\(.)")
_DID_NOT_PARSE = "did not parse"
_BOM = "\ufeff"


def split_prefix(line: str) -> tuple[float | None, str]:
    """Strip an optional leading timestamp and one bracketed tag; return (epoch or None, rest)."""
    wall = None
    if line[:1].isdigit() and (match := _TIMESTAMP.match(line)):
        wall = _parse_timestamp(match.group(1))
        line = line[match.end() :]
    if line[:1] == "[" and (match := _TAG.match(line)):
        line = line[match.end() :]
    return wall, line


def _parse_timestamp(text: str) -> float | None:
    """Epoch seconds, or None for a date that is not one or lies outside the `wall` range."""
    try:
        wall = datetime.fromisoformat(text.replace(",", ".")).timestamp()
    except (ValueError, OverflowError, OSError):  # year 1 in local time, a platform's limits
        return None
    return wall if RANGES["wall"].holds(wall) else None


def split_pairs(text: str) -> dict[str, str]:
    """`key=value ...` into a dict (last key wins); words without `=` are kept with value ""."""
    if '"' not in text:
        # Fast path: no quoting, so whitespace and the first '=' delimit everything.
        return {key: value for key, _, value in (word.partition("=") for word in text.split())}
    pairs: dict[str, str] = {}
    for key, quoted, bare, word in _TOKEN.findall(text):
        if word:
            pairs[word] = ""
        else:
            pairs[key] = _UNESCAPE.sub(r"\1", quoted) if quoted else bare
    return pairs


def plain_text(line: str) -> bool:
    """`LineParser.parse` makes of `line` a TextEvent and nothing else: no timestamp or tag to
    read (it starts with neither a digit, a `[` nor a byte-order mark), no record, no
    `ERROR:`. So it sets no arm and no time of its own, and has no warning: a whole-file
    command may count a run of such lines instead of parsing each (anemon/parsing/columnar.py
    `TextRun`)."""
    first = line[:1]
    if first.isdigit() or first == "[" or first == _BOM or "ERROR:" in line:
        return False
    return line.rstrip("\r\n").partition(" ")[0].upper() not in _SCHEMAS


class LineParser:
    """Parses lines in order, remembering the arm of the launch in progress."""

    def __init__(self, source: str = "", timeline: Timeline | None = None) -> None:
        self.source = source
        self.timeline = timeline
        """Places events in session time when the source has no clock (a raw log file)."""
        self.current_arm: str | None = None
        self.warnings = 0
        """Known values that did not parse, over every line so far."""
        self.last_rejected = ""
        """What did not parse on the last line that had a warning (`key=value`, ...)."""

    def reset(self) -> None:
        """A new log begins: forget the launch in progress."""
        self.current_arm = None

    def parse(self, line: str, *, t: float, wall: float) -> Event:
        """One line (without its newline) into one event; `wall` is replaced by a line timestamp."""
        line = line.rstrip("\r\n")
        if line[:1] == _BOM:  # a byte-order mark before the first line of a log
            line = line[1:]
        stamp, body = split_prefix(line)
        self._stamp = stamp
        if stamp is not None:
            wall = stamp
        head, _, rest = body.partition(" ")
        if "ERROR:" in body:
            return self._error(line, body, t=t, wall=wall)
        schema = _SCHEMAS.get(head.upper())
        if schema is None:
            return self._make(TextEvent, line, None, {}, None, 0, t=t, wall=wall)
        return self._record(line, schema, split_pairs(rest), t=t, wall=wall)

    def _record(
        self, line: str, schema: Schema, pairs: dict[str, str], *, t: float, wall: float
    ) -> Event:
        cls, known = schema
        fields: dict[str, Any] = {}
        extra: dict[str, str] = {}
        rejected: list[tuple[str, str, str]] = []
        arm = _arm(pairs.pop("arm", None))
        for key, text in pairs.items():
            spec = known.get(key)
            if spec is None:
                extra[key] = text
                continue
            name, convert, bounds = spec
            value = convert(text)
            if value is None:
                if not (key == "battery" and v.is_unknown_battery(text)):
                    rejected.append((key, text, _DID_NOT_PARSE))
            elif bounds is None or bounds.holds(value):
                fields[name] = value
            else:  # a number, but not one this field can hold: missing, like a bad value
                rejected.append((key, text, f"outside {bounds.describe()}"))
        if rejected:
            self.last_rejected = _rejected(rejected)
        return self._make(cls, line, arm, fields, extra, len(rejected), t=t, wall=wall)

    def _error(self, line: str, body: str, *, t: float, wall: float) -> Event:
        before, _, message = body.partition("ERROR:")
        pairs = {k: val for k, val in split_pairs(before).items() if val}
        arm = _arm(pairs.pop("arm", None))
        tag = pairs.pop("tag", None)
        tag = printable(tag) if tag is not None else None
        fields = {"message": message.strip(), "tag": tag}
        return self._make(ErrorEvent, line, arm, fields, pairs, 0, t=t, wall=wall)

    def _make(
        self,
        cls: type[RecordEvent],
        line: str,
        arm: str | None,
        fields: dict[str, Any],
        extra: dict[str, str] | None,
        warnings: int,
        *,
        t: float,
        wall: float,
    ) -> Event:
        if arm is None:
            arm = self.current_arm
        else:
            self.current_arm = arm
        self.warnings += warnings
        if extra:
            fields["extra"] = extra
        if self.timeline is not None:
            t = self.timeline(t, self._stamp, cls, fields.get("app_t"))
        return cls(
            t=t, wall=wall, arm=arm, source=self.source, line=line, warnings=warnings, **fields
        )


def _arm(text: str | None) -> str | None:
    """An arm's name as every output shows it: literal text; empty is no arm."""
    return printable(text) if text else None


def _rejected(rejected: list[tuple[str, str, str]]) -> str:
    """A line's rejected values, grouped by why: `gen='lots', x='y': did not parse`."""
    reasons: dict[str, list[str]] = {}
    for key, text, why in rejected:
        shown = text if len(text) <= 40 else text[:40] + "…"
        reasons.setdefault(why, []).append(f"{key}='{printable(shown)}'")
    return "; ".join(f"{', '.join(values)}: {why}" for why, values in reasons.items())
