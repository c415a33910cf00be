"""File names made from input (a plan's tag, a console process, an arm, a log's name), and
the ways anemon creates, compares and replaces files without destroying one.

Whatever the text, the name stays one plain entry of the folder it is joined to: no
separator, no `.`/`..`, no control character, never empty, bounded in length.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Iterator
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
    `limit`) instead; FileExistsError when none is free (or `path` is taken, not `unique`).
    Opened for appending: should another writer add to it too, neither writes over the other."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
    for n in range(1, limit + 1 if unique else 2):
        candidate = path if n == 1 else path.with_name(f"{path.stem}-{n}{path.suffix}")
        try:
            return candidate, os.fdopen(os.open(candidate, flags, 0o666), "a", encoding="utf-8")
        except FileExistsError:
            continue
    raise FileExistsError(path)


def same_file(a: Path, b: Path) -> bool:
    """`a` and `b` are one file: the same device and inode (a hard link, a symlink, another
    spelling of the name); while one does not exist yet, the same name once resolved."""
    try:
        return os.path.samefile(a, b)
    except FileNotFoundError:
        return a.resolve() == b.resolve()
    except (OSError, ValueError):  # unreadable, or a name with a NUL: nothing to compare
        return False


def not_a_folder(path: Path) -> Path | None:
    """The first of `path`'s parents that exists but is a file, not a folder (`notes.txt` of
    `notes.txt/run.jsonl`): nothing can be created under it. None when there is none."""
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return None


@contextlib.contextmanager
def replacing(out: Path) -> Iterator[Path]:
    """Where to write a new `out`: a temporary file in its folder, renamed over it when the
    block ends (removed when the block fails), so `out` is always whole, the old file or the
    new one, even when the process is killed mid-way (fsynced before the rename: a power loss
    too). A symlink's target is what is replaced; a FIFO or a device is a stream with nothing
    to leave half written, and is written in place."""
    target = Path(os.path.realpath(out))
    if target.exists() and not target.is_file():
        yield target
        return
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # the umask applies
    try:
        yield temp
        _fsync(temp)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
