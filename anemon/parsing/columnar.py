"""The columnar path for whole files: a block of log lines at a time, TRIAL lines as columns.

Whole-file commands (summary, export, compare) need an arm's trials as columns, not one frozen
event per line. This module reads a block of lines with one regular expression and converts
each known key's values a column at a time, with the very converters and ranges the line
parser uses (anemon/parsing/protocol.py `_SCHEMAS`, anemon/parsing/ranges.py). Only lines it
can prove plain take this path: `TRIAL` in capitals at the very start, then `key=value` words
separated by single spaces, the keys in the order of the block's first TRIAL line, each value
made of letters, digits, `_`, `.`, `+` and `-`, every known value parsing and in its range.
Every other line, and every run in which one value is refused, is handed back by index to be
parsed one by one by LineParser: one parser's semantics, and tests/analysis/test_columnar.py
checks that both paths give the same session.

A block is split by the compiled scanner (anemon/parsing/_scan.c: no Python object per
number: a 1M-trial summary about 3x faster) when the install built it, else by one regular
expression and float() per value; the equivalence tests run both.

numpy is imported here, so this module is for the whole-file commands only (the live path
and `anemon --help` never import it).
"""

from __future__ import annotations

import gc
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from anemon.events import TrialEvent
from anemon.parsing import values as v
from anemon.parsing.protocol import _SCHEMAS, LineParser, Schema
from anemon.text import printable

_TRIAL_KEYS = _SCHEMAS[TrialEvent.kind.upper()][1]
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_.+\-]*", re.ASCII)
_VALUE = r"([A-Za-z0-9_.+\-]*)"
"""A plain value: no quote, no whitespace, no `:` (so no `ERROR:`), nothing to escape."""
_MAX_SKELETONS = 64
"""Key orders remembered (a hostile log could have a new one on every line)."""

_CHECK, _NUMBER, _TEXT = 0, 1, 2
"""What the scanner makes of a key's values: check them only, float64, or text."""

_SHORTEST = 4
"""A plain run shorter than this is read line by line: a column's conversion costs more than a
few lines' parse (a log of thousands of one-trial arms read 2x slower through columns)."""
_SMALLEST = 16
"""A run with a refused value is halved until it is this short, then read line by line."""

Column = np.ndarray | Sequence[str]
"""A key's values over a block: numbers the scanner read, or texts."""
Scan = Callable[[list[str], tuple[bytes, ...], bytes], tuple[bytes, list[Any]]]
"""anemon/parsing/_scan.c's `scan`: see there (and _scan.pyi)."""


def _compiled() -> Scan | None:
    try:
        from anemon.parsing._scan import scan
    except ImportError:  # installed without a C compiler: the regular expression splits blocks
        return None
    return scan


_scan = _compiled()

Place = Callable[[np.ndarray], np.ndarray]
"""Session times of a run's TRIAL lines from their `t=` (NaN where none), in order."""


@dataclass(frozen=True, slots=True)
class TrialRun:
    """Consecutive plain TRIAL lines of one arm: what their events would hold, as columns.

    `fields` has every TrialEvent field the lines set (float arrays, NaN where a line had no
    value; `warmup` 0/1; `battery_state` a list of str or None); `t` is session time."""

    arm: str | None
    t: np.ndarray
    fields: dict[str, Any]

    def __len__(self) -> int:
        return len(self.t)


@dataclass(frozen=True, slots=True)
class TextRun:
    """Consecutive lines that are plain text (`protocol.plain_text`), as the whole-file
    commands need them: how many, and the session time and arm their TextEvents would have
    (a log of nothing but empty lines read ~8x faster than parsing each)."""

    count: int
    t: float
    arm: str | None

    def __len__(self) -> int:
        return self.count


class Skeleton:
    """The plain form of a TRIAL line with one order of keys, as a pattern for a whole block."""

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.encoded = tuple(key.encode("ascii") for key in keys)
        self.modes = bytes(_mode(key) for key in keys)
        words = " ".join(f"{re.escape(key)}={_VALUE}" for key in keys)
        # One tuple per line of the block: the first group is "T" where the line is plain.
        self.pattern = re.compile(rf"^(?:(T)RIAL {words}|.*)$", re.MULTILINE)

    @classmethod
    def of(cls, line: str) -> Skeleton | None:
        """The skeleton of a plain TRIAL line; None for a line that is not one."""
        words = line.split(" ")
        if words[0] != "TRIAL" or len(words) < 2:
            return None
        if not all(_WORD.fullmatch(word) for word in words[1:]):
            return None
        keys = tuple(word.partition("=")[0] for word in words[1:])
        return cls(keys) if len(set(keys)) == len(keys) else None


class ColumnarReader:
    """Splits blocks of a raw log's lines into TRIAL runs and lines to parse one by one.

    `parser` is the LineParser of the same log (its arm in progress is read and kept up to
    date); `place` gives session times (the log's timeline, which it advances)."""

    def __init__(self, parser: LineParser, place: Place) -> None:
        self._parser = parser
        self._place = place
        self._skeletons: dict[tuple[str, ...], Skeleton] = {}

    def block(self, lines: list[str]) -> Iterator[int | TrialRun]:
        """In order: the index of each line the caller must parse itself (and must, before
        asking for the next item: runs after it depend on its arm and time), or a TrialRun."""
        skeleton = self._skeleton(lines)
        if skeleton is None:
            yield from range(len(lines))
            return
        split = _columns(skeleton, lines)
        if split is None:  # cannot happen for lines without "\n"; be safe
            yield from range(len(lines))
            return
        flags, columns = split
        index, end = 0, len(lines)
        while index < end:
            stop = _find(flags, 0, index)  # the plain run: to the next line that is not
            if 0 < stop - index < _SHORTEST:
                yield from range(index, stop)  # parsed faster than converted
            elif stop > index:
                run = {k: c[index:stop] for k, c in columns.items()}
                yield from self._run(run, index, stop - index)
            index = _find(flags, 1, stop)
            yield from range(stop, index)

    def _skeleton(self, lines: list[str]) -> Skeleton | None:
        first = next((line for line in lines if line.startswith("TRIAL ")), None)
        if first is None:
            return None
        skeleton = Skeleton.of(first)
        if skeleton is None:
            return None
        known = self._skeletons.get(skeleton.keys)
        if known is not None:
            return known
        if len(self._skeletons) >= _MAX_SKELETONS:
            self._skeletons.clear()
        self._skeletons[skeleton.keys] = skeleton
        return skeleton

    def _run(self, columns: dict[str, Column], start: int, count: int) -> Iterator[int | TrialRun]:
        """The `count` plain lines from `start`, whose values are `columns` (one per key)."""
        fields = _convert(columns)
        arms = cast("Sequence[str] | None", columns.get("arm"))  # a plain line's arm: text
        if fields is None or (arms is not None and "" in arms):
            if count <= _SMALLEST:  # a value refused: the slow path says why
                yield from range(start, start + count)
                return
            half = count // 2  # the refused line is in one half: the other stays fast
            yield from self._run({k: c[:half] for k, c in columns.items()}, start, half)
            rest = count - half
            yield from self._run({k: c[half:] for k, c in columns.items()}, start + half, rest)
            return
        if arms is None:
            yield self._timed(self._parser.current_arm, fields, 0, count)
            return
        if arms.count(arms[0]) == count:  # one arm (the common case), not counted line by line
            groups: Iterator[tuple[str, int]] = iter(((arms[0], count),))
        else:
            groups = ((arm, len(list(group))) for arm, group in itertools.groupby(arms))
        at = 0
        for arm, size in groups:
            name = printable(arm)
            self._parser.current_arm = name
            yield self._timed(name, fields, at, at + size)
            at += size

    def _timed(self, arm: str | None, fields: dict[str, Any], lo: int, hi: int) -> TrialRun:
        part = {name: values[lo:hi] for name, values in fields.items()}
        app_t = part.get("app_t")
        t = self._place(app_t if app_t is not None else np.full(hi - lo, np.nan))
        return TrialRun(arm, t, part)


def _mode(key: str) -> int:
    """How the scanner reads a key's values: as the columns `_convert` needs them."""
    spec = _TRIAL_KEYS.get(key)
    if key == "arm":
        return _TEXT
    if spec is None:
        return _CHECK  # an unknown key: `extra`, which the session does not keep for trials
    return _NUMBER if spec[1] in (v.to_float, v.to_int) else _TEXT


def _columns(skeleton: Skeleton, lines: list[str]) -> tuple[bytes, dict[str, Column]] | None:
    """The block's flags (1 where a line is plain) and its values, one column per key; None
    if the lines do not split one match each."""
    if _scan is None:
        return _matched_columns(skeleton, lines)
    flags, scanned = _scan(lines, skeleton.encoded, skeleton.modes)
    columns: dict[str, Column] = {}
    for key, mode, column in zip(skeleton.keys, skeleton.modes, scanned, strict=True):
        if mode == _NUMBER:
            columns[key] = np.frombuffer(column, dtype=float)
        elif mode == _TEXT:
            columns[key] = column  # None where a line is not plain: never inside a run
    return flags, columns


def _matched_columns(
    skeleton: Skeleton, lines: list[str]
) -> tuple[bytes, dict[str, Column]] | None:
    """`_columns` by the regular expression: each value a str, read by `_column` later.

    The garbage collector is paused meanwhile: the match's tuple per line (no cycles, freed
    here) would set off collections that scan the whole heap again and again (a fifth of a
    1M-trial summary's time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        matches = skeleton.pattern.findall("\n".join(lines))
        if len(matches) != len(lines):
            return None
        # one tuple per key (the first: the flags), transposed once in C
        found, *values = zip(*matches, strict=True)
        del matches
    finally:
        if enabled:
            gc.enable()
    return bytes(map(bool, found)), dict(zip(skeleton.keys, values, strict=True))


def _find(flags: bytes, flag: int, start: int) -> int:
    """The index of the first `flag` from `start` on; the length if there is none."""
    at = flags.find(flag, start)
    return len(flags) if at < 0 else at


def _convert(columns: dict[str, Column]) -> dict[str, Any] | None:
    """Each known key's values as its field's column; None if any value would be refused."""
    fields: dict[str, Any] = {}
    for key, texts in columns.items():
        spec = _TRIAL_KEYS.get(key)
        if key == "arm" or spec is None:
            continue  # the arm is read apart; an unknown key is `extra`, kept as text
        name, convert, bounds = spec
        values = _column(key, convert, texts, numeric=bounds is not None)
        if values is None:
            return None
        if bounds is not None:
            numbers = values
            low, high = bounds.low, bounds.high
            if not bool(((numbers >= low) & (numbers <= high) | np.isnan(numbers)).all()):
                return None
            if key != "battery" and bool(np.isnan(numbers).any()):
                return None  # NaN did not parse (battery: only "-1", unknown, is missing)
        fields[name] = values
    return fields


def _column(key: str, convert: Callable[[str], Any], texts: Column, *, numeric: bool) -> Any:
    """The converted values of one key (numbers and flags as a float array, NaN where
    missing; text as a list), or None if one would be refused. The scanner gives numbers
    already read (by float(), as here)."""
    try:
        if convert is v.to_float:
            return texts if isinstance(texts, np.ndarray) else _floats(texts)
        if convert is v.to_int:
            # v.to_int as floats, faster: float() reads what int() reads, rounded the same
            # way, and a text only float() reads is a count when whole ("256.0")
            numbers = texts if isinstance(texts, np.ndarray) else _floats(texts)
            if not bool((np.isfinite(numbers) & (numbers == np.floor(numbers))).all()):
                return None
            return numbers + 0.0  # -0 is 0, as int("-0") reads it
    except (ValueError, OverflowError):
        return None
    assert not isinstance(texts, np.ndarray)  # the scanner reads only float and int keys
    # The other converters see few distinct texts (thermal names, flags, battery levels).
    seen = {text: convert(text) for text in set(texts)}
    for text, value in seen.items():
        if value is None and not (key == "battery" and v.is_unknown_battery(text)):
            return None
    if not numeric and convert is not v.to_bool:
        return list(map(seen.__getitem__, texts))
    as_float = {text: np.nan if value is None else float(value) for text, value in seen.items()}
    return np.fromiter(map(as_float.__getitem__, texts), dtype=float, count=len(texts))


def _floats(texts: Sequence[str]) -> np.ndarray:
    return np.fromiter(map(float, texts), dtype=float, count=len(texts))


__all__ = ["ColumnarReader", "Schema", "TrialRun"]
