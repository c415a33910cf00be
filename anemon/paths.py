"""File names made from input (a plan's tag, a console process, an arm, a log's name).

Whatever the text, the name stays one plain entry of the folder it is joined to: no
separator, no `.`/`..`, no control character, never empty, bounded in length.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO

MAX_NAME = 80
"""Characters kept of a name: room for a time stamp, a `-N` and a suffix within the 255 bytes
most file systems allow."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str, fallback: str = "anemon") -> str:
    """`text` as one file name: characters other than letters, digits, `.`, `_` and `-`
    become `_`; leading dots are dropped (no `.`, `..` or hidden file); cut to MAX_NAME;
    `fallback` when nothing is left."""
    name = _UNSAFE.sub("_", text).lstrip(".")[:MAX_NAME].rstrip(".")
    if name.strip("_-") == "":
        return fallback
    return name


def create_new(path: Path, *, unique: bool = True, limit: int = 1000) -> tuple[Path, IO[str]]:
    """Create `path` for writing text, exclusively: an existing file is never overwritten. When
    it is taken and `unique`, the first free `stem-2.suffix`, `stem-3.suffix`, ... (up to
    `limit`) instead; FileExistsError when none is free (or `path` is taken, not `unique`)."""
    for n in range(1, limit + 1 if unique else 2):
        candidate = path if n == 1 else path.with_name(f"{path.stem}-{n}{path.suffix}")
        try:
            return candidate, candidate.open("x", encoding="utf-8")
        except FileExistsError:
            continue
    raise FileExistsError(path)
