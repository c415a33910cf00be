"""Where a key is written in a TOML file (tomllib gives values, not line numbers).

A light scan, good for the plans people write: table headers (`[a.b]`, `[[arms]]`, quoted
parts), `key = value` lines, and keys inside an inline table on the line of their parent.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(?:#.*)?$")
_PIECE = r'(?:"(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+)'
_KEY = re.compile(rf"^\s*({_PIECE}(?:\s*\.\s*{_PIECE})*)\s*=")
"""A `key = value` line; the key may be dotted (`device.kind = ...`)."""
_PART = re.compile(rf"\s*({_PIECE})\s*(?:\.|$)")

Key = tuple[str | int, ...]


def _parts(text: str) -> list[str]:
    return [_unquote(m.group(1)) for m in _PART.finditer(text)]


def _unquote(part: str) -> str:
    return part[1:-1] if part[:1] in "\"'" else part


def _table_path(parts: list[str], arrays: dict[tuple[str | int, ...], int]) -> Key:
    """A header's path with the index of each array-of-tables element it goes through."""
    path: list[str | int] = []
    for part in parts:
        path.append(part)
        index = arrays.get(tuple(path))
        if index is not None:
            path.append(index)
    return tuple(path)


def _related(a: Key, b: Key) -> bool:
    """One key is the other or holds it (`device` and `device.kind`)."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _lines(text: str) -> list[tuple[int, Key, bool]]:
    """(line number, full key, is a table header) of every header and `key = value` line."""
    arrays: dict[Key, int] = {}
    table: Key = ()
    found: list[tuple[int, Key, bool]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header is not None:
            parts = _parts(header.group(2))
            if not parts:
                continue
            if header.group(1) == "[[":
                base = (*_table_path(parts[:-1], arrays), parts[-1])
                arrays[base] = arrays.get(base, -1) + 1
                table = (*base, arrays[base])
            else:
                table = _table_path(parts, arrays)
            found.append((number, table, True))
            continue
        match = _KEY.match(line)
        if match is not None:
            found.append((number, (*table, *_parts(match.group(1))), False))
    return found


def locate(text: str, key: Key) -> int | None:
    """The 1-based line that says most about `key`: where it is set, else the closest line
    that sets a key holding it or under it (a dotted `device.kind = ...`, an inline table)
    or opens such a table (`[device]`, `[a.b]` for `a`); the first of equals. None: nowhere."""
    best: int | None = None
    score = 0
    for number, full, _header in _lines(text):
        if not full or not _related(full, key):
            continue
        closeness = min(len(full), len(key))
        if full == key:
            return number
        if closeness > score:
            best, score = number, closeness
    return best


def key_at(text: str, line: int) -> Key | None:
    """The key set (or the table opened) on `line` (1-based), if any."""
    for number, full, _header in _lines(text):
        if number == line:
            return full
    return None
