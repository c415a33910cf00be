"""Other tools' records as a SOURCE: the registry of foreign formats (docs/ARCHITECTURE.md "A
foreign format").

Each format is one module with a `FORMAT`: its kind, what it is in words, a `sniff` of the
SOURCE's first bytes and a `read` of its numbered lines into events. `recording.reader`
asks `kind_of` what a SOURCE that is not a recording is, and reads it with its format; every
command then reads those events as it reads a log's. Adding a format is one module and one
entry in `FORMATS`.
"""

from __future__ import annotations

from anemon.recording.foreign import llama_bench, yardstick
from anemon.recording.foreign.base import ForeignFormat

FORMATS: dict[str, ForeignFormat] = {f.kind: f for f in (yardstick.FORMAT, llama_bench.FORMAT)}
LOOKED_FOR = ", ".join(f.looked_for for f in FORMATS.values())
"""The foreign formats in words, for a SOURCE with no bench record."""


def kind_of(head: bytes) -> str | None:
    """The kind of the foreign format whose sniff the SOURCE's start passes; None: none."""
    return next((f.kind for f in FORMATS.values() if f.sniff(head)), None)
