"""Where a key is written in a TOML file (tomllib gives values, not line numbers).

A light scan, good for the plans people write: table headers (`[a.b]`, `[[arms]]`, quoted
parts), `key = value` lines, and keys inside an inline table on the line of their parent.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r'^\s*("(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+)\s*=')
_PART = re.compile(r'\s*("(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+)\s*(?:\.|$)')

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


def locate(text: str, key: Key) -> int | None:
    """The 1-based line where `key` is set, else its table's header line, else None."""
    arrays: dict[Key, int] = {}
    table: Key = ()
    best: int | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header is not None:
            parts = _parts(header.group(2))
            if header.group(1) == "[[":
                base = (*_table_path(parts[:-1], arrays), parts[-1])
                arrays[base] = arrays.get(base, -1) + 1
                table = (*base, arrays[base])
            else:
                table = _table_path(parts, arrays)
            if table == key[: len(table)] and table:
                best = number
            continue
        match = _KEY.match(line)
        if match is None or key[: len(table)] != table or len(key) <= len(table):
            continue
        if _unquote(match.group(1)) == key[len(table)]:
            return number
    return best
